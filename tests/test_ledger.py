"""SPEC section 5: the replay ledger, checked by hand and against the plain reference."""

import json

import pandas as pd
import pytest
from builders import SYSTEM, assistant, session, tool, user

from nanohermes_nb import context_size, message_size, replay
from nanohermes_nb.context.sizing import request_bytes
from nanohermes_nb.engine.ledger import CAVEAT, reference_replay
from nanohermes_nb.policies import NanoHermesPolicy

SPEC_COLUMNS = ["request", "turn", "messages", "size", "size_before", "compacted", "dropped", "size_after",
                "cumulative_input"]


def small():
    return [SYSTEM, user("goal"), assistant("", ["c1"]), tool("c1", "r1"), assistant("", ["c2"]), tool("c2", "r2"),
            assistant("done"), user("thanks"), assistant("bye")]


def test_rows_by_hand():
    msgs = small()
    s = [message_size(m) for m in msgs]
    L = replay(msgs, summarizer=lambda e: "S")
    req = L.requests
    assert list(req.columns[: len(SPEC_COLUMNS)]) != [] and set(SPEC_COLUMNS) <= set(req.columns)
    assert list(req["request"]) == [1, 2, 3, 4]
    assert list(req["turn"]) == [1, 1, 1, 2]
    assert list(req["messages"]) == [2, 4, 6, 8]
    assert list(req["size"]) == [sum(s[:2]), sum(s[:4]), sum(s[:6]), sum(s[:8])]
    assert list(req["size_before"]) == [sum(s[:4]), sum(s[:6]), sum(s[:7]), sum(s[:9])]
    assert list(req["size_after"]) == list(req["size_before"])
    assert not req["compacted"].any() and (req["dropped"] == 0).all()
    assert list(req["cumulative_input"]) == list(req["size"].cumsum())
    assert L.totals.cumulative_input == L.totals.cumulative_input_no_compaction == req["size"].sum()
    assert L.notes == [] and L.caveat == CAVEAT


def test_missing_system_message_is_prepended_and_said():
    msgs = small()[1:]
    L = replay(msgs)
    assert L.notes and "prepended" in L.notes[0]
    assert L.messages[0] == {"role": "system", "content": ""}
    assert L.requests["size"].iloc[0] == message_size({"role": "system", "content": ""}) + message_size(msgs[0])


def test_compaction_rows_and_events():
    msgs = session(12, body="x" * 1000)
    budget = 8_000
    L = replay(msgs, budget=budget, summarizer=lambda e: "S")
    req = L.requests
    hit = req[req["compacted"]]
    assert len(hit) == L.totals.n_compactions == len(L.compactions) >= 1
    first = hit.iloc[0]
    assert first["size_before"] > budget and first["size_after"] < first["size_before"]
    ev = L.compactions[0]
    assert ev.dropped_count == first["dropped"] == len(ev.dropped) and ev.note == "[Earlier conversation summary]\nS"
    assert all(m in msgs for m in ev.dropped)  # nothing dropped is lost from the record
    # the next request carries the compacted context
    nxt = req[req["request"] == first["request"] + 1].iloc[0]
    assert nxt["size"] == first["size_after"]
    assert L.totals.cumulative_input < L.totals.cumulative_input_no_compaction
    assert L.totals.summarizer_calls == L.totals.n_compactions


def test_reply_without_tool_calls_runs_no_check():
    # pure chat over budget never compacts (trap 7)
    msgs = [SYSTEM] + [m for k in range(30) for m in (user("u" * 1000), assistant("a" * 1000))]
    L = replay(msgs, budget=5_000)
    assert L.totals.n_compactions == 0 and L.totals.peak_request > 5_000
    assert (L.requests["size_after"] == L.requests["size_before"]).all()


