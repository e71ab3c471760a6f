"""OpenHands V1 SDK event files as OpenAI messages.

Consecutive ``ActionEvent``s of one LLM response (same ``llm_response_id``) form one
assistant message with several tool calls, their thoughts joined as its content;
observations, agent errors and user rejections become tool messages; message
events become user, assistant or system messages; events the model never sees
(state updates and the like) are skipped.
"""

from __future__ import annotations

import json
from typing import Any

from .base import (
    TEXT_JOINER,
    Bad,
    Locate,
    Message,
    check_role,
    kind,
    need_object,
    need_text,
    tool_call,
)

__all__ = ["from_openhands"]

_MESSAGE_ROLES = frozenset({"user", "assistant", "system"})


def from_openhands(events: list, locate: Locate) -> list[Message]:
    """Events to messages: consecutive ActionEvents of one LLM response form one
    assistant message; observations, errors and rejections become tool messages."""
    out: list[Message] = []
    group: Message | None = None
    group_id: Any = None
    thoughts: list[str] = []
    for i, event in enumerate(events):
        where = locate(i)
        if not isinstance(event, dict):
            raise Bad(where, f"not an object (got {kind(event)})")
        event_kind = need_text(event.get("kind"), where, "'kind'", missing="event without 'kind'")
        if event_kind == "ActionEvent":
            call = _call(event, where)
            response_id = _optional_text(event, "llm_response_id", where)
            if group is None or response_id is None or response_id != group_id:
                group, group_id, thoughts = _assistant(event, where), response_id, []
                out.append(group)
            thoughts.extend(_texts(event.get("thought"), f"{where}: thought"))
            group["content"] = TEXT_JOINER.join(thoughts) if thoughts else None
            group["tool_calls"].append(call)
            continue
        message = _message(event, event_kind, where)
        if message is not None:
            group = None
            out.append(message)
    if not out:
        raise Bad("", f"no messages (none of the {len(events)} events converts to a message)")
    return out


def _optional_text(obj: dict, key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise Bad(where, f"{key!r} must be a string (got {kind(value)})")
    return value


def _assistant(event: Message, where: str) -> Message:
    """The assistant message a batch of actions starts; reasoning comes from its first."""
    msg: Message = {"role": "assistant", "content": None}
    reasoning = _optional_text(event, "reasoning_content", where)
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    msg["tool_calls"] = []
    return msg


def _call(event: Message, where: str) -> Message:
    call = need_object(event.get("tool_call"), where, "'tool_call'", "ActionEvent without 'tool_call'")
    inner = call.get("function")
    function = inner if isinstance(inner, dict) else call
    at = f"{where}: tool_call"
    call_id = need_text(call.get("id") or event.get("tool_call_id"), at, "'id'")
    name = need_text(function.get("name") or event.get("tool_name"), at, "'name'")
    return tool_call(call_id, name, function.get("arguments"), at)


def _message(event: Message, event_kind: str, where: str) -> Message | None:
    """The message one non-action event contributes, or None for kinds the LLM never sees."""
    if event_kind == "SystemPromptEvent":
        prompt = event.get("system_prompt")
        text = prompt if isinstance(prompt, str) else TEXT_JOINER.join(_texts(prompt, f"{where}: system_prompt"))
        return {"role": "system", "content": text}
    if event_kind == "MessageEvent":
        return _chat_message(event, where)
    if event_kind == "ObservationEvent":
        observation = need_object(event.get("observation"), where, "'observation'",
                                  "ObservationEvent without 'observation'")
        return _tool(event, event_kind, where, _observation_text(observation, f"{where}: observation"))
    if event_kind == "AgentErrorEvent":
        error = event.get("error")
        if not isinstance(error, str):
            raise Bad(where, f"AgentErrorEvent without an 'error' string (got {kind(error)})")
        return _tool(event, event_kind, where, error)
    if event_kind == "UserRejectObservation":
        reason = event.get("rejection_reason", "User rejected the action")
        if not isinstance(reason, str):
            raise Bad(where, f"'rejection_reason' must be a string (got {kind(reason)})")
        return _tool(event, event_kind, where, f"Action rejected: {reason}")
    return None


def _chat_message(event: Message, where: str) -> Message:
    llm = need_object(event.get("llm_message"), where, "'llm_message'", "MessageEvent without 'llm_message'")
    role = check_role(llm, f"{where}: llm_message", _MESSAGE_ROLES)
    texts = _texts(llm.get("content"), f"{where}: llm_message: content")
    texts += _texts(event.get("extended_content"), f"{where}: extended_content")
    msg: Message = {"role": role, "content": TEXT_JOINER.join(texts)}
    reasoning = _optional_text(llm, "reasoning_content", f"{where}: llm_message")
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    return msg


def _tool(event: Message, event_kind: str, where: str, text: str) -> Message:
    call_id = need_text(event.get("tool_call_id"), where, "'tool_call_id'",
                        missing=f"{event_kind} without 'tool_call_id'")
    msg: Message = {"role": "tool", "tool_call_id": call_id}
    name = _optional_text(event, "tool_name", where)
    if name is not None:
        msg["name"] = name
    msg["content"] = text
    return msg


def _observation_text(observation: Message, at: str) -> str:
    """``output`` when it is text, else the joined ``content`` text items, else the
    observation as JSON (what the converted OpenHands counterparts carry)."""
    if isinstance(observation.get("output"), str):
        return observation["output"]
    if isinstance(observation.get("content"), list):
        return TEXT_JOINER.join(_texts(observation["content"], f"{at}: content"))
    return json.dumps(observation, ensure_ascii=False)


def _texts(value: Any, at: str) -> list[str]:
    """The texts of a string, a TextContent dict or a list of them; images are skipped."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise Bad(at, f"must be text or a list of content items (got {kind(value)})")
    texts = []
    for k, item in enumerate(value):
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif not (isinstance(item, dict) and item.get("type") == "image"):
            got = kind(item.get("text")) if isinstance(item, dict) else kind(item)
            raise Bad(f"{at}[{k}]", f"content item without a 'text' string (got {got})")
    return texts
