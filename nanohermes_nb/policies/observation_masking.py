"""OpenHands' ``ObservationMaskingCondenser`` as a policy: old observations masked."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..messages import role_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register


@register
@dataclass(frozen=True)
class ObservationMaskingPolicy(Policy):
    """OpenHands ``ObservationMaskingCondenser``: tool results older than the last 5 become ``<MASKED>``; no summary.

    Source: All-Hands-AI/OpenHands
    ``openhands/memory/condenser/impl/observation_masking_condenser.py`` (commit
    053b919b) and ``openhands/core/config/condenser_config.py``:
    ``__init__(attention_window=5)``; every observation whose position is outside
    the most recent ``attention_window`` events is replaced by a condensation
    carrying the summary ``'<MASKED>'``; actions (tool calls) and messages are kept.
    Here a masked observation is a copy of the tool message with content
    ``<MASKED>``, so the call/result pairing (and legality) is untouched.

    Constants: ``attention_window`` 5 is the class default (OpenHands'
    ``ObservationMaskingCondenserConfig`` defaults to 100, "the number of
    most-recent events where observations will not be masked"). OpenHands counts
    the window in events (actions, observations and messages); this lab's issue
    counts it in tool results (``window="tool_results"``: exactly the last 5 tool
    results stay intact); ``window="messages"`` counts messages instead, the
    nearest thing to OpenHands' events.

    Trigger: OpenHands masks on every step (the condenser runs before each LLM
    call, at any size); in this lab it masks only when over budget, like every
    other policy, and what it masked stays masked.
    """

    attention_window: int = 5
    window: str = "tool_results"
    placeholder: str = "<MASKED>"
    name: ClassVar[str] = "observation_masking"

    def __post_init__(self) -> None:
        check_positive(self.attention_window, "attention_window", zero=True)
        if self.window not in ("tool_results", "messages"):
            raise ValueError(f"window must be 'tool_results' or 'messages', got {self.window!r}")

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        tools = [i for i, m in enumerate(context) if role_of(m) == "tool"]
        if self.window == "tool_results":
            old = tools[: max(len(tools) - self.attention_window, 0)]
        else:
            old = [i for i in tools if i < len(context) - self.attention_window]
        new = list(context)
        masked = 0
        for i in old:
            if context[i].get("content") != self.placeholder:
                new[i] = {**context[i], "content": self.placeholder}
                masked += 1
        if not masked:
            return context, None
        ev = make_event(self, "mask", context, new, env, size)
        return new, replace(ev, **{"detail": (
            f"observation_masking: masked {masked} tool results outside the last {self.attention_window} "
            f"{'tool results' if self.window == 'tool_results' else 'messages'}; {size:,} -> {ev.size_after:,}")})


