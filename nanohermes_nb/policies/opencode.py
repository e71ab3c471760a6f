"""OpenCode's prune as a policy: old tool output cleared beyond the last 40,000 tokens of it, if that saves 20,000."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.compaction import SUMMARY_HEADER, summarize_dropped
from ..context.messages import Message, call_id, call_name, calls_of, role_of, text_of
from .agent_windows import AgentRule, ModelWindow, Trigger, split_system
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register

__all__ = ["OpenCodePolicy", "PRUNE_MINIMUM", "PRUNE_PROTECT", "CLEARED", "estimate", "prune_indices", "usable"]

PRUNE_MINIMUM = 20_000  # compaction.ts L88
PRUNE_PROTECT = 40_000  # compaction.ts L89
PRUNE_PROTECTED_TOOLS = ("skill",)  # compaction.ts L90
PROTECTED_TURNS = 2  # compaction.ts L166: ``if (turns < 2) continue``
CHARS_PER_TOKEN = 4  # util/token.ts ``Token.estimate``: round(length / 4)
CLEARED = "[Old tool result content cleared]"  # message-v2.ts ``toModelMessages``: a compacted tool output
COMPACTION_BUFFER = 20_000  # overflow.ts: ``COMPACTION_BUFFER``
OUTPUT_TOKEN_MAX = 32_000  # ``SessionPrompt.OUTPUT_TOKEN_MAX`` (the cap of ProviderTransform.maxOutputTokens)
# compaction.ts (the summary turn): what the request after a compaction shows
COMPACTION_ASK = "What did we do so far?"
CONTINUE = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed."


def estimate(text: str) -> int:
    """``Token.estimate``: characters / 4, rounded."""
    return max(0, round(len(text) / CHARS_PER_TOKEN))


def usable(context: int, output: int, input_limit: int | None = None, reserved: int | None = None) -> int:
    """overflow.ts ``usable``: ``limit.input - min(20,000, max output)`` when the model has an input limit,
    else ``context - max output`` (max output capped at 32,000); 0 for a model with no context limit."""
    if context == 0:
        return 0
    out = min(output, OUTPUT_TOKEN_MAX) or OUTPUT_TOKEN_MAX
    if input_limit:
        return max(0, input_limit - (reserved if reserved is not None else min(COMPACTION_BUFFER, out)))
    return max(0, context - out)


def prune_indices(history: list, protect: int, minimum: int, protected_tools=PRUNE_PROTECTED_TOOLS,
                  cleared: str = CLEARED) -> tuple[list[int], int, int]:
    """``prune`` (compaction.ts L148-195): walking back from the newest message, past the last 2 user turns,
    tool outputs are counted; those beyond ``protect`` tokens are to be cleared, but only when they add up
    to more than ``minimum``. Stops at a summary or an output already cleared. Returns the indices,
    the tokens they hold and the tokens counted."""
    names = {call_id(c): call_name(c) for m in history if role_of(m) == "assistant" for c in calls_of(m)}
    total = pruned = turns = 0
    chosen: list[int] = []
    for i in range(len(history) - 1, -1, -1):
        m = history[i]
        if role_of(m) == "user":
            turns += 1
        if turns < PROTECTED_TURNS:
            continue
        if role_of(m) == "assistant" and m.get("summary") is True:
            break
        if role_of(m) != "tool" or names.get(m.get("tool_call_id")) in protected_tools:
            continue
        text = text_of(m)
        if text == cleared:
            break
        total += (size := estimate(text))
        if total > protect:
            pruned += size
            chosen.append(i)
    return (chosen if pruned > minimum else []), pruned, total


@register
@dataclass(frozen=True)
class OpenCodePolicy(Policy, AgentRule):
    """OpenCode's prune: tool output beyond the newest 40,000 tokens of it cleared, only if that saves over 20,000.

    Source: anomalyco/opencode (sst/opencode) ``packages/opencode/src/session/compaction.ts`` @001aa6cc
    (lines counted in the stored text): ``PRUNE_MINIMUM`` / ``PRUNE_PROTECT`` / ``PRUNE_PROTECTED_TOOLS``
    L88-90, ``prune`` L146-195, the summary turn (``processCompaction``) and its continue message;
    ``overflow.ts`` @08f74b9b (``usable``, ``isOverflow``: ``tokenCount >= usable``); the cleared
    placeholder of ``message-v2.ts`` ``toModelMessages``. Pinned by cases from
    ``packages/opencode/test/session/compaction.test.ts`` @001aa6cc (``peers/agent_cases.py``).

    Prune: walking back over the history, nothing is counted until 2 user messages have been passed
    (the current turn and the one before are protected); then each tool output's ``Token.estimate``
    (characters / 4) is added up; once the total passes ``prune_protect`` (40,000), every older output
    is marked, and the marked ones are cleared (the content becomes ``[Old tool result content
    cleared]``) only if they hold more than ``prune_minimum`` (20,000) tokens. The walk stops at a
    summary or at an output cleared before; outputs of ``protected_tools`` (``skill``) are never
    counted. OpenCode prunes after every turn, whatever the size (the timeline's trigger).

    Overflow: OpenCode summarizes when a request reaches ``usable`` (``trigger``); here, when the
    context is still over the budget after the prune (``summarize_on_overflow``, True), the history
    becomes a user message ``What did we do so far?``, the summary as an assistant message, and
    OpenCode's continue message.

    Options: ``prune`` (True: OpenCode's ``compaction.prune``), ``prune_protect``, ``prune_minimum``,
    ``protected_tools``, ``summarize_on_overflow``, ``excerpt_tool_calls`` (what the summarizer sees),
    ``reserved`` (``compaction.reserved``: the buffer under a model's input limit; None), ``overflow_at``
    (where the overflow compaction starts, in the trigger's unit; None: the lab budget; the trigger
    timeline asks the prune on every request and sets this to the model's ``usable``).
    """

    prune: bool = True
    prune_protect: int = PRUNE_PROTECT
    prune_minimum: int = PRUNE_MINIMUM
    protected_tools: tuple = PRUNE_PROTECTED_TOOLS
    summarize_on_overflow: bool = True
    excerpt_tool_calls: bool = True
    reserved: int | None = None
    overflow_at: int | None = None
    name: ClassVar[str] = "opencode_rule"
    agent: ClassVar[str] = "opencode"

    def __post_init__(self) -> None:
        check_positive(self.prune_protect, "prune_protect", zero=True)
        check_positive(self.prune_minimum, "prune_minimum", zero=True)
        if self.reserved is not None:
            check_positive(self.reserved, "reserved", zero=True)
        if self.overflow_at is not None:
            check_positive(self.overflow_at, "overflow_at")

    def trigger(self, window: ModelWindow) -> Trigger:
        limit = usable(window.context_window, window.max_output_tokens, reserved=self.reserved)
        return Trigger(self.name, window.context_window, limit, inclusive=True, basis="every_request",
                       note=f"prunes after every turn; summarizes at usable = window - output ({limit:,})")

    def pruned(self, history: list, env: PolicyEnv) -> tuple[list, int]:
        if not self.prune:
            return history, 0
        chosen = set(prune_indices(history, self.prune_protect, self.prune_minimum, self.protected_tools)[0])
        out = [({**m, "content": CLEARED} if i in chosen else m) for i, m in enumerate(history)]
        return (out if chosen else history), len(chosen)

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        system, history = split_system(context)
        history, cleared = self.pruned(history, env)
        new = system + history
        after = sum(env.meter(m) for m in new)
        kind, detail = "clear", f"opencode_rule: cleared {cleared} old tool outputs"
        calls, failure, note = 0, None, None
        limit = env.budget if self.overflow_at is None else self.overflow_at
        if self.summarize_on_overflow and after > limit and history:
            summary = summarize_dropped(history, env.summarizer, excerpt_tool_calls=self.excerpt_tool_calls,
                                        excerpts=env.excerpts)
            text = summary.note[len(SUMMARY_HEADER) + 1:] if summary.failure is None else summary.note
            new = system + [{"role": "user", "content": COMPACTION_ASK}, _summary(text),
                            {"role": "user", "content": CONTINUE}]
            kind = "placeholder" if summary.failure else "summary"
            detail += "; still over the budget: summarized (OpenCode's overflow compaction)"
            calls, failure, note = int(summary.called), summary.failure, text
        elif not cleared:
            return context, None
        ev = make_event(self, kind, context, new, env, size)
        return new, replace(ev, detail=detail + f"; {size:,} -> {ev.size_after:,}", summarizer_calls=calls,
                            failure=failure, note=note)


def _summary(text: str) -> Message:
    """The summary turn's assistant message (``summary: true`` in OpenCode; not sent as a field)."""
    return {"role": "assistant", "content": text}
