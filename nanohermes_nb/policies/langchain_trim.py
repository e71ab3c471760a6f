"""LangChain ``trim_messages`` as a policy: keep the newest messages that fit."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..messages import role_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register


@register
@dataclass(frozen=True)
class LangChainTrimPolicy(Policy):
    """LangChain ``trim_messages`` (last, keep system, start on human): keep the newest messages that fit.

    Called as ``trim_messages(strategy="last", include_system=True, start_on="human")``; no summary.
    Source: ``langchain_core.messages.utils.trim_messages`` (reference page
    reference.langchain.com/python/langchain-core/messages/utils/trim_messages; the
    JS twin ``trimMessages`` documents the same fields). With ``strategy="last"``
    the system message at index 0 is set aside, the rest is walked from the newest
    message backward and the longest run whose total (system included) stays
    within ``max_tokens`` is kept; ``start_on="human"`` then drops messages from
    the old end of that run until it starts on a human (user) message.
    ``allow_partial`` defaults to False (no message is split) and so it is here.
    Starting on a user message also keeps the history legal: a user message
    closes every earlier call, so a suffix starting there has no orphan result.

    Constants: ``trim_messages`` has no default ``max_tokens`` (it is required).
    This lab derives it from the shared trigger: ``max_tokens = target_share x
    env.budget``, counted in the ledger's unit with ``env.meter`` (the token
    counter LangChain takes as a parameter). The default share 1.0 is the
    library's own semantics: ``trim_messages`` is a no-op under ``max_tokens`` and
    trims to it otherwise, so trigger and target coincide; a share below 1 adds
    hysteresis (fewer, larger trims). Like every policy here it acts only over
    budget, which for trimming is the same as trimming on every call.

    Deviation: when no user message fits, LangChain returns an empty list (the
    system message goes too); here the system message is always kept. Teaching
    point: in a single-task agent log the only user message is the first one, so
    once the context outgrows the budget the task statement is trimmed away and
    every later trim leaves the system message alone.
    """

    target_share: float = 1.0
    include_system: bool = True
    start_on: str = "user"
    name: ClassVar[str] = "langchain_trim"

    def __post_init__(self) -> None:
        check_positive(self.target_share, "target_share", upper=1.0)

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        if not context:
            return context, None
        meter = env.meter
        target = int(env.budget * self.target_share)
        head: list = []
        first = 0
        if self.include_system and role_of(context[0]) == "system":
            head, first = [context[0]], 1
        room = target - sum(meter(m) for m in head)
        start, used = len(context), 0
        while start > first:
            s = meter(context[start - 1])
            if used + s > room:
                break
            used += s
            start -= 1
        while start < len(context) and role_of(context[start]) != self.start_on:
            start += 1
        if start == first:
            return context, None
        new = head + list(context[start:])
        ev = make_event(self, "trim", context, new, env, size)
        kept_user = start < len(context)
        return new, replace(ev, **{"cut": start, "detail": (
            f"langchain_trim: kept the last {len(context) - start} messages within {target:,} {env.unit}"
            f" ({self.target_share:g} x budget), dropped {start - first}"
            + ("" if kept_user else "; no user message fits: only the system message is left")
            + f"; {size:,} -> {ev.size_after:,}")})


