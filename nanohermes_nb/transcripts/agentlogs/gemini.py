"""Gemini CLI chats (``~/.gemini/tmp/<project>/chats/``) as a transcript.

Two forms: the chat document (one JSON object: ``sessionId``, ``projectHash``,
``messages``) and the newer JSONL (a header line with the same keys, ``{"$set": ...}``
lines updating the header, and message lines, where a message written again with the
same ``id`` replaces the earlier copy: the later one adds ``toolCalls``). Messages are
ordered by their first appearance. ``user`` messages become user messages, ``gemini``
messages assistant messages (``thoughts`` as ``reasoning_content``, ``toolCalls`` as
tool calls, each call's ``result`` as its tool message), one ``AgentRequest`` each with
the ``tokens`` it reports: ``input`` holds ``cached``; ``tool`` (tool-use prompt tokens)
is added to the prompt and ``thoughts`` to the completion, as Gemini bills them.
``info`` / ``error`` / ``warning`` messages are the CLI's own notices, not context.
"""

from __future__ import annotations

import json
from typing import Any

from ..base import AgentRequest, Message, ReportedUsage, Transcript, tool_call
from .records import Counts, Notes, Record, epoch, text_of
from .thread import Thread

__all__ = ["read_gemini", "read_gemini_document", "is_gemini", "is_gemini_document"]

_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
_TOKEN_KEYS = ("input", "output", "cached", "thoughts", "tool", "total")


def is_gemini(data: dict) -> bool:
    """A line of the JSONL form: the header, a ``$set`` update or a message."""
    if "$set" in data or ("sessionId" in data and "projectHash" in data):
        return True
    kind = data.get("type")
    return isinstance(kind, str) and kind in _TYPES and "id" in data and "uuid" not in data and "payload" not in data


def is_gemini_document(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    messages = data.get("messages")
    return ("sessionId" in data and "projectHash" in data and isinstance(messages, list)
            and all(not isinstance(m, dict) or "role" not in m for m in messages[:5]))


def read_gemini(records: list[Record], notes: Notes, path: str) -> Transcript:
    """The JSONL form: the last copy of each message id, in order of first appearance."""
    latest: dict[Any, Record] = {}
    for r in _documents_expanded(records):
        if "$set" in r.data or "projectHash" in r.data:
            continue
        key = r.data.get("id")
        latest[key if isinstance(key, (str, int)) else ("line", r.line)] = r
    return _build(list(latest.values()), notes, path)


def _documents_expanded(records: list[Record]) -> list[Record]:
    """A chat document written on one line (minified) is a header holding its ``messages``: read them."""
    out = []
    for r in records:
        out.append(r)
        messages = r.data.get("messages") if "projectHash" in r.data else None
        if isinstance(messages, list):
            out.extend(Record(r.line, m) for m in messages if isinstance(m, dict))
    return out


def read_gemini_document(data: dict, path: str) -> Transcript:
    notes = Notes()
    records = [Record(k, m) for k, m in enumerate(data["messages"]) if isinstance(m, dict)]
    transcript = _build(records, notes, path, where="message")
    transcript.skipped = notes.lines()
    return transcript


def _build(records: list[Record], notes: Notes, path: str, where: str = "line") -> Transcript:
    thread = Thread(notes)
    for r in records:
        kind = r.data.get("type") if isinstance(r.data.get("type"), str) else ""
        if kind == "user":
            thread.add({"role": "user", "content": _text(r.data.get("content"))})
        elif kind == "gemini":
            _assistant(thread, r)
        elif kind not in _TYPES:
            notes.add(f"message of unknown type {str(kind)[:40]!r}, left out", r.line)
    thread.close_pending()
    return Transcript(thread.messages, path=path, format="gemini-cli", agent="gemini_cli",
                      requests=thread.requests)


def _assistant(thread: Thread, r: Record) -> None:
    data = r.data
    message: Message = {"role": "assistant", "content": _text(data.get("content")) or None}
    thoughts = data.get("thoughts")
    if isinstance(thoughts, list):
        text = "\n".join(f"{t.get('subject', '')}: {t.get('description', '')}".strip(": ")
                         for t in thoughts if isinstance(t, dict))
        if text:
            message["reasoning_content"] = text
    listed = data.get("toolCalls")
    calls = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    if calls:
        message["tool_calls"] = [tool_call(_call_id(c, r, j), str(c.get("name") or "tool"),
                                           json.dumps(c.get("args") or {}, ensure_ascii=False), "")
                                 for j, c in enumerate(calls)]
    index = thread.add(message)
    thread.add_calls(message, r.line)
    thread.requests.append(AgentRequest(message=index, id=str(data.get("id") or f"line-{r.line}"),
                                        time=epoch(data.get("timestamp")), model=str(data.get("model") or ""),
                                        usage=_usage(data.get("tokens"), Counts(thread.notes, r.line))))
    for j, c in enumerate(calls):
        if "result" in c:
            thread.add_result(_call_id(c, r, j), _result(c.get("result")), r.line)


def _call_id(call: dict, r: Record, j: int) -> str:
    value = call.get("id")
    return value if isinstance(value, str) and value else f"call_{r.line}_{j}"


def _result(result: Any) -> str:
    """A tool result: each ``functionResponse.response`` (its ``output`` when it has one)."""
    texts = []
    for part in result if isinstance(result, list) else [result]:
        response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict) and isinstance(response.get("output"), str):
            texts.append(response["output"])
        elif response is not None:
            texts.append(json.dumps(response, ensure_ascii=False))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def _text(content: Any) -> str:
    return text_of(content) if not isinstance(content, str) else content


def _usage(tokens: Any, counts: Counts) -> ReportedUsage | None:
    if not isinstance(tokens, dict):
        return None
    raw = {k: counts.get(tokens, k) for k in _TOKEN_KEYS if k in tokens}
    if counts.bad:
        return None
    get = raw.get
    return ReportedUsage(prompt_tokens=get("input", 0) + get("tool", 0), cached_tokens=get("cached", 0),
                         completion_tokens=get("output", 0) + get("thoughts", 0),
                         reasoning_tokens=get("thoughts", 0), raw=raw, raw_first=raw)
