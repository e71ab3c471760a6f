"""SWE-agent's ``LastNObservations`` as a policy: all but the last 5 observations elided, every ``polling`` steps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.messages import Message, role_of
from .agent_windows import AgentRule, ModelWindow, Trigger
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register

__all__ = ["SweAgentPolicy", "elided_text", "omit_indices", "observation_indices", "OBSERVATION_ROLES",
           "elided_count"]

OBSERVATION_ROLES = ("user", "tool")  # SWE-agent's ``message_type: observation`` entries, in OpenAI roles
REMOVE_TAGS = frozenset({"remove_output"})  # history_processors.py L124
KEEP_TAGS = frozenset({"keep_output"})  # history_processors.py L129


def observation_indices(history: Sequence[Message]) -> list[int]:
    """The observations, in order (SWE-agent: ``message_type == "observation"`` and not a demo)."""
    return [i for i, m in enumerate(history) if role_of(m) in OBSERVATION_ROLES and not m.get("is_demo", False)]


def elided_count(observations: int, n: int, polling: int) -> int:
    """``_get_omit_indices`` (L147-155): ``max(0, (len // polling) * polling - n)`` is the first observation
    kept; everything before it but the first (the instance template) is elided."""
    return max(0, max(0, (observations // polling) * polling - n) - 1)


def omit_indices(history: Sequence[Message], n: int, polling: int) -> list[int]:
    """``_get_omit_indices``: the observations to elide (never the first, the instance template)."""
    obs = observation_indices(history)
    last_removed = max(0, (len(obs) // polling) * polling - n)
    return obs[1:last_removed]


def _stats(message: Message) -> tuple[int, int]:
    """``_get_content_stats`` (L23-28): text lines and images of a message."""
    content = message.get("content")
    if isinstance(content, str):
        return len(content.splitlines()), 0
    parts = content if isinstance(content, list) else []
    lines = sum(len(p.get("text", "").splitlines()) for p in parts if isinstance(p, dict) and p.get("type") == "text")
    return lines, sum(1 for p in parts if isinstance(p, dict) and p.get("type") == "image_url")


def elided_text(message: Message) -> str:
    """L171-174: ``Old environment output: (N lines omitted)``, `` (M images omitted)`` when any."""
    lines, images = _stats(message)
    text = f"Old environment output: ({lines} lines omitted)"
    return text + (f" ({images} images omitted)" if images else "")


@register
@dataclass(frozen=True)
class SweAgentPolicy(Policy, AgentRule):
    """SWE-agent ``LastNObservations``: every observation but the first and the last ``n`` elided to a line count.

    Source: SWE-agent/SWE-agent ``sweagent/agent/history_processors.py`` @4fce2870 (HEAD 3ea751c0):
    ``LastNObservations`` L85-176 (``n``, ``polling`` = 1, ``always_remove_output_for_tags``,
    ``always_keep_output_for_tags``, ``_get_omit_indices`` L147-155, ``__call__`` L157-176),
    ``_get_content_stats`` L23-28. The paper's configuration is ``n: 5``
    (``config/sweagent_0_7/07.yaml``); ``n`` has no code default (required), so the lab takes 5.
    Proven against that code when a SWE-agent checkout is at hand (``peers/swe_agent.py``,
    ``NANOHERMES_SWEAGENT_SRC``), else pinned by ``tests/test_history_processors.py``'s case.

    Observations are SWE-agent's user-role entries (the instance template, then every environment
    output) and, with function calling, its tool results: here every user and tool message after the
    system prompt. The first (the task) is never elided; of the others, all but the last ``n`` (with
    ``polling`` > 1: between ``n`` and ``n + polling``, the cut moving only every ``polling``
    observations, so that the cached prefix breaks once per ``polling`` steps) read ``Old environment
    output: (N lines omitted)``; a message tagged ``always_keep_output_for_tags`` is kept, one tagged
    ``always_remove_output_for_tags`` always elided (``tags``, a list, as SWE-agent's history items).

    Trigger: SWE-agent applies it before every request, at any size; the timeline counts a firing at
    each request where the elided set grows (the cached prefix breaks there). Options: ``n`` (5),
    ``polling`` (1), ``always_remove_output_for_tags``, ``always_keep_output_for_tags``.
    """

    n: int = 5
    polling: int = 1
    always_remove_output_for_tags: frozenset = REMOVE_TAGS
    always_keep_output_for_tags: frozenset = KEEP_TAGS
    name: ClassVar[str] = "swe_agent_rule"
    agent: ClassVar[str] = "swe_agent"

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n <= 0:
            raise ValueError(f"n must be a positive integer, got {self.n!r}")  # L140-145
        check_positive(self.polling, "polling")

    def trigger(self, window: ModelWindow) -> Trigger:
        return Trigger(self.name, window.context_window, 0, basis="every_request",
                       note=f"every request; the elided set grows every {self.polling} observation(s) "
                            f"past {self.n + 1}")

    def apply(self, history: Sequence[Message]) -> list:
        """``LastNObservations.__call__`` on a whole history (system messages are not observations)."""
        omit = set(omit_indices(history, self.n, self.polling))
        out = []
        for i, m in enumerate(history):
            tags = set(m.get("tags", ()) or ())
            elide = (i in omit and not tags & self.always_keep_output_for_tags) or bool(
                tags & self.always_remove_output_for_tags)
            text = elided_text(m) if elide else None
            out.append(m if text is None or m.get("content") == text else {**m, "content": text})
        return out

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        new = self.apply(context)
        changed = sum(1 for a, b in zip(new, context, strict=True) if a is not b)
        if not changed:
            return context, None
        ev = make_event(self, "mask", context, new, env, size)
        return new, replace(ev, detail=f"swe_agent_rule: elided {changed} observations, kept the task and the "
                                       f"last {self.n}; {size:,} -> {ev.size_after:,}")
