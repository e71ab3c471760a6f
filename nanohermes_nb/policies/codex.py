"""Codex CLI compaction as a policy: the user messages and one summary, no tool traffic."""

from __future__ import annotations

from dataclasses import dataclass, replace
from collections.abc import Callable
from typing import ClassVar

from ..compaction import is_summary_message, summarize_dropped
from ..messages import Message, role_of, text_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register


def _truncate_to_tokens(message: Message, limit: int, tokens: Callable[[Message], int]) -> dict | None:
    """A copy of a user message cut (head and tail kept) to fit ``limit`` tokens; None if nothing fits."""
    text = text_of(message)

    def build(k: int) -> dict:
        head, tail = text[: k - k // 2], text[len(text) - k // 2:] if k // 2 else ""
        return {"role": role_of(message), "content": f"{head}\n…{len(text) - k} chars truncated…\n{tail}"}

    if limit <= 0 or tokens(build(0)) > limit:
        return None
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tokens(build(mid)) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return build(lo)


@register
@dataclass(frozen=True)
class CodexPolicy(Policy):
    """Codex CLI compaction: every real user message (20,000 tokens, newest first) plus one user-role summary.

    Source: openai/codex ``codex-rs/core/src/compact.rs`` (read at commit
    0100b103). After the summary turn, ``build_compacted_history`` rebuilds the
    history as the initial context, then
    the user messages gathered by ``collect_user_messages`` (earlier summaries
    excluded) selected newest first while they fit
    ``COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000`` (the message that overflows is
    truncated to the tokens left and selection stops), in chronological order,
    then one ``role: "user"`` message holding ``SUMMARY_PREFIX + "\\n" + summary``.
    Assistant messages, tool calls and tool results are all dropped, so the
    result is trivially legal. The summarizer sees the whole history (Codex sends
    it all with its compact prompt; tool calls included), previous summary
    included, which makes it a rolling summary.

    Lab mapping: the initial context is ``messages[0]`` (the system message);
    mid-conversation system messages are dropped like every non-user item; the
    20,000 tokens are counted with ``env.tokens()`` (Codex uses its own
    approximate count); the overflowing message keeps its head and tail around a
    ``…N chars truncated…`` marker (Codex's ``truncate_text`` counts tokens in its
    marker). The summary text uses the lab's ``[Earlier conversation summary]``
    header instead of Codex's ``summary_prefix.md`` so that later compactions and
    the metrics recognize it; a failed summarizer gives the lab's placeholder
    (Codex writes ``(no summary available)``). Codex's own trigger (the model's
    auto-compact token limit) is replaced by the lab trigger.
    """

    user_message_max_tokens: int = 20_000
    summary_role: str = "user"
    excerpt_tool_calls: bool = True
    name: ClassVar[str] = "codex"

    def __post_init__(self) -> None:
        check_positive(self.user_message_max_tokens, "user_message_max_tokens", zero=True)

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        if len(context) < 2:
            return context, None
        initial = list(context[:1]) if role_of(context[0]) == "system" else []
        history = list(context[len(initial):])
        summary = summarize_dropped(history, env.summarizer, excerpt_tool_calls=self.excerpt_tool_calls)
        users = [m for m in history if role_of(m) == "user" and not is_summary_message(m)]
        tokens = env.tokens()
        selected: list = []
        remaining = self.user_message_max_tokens
        truncated = 0
        for m in reversed(users):
            if remaining <= 0:
                break
            t = tokens(m)
            if t <= remaining:
                selected.append(m)
                remaining -= t
                continue
            cut = _truncate_to_tokens(m, remaining, tokens)
            if cut is not None:
                selected.append(cut)
                truncated = 1
            break
        selected.reverse()
        note = {"role": self.summary_role, "content": summary.note}
        new = initial + selected + [note]
        ev = make_event(self, "placeholder" if summary.failure else "summary", context, new, env, size)
        detail = (
            f"codex: kept {len(selected)} of {len(users)} user messages"
            f"{' (the oldest kept one truncated)' if truncated else ''} within "
            f"{self.user_message_max_tokens:,} tokens, removed {len(ev.removed)} "
            f"messages incl. all tool traffic, summary as a {self.summary_role} message; {size:,} -> {ev.size_after:,}"
        )
        if summary.failure:
            detail += f"; summarizer failed: {summary.failure}"
        return new, replace(ev, **{"note": summary.note, "failure": summary.failure,
                             "summarizer_calls": int(summary.called), "detail": detail})


