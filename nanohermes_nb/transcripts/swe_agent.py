"""mini-swe-agent ``.traj.json`` and SWE-agent ``.traj`` files as OpenAI messages.

Both store LiteLLM chat messages plus the agent's own bookkeeping; only the fields a
model request carries are kept (role, content, reasoning_content, tool_calls,
tool_call_id, name). mini-swe-agent's final ``exit`` message is not a model message
and is dropped; SWE-agent names a tool result's call in ``tool_call_ids[0]``.
"""

from __future__ import annotations

from .base import (
    OPENAI_ROLES,
    Bad,
    Message,
    check_openai,
    check_role,
    check_tool_call_id,
    kind,
    normalise_tool_calls,
)

__all__ = ["is_mini_swe_agent", "from_mini_swe_agent", "from_swe_agent"]


def is_mini_swe_agent(data: dict) -> bool:
    info = data.get("info")
    fmt = data.get("trajectory_format")
    return (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (
        isinstance(info, dict) and "mini_version" in info)


def from_mini_swe_agent(messages: list) -> list[Message]:
    """Keep role, content, reasoning_content, tool_calls, tool_call_id, name; drop ``exit``."""
    out: list[Message] = []
    for i, m in enumerate(messages):
        where = f"message {i}"
        role = check_role(m, where, OPENAI_ROLES | {"exit"})
        if role == "exit":
            continue
        check_openai(m, where)
        msg: Message = {"role": role, "content": m.get("content")}
        if m.get("reasoning_content") is not None:
            msg["reasoning_content"] = m["reasoning_content"]
        if m.get("tool_calls"):
            msg["tool_calls"] = normalise_tool_calls(m["tool_calls"], where)
        if "tool_call_id" in m:
            msg["tool_call_id"] = m["tool_call_id"]
        if m.get("name") is not None:
            msg["name"] = m["name"]
        out.append(msg)
    if not out:
        raise Bad("", "no messages (empty list)")
    return out


def from_swe_agent(history: list) -> list[Message]:
    """SWE-agent 1.x ``history``: ``tool_call_ids[0]`` answers; agent bookkeeping dropped."""
    out: list[Message] = []
    for i, m in enumerate(history):
        where = f"message {i}"
        role = check_role(m, where, OPENAI_ROLES)
        check_openai(m, where, tool_id=False)
        msg: Message = {"role": role, "content": m.get("content")}
        if m.get("tool_calls"):
            msg["tool_calls"] = normalise_tool_calls(m["tool_calls"], where)
        if role == "tool":
            msg["tool_call_id"] = _call_id(m, where)
        out.append(msg)
    if not out:
        raise Bad("", "no messages (empty history)")
    return out


def _call_id(m: Message, where: str) -> str:
    if m.get("tool_call_id") is not None:
        check_tool_call_id(m["tool_call_id"], where)
        return m["tool_call_id"]
    ids = m.get("tool_call_ids")
    if ids is not None and not isinstance(ids, list):
        raise Bad(where, f"'tool_call_ids' must be a list (got {kind(ids)})")
    if ids:
        check_tool_call_id(ids[0], f"{where}: tool_call_ids[0]")
        return ids[0]
    raise Bad(where, "tool message without 'tool_call_id' (or 'tool_call_ids')")
