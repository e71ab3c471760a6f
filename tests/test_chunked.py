"""Fitting the summary request to a small window, and the cache of a real model's summaries.

The fitting summarizer is tested against a chat server on 127.0.0.1 that behaves
like llama.cpp's: it counts a request's tokens (here one per 3 bytes of the
messages) and answers HTTP 400 with the server's own wording when they exceed its
window. Off by default, the article's single request is sent and the window error
gives the placeholder; on, every request fits, the chunks are summarized in order
and then their summaries, and the ledger counts every request and its tokens.
"""

from __future__ import annotations

import json

import pytest
from builders import session
from servers import completion_body, send, start_server

import nanohermes_nb as nh
from nanohermes_nb.agent.models import OpenAICompatibleSummarizer
from nanohermes_nb.context.cached import CachedSummarizer, excerpt_key
from nanohermes_nb.context.chunked import SummaryCost, fit_summary, merge_input, split_excerpt, window_exceeded
from nanohermes_nb.context.compaction import PLACEHOLDER_NOTE, SUMMARY_HEADER, build_excerpt
from nanohermes_nb.context.summarizers import SummarizerError, summary_prompt

pytestmark = pytest.mark.timeout(60)
KEEP4 = nh.NanoHermesPolicy(keep_recent=4)


class WindowServer:
    """An OpenAI-compatible endpoint with a context window of ``window`` tokens (3 bytes a token)."""

    def __init__(self, window: int, *, wording: str = "openai", report_usage: bool = True) -> None:
        self.window, self.wording, self.report_usage = window, wording, report_usage
        self.requests: list[dict] = []
        self.httpd = start_server("127.0.0.1", post=self._answer)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def tokens(self, body: dict) -> int:
        return sum(len(m["content"].encode()) for m in body["messages"]) // 3 + 10

    def _answer(self, h) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length", 0))))
        self.requests.append(body)
        n = self.tokens(body)
        reply = body.get("max_tokens") or 0
        if n + reply > self.window:
            if self.wording == "openai":
                text = json.dumps({"error": {"message": f"This model's maximum context length is {self.window} "
                                             f"tokens. However, you requested {n + reply} tokens ({n} in the "
                                             f"messages, {reply} in the completion).",
                                             "code": "context_length_exceeded"}})
            else:
                text = json.dumps({"error": f"Requested tokens ({n}) exceed context window of {self.window}"})
            send(h, 400, text.encode(), content_type="application/json")
            return
        user = body["messages"][-1]["content"]
        summary = f"S{len(self.requests)}[{len(user)} chars, starts {user[:12]!r}]"
        usage = {"prompt_tokens": n, "completion_tokens": 7, "total_tokens": n + 7} if self.report_usage else None
        send(h, 200, completion_body({"role": "assistant", "content": summary}, usage).encode(),
             content_type="application/json")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def small():
    server = WindowServer(2048)
    yield server
    server.close()


def long_excerpt(n: int = 30) -> str:
    return "".join(f"{'user' if k == 0 else 'tool'}: record {k} " + "word " * 60 + f"path src/m{k}.py\n"
                   for k in range(n))


def test_off_by_default_the_whole_excerpt_goes_in_one_request_and_the_window_error_is_a_failure(small):
    summarizer = OpenAICompatibleSummarizer(small.url, None, "tiny", timeout=10)
    with pytest.raises(SummarizerError, match="HTTP 400 .*maximum context length is 2048 tokens"):
        summarizer(long_excerpt())
    assert len(small.requests) == 1 and "max_tokens" not in small.requests[0]
    assert small.requests[0]["messages"][1]["content"] == long_excerpt()


