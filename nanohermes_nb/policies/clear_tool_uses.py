"""Anthropic context editing (``clear_tool_uses_20250919``) as a policy: old tool results cleared."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..context.messages import Message, call_id, call_name, calls_of, role_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register


def _answered_call(context: Sequence[Message], i: int) -> tuple[int, list[int]] | None:
    """LangChain's pairing: the nearest assistant message before ``i`` and its calls with the result's id.

    ``ClearToolUsesEdit.apply`` looks at the nearest preceding ``AIMessage``
    only (with or without calls) and takes the first call carrying the result's
    ``tool_call_id``; a result it cannot match there is left alone. All positions
    with that id are returned (clearing inputs empties every one of them).
    """
    tid = context[i].get("tool_call_id")
    for j in range(i - 1, -1, -1):
        if role_of(context[j]) == "assistant":
            hits = [p for p, c in enumerate(calls_of(context[j])) if call_id(c) == tid]
            return (j, hits) if hits else None
    return None


def _is_empty_object(arguments: Any) -> bool:
    if isinstance(arguments, Mapping):
        return not arguments
    try:
        return json.loads(arguments) == {}
    except (TypeError, ValueError):
        return False


def _clear_inputs(message: Message, positions: Sequence[int]) -> Message:
    """A copy of the assistant message with the arguments of the calls at ``positions`` set to ``{}``."""
    calls = list(calls_of(message))
    changed = False
    for pos in positions:
        call = calls[pos]
        fn = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(fn, Mapping) and not _is_empty_object(fn.get("arguments")):
            calls[pos] = {**call, "function": {**fn, "arguments": "{}"}}
            changed = True
    return {**message, "tool_calls": calls} if changed else message


@register
@dataclass(frozen=True)
class ClearToolUsesPolicy(Policy):
    """Anthropic ``clear_tool_uses_20250919``: over the threshold, clear old tool results, keep the last 3.

    Proven against langchain 1.4.7 ``ClearToolUsesEdit.apply``
    (``langchain/agents/middleware/context_editing.py``), LangChain's mirror of
    Anthropic's server-side strategy: every tool-batch point of the corpus gives
    the identical context, and each option is checked against the class on
    hand-built histories (tests/test_peers_langchain.py). Source and provenance:
    docs/policies.md.

    Anthropic's docs ("Context editing"): over ``trigger`` (100,000 input tokens)
    the oldest tool results are replaced by placeholder text, the most recent
    ``keep`` (3) are kept; ``clear_at_least`` asks for a minimum of tokens
    reclaimed, ``exclude_tools`` are never cleared, ``clear_tool_inputs`` also
    clears the call parameters. LangChain's class, which this follows exactly:
    placeholder ``"[cleared]"``; a result is matched with the nearest earlier
    assistant message and the first of its calls with that id (unmatched: left
    alone); the tool's name is the result's own ``name`` when it has one, else
    the call's; clearing inputs sets ``args`` to ``{}`` on every call with that
    id; with ``clear_at_least`` > 0 it stops once the context has shrunk by that
    many tokens (the emptied arguments count too), otherwise every older result
    is cleared.

    Lab mapping: the 100,000-token trigger is the lab trigger; ``clear_at_least``
    is in tokens, measured with ``env.tokens()``; a cleared input is the JSON
    text ``"{}"``. LangChain marks a cleared result in ``response_metadata``,
    which an OpenAI-form message cannot carry: here a result whose content is
    already the placeholder counts as cleared. LangChain re-applies the edit to
    the unedited history before every model call (edits are never stored); the
    lab keeps the edited context, like every policy here (docs/policies.md).
    """

    keep: int = 3
    clear_at_least: int = 0
    exclude_tools: tuple = ()
    clear_tool_inputs: bool = False
    placeholder: str = "[cleared]"
    name: ClassVar[str] = "clear_tool_uses"

    def __post_init__(self) -> None:
        check_positive(self.keep, "keep", zero=True)
        check_positive(self.clear_at_least, "clear_at_least", zero=True)
        object.__setattr__(self, "exclude_tools", tuple(self.exclude_tools))

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        tools = [i for i, m in enumerate(context) if role_of(m) == "tool"]
        candidates = tools[: max(len(tools) - self.keep, 0)]
        tokens = env.tokens() if self.clear_at_least > 0 else None
        new = list(context)
        cleared = reclaimed = 0
        for i in candidates:
            m = context[i]
            if m.get("content") == self.placeholder:
                continue
            hit = _answered_call(new, i)
            if hit is None:
                continue
            owner, positions = hit
            name = m.get("name") or call_name(calls_of(new[owner])[positions[0]], "")
            if name in self.exclude_tools:
                continue
            new[i] = {**m, "content": self.placeholder}
            cleared += 1
            before = new[owner]
            if self.clear_tool_inputs:
                new[owner] = _clear_inputs(before, positions)
            if tokens is not None:
                reclaimed += tokens(m) - tokens(new[i]) + tokens(before) - tokens(new[owner])
                if reclaimed >= self.clear_at_least:
                    break
        if not cleared:
            return context, None
        ev = make_event(self, "clear", context, new, env, size)
        detail = (f"clear_tool_uses: cleared {cleared} tool results, kept the last {self.keep}"
                  f"{f', reclaimed {reclaimed:,} tokens' if tokens is not None else ''}; {size:,} -> {ev.size_after:,}")
        return new, replace(ev, detail=detail)