def test_trailing_unanswered_call_still_checks():
    """The last reply calls a tool whose result never came: the trigger is still checked after it.

    Everything before stays under the budget, so the only event possible is the one after that reply.
    """
    base = session(12, body="x" * 100)
    msgs = base + [assistant("y" * 4_000, ["last"])]
    L = replay(msgs, budget=context_size(base) + 500, summarizer=lambda e: "S")
    assert L.totals.n_compactions == 1
    assert [e.request for e in L.compactions] == [len(L.requests)]
    assert L.requests["compacted"].iloc[-1] and not L.requests["compacted"].iloc[:-1].any()


def test_matches_the_plain_reference():
    msgs = session(20, body="y" * 900, n_calls=2)
    for budget, keep in [(5_000, 10), (12_000, 4), (50_000, 10), (2_000, 1)]:
        fast = replay(msgs, budget=budget, summarizer=lambda e: "S", policy=NanoHermesPolicy(keep_recent=keep)).requests
        slow = pd.DataFrame(reference_replay(msgs, budget=budget, keep_recent=keep, summarizer=lambda e: "S"))
        pd.testing.assert_frame_equal(fast[slow.columns].reset_index(drop=True), slow, check_dtype=False)


def test_no_compaction_counterfactual_and_prefix_reuse():
    msgs = session(12, body="x" * 1000)
    L = replay(msgs, budget=8_000, summarizer=lambda e: "S")
    req = L.requests
    prepared = L.messages
    for _, row in req.iterrows():
        assert row["size_no_compaction"] == context_size(prepared[: row["index"]])
    # without an event in between, the whole previous request but its ']' is reused
    for k in range(1, len(req)):
        if not req["compacted"].iloc[k - 1]:
            assert req["prefix_reuse"].iloc[k] == req["request_bytes"].iloc[k - 1] - 1
    assert req["request_bytes"].iloc[0] == request_bytes(prepared[:2])
    after = req.index[req["compacted"]][0] + 1
    # after a compaction only the system message and the '[' survive (the summary differs from message 1)
    assert req["prefix_reuse"].iloc[after] < message_size(prepared[0]) + 40


def test_problems_columns():
    msgs = session(12, body="x" * 1000)
    L = replay(msgs, budget=8_000, summarizer=lambda e: "S")
    req = L.requests
    assert (req["problems_openai"] == 0).all()
    after = req.index[req["compacted"]][0] + 1
    assert req["problems_gemini"].iloc[after] == 1  # the system summary at index 1
    user_role = replay(msgs, budget=8_000, summarizer=lambda e: "S", policy=NanoHermesPolicy(summary_role="user"))
    assert (user_role.requests["problems_gemini"] == 0).all()


def test_token_columns_and_units():
    msgs = session(6)
    L = replay(msgs, tokens=["cl100k"])
    assert {"size_cl100k", "cumulative_cl100k"} <= set(L.requests.columns)
    assert L.totals.tokens["cl100k"] == L.requests["size_cl100k"].sum()
    T = replay(msgs, unit="cl100k", budget=10**9)
    assert list(T.requests["size"]) == list(L.requests["size_cl100k"])
    with pytest.raises(ValueError):
        replay(msgs, unit="furlongs")


def test_by_turn_table_shape():
    msgs = [SYSTEM]
    for t in range(4):
        msgs += [user(f"turn {t}"), assistant("", [f"a{t}"]), tool(f"a{t}", "z" * 3000), assistant(f"done {t}")]
    L = replay(msgs, budget=9_000, summarizer=lambda e: "S", policy=NanoHermesPolicy(keep_recent=3))
    bt = L.by_turn()
    assert list(bt.columns) == ["turn", "requests", "messages", "size", "action", "compacted", "size_after"]
    assert list(bt["turn"]) == [1, 2, 3, 4] and (bt["requests"] == 2).all()
    assert bt["compacted"].any()
    assert "read_file" in bt["action"].iloc[0]
    assert "over budget" in bt[bt["compacted"]]["action"].iloc[0]


