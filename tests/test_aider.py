"""Aider's ``.aider.chat.history.md`` read as a transcript, with no usage.

Built histories cover each rule of the reader (``transcripts/agentlogs/aider.py``); the vendored real
file (``data/agentlogs/aider/``, a cut of the one in ``../shared/agentlogs/aider/``) is read in full;
and, where pip can fetch the aider-chat wheel into ``.cache/peers/``, the messages are compared with
what aider's own reader of the file (``aider/utils.py``: ``split_chat_history_markdown``, run from the
wheel) makes of it.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from nanohermes_nb.cli import main
from nanohermes_nb.engine.usage_report import usage_rows
from nanohermes_nb.transcripts import TranscriptError, load_transcript
from nanohermes_nb.transcripts.agentlogs import find_sessions
from nanohermes_nb.transcripts.agentlogs.aider import is_aider_history

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "data" / "agentlogs" / "aider" / "mozgoslav_aider_v0.86.2_2026-04-22.cut455.md"
SHARED = ROOT.parent / "shared" / "agentlogs" / "aider" / "mozgoslav_aider_v0.86.2_2026-04-22.md"
TAG = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"

HISTORY = f"""
# aider chat started at 2026-04-22 22:40:12

> /usr/local/bin/aider --model openai/gpt-4.1  
> Aider v0.86.2  
> Main model: openai/gpt-4.1 with diff edit format  

#### fix the bug in  
#### parser.py  

<{TAG}>
look at the parser first
</{TAG}>

# The fix

Change line 3.

> Tokens: 2.1k sent, 300 received. Cost: $0.01 message, $0.01 session.  

#### thanks  

Done.

# aider chat started at 2026-04-22 23:00:00

> /usr/local/bin/aider --model openai/gpt-4.1  
> Model: openai/o3 with whole edit format  

#### again  

<think>short</think>
Sure.

# aider chat started at 2026-04-22 23:30:00

> /usr/local/bin/aider --restore-chat-history  

#### go on  

