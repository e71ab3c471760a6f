"""The session logs coding agents write to disk, read as transcripts.

Claude Code (``~/.claude/projects``), Codex CLI (``~/.codex/sessions``), Gemini CLI
(``~/.gemini/tmp``), GitHub Copilot CLI (``~/.copilot/session-state``), any-agent
traces (``gen_ai.*`` span attributes) and Aider's Markdown chat history
(``.aider.chat.history.md``, no usage). ``read_agent_log`` is called by
``load_transcript`` before the strict transcript reader: it recognises a log from its
content (never its name) and returns None for anything else. A recognised log is read
leniently: what is sound is kept and ``Transcript.skipped`` says, one line per kind of
problem, what was left out and where. One module per agent; ``discovery`` finds them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..base import Bad, Transcript
from .aider import AIDER_FORMAT, is_aider_history, read_aider_history
from .any_agent import is_any_agent, read_any_agent
from .claude_code import is_claude_code, read_claude_code
from .codex import is_codex, read_codex
from .copilot import is_copilot, read_copilot
from .discovery import SessionInfo, find_sessions, iter_agent_log_paths
from .gemini import is_gemini, is_gemini_document, read_gemini, read_gemini_document
from .records import Notes, Record, iter_records

__all__ = ["read_agent_log", "read_agent_document", "sniff_jsonl", "AGENT_FORMATS", "find_sessions",
           "SessionInfo", "iter_agent_log_paths"]

AGENT_FORMATS = ("claude-code", "codex-rollout", "gemini-cli", "copilot-cli", "any-agent-trace", AIDER_FORMAT)

Reader = Callable[[list[Record], Notes, str], Transcript]
_JSONL: tuple[tuple[str, Callable[[dict], bool], Reader], ...] = (
    ("claude_code", is_claude_code, read_claude_code),
    ("codex_cli", is_codex, read_codex),
    ("gemini_cli", is_gemini, read_gemini),
    ("copilot_cli", is_copilot, read_copilot),
)
_SNIFF_RECORDS = 20
_SNIFF_BYTES = 8 << 20  # the first records are looked for here (a Codex session_meta line is ~50 KB)
_LEADING_SPACE = re.compile(rb"[ \t\r\n]*")


def sniff_jsonl(raw: bytes) -> str:
    """The agent whose JSONL log this is ("" if none): the most common among the first records."""
    space = _LEADING_SPACE.match(raw)  # always matches (perhaps nothing)
    start = space.end() if space else 0
    if raw[start:start + 1] != b"{":  # every agent's log is lines of objects
        return ""
    notes = Notes()
    votes: dict[str, int] = {}
    for k, record in enumerate(iter_records(raw[start:start + _SNIFF_BYTES], notes)):
        if k >= _SNIFF_RECORDS:
            break
        for agent, test, _ in _JSONL:
            if test(record.data):
                votes[agent] = votes.get(agent, 0) + 1
                break
    return max(votes, key=lambda a: votes[a]) if votes else ""


def read_agent_log(raw: bytes, path: str) -> Transcript | None:
    """The log as a Transcript, or None when it is no agent log this package reads.

    Raises ``Bad`` when it is an agent log but nothing usable is left in it.
    """
    if is_aider_history(raw):  # Markdown, not JSON: told by its first line
        return read_aider_history(raw, path)
    agent = sniff_jsonl(raw)
    if not agent:
        return None
    notes = Notes()
    test, reader = next((t, r) for a, t, r in _JSONL if a == agent)
    records = []
    for record in iter_records(raw, notes):
        if test(record.data):
            records.append(record)
        else:
            notes.add(f"record not in the {agent} format ({_what(record.data)}), left out", record.line)
    transcript = reader(records, notes, path)
    transcript.skipped = notes.lines() + transcript.skipped
    if not transcript:
        raise Bad("", _nothing_usable(agent, transcript.skipped))
    return transcript


def read_agent_document(data: Any, path: str) -> Transcript | None:
    """A whole-JSON agent log (Gemini CLI chat, any-agent trace) as a Transcript, else None."""
    if is_gemini_document(data):
        transcript = read_gemini_document(data, path)
    elif is_any_agent(data):
        transcript = read_any_agent(data, path)
    else:
        return None
    if not transcript:
        raise Bad("", _nothing_usable(transcript.agent, transcript.skipped))
    return transcript


def _nothing_usable(agent: str, skipped: tuple[str, ...]) -> str:
    """The one line for a log with nothing usable left (with the first thing left out, if any)."""
    article = "an" if agent[:1] in ("a", "e", "i", "o", "u") else "a"
    return f"{article} {agent} log with no usable message" + (f" ({skipped[0]})" if skipped else "")


def _what(data: dict) -> str:
    kind: Any = data.get("type")
    if isinstance(kind, str):
        return f"type {kind[:40]!r}"
    keys = ", ".join(repr(k[:20]) for k in list(data)[:3])
    return f"keys {keys}" if keys else "empty object"