def test_with_the_window_every_request_fits_and_the_chunks_are_summarized_then_their_summaries(small):
    summarizer = OpenAICompatibleSummarizer(small.url, None, "tiny", timeout=10, context_window=2048)
    excerpt = long_excerpt()
    text = summarizer(excerpt)
    bodies = small.requests
    assert all(small.tokens(b) + b["max_tokens"] <= 2048 for b in bodies)
    assert all(b["messages"][0]["content"] == summary_prompt(300) for b in bodies)
    chunks = [b["messages"][1]["content"] for b in bodies[:-1]]
    assert len(chunks) >= 2 and "".join(chunks) == excerpt  # nothing lost, nothing repeated, in order
    assert all(c.startswith(("user: ", "tool: ")) for c in chunks)  # cut between records
    last = bodies[-1]["messages"][1]["content"]
    assert last.startswith(f"summary of part 1 of {len(chunks)}: S1[") and text == f"S{len(bodies)}" + text[2:]
    cost = summarizer.last_cost
    assert cost.calls == len(bodies) and cost.rounds == 2 and not cost.estimated
    assert cost.prompt_tokens == sum(small.tokens(b) for b in bodies) and cost.completion_tokens == 7 * len(bodies)


def test_an_excerpt_that_fits_is_one_request_with_room_for_the_reply(small):
    summarizer = OpenAICompatibleSummarizer(small.url, None, "tiny", timeout=10, context_window=2048,
                                            reply_tokens=300)
    assert summarizer("user: fix src/app.py\n").startswith("S1[")
    assert len(small.requests) == 1 and small.requests[0]["max_tokens"] == 300
    assert summarizer.last_cost.calls == 1 and summarizer.last_cost.rounds == 1


@pytest.mark.parametrize("wording", ["openai", "llama.cpp"])
def test_a_window_smaller_than_declared_is_learnt_from_the_servers_refusal(wording):
    server = WindowServer(1024, wording=wording)  # the summarizer believes 4096
    try:
        summarizer = OpenAICompatibleSummarizer(server.url, None, "tiny", timeout=10, context_window=4096,
                                                reply_tokens=200)
        text = summarizer(long_excerpt(20))
    finally:
        server.close()
    refused = [b for b in server.requests if server.tokens(b) + b["max_tokens"] > 1024]
    assert refused and text.startswith("S")
    assert summarizer.last_cost.calls == len(server.requests)  # the refused requests were made: they count


def test_tokens_not_reported_are_estimated_and_flagged():
    server = WindowServer(2048, report_usage=False)
    try:
        summarizer = OpenAICompatibleSummarizer(server.url, None, "tiny", timeout=10, context_window=2048)
        summarizer(long_excerpt())
    finally:
        server.close()
    cost = summarizer.last_cost
    assert cost.estimated and cost.prompt_tokens > len(long_excerpt().encode()) // 3 and "~" in cost.line()


@pytest.mark.timeout(240)  # pricing loads a tokenizer: slow on a busy machine
def test_the_ledger_counts_every_request_of_a_fitted_summary_and_its_tokens(small):
    msgs = session(8, "x" * 1500)
    fitted = OpenAICompatibleSummarizer(small.url, None, "tiny", timeout=10, context_window=2048)
    ledger = nh.replay(msgs, budget=9_000, policy=KEEP4, summarizer=fitted, pricing="gpt-4.1-mini")
    events = ledger.compactions
    assert events and all(e.kind == "summary" for e in events)
    assert ledger.totals.summarizer_calls == len(small.requests) > len(events)
    assert sum(e.summarizer_tokens[0] for e in events) == sum(small.tokens(b) for b in small.requests)
    assert ledger.totals.summarizer_input_tokens == sum(small.tokens(b) for b in small.requests)
    assert ledger.totals.summarizer_output_tokens == 7 * len(small.requests)
    assert all("summarizer requests in 2 rounds" in e.detail or "1 summarizer request" in e.detail for e in events)


def test_the_article_default_is_untouched_one_call_per_event(small):
    msgs = session(8, "x" * 1500)
    plain = OpenAICompatibleSummarizer(small.url, None, "tiny", timeout=10)
    ledger = nh.replay(msgs, budget=9_000, policy=KEEP4, summarizer=plain)
    assert all(e.note == PLACEHOLDER_NOTE for e in ledger.compactions)  # the window error: the placeholder
    assert ledger.totals.summarizer_calls == len(ledger.compactions) == len(small.requests)


