"""Anthropic context editing (``clear_tool_uses_20250919``) as a policy: old tool results cleared."""

from __future__ import annotations

from dataclasses import dataclass, replace
from collections.abc import Mapping
from typing import ClassVar

from ..messages import calls_of, pair_tool_results, role_of, tool_call_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register


@register
@dataclass(frozen=True)
class ClearToolUsesPolicy(Policy):
    """Anthropic ``clear_tool_uses_20250919``: over the threshold, clear old tool results, keep the last 3.

    Source: Anthropic docs, "Context editing"
    (docs.claude.com/en/docs/build-with-claude/context-editing): when the prompt
    exceeds ``trigger`` (default 100,000 input tokens) the API clears the oldest
    tool results in chronological order, replacing them with placeholder text,
    and keeps the most recent ``keep`` tool uses (default 3); ``clear_at_least``
    (default: none) asks for a minimum number of tokens cleared per activation;
    ``exclude_tools`` (default none) are never cleared; ``clear_tool_inputs``
    (default false) also clears the call parameters. The docs do not give the
    placeholder text; LangChain's mirror of this strategy
    (``libs/langchain_v1/langchain/agents/middleware/context_editing.py``,
    ``ClearToolUsesEdit``, commit 03373459)
    uses ``"[cleared]"``, skips results already cleared, clears every older
    result when ``clear_at_least`` is 0 and stops once it has reclaimed
    ``clear_at_least`` tokens otherwise; this follows that mirror (assumption:
    the server behaves alike; whether it skips an activation that cannot reach
    ``clear_at_least`` is not reproduced).

    Lab mapping: the 100,000-token trigger is replaced by the lab trigger;
    ``clear_at_least`` is in tokens, measured with ``env.tokens()``; a cleared
    input sets that call's arguments to ``"{}"``. Clearing rewrites a message in
    the middle of the prompt, so the prompt cache is reused only up to the first
    cleared result (the docs' reason for ``clear_at_least``).
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
        if not candidates:
            return context, None
        pairs = pair_tool_results(context)
        tokens = env.tokens() if self.clear_at_least else None
        new = list(context)
        cleared = reclaimed = 0
        for i in candidates:
            m = context[i]
            if m.get("content") == self.placeholder:
                continue
            hit = pairs.get(i)
            if hit is None:
                continue  # answers no call (LangChain skips these too)
            name, _ = tool_call_of(context, pairs, i)
            if name in self.exclude_tools:
                continue
            new[i] = {**m, "content": self.placeholder}
            cleared += 1
            if self.clear_tool_inputs:
                owner, pos = hit
                calls = list(calls_of(new[owner]))
                call = calls[pos]
                fn = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(fn, Mapping) and fn.get("arguments") != "{}":
                    calls[pos] = {**call, "function": {**fn, "arguments": "{}"}}
                    new[owner] = {**new[owner], "tool_calls": calls}
            if tokens is not None:
                reclaimed += tokens(m) - tokens(new[i])
                if reclaimed >= self.clear_at_least:
                    break
        if not cleared:
            return context, None
        ev = make_event(self, "clear", context, new, env, size)
        return new, replace(ev, **{"detail": (
            f"clear_tool_uses: cleared {cleared} tool results, kept the last {self.keep}"
            f"{f', reclaimed {reclaimed:,} tokens' if tokens is not None else ''}; {size:,} -> {ev.size_after:,}")})


