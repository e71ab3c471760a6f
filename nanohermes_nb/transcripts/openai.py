"""OpenAI chat-completions messages (kept exactly as given) and the legacy ``function_call`` form.

A message already in OpenAI form is validated, never rewritten: same dict, same
key order, because the replay measures it as given. The legacy form (an assistant
``function_call`` answered by a ``role: function`` message) has no ids; each call
gets the stable id ``call_<index>``. A message whose content holds Anthropic blocks
is handed to the Anthropic converter, so a list mixing both loads.
"""

from __future__ import annotations

from .anthropic import anthropic_message, has_anthropic_blocks
from .base import (
    OPENAI_ROLES,
    Bad,
    Locate,
    Message,
    check_openai,
    check_role,
    kind,
    need_text,
    tool_call,
)

__all__ = ["openai_items"]


def openai_items(items: list, locate: Locate, plain: str) -> tuple[str, list[Message]]:
    """Validate OpenAI messages, keeping them as given; convert legacy and Anthropic ones.

    ``locate`` names an item in errors; ``plain`` is the format when nothing was converted.
    """
    if not items:
        raise Bad("", "no messages (empty list)")
    out: list[Message] = []
    pending: list[tuple[str, str]] = []  # legacy calls not answered yet: (id, name)
    legacy = anthropic = False
    for i, m in enumerate(items):
        where = locate(i)
        role = check_role(m, where, OPENAI_ROLES)
        if role == "assistant" and m.get("function_call") is not None:
            out.append(_legacy_call(m, i, where, pending))
            legacy = True
        elif role == "function":
            out.append(_legacy_result(m, i, where, pending))
            legacy = True
        elif has_anthropic_blocks(m):
            out.extend(anthropic_message(m, role, where))
            anthropic = True
        else:
            check_openai(m, where)
            out.append(m)
    fmt = "anthropic" if anthropic else "legacy-functions" if legacy else plain
    return fmt, out


def _legacy_call(m: Message, index: int, where: str, pending: list[tuple[str, str]]) -> Message:
    """An assistant ``function_call`` as one tool call with the stable id ``call_<index>``."""
    call = m["function_call"]
    if not isinstance(call, dict):
        raise Bad(where, f"function_call must be an object (got {kind(call)})")
    name = need_text(call.get("name"), f"{where}: function_call", "'name'")
    check_openai(m, where)
    out: Message = {"role": "assistant", "content": m.get("content")}
    out.update((k, v) for k, v in m.items() if k not in ("role", "content", "function_call", "tool_calls"))
    call_id = f"call_{index}"
    converted = tool_call(call_id, name, call.get("arguments"), f"{where}: function_call")
    out["tool_calls"] = [*(m.get("tool_calls") or []), converted]
    pending.append((call_id, name))
    return out


def _legacy_result(m: Message, index: int, where: str, pending: list[tuple[str, str]]) -> Message:
    """A ``function`` message as the tool message answering the earliest pending call of
    the same name (else the earliest pending call; an orphan gets ``call_<index>``)."""
    name = need_text(m.get("name"), where, "'name'", missing="function message without 'name'")
    check_openai(m, where)
    match = next((k for k, (_, n) in enumerate(pending) if n == name), 0 if pending else None)
    call_id = pending.pop(match)[0] if match is not None else f"call_{index}"
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": m.get("content")}
