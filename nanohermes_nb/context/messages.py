"""What every layer needs to know about one chat message, in one place.

A message is a mapping in OpenAI chat-completions form: a ``role``, a ``content``
(a string, or a list of parts with ``text``), ``tool_calls`` on an assistant
message and ``tool_call_id`` on a tool result. The helpers here read those
fields defensively (real logs are untidy), render a call as ``name(arguments)``,
and pair each tool result with the call it answers. Nothing here mutates a
message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "Message",
    "role_of",
    "text_of",
    "calls_of",
    "call_id",
    "call_name",
    "call_arguments",
    "render_call",
    "call_ids",
    "pair_tool_results",
    "tool_call_of",
    "repair_tool_pairs",
]

Message = Mapping[str, Any]


def role_of(message: Any) -> Any:
    """A message's role, or None for anything that is not a mapping."""
    if type(message) is dict:
        return message.get("role")
    return message.get("role") if isinstance(message, Mapping) else None


def text_of(message: Any) -> str:
    """The text content of a message: a string as is, a list of parts joined by one space."""
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    return ""


def calls_of(message: Any) -> list:
    """The message's ``tool_calls`` list, or an empty list."""
    calls = message.get("tool_calls") if isinstance(message, Mapping) else None
    return calls if isinstance(calls, list) else []


def call_id(call: Any) -> Any:
    return call.get("id") if isinstance(call, Mapping) else None


def call_ids(message: Any) -> list:
    """The ids of a message's tool calls, in order (None where a call has none)."""
    return [call_id(c) for c in calls_of(message)]


def _function(call: Any) -> Mapping[str, Any] | None:
    fn = call.get("function") if isinstance(call, Mapping) else None
    return fn if isinstance(fn, Mapping) else None


def call_name(call: Any, default: str = "?") -> str:
    fn = _function(call)
    name = fn.get("name") if fn is not None else None
    return str(name) if name else default


def call_arguments(call: Any) -> str:
    """A call's arguments as the JSON text the model wrote (non-strings serialized compactly)."""
    fn = _function(call)
    args = fn.get("arguments", "") if fn is not None else ""
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def render_call(call: Any) -> str:
    """``name(arguments)``: how a call reads in an excerpt or a table."""
    fn = _function(call)
    if fn is None:
        return "?()"
    return f"{fn.get('name', '?')}({call_arguments(call)})"


def pair_tool_results(messages: Sequence[Message]) -> dict[int, tuple[int, int]]:
    """Tool message index -> (assistant index, call position), matched by position.

    The API pairs a result with the first unanswered call carrying its id in the
    latest assistant message, so ids reused across turns pair correctly. A result
    that answers nothing (an orphan) is left out; any non-tool message closes the
    calls still open.
    """
    out: dict[int, tuple[int, int]] = {}
    pending: list[tuple[Any, int]] = []
    owner = -1
    for i, m in enumerate(messages):
        role = role_of(m)
        if role == "tool":
            cid = m.get("tool_call_id")
            for k, (pid, pos) in enumerate(pending):
                if pid == cid:
                    out[i] = (owner, pos)
                    del pending[k]
                    break
            continue
        pending = []
        if role == "assistant" and calls_of(m):
            owner = i
            pending = [(call_id(c), p) for p, c in enumerate(calls_of(m))]
    return out


def tool_call_of(messages: Sequence[Message], pairs: Mapping[int, tuple[int, int]], i: int) -> tuple[str, str]:
    """(tool name, arguments JSON) of the call the tool message at ``i`` answers; ``unknown`` if none."""
    hit = pairs.get(i)
    if hit is None:
        return "unknown", ""
    owner, pos = hit
    call = calls_of(messages[owner])[pos]
    if _function(call) is None:
        return "unknown", ""
    return call_name(call, "unknown"), call_arguments(call)


def _open_at_end(messages: Sequence[Message]) -> int:
    """Index of an assistant message with calls followed only by tool messages, else -1."""
    for i in range(len(messages) - 1, -1, -1):
        role = role_of(messages[i])
        if role == "tool":
            continue
        return i if role == "assistant" and calls_of(messages[i]) else -1
    return -1


def repair_tool_pairs(messages: Sequence[Message]) -> tuple[list, int]:
    """Make call/result pairing legal again, by position; returns (messages, repairs).

    A tool result that answers no pending call is dropped; calls of an assistant
    message left unanswered when the next non-tool message arrives are stripped
    from a copy of that message (hermes-agent's ``_sanitize_tool_pairs``
    strategy), with ``(tool call removed)`` as content when nothing else is left.
    Calls still open at the very end are left alone: their results may be on the
    way. The input is not mutated.
    """
    pairs = pair_tool_results(messages)
    answered: dict[int, set[int]] = {}
    for owner, pos in pairs.values():
        answered.setdefault(owner, set()).add(pos)
    still_open = _open_at_end(messages)
    out: list = []
    repairs = 0
    for i, m in enumerate(messages):
        role = role_of(m)
        if role == "tool" and i not in pairs:
            repairs += 1  # an orphan result: dropped
            continue
        calls = calls_of(m) if role == "assistant" else []
        got = answered.get(i, set())
        if calls and i != still_open and len(got) < len(calls):
            m = dict(m)
            kept = [c for p, c in enumerate(calls) if p in got]
            if kept:
                m["tool_calls"] = kept
            else:
                m.pop("tool_calls", None)
                if not text_of(m).strip():
                    m["content"] = "(tool call removed)"
            repairs += 1
        out.append(m)
    return out, repairs
