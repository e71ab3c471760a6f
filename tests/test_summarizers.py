"""The LLM summarizer against a real chat-completions server on 127.0.0.1, and the offline one."""

import json
import socket
import threading

import pytest
from builders import session
from hypothesis import given, settings
from hypothesis import strategies as st
from servers import completion_body, send, start_server

from nanohermes_nb import ExtractiveSummarizer, OpenAICompatibleSummarizer, compact
from nanohermes_nb.context.compaction import (
    PLACEHOLDER_NOTE,
    SUMMARY_HEADER,
    build_excerpt,
)
from nanohermes_nb.context.summarizers import (
    SummarizerError,
    find_paths,
    summary_prompt,
)

KEY = "sk-test-SECRET-0123456789"


class ChatServer:
    """A tiny OpenAI-compatible endpoint; ``mode`` picks the answer."""

    def __init__(self):
        self.mode = "ok"
        self.requests = []
        self.release = threading.Event()  # a "hang" answer waits for it: set when the server closes
        self.httpd = start_server("127.0.0.1", post=self._answer)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _answer(self, h):
        body = h.rfile.read(int(h.headers.get("Content-Length", 0)))
        self.requests.append({"path": h.path, "headers": dict(h.headers), "body": json.loads(body)})
        mode = self.mode
        if mode == "hang":
            self.release.wait(60)
        if mode == "http500":
            return self._send(h, 500, b'{"error": {"message": "upstream exploded"}}')
        if mode == "http401-echo":
            # a badly behaved server echoing the credential back
            return self._send(h, 401, json.dumps({"error": "bad key " + h.headers["Authorization"]}).encode())
        if mode == "not-json":
            return self._send(h, 200, b"<html>gateway</html>")
        if mode == "no-choices":
            return self._send(h, 200, b'{"id": "x", "object": "chat.completion"}')
        content = {"ok": "  The user wants X. Edited src/app.py.  \n", "empty": "   ", "null": None}.get(mode, "ok")
        self._send(h, 200, completion_body({"role": "assistant", "content": content}).encode())

    @staticmethod
    def _send(h, code, payload):
        send(h, code, payload, content_type="application/json")

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat():
    s = ChatServer()
    yield s
    s.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_one_non_streaming_request_without_tools(chat):
    llm = OpenAICompatibleSummarizer(chat.url, KEY, "test-model")
    assert llm("user: do X\n") == "The user wants X. Edited src/app.py."
    (req,) = chat.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == f"Bearer {KEY}"
    body = req["body"]
    assert body["model"] == "test-model" and body["temperature"] == 0 and body["stream"] is False
    assert "tools" not in body
    assert body["messages"][0] == {"role": "system", "content": summary_prompt(300)}
    assert body["messages"][1] == {"role": "user", "content": "user: do X\n"}
    prompt = summary_prompt(300).lower()
    for needle in ("goal", "decisions", "file path", "current state", "300 words", "summary text only"):
        assert needle in prompt


def test_compact_uses_the_llm_summary(chat):
    llm = OpenAICompatibleSummarizer(chat.url, KEY, "m")
    msgs = session(10)
    r = compact(msgs, budget=1000, summarizer=llm)
    assert r.note == SUMMARY_HEADER + "\nThe user wants X. Edited src/app.py." and r.failure is None
    assert chat.requests[0]["body"]["messages"][1]["content"] == build_excerpt(r.dropped)


@pytest.mark.parametrize("mode, reason", [
    ("http500", "HTTP 500"),
    ("http401-echo", "HTTP 401"),
    ("not-json", "malformed response"),
    ("no-choices", "malformed response"),
    ("empty", "empty reply"),
    ("null", "empty reply"),
])
def test_every_failure_is_a_reason_and_the_placeholder(chat, mode, reason):
    chat.mode = mode
    llm = OpenAICompatibleSummarizer(chat.url, KEY, "m")
    with pytest.raises(SummarizerError) as err:
        llm("user: hi\n")
    assert reason in str(err.value) and KEY not in str(err.value)
    r = compact(session(10), budget=1000, summarizer=llm)
    assert r.note == PLACEHOLDER_NOTE and reason in r.failure and KEY not in r.failure
    assert llm.failures and all(KEY not in f for f in llm.failures)


def test_connection_refused_is_a_reason():
    llm = OpenAICompatibleSummarizer(f"http://127.0.0.1:{free_port()}/v1", KEY, "m", timeout=2)
    r = compact(session(10), budget=1000, summarizer=llm)
    assert r.note == PLACEHOLDER_NOTE and "connection failed" in r.failure and KEY not in r.failure


@pytest.mark.timeout(30)
def test_timeout_is_a_reason(chat):
    chat.mode = "hang"  # the server answers only when it closes: without the deadline this test hangs
    llm = OpenAICompatibleSummarizer(chat.url, KEY, "m", timeout=0.3)
    r = compact(session(10), budget=1000, summarizer=llm)
    assert r.note == PLACEHOLDER_NOTE and "timed out after 0.3 s" in r.failure


def test_the_key_never_shows(chat, caplog):
    llm = OpenAICompatibleSummarizer(chat.url, KEY, "m")
    assert KEY not in repr(llm) and KEY not in str(llm) and "api_key=<set>" in repr(llm)
    chat.mode = "http401-echo"
    with caplog.at_level("DEBUG"):
        compact(session(10), budget=1000, summarizer=llm)
    assert KEY not in caplog.text


