"""LangChain / LangGraph message dumps as OpenAI messages.

Both shapes LangChain writes are read: plain dicts with a ``type`` (``human``, ``ai``,
``tool``, ``system``, ``chat``, ``remove``, or a class name such as
``AIMessageChunk``) and ``lc``-serialized constructors whose ``id`` ends with the
class name. ``tool_calls`` carry ``args`` objects, which become JSON text; the
OpenAI-style calls in ``additional_kwargs`` are used when there are none.
"""

from __future__ import annotations

import json
from typing import Any

from .base import (
    OPENAI_ROLES,
    Bad,
    Locate,
    Message,
    block_text,
    check_part,
    check_tool_call_id,
    kind,
    need_text,
    normalise_tool_calls,
    parts_content,
    short,
    tool_call,
)

__all__ = ["is_langchain", "from_langchain"]

_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system",
          "developer": "developer", "chat": "", "remove": ""}
_CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool",
            "SystemMessage": "system", "ChatMessage": "chat", "RemoveMessage": "remove"}
_DROPPED_PARTS = frozenset({"tool_use", "thinking", "redacted_thinking", "reasoning"})


def _lc_type(m: dict) -> str | None:
    """The LangChain message type (human, ai, tool, system, chat, remove), or None."""
    if "lc" in m and isinstance(m.get("kwargs"), dict):
        name = _class_name(m.get("id"))
        declared = m["kwargs"].get("type")
        return _lc_class(name) or (declared if isinstance(declared, str) else None)
    declared = m.get("type")
    if not isinstance(declared, str):
        return None
    return declared if declared in _ROLES else _lc_class(declared)


def _class_name(ident: Any) -> str:
    return ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else ""


def _lc_class(name: str) -> str | None:
    base = name[: -len("Chunk")] if name.endswith("Chunk") else name
    return _CLASSES.get(base)


def is_langchain(m: dict) -> bool:
    return "role" not in m and (("lc" in m and "kwargs" in m) or _lc_type(m) is not None)


def from_langchain(items: list, locate: Locate) -> list[Message]:
    """human/ai/tool/system messages (plain or ``lc`` serialized) as OpenAI messages."""
    out: list[Message] = []
    for i, m in enumerate(items):
        where = locate(i)
        if not isinstance(m, dict):
            raise Bad(where, f"not an object (got {kind(m)})")
        lc_type = _lc_type(m)
        if lc_type not in _ROLES:
            shown = m.get("type") if "lc" not in m else (_class_name(m.get("id")) or m.get("id"))
            raise Bad(where, f"unknown message type {short(shown)} (expected human, ai, tool or system)")
        fields = m["kwargs"] if "lc" in m and isinstance(m.get("kwargs"), dict) else m
        message = _message(lc_type, fields, where)
        if message is not None:
            out.append(message)
    if not out:
        raise Bad("", "no messages (empty list)")
    return out


def _message(lc_type: str, fields: dict, where: str) -> Message | None:
    if lc_type == "remove":
        return None
    role = _ROLES[lc_type] or _chat_role(fields, where)
    msg: Message = {"role": role, "content": _content(fields.get("content"), where)}
    if role == "assistant":
        extra = fields.get("additional_kwargs") or {}
        if not isinstance(extra, dict):
            raise Bad(where, f"'additional_kwargs' must be an object (got {kind(extra)})")
        reasoning = extra.get("reasoning_content")
        if reasoning is not None:
            if not isinstance(reasoning, str):
                raise Bad(where, f"'reasoning_content' must be a string (got {kind(reasoning)})")
            msg["reasoning_content"] = reasoning
        calls = _tool_calls(fields, extra, where)
        if calls:
            msg["tool_calls"] = calls
    elif role == "tool":
        check_tool_call_id(fields.get("tool_call_id"), where)
        msg["tool_call_id"] = fields["tool_call_id"]
        name = fields.get("name")
        if name is not None:
            if not isinstance(name, str):
                raise Bad(where, f"'name' must be a string (got {kind(name)})")
            msg["name"] = name
    return msg


def _chat_role(fields: dict, where: str) -> str:
    role = fields.get("role")
    if not isinstance(role, str) or role not in OPENAI_ROLES - {"tool", "function"}:
        raise Bad(where, f"chat message with unknown role {short(role)}")
    return role


def _tool_calls(fields: dict, extra: dict, where: str) -> list[Message]:
    """``tool_calls`` with ``args`` dicts; else the OpenAI ones in ``additional_kwargs``."""
    calls = fields.get("tool_calls")
    if not calls:
        legacy = extra.get("tool_calls")
        return normalise_tool_calls(legacy, where) if legacy else []
    if not isinstance(calls, list):
        raise Bad(where, f"tool_calls must be a list (got {kind(calls)})")
    out = []
    for j, call in enumerate(calls):
        at = f"{where}: tool_calls[{j}]"
        if not isinstance(call, dict):
            raise Bad(at, f"not an object (got {kind(call)})")
        call_id = need_text(call.get("id"), at, "'id'")
        name = need_text(call.get("name"), at, "'name'")
        args = call.get("args", {})
        if not isinstance(args, dict):
            raise Bad(at, f"'args' must be an object (got {kind(args)})")
        out.append(tool_call(call_id, name, json.dumps(args, ensure_ascii=False), at))
    return out


def _content(content: Any, where: str) -> Any:
    """A string as is; a list of text parts joined; other parts (images) kept as parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise Bad(where, f"content must be a string or a list of parts (got {kind(content)})")
    parts: list[Message] = []
    for k, part in enumerate(content):
        at = f"{where}: content[{k}]"
        if isinstance(part, str):
            parts.append({"type": "text", "text": part})
            continue
        check_part(part, at)
        if part.get("type") == "text":
            parts.append({"type": "text", "text": block_text(part, at)})
        elif part.get("type") not in _DROPPED_PARTS:
            parts.append(part)
    return parts_content(parts) if parts else ""
