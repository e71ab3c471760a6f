"""Anthropic Messages API content blocks as OpenAI messages.

``tool_use`` blocks become the assistant's ``tool_calls`` (``input`` as JSON text),
each ``tool_result`` block its own ``tool`` message placed before the rest of the
user turn, images become ``image_url`` parts, thinking blocks are dropped, and the
top-level ``system`` (a string or text blocks) becomes messages[0].
"""

from __future__ import annotations

import json
from typing import Any

from .base import (
    TEXT_JOINER,
    Bad,
    Message,
    block_text,
    check_content,
    kind,
    need_text,
    parts_content,
    tool_call,
)

__all__ = ["anthropic_message", "anthropic_system", "has_anthropic_blocks"]

_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "image"})


def _article(role: str) -> str:
    """"a user", "an assistant": the article English puts before a role's name."""
    return "an" if role[:1] in "aeio" or role.startswith("un") else "a"


def _block_type(block: Any) -> Any:
    value = block.get("type") if isinstance(block, dict) else None
    return value if isinstance(value, str) else None


def has_anthropic_blocks(m: Message) -> bool:
    content = m.get("content")
    return isinstance(content, list) and any(_block_type(b) in _BLOCKS for b in content)


def anthropic_system(system: Any) -> Message:
    """The Messages API's top-level ``system`` (string or text blocks) as messages[0]."""
    if isinstance(system, str):
        return {"role": "system", "content": system}
    if isinstance(system, list):
        check_content(system, "system")
        return {"role": "system", "content": TEXT_JOINER.join(block_text(b, f"system: content[{k}]")
                                                               for k, b in enumerate(system))}
    raise Bad("system", f"must be a string or a list of text blocks (got {kind(system)})")


def anthropic_message(m: Message, role: str, where: str) -> list[Message]:
    """One Anthropic message: tool results first (one tool message each), then the rest."""
    check_content(m["content"], where)
    parts: list[Message] = []
    calls: list[Message] = []
    results: list[Message] = []
    for k, block in enumerate(m["content"]):
        at = f"{where}: content[{k}]"
        block_kind = _block_type(block)
        if block_kind == "text":
            parts.append({"type": "text", "text": block_text(block, at)})
        elif block_kind == "tool_use":
            if role != "assistant":
                raise Bad(at, f"tool_use block in {_article(role)} {role} message")
            calls.append(_call(block, at))
        elif block_kind == "tool_result":
            if role != "user":
                raise Bad(at, f"tool_result block in {_article(role)} {role} message")
            results.append(_result(block, at))
        elif block_kind == "image":
            parts.append(_image_part(block, at))
        elif block_kind not in ("thinking", "redacted_thinking"):
            parts.append(block)
    if role == "assistant":
        out: Message = {"role": "assistant", "content": parts_content(parts)}
        if calls:
            out["tool_calls"] = calls
        return [out]
    if parts or not results:
        results.append({"role": role, "content": parts_content(parts) if parts else ""})
    return results


def _call(block: Message, at: str) -> Message:
    call_id = need_text(block.get("id"), at, "'id'", missing="tool_use without 'id'")
    name = need_text(block.get("name"), at, "'name'", missing="tool_use without 'name'")
    arguments = block.get("input", {})
    if not isinstance(arguments, dict):
        raise Bad(at, f"tool_use 'input' must be an object (got {kind(arguments)})")
    return tool_call(call_id, name, json.dumps(arguments, ensure_ascii=False), at)


def _result(block: Message, at: str) -> Message:
    call_id = need_text(block.get("tool_use_id"), at, "'tool_use_id'", missing="tool_result without 'tool_use_id'")
    content = block.get("content")
    if content is None:
        text: Any = ""
    elif isinstance(content, str):
        text = content
    elif isinstance(content, list):
        check_content(content, at)
        parts = [_result_part(b, f"{at}: content[{k}]") for k, b in enumerate(content)]
        text = parts_content(parts) if parts else ""
    else:
        raise Bad(at, f"tool_result content must be a string or a list of blocks (got {kind(content)})")
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _result_part(block: Message, at: str) -> Message:
    """A block inside a tool_result: text and images converted, other kinds kept."""
    if _block_type(block) == "text":
        return {"type": "text", "text": block_text(block, at)}
    if _block_type(block) == "image":
        return _image_part(block, at)
    return block


def _image_part(block: Message, at: str) -> Message:
    """An Anthropic image block as an OpenAI ``image_url`` part (base64 -> data URL)."""
    given = block.get("source")
    source: dict = given if isinstance(given, dict) else {}
    source_type = source.get("type")
    if source_type == "base64" and isinstance(source.get("data"), str):
        media = source.get("media_type", "application/octet-stream")
        if not isinstance(media, str):
            raise Bad(at, f"image 'media_type' must be a string (got {kind(media)})")
        url = f"data:{media};base64,{source['data']}"
    elif source_type == "url" and isinstance(source.get("url"), str):
        url = source["url"]
    else:
        raise Bad(at, "image block without a base64 or url 'source'")
    return {"type": "image_url", "image_url": {"url": url}}