def test_configured_from_environment(chat):
    env = {"NANOHERMES_LLM_BASE_URL": chat.url, "NANOHERMES_LLM_API_KEY": KEY, "NANOHERMES_LLM_MODEL": "env-model"}
    llm = OpenAICompatibleSummarizer.from_env(env)
    assert llm("user: x\n")
    assert chat.requests[0]["body"]["model"] == "env-model"
    assert OpenAICompatibleSummarizer.from_env({}) is None


# --- the offline extractive summarizer ---------------------------------------------

EXCERPT = (
    "user: Please make the CLI accept --json and keep the old text output. Files live in src/cli.py.\n"
    "assistant: I will add a --json flag instead of a new subcommand because the output is the same data.\n"
    "tool: 1\u2192import argparse\n2\u2192def main(): ...\n"
    "assistant: Updated src/cli.py and tests/test_cli.py to cover the flag.\n"
    "tool: ===== 12 passed in 0.3s =====\n"
)


def test_extractive_keeps_goal_decisions_paths_state():
    s = ExtractiveSummarizer()(EXCERPT)
    lines = s.splitlines()
    assert lines[0].startswith("Goal: Please make the CLI accept --json")
    assert lines[1].startswith("Decisions: ") and "--json flag instead" in lines[1]
    assert lines[2] == "Files: src/cli.py, tests/test_cli.py"
    assert lines[3].startswith("State: ") and "12 passed" in lines[3]


def test_extractive_is_deterministic_and_under_300_words():
    long = "user: " + "goal word " * 400 + "\n" + "".join(
        f"assistant: I will change module{k}/file{k}.py because reason {k} matters a lot here.\n" for k in range(200))
    a, b = ExtractiveSummarizer()(long), ExtractiveSummarizer()(long)
    assert a == b and len(a.split()) <= 300
    assert len(ExtractiveSummarizer(max_words=50)(long).split()) <= 50


def test_extractive_rolling_summary_carries_the_goal_and_files():
    first = ExtractiveSummarizer()(EXCERPT)
    second_excerpt = f"system: {SUMMARY_HEADER}\n{first}\nassistant: Now I will update docs/usage.md.\n"
    second = ExtractiveSummarizer()(second_excerpt)
    assert second.splitlines()[0] == first.splitlines()[0]
    assert "src/cli.py" in second and "docs/usage.md" in second


def test_records_and_excerpt_paths_agree():
    from nanohermes_nb.context.compaction import excerpt_records
    from nanohermes_nb.context.summarizers import parse_excerpt

    msgs = session(6)
    assert parse_excerpt(build_excerpt(msgs)) == excerpt_records(msgs)
    s = ExtractiveSummarizer()
    assert s(build_excerpt(msgs)) == s.summarize_records(excerpt_records(msgs))


def test_find_paths():
    text = "edit ./src/a.py and docs/x.md, not http://example.com/a.py nor 3.14 nor Mozilla/5.0; also setup.cfg"
    assert find_paths(text) == ["src/a.py", "docs/x.md", "setup.cfg"]


_TEXT = st.lists(st.sampled_from(list("ab.!?。 \t\n\r\x85\u3000/_-5xyz") + ["src/", ".py", "\u2028"]),
                max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_sentences_split_as_the_plain_pattern_does(text):
    """The sentence pattern names its first character up front for speed; the splits are the plain pattern's."""
    import re

    from nanohermes_nb.context.summarizers import _SENTENCE

    assert _SENTENCE.split(text) == re.split(r"(?<=[.!?。！？])\s+|\n+", text)


@settings(max_examples=300, deadline=None)
@given(_TEXT, _TEXT)
def test_a_text_and_its_trimmed_excerpt_line_share_their_paths(text, pad):
    """find_paths keys its memo by the stripped text: whitespace around a text never changes its paths."""
    from nanohermes_nb.context.summarizers import _TEXT_PATHS, _WORD_PATHS, _word_paths

    expected = list(dict.fromkeys(p for w in text.split() for p in _word_paths(w)))
    _TEXT_PATHS.clear(), _WORD_PATHS.clear()
    space = "".join(c for c in pad if c.isspace())
    assert find_paths(space + text + space) == expected
    assert find_paths(text) == expected


def _fit_words_by_lists(lines, max_words):
    """The trimming as first written, on word lists (the oracle for the count-based one)."""
    words = [ln.split(" ") for ln in lines]
    while sum(len(w) for w in words) > max_words:
        longest = max(range(len(words)), key=lambda k: len(words[k]))
        words[longest] = words[longest][: max(2, len(words[longest]) - 10)]
        if sum(len(w) for w in words) > max_words and all(len(w) <= 2 for w in words):
            break
    return "\n".join(" ".join(w) for w in words)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "bb", "", "src/x.py", "…"]), max_size=60).map(" ".join),
                min_size=1, max_size=5), st.integers(0, 80))
def test_trimming_on_word_counts_equals_trimming_word_lists(lines, max_words):
    from nanohermes_nb.context.summarizers import _fit_words

    assert _fit_words(lines, max_words) == _fit_words_by_lists(lines, max_words)