def test_split_excerpt_keeps_order_and_bounds_and_never_cuts_a_character():
    text = "user: " + "名字" * 500 + "\nassistant: ok\n" + "tool: " + "x" * 3000 + "\n"
    chunks = split_excerpt(text, 1000)
    assert "".join(chunks) == text and all(len(c.encode()) <= 1000 for c in chunks)
    with pytest.raises(ValueError):
        split_excerpt(text, 8)
    assert merge_input(["a", "b"]) == "summary of part 1 of 2: a\nsummary of part 2 of 2: b\n"


def test_window_errors_are_recognised_in_the_wordings_servers_use():
    e = window_exceeded("This model's maximum context length is 8192 tokens. However, you requested 40512 tokens "
                        "(40000 in the messages, 512 in the completion).")
    assert (e.window, e.requested) == (8192, 40000)
    e = window_exceeded("Requested tokens (38211) exceed context window of 8192")
    assert (e.window, e.requested) == (8192, 38211)
    assert window_exceeded("HTTP 500: internal") is None


def test_fit_summary_refuses_a_window_with_no_room():
    with pytest.raises(ValueError, match="no room"):
        fit_summary("user: hi\n", lambda text, n: ("s", 1, 1), window=500, prompt="p", reply_tokens=512)


# ---------------------------------------------------------------- the cache of a real model's summaries


def test_cached_summaries_replay_offline_with_their_cost(tmp_path, small):
    msgs = session(8, "x" * 1500)
    live = OpenAICompatibleSummarizer(small.url, None, "tiny", timeout=10, context_window=2048)
    recording = CachedSummarizer(tmp_path / "s.json", fallback=live, meta={"model": "tiny", "prompt": summary_prompt()})
    first = nh.replay(msgs, budget=9_000, policy=KEEP4, summarizer=recording)
    path = recording.save()
    asked = len(small.requests)
    cached = CachedSummarizer(path)
    again = nh.replay(msgs, budget=9_000, policy=KEEP4, summarizer=cached)
    assert len(small.requests) == asked and cached.misses == 0 and cached.hits == len(again.compactions)
    assert [e.note for e in again.compactions] == [e.note for e in first.compactions]
    assert again.totals.summarizer_calls == first.totals.summarizer_calls == asked
    assert json.loads(path.read_text())["model"] == "tiny" and repr(cached).startswith("CachedSummarizer(s.json")


def test_a_cache_miss_is_a_failure_counted_and_gives_the_placeholder(tmp_path):
    path = tmp_path / "s.json"
    CachedSummarizer(path, fallback=lambda e: "x").save()
    cached = CachedSummarizer(path)
    result = nh.compact(session(8, "x" * 1500), budget=9_000, keep_recent=4, summarizer=cached)
    assert result.note == PLACEHOLDER_NOTE and cached.misses == 1 and "no cached summary" in result.failure
    excerpt = build_excerpt(result.dropped)
    cached.record(excerpt, "the goal was X", SummaryCost(3, 900, 40, 1.5, 2, False))
    again = nh.compact(session(8, "x" * 1500), budget=9_000, keep_recent=4, summarizer=cached)
    assert again.note == f"{SUMMARY_HEADER}\nthe goal was X" and cached.last_cost.calls == 3
    assert excerpt in cached and excerpt_key(excerpt) in cached.entries


def test_autosave_writes_each_new_summary_at_once(tmp_path):
    """An hour's regeneration interrupted after its first summary keeps that summary on disk."""
    out = tmp_path / "s.json"
    asked: list[str] = []

    def fallback(excerpt: str) -> str:
        asked.append(excerpt)
        if len(asked) == 2:
            raise KeyboardInterrupt  # the run is stopped while the second summary is being made
        return f"summary {len(asked)}"

    cache = CachedSummarizer(None, fallback=fallback, meta={"model": "tiny"}, autosave=out)
    assert cache("user: first\n") == "summary 1"
    with pytest.raises(KeyboardInterrupt):
        cache("user: second\n")
    kept = CachedSummarizer(out)
    assert "user: first\n" in kept and "user: second\n" not in kept and kept.meta["model"] == "tiny"
    assert cache("user: first\n") == "summary 1" and len(asked) == 2  # a hit: neither asked nor saved again
    assert not list(tmp_path.glob(".s.json.*"))  # no temporary file left behind