Going on.
"""


def _load(tmp_path: Path, text: str, name: str = ".aider.chat.history.md", newline: str = "\n") -> object:
    path = tmp_path / name
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return load_transcript(path)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_history_reads_as_aider_reads_it(tmp_path: Path, newline: str) -> None:
    t = _load(tmp_path, HISTORY, newline=newline)
    assert t.agent == "aider" and t.format == "aider-chat-history"
    assert [m["role"] for m in t] == ["user", "assistant", "user", "assistant", "user", "assistant", "user",
                                      "assistant"]
    assert t[0]["content"] == "fix the bug in\nparser.py", "the two spaces aider adds to each line are not sent"
    assert t[1]["reasoning_content"] == "look at the parser first"
    assert t[1]["content"] == "# The fix\n\nChange line 3.", "a reply's own heading stays (aider drops it)"
    assert t[5] == {"role": "assistant", "content": "Sure.", "reasoning_content": "short"}
    assert all(q.usage is None and q.time is None for q in t.requests), "the Tokens: lines are no bill"
    assert [q.message for q in t.requests] == [1, 3, 5, 7]
    assert [q.model for q in t.requests] == ["openai/gpt-4.1", "openai/gpt-4.1", "openai/o3", "openai/o3"]
    assert [(c.message, c.trigger) for c in t.compactions] == [(4, "restart")], \
        "a new run starts on an empty chat, unless its command line restores the history"
    assert t.skipped == ()


def test_the_content_tells_the_format_never_the_name(tmp_path: Path) -> None:
    assert _load(tmp_path, HISTORY, name="notes.txt").agent == "aider"
    assert not is_aider_history(b"# aider chat\n#### hi\n") and not is_aider_history(b"#### hi\n\nhello\n")
    assert is_aider_history(b"\xef\xbb\xbf\n\n# aider chat started at 2026-01-01 00:00:00")
    (tmp_path / "readme.md").write_text("# aider chat started at yesterday\n\n#### hi\n", encoding="utf-8")
    with pytest.raises(TranscriptError):  # not aider's header: refused as the JSON it is not, in one line
        load_transcript(tmp_path / "readme.md")


def test_damage_is_read_past_and_said_with_its_line(tmp_path: Path) -> None:
    raw = HISTORY.encode("utf-8").replace(b"Change line 3.", b"Change \xff line 3.") + b"\x00" * 64
    path = tmp_path / "h.md"
    path.write_bytes(raw)
    t = load_transcript(path)
    line = HISTORY.splitlines().index("Change line 3.") + 1
    assert t.skipped[0] == f"line {line}: bytes that are not UTF-8, replaced"
    assert any(s.endswith("NUL bytes, removed") for s in t.skipped)
    assert "\ufffd" in t[1]["content"] and "\x00" not in t[-1]["content"]
    assert path.read_bytes() == raw, "the input is never changed"


@pytest.mark.parametrize("text, reason", [
    ("\n# aider chat started at 2026-04-22 22:40:12\n\n", "no message"),
    ("# aider chat started at 2026-04-22 22:40:12\n> Aider v0.86.2  \n> ^C KeyboardInterrupt  \n", "no message"),
    ("# aider chat started at 2026-04-22 22:40:12\n#### \n\n\n", "no message"),
])
def test_a_history_with_nothing_of_the_user_s_or_the_model_s_is_one_line(tmp_path: Path, text: str,
                                                                       reason: str) -> None:
    path = tmp_path / "h.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TranscriptError) as err:
        load_transcript(path)
    message = str(err.value)
    assert message.startswith(f"{path}: an aider chat history with") and reason in message and "\n" not in message


def test_the_vendored_history(tmp_path: Path, capsys) -> None:
    t = load_transcript(VENDORED)
    assert len(t.requests) == 6 and all(q.usage is None for q in t.requests)
    assert {q.model for q in t.requests} == {"lm_studio/qwen3.6-35b-a3b-uncensored-hauhaucs-aggressive"}
    assert [(c.message, c.trigger) for c in t.compactions] == [(1, "restart")]
    assert all(m.get("reasoning_content") for m in t if m["role"] == "assistant")
    assert not any(TAG in m["content"] for m in t)
    found = find_sessions([VENDORED.parent])
    assert [(s.agent, s.requests, s.usage, s.compactions) for s in found] == [("aider", 6, "none", 0)]
    assert usage_rows(VENDORED.parent).rows == [], "no usage: nothing to bill"
    hidden = tmp_path / "project" / ".aider.chat.history.md"
    hidden.parent.mkdir()
    hidden.write_bytes(VENDORED.read_bytes())
    assert [s.agent for s in find_sessions([tmp_path])] == ["aider"], "aider's hidden file in a project is found"
    assert main(["ledger", str(VENDORED), "--json"]) == 0
    rows = __import__("json").loads(capsys.readouterr().out)
    assert [r["request"] for r in rows if r["event"] == "restart"] == [1]


@pytest.mark.skipif(not SHARED.is_file(), reason="needs ../shared/agentlogs")
@pytest.mark.corpus_extended
def test_the_whole_real_history() -> None:
    t = load_transcript(SHARED)
    assert len(t.requests) == 16 and [c.message for c in t.compactions] == [1, 18]
    assert load_transcript(VENDORED)[:] == t[:12], "the vendored cut is the file's beginning"


# ---------------------------------------------------------------- against aider's own reader

AIDER = "aider-chat==0.86.2"


def _aider_functions() -> dict:
    """``split_chat_history_markdown`` (utils.py) and ``remove_reasoning_content`` (reasoning_tags.py) from the
    aider-chat wheel, fetched with pip into ``.cache/peers/``; only those two functions are run (the modules
    import aider's whole application)."""
    cache = ROOT / ".cache" / "peers" / "aider"
    wheels = sorted(cache.glob("aider_chat-0.86.2-*.whl"))
    if not wheels:
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(cache),
                               AIDER], capture_output=True, text=True, timeout=300)
        wheels = sorted(cache.glob("aider_chat-0.86.2-*.whl"))
        if done.returncode != 0 or not wheels:
            pytest.skip(f"pip download {AIDER} failed: {(done.stderr.strip().splitlines() or [''])[-1]}")
    found: dict = {"re": re}
    with zipfile.ZipFile(wheels[0]) as wheel:
        for module, name in (("aider/utils.py", "split_chat_history_markdown"),
                             ("aider/reasoning_tags.py", "remove_reasoning_content")):
            tree = ast.parse(wheel.read(module).decode("utf-8"))
            node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
            exec(compile(ast.Module([node], []), module, "exec"), found)  # noqa: S102 -- aider's own function
    return found


@pytest.mark.peers  # aider's own reader, from the wheel pip downloads on first use
@pytest.mark.parametrize("path", [p for p in (VENDORED, SHARED) if p.is_file()], ids=lambda p: p.name)
def test_the_messages_are_the_ones_aider_itself_reads_back(path: Path) -> None:
    aider = _aider_functions()
    text = path.read_text(encoding="utf-8")
    theirs = aider["split_chat_history_markdown"](text)
    mine = load_transcript(path)

    def norm(role: str, content: str, headings: bool = True) -> tuple[str, str]:
        if role == "assistant":
            content = aider["remove_reasoning_content"](content, TAG)
        lines = [line.rstrip() for line in content.strip().splitlines() if headings or not line.startswith("# ")]
        return role, "\n".join(lines)

    # the one departure, on purpose: aider drops every line starting "# ", a reply's own headings too
    assert [norm(m["role"], m["content"]) for m in theirs] == \
        [norm(m["role"], m["content"], headings=False) for m in mine]
    kept = sum(line.startswith("# ") for m in mine for line in m["content"].splitlines())
    assert kept == (1 if path == SHARED else 0), "the real file has one reply with a heading of its own"
