"""What a session's file says beyond its messages, for the cost model: project, start, continuation,
1-hour writes, hidden thinking and the context the agent injected.

Read from the file's bytes (the readers in ``transcripts`` keep the messages and the flat usage;
these are the facts only the cost model needs); only the lines that can carry them are parsed:

- ``project``: the first ``cwd`` the file names (Claude Code records, Codex ``session_meta``);
- ``continued``: when the file opens midway through a conversation (its first record points to
  a parent the file does not hold: Claude Code's ``parentUuid``, as Entire's checkpoints and a
  resumed session write it), the seconds between that first record, the end of the turn before,
  and the first request; None for a file that opens on its own start;
- ``writes_1h``: per request (``AgentRequest.id``, Claude Code's ``message.id``) the share of its
  cache writes made for one hour (``usage.cache_creation.ephemeral_1h_input_tokens``);
- ``thinking``: per request, the characters of its reply's thinking ``signature`` s (and of
  ``redacted_thinking`` data). The signature carries the encrypted *full* thinking, which the API
  decrypts and puts back in the context on the next request, while the ``thinking`` text the log
  shows is a summary or empty (Anthropic, extended thinking: "the signature field still carries
  the encrypted full thinking", https://platform.claude.com/docs/en/build-with-claude/extended-thinking,
  "Controlling thinking display"). Its length measures the thinking the bill counts;
- ``injected``: per request, o200k tokens of what Claude Code added to the context since the
  request before without a message record of its own: ``attachment`` records (file-change notes,
  task reminders, hook output, skill and agent listings, files restored after a compaction) and
  ``isMeta`` user records. None for every request when the file holds no ``attachment`` record
  at all: Claude Code versions before 2.1.5x did not log them (their injections are unshown).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..transcripts.session import Session, SessionLike

__all__ = ["SessionMeta", "session_meta"]

_CWD = re.compile(rb'"cwd":\s*"((?:[^"\\]|\\.)*)"')
_TIME = re.compile(rb'"timestamp":\s*"([^"]+)"')
_ID = re.compile(rb'"id":\s*"(msg_[^"]+)"')
_H1 = re.compile(rb'"ephemeral_1h_input_tokens":\s*(\d+)')
_M5 = re.compile(rb'"ephemeral_5m_input_tokens":\s*(\d+)')
_ATTACHMENT = re.compile(rb'"type":\s*"attachment"')
_HEAD = 65_536
# fields of an attachment that are bookkeeping, not text the model is sent
_NOT_SENT = frozenset({"type", "toolUseID", "source_uuid", "timestamp", "hookName", "hookEvent", "rawContent",
                       "filePath", "displayPath", "uuid", "origin", "commandMode", "itemCount"})


@dataclass(frozen=True)
class SessionMeta:
    """See the module docstring."""

    project: str = ""
    continued: float | None = None
    writes_1h: dict = field(default_factory=dict)  # request id -> share of its writes made for 1 hour
    thinking: dict = field(default_factory=dict)  # request id -> signature characters of its reply's thinking
    injected: dict | None = None  # request id -> o200k tokens injected since the request before; None: not logged


def _text(raw: bytes) -> str:
    try:
        value = json.loads(b'"' + raw + b'"')
    except ValueError:
        return ""
    return value if isinstance(value, str) else ""


def _first_record(head: bytes) -> dict:
    for line in head.splitlines()[:5]:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return {}


def _writes_1h(raw: bytes) -> dict:
    out: dict = {}
    for line in raw.splitlines():
        if b"ephemeral_1h_input_tokens" not in line:
            continue
        ident, hour, five = _ID.search(line), _H1.search(line), _M5.search(line)
        if ident is None or hour is None:
            continue
        key = ident.group(1).decode("ascii", "replace")
        if key in out:
            continue
        h, m = int(hour.group(1)), int(five.group(1)) if five else 0
        out[key] = h / (h + m) if h + m else 0.0
    return out


def _strings(value: Any, skip: frozenset = frozenset()) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if k not in skip:
                yield from _strings(v, skip)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, skip)


def _records(raw: bytes) -> Iterator[dict]:
    """The main thread's records that can carry thinking or injected context (sidechains left out)."""
    for line in raw.splitlines():
        if b'"signature"' not in line and b'"redacted_thinking"' not in line and b'"attachment"' not in line \
                and b'"isMeta"' not in line and b'"assistant"' not in line and b'compact_boundary' not in line:
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and not data.get("isSidechain"):
            yield data


def _thinking_chars(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    n = 0
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "thinking":
            n += len(block.get("signature") or "")
        elif isinstance(block, Mapping) and block.get("type") == "redacted_thinking":
            n += len(block.get("data") or "")
    return n


def _hidden(raw: bytes, logged: bool) -> tuple[dict, dict | None]:
    """Per request id: signature characters of its reply, and the tokens injected since the request before."""
    from ..context.sizing import count_tokens

    thinking: dict = {}
    injected: dict | None = {} if logged else None
    pending = 0.0
    for data in _records(raw):
        kind = data.get("type")
        if kind == "system" and data.get("subtype") == "compact_boundary":
            pending = 0.0  # what came before a compaction is summarised away
        elif kind == "attachment" or (kind == "user" and data.get("isMeta")):
            body = data.get("attachment") if kind == "attachment" else (data.get("message") or {}).get("content")
            pending += sum(count_tokens(s, "o200k") for s in _strings(body, _NOT_SENT) if s)
        elif kind == "assistant" and isinstance(data.get("message"), Mapping):
            msg = data["message"]
            ident = msg.get("id")
            if not isinstance(ident, str):
                continue
            thinking[ident] = thinking.get(ident, 0) + _thinking_chars(msg.get("content"))
            if injected is not None and ident not in injected:
                injected[ident], pending = pending, 0.0
    return {k: v for k, v in thinking.items() if v}, injected


def session_meta(transcript: SessionLike) -> SessionMeta:
    """The facts above for a loaded agent log (an empty ``SessionMeta`` when it has no readable file)."""
    from .calibrate import seconds

    log = Session.of(transcript)
    path = log.path
    if not path:
        return SessionMeta()
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return SessionMeta()
    head = raw[:_HEAD]
    cwd = _CWD.search(head)
    first = _first_record(head)
    continued = None
    requests = [r for r in log.requests if r.time is not None]
    stamp = _TIME.search(head)
    if first.get("parentUuid") and requests and stamp is not None:
        start = seconds(stamp.group(1).decode("ascii", "replace"))
        t0 = seconds(requests[0].time)
        if start is not None and t0 is not None and t0 >= start:
            continued = t0 - start
    if log.agent != "claude_code":
        return SessionMeta(_text(cwd.group(1)) if cwd else "", continued)
    thinking, injected = _hidden(raw, _ATTACHMENT.search(raw) is not None)
    return SessionMeta(_text(cwd.group(1)) if cwd else "", continued, _writes_1h(raw), thinking, injected)
