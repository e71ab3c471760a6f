"""Roo Code's condense as a policy: the first message and the last 3 kept, the rest summarized."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.compaction import SUMMARY_HEADER, summarize_dropped
from ..context.messages import Message, call_id, calls_of, role_of
from .agent_windows import AgentRule, ModelWindow, Trigger, anthropic_turns, split_system
from .base import Event, Policy, PolicyEnv, PolicyError, check_positive, make_event, register

__all__ = ["RooCodePolicy", "N_MESSAGES_TO_KEEP", "SYNTHETIC_REASONING", "keep_with_tool_blocks",
           "truncation_marker", "allowed_tokens"]

N_MESSAGES_TO_KEEP = 3  # condense/index.ts L153
MIN_CONDENSE_THRESHOLD, MAX_CONDENSE_THRESHOLD = 5, 100  # condense/index.ts L154-155 (percent)
TOKEN_BUFFER_PERCENTAGE = 0.1  # context-management/index.ts L25
ANTHROPIC_DEFAULT_MAX_TOKENS = 8192  # packages/types/src/providers/anthropic.ts L161
FALLBACK_FRACTION = 0.5  # context-management/index.ts L313: ``truncateConversation(messages, 0.5, taskId)``
# condense/index.ts L287-290 (byte for byte): the reasoning block every summary carries
SYNTHETIC_REASONING = ("Condensing conversation context. The summary below captures the key information from the "
                       "prior conversation.")


def truncation_marker(removed: int) -> str:
    """context-management/index.ts L114: the marker the sliding window leaves."""
    return f"[Sliding window truncation: {removed} messages hidden to reduce context]"


def allowed_tokens(context_window: int, max_tokens: int | None) -> int:
    """context-management/index.ts L267: ``contextWindow * (1 - 0.1) - (maxTokens || 8192)``."""
    return int(context_window * (1 - TOKEN_BUFFER_PERCENTAGE) - (max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS))


def _is_summary(turn: list) -> bool:
    return role_of(turn[0]) == "assistant" and str(turn[0].get("reasoning_content", "")).startswith(SYNTHETIC_REASONING)


def keep_with_tool_blocks(turns: list[list], keep: int) -> tuple[list[list], list, list[str]]:
    """``getKeepMessagesWithToolBlocks`` (condense/index.ts L96-151): the last ``keep`` turns, the calls their
    results answer (searched back at most ``N_MESSAGES_TO_KEEP`` turns before them, newest first) and
    those calls' messages' reasoning."""
    if len(turns) <= keep:
        return turns, [], []
    start = len(turns) - keep
    calls, reasoning, seen = [], [], set()
    search = turns[max(0, start - N_MESSAGES_TO_KEEP):start]
    for turn in turns[start:]:
        for result in (m for m in turn if role_of(m) == "tool"):
            rid = result.get("tool_call_id")
            if rid in seen:
                continue
            for msg in (m for t in reversed(search) for m in reversed(t) if role_of(m) == "assistant"):
                found = next((c for c in calls_of(msg) if call_id(c) == rid), None)
                if found is not None:
                    calls.append(found)
                    seen.add(rid)
                    if msg.get("reasoning_content"):
                        reasoning.append(str(msg["reasoning_content"]))
                    break
    return turns[start:], calls, reasoning


@register
@dataclass(frozen=True)
class RooCodePolicy(Policy, AgentRule):
    """Roo Code's condense: keep the first message and the last 3, carry the calls they need, summarize the rest.

    Source: RooCodeInc/Roo-Code ``src/core/condense/index.ts`` @d1e74cb3 (the version before
    "Intelligent Context Condensation v2", cf5d42e1, replaced it with a fresh start): ``summarizeConversation``
    L180-373, ``getKeepMessagesWithToolBlocks`` L96-151, ``getMessagesSinceLastSummary`` L376-407; and
    ``src/core/context-management/index.ts`` @d1e74cb3: ``manageContext`` L236-353 (the threshold, the
    fallback), ``truncateConversation`` L66-134. Pinned by cases from ``condense/__tests__/index.spec.ts``
    and ``context-management/__tests__/context-management.spec.ts`` (``peers/agent_cases.py``).

    Messages are Anthropic turns (``anthropic_turns``). One call: the last ``N_MESSAGES_TO_KEEP`` (3)
    turns are kept; the tool calls whose results they hold are looked for in the 3 turns before them and
    carried, with their messages' reasoning, on the summary message (when any is, the first kept turn is
    also summarized); the turns from the first (or from the last summary, the first message put back in
    front when that does not start with a user turn) up to the kept ones are summarized into one
    assistant message: ``reasoning_content`` the synthetic reasoning (+ the carried reasoning), content
    the summary, ``tool_calls`` the carried calls. The context becomes: first turn, summary, kept turns.
    Roo declines to condense when 1 message or fewer would be summarized, when a kept turn is a summary,
    when the summary is empty and when the context would grow; then, as ``manageContext`` does over its
    limit, the sliding window hides half the turns after the first (an even number) behind a user
    ``truncation_marker``.

    Trigger (``trigger``): ``prevContextTokens`` over ``contextWindow * 0.9 - (maxTokens || 8192)``, or at
    ``auto_condense_context_percent`` (100) of the window. Options: ``auto_condense_context`` (True; False:
    only the sliding window), ``auto_condense_context_percent`` (100, within [5, 100]), ``max_tokens``
    (None: the model's reply limit, else 8,192), ``excerpt_tool_calls`` (True: Roo shows the summarizer
    the tool blocks as they are), ``profile_threshold`` (None; Roo's per-profile threshold, -1 or out of
    range meaning the global one). Not reproduced: a custom condensing prompt (the lab's summarizer
    stands for the model).
    """

    auto_condense_context: bool = True
    auto_condense_context_percent: int = MAX_CONDENSE_THRESHOLD
    max_tokens: int | None = None
    excerpt_tool_calls: bool = True
    profile_threshold: int | None = None
    name: ClassVar[str] = "roo_code_rule"
    agent: ClassVar[str] = "roo_code"

    def __post_init__(self) -> None:
        pct = self.auto_condense_context_percent
        if not MIN_CONDENSE_THRESHOLD <= pct <= MAX_CONDENSE_THRESHOLD:
            raise ValueError(f"auto_condense_context_percent must be >= {MIN_CONDENSE_THRESHOLD} and <= "
                             f"{MAX_CONDENSE_THRESHOLD}, got {pct!r}")
        if self.max_tokens is not None:
            check_positive(self.max_tokens, "max_tokens")

    def trigger(self, window: ModelWindow) -> Trigger:
        allowed = allowed_tokens(window.context_window, self.max_tokens or window.max_output_tokens)
        if allowed <= 0:
            raise PolicyError(f"roo_code_rule: a {window.context_window:,}-token window leaves no room for "
                             f"{self.max_tokens or window.max_output_tokens:,} output tokens")
        pct = window.context_window * self.effective_percent() // 100
        return Trigger(self.name, window.context_window, min(allowed, pct), inclusive=pct < allowed,
                       note="over window * 0.9 - max output tokens (or at the condense percent)")

    def effective_percent(self) -> int:
        """context-management/index.ts L270-286: a profile's own threshold when it is within [5, 100];
        -1, none, or an invalid value: the global ``auto_condense_context_percent``."""
        p = self.profile_threshold
        return p if p is not None and MIN_CONDENSE_THRESHOLD <= p <= MAX_CONDENSE_THRESHOLD \
            else self.auto_condense_context_percent

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        system, history = split_system(context)
        spans = anthropic_turns(history)
        if not any(role == "user" for role, _a, _b in spans):
            raise PolicyError("roo_code_rule: the history has no user message (Roo keeps the user's task first)")
        turns = [history[a:b] for _r, a, b in spans]
        why = "auto-condense is off"
        if self.auto_condense_context:
            new, summary, why = self._condense(system, turns, env, size)
            if new is not None:
                ev = make_event(self, "summary", context, new, env, size)
                return new, replace(ev, note=summary, summarizer_calls=1, detail=(
                    f"roo_code_rule: kept the first and last {N_MESSAGES_TO_KEEP} turns, summarized the rest; "
                    f"{size:,} -> {ev.size_after:,}"))
        return self._truncate(context, system, turns, env, size, why)

    def _condense(self, system: list, turns: list[list], env: PolicyEnv, size: int):
        kept, calls, reasoning = keep_with_tool_blocks(turns, N_MESSAGES_TO_KEEP)
        keep_start = max(len(turns) - N_MESSAGES_TO_KEEP, 0)
        before = turns[: keep_start + 1 if calls else keep_start]
        last = max((i for i, t in enumerate(before) if _is_summary(t)), default=None)
        to_summarize = before if last is None else before[last:]
        if last is not None and role_of(to_summarize[0][0]) != "user":
            to_summarize = [turns[0], *to_summarize]
        if len(to_summarize) <= 1:
            return None, "", "not enough messages to condense (or condensed recently)"
        if any(_is_summary(t) for t in kept):
            return None, "", "condensed recently (a kept message is a summary)"
        flat = [m for t in to_summarize for m in t]
        summary = summarize_dropped(flat, env.summarizer, excerpt_tool_calls=self.excerpt_tool_calls,
                                    excerpts=env.excerpts)
        if summary.failure is not None:
            return None, "", f"the summary is empty ({summary.failure})"
        text = summary.note[len(SUMMARY_HEADER) + 1:]
        message: Message = {"role": "assistant", "content": text,
                            "reasoning_content": "\n".join([SYNTHETIC_REASONING, *reasoning])}
        if calls:
            message = {**message, "tool_calls": list(calls)}
        new = system + turns[0] + [message] + [m for t in kept for m in t]
        if sum(env.meter(m) for m in new) >= size:
            return None, "", "the context would grow"
        return new, text, ""

    def _truncate(self, context: list, system: list, turns: list[list], env: PolicyEnv, size: int, why: str):
        """``truncateConversation(messages, 0.5)`` (context-management/index.ts L66-134)."""
        raw = int((len(turns) - 1) * FALLBACK_FRACTION)
        remove = raw - raw % 2
        if remove <= 0:
            return context, None
        marker = {"role": "user", "content": truncation_marker(remove)}
        rest = [m for t in turns[remove + 1:] for m in t]
        while rest and role_of(rest[0]) == "tool":  # only when the history did not start with the user's task
            rest = rest[1:]
        new = system + turns[0] + [marker] + rest
        ev = make_event(self, "trim", context, new, env, size)
        return new, replace(ev, detail=f"roo_code_rule: condense declined ({why}); the sliding window hid "
                                       f"{remove} of {len(turns)} turns; {size:,} -> {ev.size_after:,}")
