"""Goose's compaction as a policy: at 80% of the window, one summary; on overflow, tool responses removed middle out."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.compaction import SUMMARY_HEADER, summarize_dropped
from ..context.messages import Message, calls_of, role_of, text_of
from .agent_windows import AgentRule, ModelWindow, Trigger, split_system
from .base import Event, Policy, PolicyEnv, make_event, register

__all__ = ["GoosePolicy", "DEFAULT_COMPACTION_THRESHOLD", "REMOVAL_PERCENTAGES", "middle_out",
           "CONVERSATION_CONTINUATION_TEXT", "TOOL_LOOP_CONTINUATION_TEXT"]

DEFAULT_COMPACTION_THRESHOLD = 0.8  # context_mgmt/mod.rs L19
REMOVAL_PERCENTAGES = (0, 10, 20, 50, 100)  # mod.rs ``do_compact``: progressively more tool responses removed
# mod.rs L21-29 (byte for byte)
CONVERSATION_CONTINUATION_TEXT = (
    "Your context was compacted. The previous message contains a summary of the conversation so far.\n"
    "Do not mention that you read a summary or that conversation summarization occurred.\n"
    "Just continue the conversation naturally based on the summarized context.")
TOOL_LOOP_CONTINUATION_TEXT = (
    "Your context was compacted. The previous message contains a summary of the conversation so far.\n"
    "Do not mention that you read a summary or that conversation summarization occurred.\n"
    "Continue calling tools as necessary to complete the task.")
MANUAL_COMPACT_CONTINUATION_TEXT = (
    "Your context was compacted at the user's request. The previous message contains a summary of the "
    "conversation so far.\n"
    "Do not mention that you read a summary or that conversation summarization occurred.\n"
    "Just continue the conversation naturally based on the summarized context.")


def middle_out(tool_indices: list[int], remove_percent: int) -> list[int]:
    """``filter_tool_responses`` (mod.rs): which tool responses go, ``remove_percent`` of them (at least one),
    taken alternately just before and just after the middle, moving outward."""
    if remove_percent == 0 or not tool_indices:
        return []
    count = max(len(tool_indices) * remove_percent // 100, 1)
    middle = len(tool_indices) // 2
    out = []
    for i in range(count):
        offset = i // 2
        if i % 2 == 0:
            if middle > offset:
                out.append(tool_indices[middle - offset - 1])
        elif middle + offset < len(tool_indices):
            out.append(tool_indices[middle + offset])
    return out


def _has_text_only(message: Message) -> bool:
    return role_of(message) == "user" and bool(text_of(message)) and not calls_of(message)


@register
@dataclass(frozen=True)
class GoosePolicy(Policy, AgentRule):
    """Goose: compact at 80% of the window into one summary; on overflow, drop tool responses middle out.

    Source: block/goose ``crates/goose/src/context_mgmt/mod.rs`` @331a8429 (start lines counted in the
    stored text): ``DEFAULT_COMPACTION_THRESHOLD`` L19, the continuation texts L21-34,
    ``compact_messages`` L57-, ``check_if_compaction_needed`` (``usage_ratio > threshold``; a threshold
    <= 0 or >= 1 turns auto-compaction off), ``filter_tool_responses`` and ``do_compact`` (removal
    percentages 0, 10, 20, 50, 100 on ``ContextLengthExceeded``). Pinned by cases from the module's own
    tests (``test_progressive_removal_on_context_exceeded``, ``test_keeps_tool_request``;
    ``peers/agent_cases.py``).

    One call: every message becomes invisible to the agent; the agent sees the summary (a user
    message: Goose sets the reply's role to user), an assistant continuation text
    (``CONVERSATION_CONTINUATION_TEXT`` when the newest text-only user message is the last message,
    else ``TOOL_LOOP_CONTINUATION_TEXT``), then a fresh copy of that newest text-only user message.
    The summarizer is shown the agent-visible messages; when they do not fit the summary request
    (``summary_window`` tokens), the tool responses are removed middle out, 10%, 20%, 50%, then all of
    them, before Goose gives up.

    Lab mapping: the budget is 80% of the window, so the summary request's window is
    ``budget / threshold`` in the trigger's unit unless ``summary_window`` is set. A tool response is
    a tool message (Goose's tool responses are user messages carrying them). Options: ``threshold``
    (0.8, ``GOOSE_AUTO_COMPACT_THRESHOLD``), ``summary_window`` (None), ``manual`` (False: a manual
    ``/compact`` keeps no user message and says so), ``excerpt_tool_calls`` (True: Goose shows the
    summarizer ``tool_request(name): arguments``).
    """

    threshold: float = DEFAULT_COMPACTION_THRESHOLD
    summary_window: int | None = None
    manual: bool = False
    excerpt_tool_calls: bool = True
    name: ClassVar[str] = "goose_rule"
    agent: ClassVar[str] = "goose"

    def __post_init__(self) -> None:
        if not 0 < self.threshold < 1:
            raise ValueError(f"threshold must be > 0 and < 1 (Goose turns auto-compaction off outside), "
                             f"got {self.threshold!r}")
        if self.summary_window is not None and self.summary_window <= 0:
            raise ValueError(f"summary_window must be > 0, got {self.summary_window!r}")

    def trigger(self, window: ModelWindow) -> Trigger:
        return Trigger(self.name, window.context_window, int(window.context_window * self.threshold),
                       note=f"session tokens over {self.threshold:.0%} of the window")

    def _shown(self, history: list, env: PolicyEnv) -> tuple[list, int]:
        """What the summarizer is shown: the first removal percentage whose messages fit the window."""
        window = self.summary_window or int(env.budget / self.threshold)
        tools = [i for i, m in enumerate(history) if role_of(m) == "tool"]
        sizes = [env.meter(m) for m in history]
        for pct in REMOVAL_PERCENTAGES:
            gone = set(middle_out(tools, pct))
            if sum(s for i, s in enumerate(sizes) if i not in gone) <= window or pct == REMOVAL_PERCENTAGES[-1]:
                return [m for i, m in enumerate(history) if i not in gone], pct
        raise AssertionError("unreachable")

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        system, history = split_system(context)
        shown, pct = self._shown(history, env)
        summary = summarize_dropped(shown, env.summarizer, excerpt_tool_calls=self.excerpt_tool_calls,
                                    excerpts=env.excerpts)
        text = summary.note[len(SUMMARY_HEADER) + 1:] if summary.failure is None else summary.note
        found = None if self.manual else next(
            (k for k in range(len(history) - 1, -1, -1) if _has_text_only(history[k])), None)
        latest = found is not None and found == len(history) - 1
        cont = (MANUAL_COMPACT_CONTINUATION_TEXT if self.manual else
                CONVERSATION_CONTINUATION_TEXT if latest else TOOL_LOOP_CONTINUATION_TEXT)
        new = system + [{"role": "user", "content": text}, {"role": "assistant", "content": cont}]
        if found is not None:
            new.append({"role": "user", "content": text_of(history[found])})
        ev = make_event(self, "placeholder" if summary.failure else "summary", context, new, env, size)
        detail = (f"goose_rule: summarized {len(history)} messages ({pct}% of tool responses removed from the "
                  f"summary request), kept {'the newest user message' if found is not None else 'no user message'}"
                  f"; {size:,} -> {ev.size_after:,}")
        return new, replace(ev, note=text, failure=summary.failure, summarizer_calls=int(summary.called),
                            detail=detail)
