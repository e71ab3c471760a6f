"""Codex CLI's local compaction rule: its trigger and its retry on overflow, around the ``codex`` port."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.messages import call_ids, role_of
from .agent_windows import AgentRule, ModelWindow, Trigger, check_window
from .base import Event, PolicyEnv, check_positive, register
from .codex import CodexPolicy

__all__ = ["CodexCliPolicy", "AUTO_COMPACT_SHARE", "trim_oldest_until_fits"]

AUTO_COMPACT_SHARE = (9, 10)  # model_family.rs ``default_auto_compact_limit``: (context_window * 9) / 10


def _drop_first(history: list) -> list:
    """codex-rs ``remove_first_item``: the oldest item goes, and with a call its outputs (no orphan left)."""
    first, rest = history[0], history[1:]
    ids = set(call_ids(first)) if role_of(first) == "assistant" else set()
    if not ids:
        return rest
    return [m for m in rest if not (role_of(m) == "tool" and m.get("tool_call_id") in ids)]


def trim_oldest_until_fits(history: list, window: int, tokens) -> tuple[list, int]:
    """``run_compact_task_inner``'s loop on ``ContextWindowExceeded``: while the compaction request does not
    fit ``window`` tokens and more than one item is left, drop the oldest item and retry. Returns the
    history the summarizer is shown and how many items were trimmed (Codex's "Trimmed N older items")."""
    sizes = [tokens(m) for m in history]
    total = sum(sizes)
    trimmed = 0
    while total > window and len(history) > 1:
        kept = _drop_first(history)
        kept_ids = {id(m) for m in kept}
        total -= sum(s for m, s in zip(history, sizes, strict=True) if id(m) not in kept_ids)
        sizes = [s for m, s in zip(history, sizes, strict=True) if id(m) in kept_ids]
        history, trimmed = kept, trimmed + 1
    return history, trimmed


@register
@dataclass(frozen=True)
class CodexCliPolicy(CodexPolicy, AgentRule):
    """Codex CLI's local compaction: the ``codex`` port, plus Codex's trigger and its retry on overflow.

    Source: openai/codex ``codex-rs/core/src/compact.rs`` @0100b103 (read as stored by the code
    index): ``run_compact_task_inner`` L64-156, whose loop (L97-) on ``CodexErr::ContextWindowExceeded``
    (L121-136) removes the oldest history item (``history.remove_first_item()``) and retries while more
    than one item is left; the compacted history is then built from the *session's* full history
    (``collect_user_messages(&history_snapshot)``, L158-162), so trimming changes only what the
    summarizer saw. What is kept is the ``codex`` policy, reused as it is (``CodexPolicy``: the initial
    context, the newest user messages up to ``COMPACT_USER_MESSAGE_MAX_TOKENS`` = 20,000 tokens, the
    summary; see ``policies/codex.py`` for its lines and cases).

    Trigger (``trigger``): ``model_auto_compact_token_limit`` when set, else the model family's
    default, ``(context_window * 9) / 10`` (``codex-rs/core/src/models_manager/model_family.rs``
    ``auto_compact_token_limit`` / ``default_auto_compact_limit``, as stored by the code index);
    Codex compacts when the total tokens it was billed reach it (``total_usage_tokens >= limit``).

    Options: ``model_auto_compact_token_limit`` (Codex's config key; None: 90% of the window);
    ``context_window`` (tokens the compaction request must fit, else the oldest item is dropped and
    the request retried; None: the lab has no model window, nothing is trimmed; the trigger timeline
    sets the session model's); and every option of ``codex``: ``user_message_max_tokens``,
    ``summary_role``, ``excerpt_tool_calls``, ``token_count``.
    """

    model_auto_compact_token_limit: int | None = None
    context_window: int | None = None
    name: ClassVar[str] = "codex_cli_rule"
    agent: ClassVar[str] = "codex_cli"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.model_auto_compact_token_limit is not None:
            check_positive(self.model_auto_compact_token_limit, "model_auto_compact_token_limit")
        if self.context_window is not None:
            check_window(self.context_window)

    def trigger(self, window: ModelWindow) -> Trigger:
        limit = self.model_auto_compact_token_limit
        if limit is None:
            limit = window.context_window * AUTO_COMPACT_SHARE[0] // AUTO_COMPACT_SHARE[1]
        return Trigger(self.name, window.context_window, limit, inclusive=True,
                       note="total tokens >= model_auto_compact_token_limit (default 90% of the window)")

    def model_options(self, window: ModelWindow) -> dict:
        return {"context_window": window.context_window}

    def summarized(self, history: list, env: PolicyEnv) -> list:
        if self.context_window is None:
            return history
        return trim_oldest_until_fits(history, self.context_window, env.tokens())[0]

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        new, ev = super().compact(context, env, size)
        if ev is None:
            return new, ev
        detail = ev.detail.replace("codex:", "codex_cli_rule:", 1)
        if self.context_window is not None:
            history = context[1:] if role_of(context[0]) == "system" else list(context)
            trimmed = trim_oldest_until_fits(history, self.context_window, env.tokens())[1]
            if trimmed:
                detail += f"; trimmed {trimmed} older items before summarizing (the request exceeded the window)"
        return new, replace(ev, detail=detail)
