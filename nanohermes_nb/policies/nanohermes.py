"""NanoHermes's own policy (SPEC section 3): keep the last 10 messages, summarize the rest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..context.budgets import DEFAULT_BUDGETS
from ..context.chunked import summary_cost
from ..context.compaction import CUT_DIRECTIONS, SUMMARY_ROLES, compact
from .base import Event, Policy, PolicyEnv, check_positive, register


@register
@dataclass(frozen=True)
class NanoHermesPolicy(Policy):
    """NanoHermes (SPEC section 3): over budget, keep the last 10 messages, summarize the rest.

    Constants from the article: ``keep_recent`` 10 messages, the cut moved forward
    past tool results, one summary (or placeholder) message in the system role
    at index 1. The three options are the compaction module's teaching fixes
    (``summary_role="user"``, ``excerpt_tool_calls=True``, ``cut="backward"``);
    ``force`` also compacts a context of ``keep_recent + 1`` messages or fewer.
    """

    keep_recent: int = DEFAULT_BUDGETS.keep_recent
    summary_role: str = "system"
    excerpt_tool_calls: bool = False
    cut: str = "forward"
    force: bool = False
    name: ClassVar[str] = "nanohermes"

    def __post_init__(self) -> None:
        check_positive(self.keep_recent, "keep_recent", zero=True)
        if self.cut not in CUT_DIRECTIONS:
            raise ValueError(f"cut must be one of {CUT_DIRECTIONS}, got {self.cut!r}")
        if self.summary_role not in SUMMARY_ROLES:
            raise ValueError(f"summary_role must be one of {SUMMARY_ROLES}, got {self.summary_role!r}")

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        result = compact(
            context,
            budget=env.budget,
            keep_recent=self.keep_recent,
            summarizer=env.summarizer,
            force=self.force,
            summary_role=self.summary_role,
            excerpt_tool_calls=self.excerpt_tool_calls,
            cut=self.cut,
            meter=env.meter,
            size=size,
            excerpts=env.excerpts,
        )
        if not result.compacted:
            return context, None
        # issue 27: a summarizer that fits a small window reports what the summary cost (requests, tokens)
        cost = summary_cost(env.summarizer) if result.summarizer_called else None
        detail = result.describe() + (f"; {cost.line()}" if cost is not None else "")
        return result.messages, Event(
            policy=self.name,
            kind="placeholder" if result.failure else "summary",
            size_before=result.size_before,
            size_after=result.size_after,
            removed=tuple(result.dropped),
            inserted=(result.messages[1],),
            cut=result.cut,
            naive_cut=result.naive_cut,
            note=result.note,
            summarizer_calls=(cost.calls if cost is not None else 1) if result.summarizer_called else 0,
            failure=result.failure,
            detail=detail,
            summarizer_tokens=(cost.prompt_tokens, cost.completion_tokens) if cost is not None else None,
        )