def test_ledger_repr_and_summary():
    L = replay(session(6))
    assert "Ledger" in L._repr_html_() and "Counterfactual" in L._repr_html_()
    assert "requests" in L.summary()


def test_input_not_mutated():
    msgs = session(12, body="x" * 1000)
    before = json.dumps(msgs)
    replay(msgs, budget=5_000)
    assert json.dumps(msgs) == before


@pytest.mark.big
def test_50mb_transcript_loads_and_replays_within_a_few_copies(tmp_path):
    import gc
    import tracemalloc

    from nanohermes_nb import load_transcript

    code = "".join(f"{i:4d}  def handler_{i}(request): return render(request, 'views/page_{i}.html')\n"
                   for i in range(100))
    zh = "日志：请求已处理，耗时 12 毫秒。\n" * 30
    path = tmp_path / "big.json"
    with path.open("w", encoding="utf-8") as f:
        f.write('[{"role":"system","content":"agent"},{"role":"user","content":"refactor app/views.py"}')
        k = 0
        while f.tell() < 50_000_000:
            k += 1
            out = f"{k}\n" + code + (zh if k % 4 == 0 else "")
            f.write("," + json.dumps(assistant("", [f"c{k}"]), ensure_ascii=False))
            f.write("," + json.dumps(tool(f"c{k}", out), ensure_ascii=False))
        f.write("]")
    size = path.stat().st_size
    gc.collect()
    tracemalloc.start()
    try:
        L = replay(load_transcript(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert L.totals.n_requests == k and L.totals.n_compactions > 100
    assert peak < 5 * size, f"peak {peak / size:.1f}x the file"


def test_contexts_rebuild_every_request():
    msgs = session(14, body="x" * 1500, n_calls=2)
    L = replay(msgs, budget=9_000, summarizer=lambda e: "S")
    contexts = list(L.contexts())
    assert len(contexts) == len(L.requests) and L.totals.n_compactions >= 2
    for ctx, (_, row) in zip(contexts, L.requests.iterrows(), strict=True):
        assert len(ctx) == row["messages"] and context_size(ctx) == row["size"]


def test_context_of_one_request():
    msgs = session(14, body="x" * 1500)
    L = replay(msgs, budget=9_000, summarizer=lambda e: "S")
    k = int(L.requests.index[L.requests["compacted"]][0]) + 2  # the request right after a compaction
    ctx = L.context(k)
    assert ctx[1]["content"] == "[Earlier conversation summary]\nS"
    assert context_size(ctx) == L.requests["size"].iloc[k - 1]
    with pytest.raises(IndexError):
        L.context(0)


def test_a_count_is_named_n_and_the_old_name_warns_until_it_goes():
    """Issue 34: ``requests`` named a tuple, an int and a DataFrame, ``compactions`` events and counts. The counts
    are ``n_requests`` and ``n_compactions`` now; the columns keep their names; the old attributes still answer,
    with a ``DeprecationWarning`` that names the new one."""
    from nanohermes_nb.engine.recorded import RecordedSession

    msgs = session(12)
    ledger = replay(msgs, budget=3_000)
    t = ledger.totals
    assert t.n_requests == len(ledger.requests) == RecordedSession.of(msgs).n_requests
    assert t.n_compactions == len(ledger.compactions) >= 1
    assert ledger.records()[0]["request"] == 1 and {"requests", "compactions"} <= set(t.as_dict())
    assert (t.as_dict()["requests"], t.as_dict()["compactions"]) == (t.n_requests, t.n_compactions)
    for owner, old, new in ((t, "requests", "n_requests"), (t, "compactions", "n_compactions"),
                            (RecordedSession.of(msgs), "requests", "n_requests")):
        with pytest.warns(DeprecationWarning, match=rf"{type(owner).__name__}\.{old} is deprecated since 0\.3\.0; "
                                                    rf"use {type(owner).__name__}\.{new}"):
            assert getattr(owner, old) == getattr(owner, new)
