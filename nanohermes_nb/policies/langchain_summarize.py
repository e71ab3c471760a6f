"""LangChain's ``SummarizationMiddleware`` as a policy: the old part summarized, the last 20 messages kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.compaction import PLACEHOLDER_NOTE, ExcerptReader
from ..context.messages import Message, call_id, calls_of, role_of
from ..context.summarizers import Summarizer, default_summarizer
from .base import Event, Policy, PolicyEnv, make_event, register
from .langchain_trim import SYSTEM_ROLES, trim_last

__all__ = ["LangChainSummarizePolicy", "SUMMARY_PREFIX", "safe_cutoff_point"]

SUMMARY_PREFIX = "Here is a summary of the conversation to date:\n\n"  # summarization.py, _build_new_messages
NO_HISTORY = "No previous conversation history."
TOO_LONG = "Previous conversation was too long to summarize."
KEEP_KINDS = ("messages", "tokens", "fraction")


def safe_cutoff_point(messages: Sequence[Message], cutoff: int) -> int:
    """``_find_safe_cutoff_point``: move a cut that lands on tool results so no result is orphaned.

    When ``messages[cutoff]`` is a tool result, the ids of the run of results
    starting there are collected and the nearest earlier assistant message whose
    calls share one of them becomes the cut (the calls are kept with their
    results); with no such message the cut moves past the run instead.
    """
    if cutoff >= len(messages) or role_of(messages[cutoff]) != "tool":
        return cutoff
    ids = set()
    end = cutoff
    while end < len(messages) and role_of(messages[end]) == "tool":
        tid = messages[end].get("tool_call_id")
        if tid:
            ids.add(tid)
        end += 1
    for i in range(cutoff - 1, -1, -1):
        if role_of(messages[i]) == "assistant" and ids & {call_id(c) for c in calls_of(messages[i]) if call_id(c)}:
            return i
    return end


def _token_cutoff(messages: Sequence[Message], target: int, size) -> int:
    """``_find_token_based_cutoff``: the earliest index whose suffix fits ``target`` (binary search as LangChain's)."""
    if not messages:
        return 0
    target = max(target, 1)
    suffix = [0] * (len(messages) + 1)
    for i in range(len(messages) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + size(messages[i])
    if suffix[0] <= target:
        return 0
    left, right = 0, len(messages)
    candidate = len(messages)
    for _ in range(len(messages).bit_length() + 1):
        if left >= right:
            break
        mid = (left + right) // 2
        if suffix[mid] <= target:
            candidate, right = mid, mid
        else:
            left = mid + 1
    if candidate == len(messages):
        candidate = left
    if candidate >= len(messages):
        if len(messages) == 1:
            return 0
        candidate = len(messages) - 1
    return safe_cutoff_point(messages, candidate)


@dataclass(frozen=True)
class _Summary:
    text: str
    called: bool
    failure: str | None


def _ask(summarizer: Summarizer, messages: Sequence[Message], excerpts: ExcerptReader) -> _Summary:
    """One summarizer call on the messages LangChain would send (tool calls included, as its prompt shows them)."""
    records = excerpts.records(messages, tool_calls=True)
    try:
        reply = excerpts.ask(summarizer, records)
    except Exception as exc:  # LangChain lets the error end the agent step; a replay records it
        return _Summary(PLACEHOLDER_NOTE, True, f"{type(exc).__name__}: {exc}")
    if not isinstance(reply, str):
        return _Summary(PLACEHOLDER_NOTE, True, f"the summarizer returned {type(reply).__name__}, not text")
    return _Summary(reply.strip(), True, None)


@register
@dataclass(frozen=True)
class LangChainSummarizePolicy(Policy):
    """LangChain ``SummarizationMiddleware``: the history before the last 20 messages becomes one user-role summary.

    Proven against langchain 1.4.7 (``langchain/agents/middleware/summarization.py``,
    ``SummarizationMiddleware.before_model``) with its defaults and its model
    stubbed: every tool-batch point of the corpus gives the identical context
    (tests/test_peers_langchain.py). Source and provenance: docs/policies.md.

    What it does once triggered: the cut is ``len - 20`` (``keep=("messages",
    20)``; nothing happens while the history has 20 messages or fewer); a cut
    that lands on a tool result moves back to the assistant message that made
    the call (or past the results when no such message exists), so no result is
    orphaned; the messages before the cut go to the summarizer after
    ``trim_messages(max_tokens=4000, strategy="last", start_on="human",
    allow_partial=True, include_system=True)``: when no user message is left in
    those last 4,000 tokens the summary is the fixed text "Previous conversation
    was too long to summarize." and no model is called; the new history is one
    user message ``"Here is a summary of the conversation to date:\\n\\n" +
    summary`` followed by the kept messages.

    Lab mapping: the middleware has no trigger by default (``trigger=None``: it
    never summarizes); its "should summarize" is the lab trigger. A LangChain
    agent keeps its system prompt outside the message state and the middleware
    never sees it: a leading system message is set aside here and kept first.
    ``keep`` takes LangChain's forms: ``("messages", n)``, ``("tokens", n)``
    measured with ``env.tokens()``, ``("fraction", f)`` of ``env.budget``
    (standing for the model profile's ``max_input_tokens``) measured with
    ``env.meter``; ``trim_tokens_to_summarize`` is in tokens (``env.tokens()``),
    None to send everything. The summarizer gets the lab's excerpt of those
    messages (LangChain formats them into its own prompt); its reply is stripped.
    A failed summarizer gives the lab's placeholder as the summary (LangChain
    raises and the agent step fails).
    """

    keep: tuple = ("messages", 20)
    trim_tokens_to_summarize: int | None = 4000
    name: ClassVar[str] = "langchain_summarize"
    summary_prefixes: ClassVar[tuple[str, ...]] = (SUMMARY_PREFIX,)

    def __post_init__(self) -> None:
        keep = tuple(self.keep) if isinstance(self.keep, (list, tuple)) else self.keep
        if not isinstance(keep, tuple) or len(keep) != 2 or keep[0] not in KEEP_KINDS:
            raise ValueError(f"keep must be ('messages'|'tokens'|'fraction', value), got {self.keep!r}")
        kind, value = keep
        if kind == "fraction" and not 0 < value <= 1:
            raise ValueError(f"keep fraction must be > 0 and <= 1, got {value!r}")
        if kind != "fraction" and not (isinstance(value, int) and value > 0):
            raise ValueError(f"keep {kind} must be an integer > 0, got {value!r}")
        if self.trim_tokens_to_summarize is not None and self.trim_tokens_to_summarize < 0:
            raise ValueError(f"trim_tokens_to_summarize must be >= 0 or None, got {self.trim_tokens_to_summarize!r}")
        object.__setattr__(self, "keep", keep)

    def cutoff(self, history: Sequence[Message], env: PolicyEnv) -> int:
        """``_determine_cutoff_index``: where the kept part of the history starts (0: nothing to do)."""
        kind, value = self.keep
        if kind == "messages":
            return 0 if len(history) <= value else safe_cutoff_point(history, len(history) - value)
        if kind == "tokens":
            return _token_cutoff(history, int(value), env.tokens())
        return _token_cutoff(history, int(env.budget * value), env.meter)

    def to_summarize(self, messages: Sequence[Message], env: PolicyEnv) -> list:
        """``_trim_messages_for_summary``: what the summarizer is sent (may be empty)."""
        if self.trim_tokens_to_summarize is None:
            return list(messages)
        kept, _ = trim_last(messages, self.trim_tokens_to_summarize, env.tokens(), include_system=True,
                            start_on="user", allow_partial=True)
        return kept

    def summary(self, messages: Sequence[Message], env: PolicyEnv) -> _Summary:
        """``_create_summary``: the fixed texts where LangChain does not call the model, else the summarizer's reply."""
        if not messages:
            return _Summary(NO_HISTORY, False, None)
        sent = self.to_summarize(messages, env)
        if not sent:
            return _Summary(TOO_LONG, False, None)
        return _ask(env.summarizer or default_summarizer(), sent, env.excerpts)

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        head = context[:1] if context and role_of(context[0]) in SYSTEM_ROLES else []
        history = context[len(head):]
        cut = self.cutoff(history, env)
        if cut <= 0:
            return context, None
        summary = self.summary(history[:cut], env)
        note = {"role": "user", "content": SUMMARY_PREFIX + summary.text}
        new = head + [note] + history[cut:]
        ev = make_event(self, "placeholder" if summary.failure else "summary", context, new, env, size)
        detail = (f"langchain_summarize: summarized {cut} messages, kept the last {len(history) - cut}"
                  f" (keep={self.keep[0]}:{self.keep[1]}){'' if summary.called else f'; {summary.text}'}"
                  f"; {size:,} -> {ev.size_after:,}")
        if summary.failure:
            detail += f"; summarizer failed: {summary.failure}"
        return new, replace(ev, cut=len(head) + cut, note=note["content"], failure=summary.failure,
                            summarizer_calls=int(summary.called), detail=detail)