@pytest.mark.parametrize("text", ["", "{", "[]", '{"summaries": []}', '{"summaries": {"k": {"summary": 3}}}'])
def test_a_bad_summaries_file_is_one_line_naming_it(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json: not a summaries file|bad\.json: summaries\['k'\]") as info:
        CachedSummarizer(path)
    assert "\n" not in str(info.value)
    with pytest.raises(FileNotFoundError, match="nope.json"):
        CachedSummarizer(tmp_path / "nope.json")


# ---------------------------------------------------------------- a summarizer per run


@pytest.mark.timeout(240)  # five replays of two logs: slow only on a busy machine
def test_sweep_and_compare_policies_take_one_summarizer_per_run():
    logs = {"a": session(8, "x" * 1500), "b": session(9, "see src/util.py " * 90)}
    forgetful = CachedSummarizer(None, fallback=lambda excerpt: "The agent did some work.")
    named = {"extractive": nh.ExtractiveSummarizer(), "forgetful": forgetful}
    frame = nh.sweep(logs, budget=9_000, policy=KEEP4, summarizers=named)
    assert frame.columns[0] == "summarizer" and frame["summarizer"].tolist() == ["extractive"] * 2 + ["forgetful"] * 2
    alone = nh.sweep(logs, budget=9_000, policy=KEEP4)
    assert frame[frame["summarizer"] == "extractive"].drop(columns="summarizer").reset_index(drop=True).equals(alone)
    table = nh.compare_policies(logs, policies=[KEEP4], budget=9_000,
                                needed_later=True, summarizers=named)
    assert table.index.names == ["summarizer", "policy"] and len(table) == 2
    assert table.loc["extractive"]["retention"].iloc[0] > table.loc["forgetful"]["retention"].iloc[0]
    with pytest.raises(TypeError, match="non-empty mapping"):
        nh.sweep(logs, summarizers={})
    with pytest.raises(ValueError, match="out="):
        nh.sweep(logs, summarizers=named, out="x.csv")


def test_a_summarizer_that_measures_its_cost_is_found_by_its_protocol_not_by_probing():
    """``summary_cost`` reads ``last_cost`` of a ``MeasuredSummarizer`` only; the nanohermes policy's event
    carries it; a summarizer that measures nothing gives no tokens."""
    from nanohermes_nb.context.chunked import MeasuredSummarizer, WindowExceeded, summary_cost

    class Measured:
        def __init__(self) -> None:
            self.last_cost: SummaryCost | None = None

        def __call__(self, excerpt: str) -> str:
            self.last_cost = SummaryCost(2, 100 + len(excerpt), 7, 0.0, 1, False)
            return "the goal was X"

    measured = Measured()
    assert isinstance(measured, MeasuredSummarizer) and summary_cost(measured) is None
    assert not isinstance(nh.ExtractiveSummarizer(), MeasuredSummarizer)
    assert summary_cost(nh.ExtractiveSummarizer()) is None and summary_cost(lambda e: "x") is None
    msgs = session(12, body="x" * 900)
    events = nh.replay(msgs, budget=4_000, summarizer=measured).compactions
    assert events and all(e.summarizer_calls == 2 and e.summarizer_tokens[1] == 7 for e in events)
    plain = nh.replay(msgs, budget=4_000, summarizer=lambda e: "the goal was X").compactions
    assert all(e.summarizer_calls == 1 and e.summarizer_tokens is None for e in plain)
    assert WindowExceeded("refused").sent_bytes is None  # declared, not probed
