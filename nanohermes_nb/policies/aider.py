"""Aider's chat-history summary (``ChatSummary``) as a policy: a head summarized by the weak model, a tail kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..context.messages import Message, calls_of, role_of, text_of
from ..context.summarizers import default_summarizer
from .agent_windows import AgentRule, ModelWindow, Trigger, split_system
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register

__all__ = ["AiderPolicy", "SUMMARY_PREFIX", "MIN_SPLIT", "MAX_DEPTH", "render_for_summary",
           "max_chat_history_tokens", "AiderRun"]

# aider-chat 0.86.2, aider/prompts.py line 61 (byte for byte)
SUMMARY_PREFIX = "I spoke to you previously about a number of things.\n"
MIN_SPLIT = 4  # history.py L42 ``min_split = 4``
MAX_DEPTH = 3  # history.py L43 ``depth > 3``: the fourth level summarizes everything
FALLBACK_MAX_INPUT_TOKENS = 4096  # history.py L73 ``or 4096``
SAFETY_BUFFER = 512  # history.py L74 ``-= 512``
OK_REPLY = "Ok."  # history.py L30
HISTORY_SHARE = 16  # models.py L344-346: max_chat_history_tokens = min(max(max_input_tokens / 16, 1024), 8192)
HISTORY_MIN, HISTORY_MAX = 1024, 8192


def max_chat_history_tokens(max_input_tokens: int) -> int:
    """``Model.max_chat_history_tokens`` (aider/models.py L344-346): a 16th of the window, within [1024, 8192]."""
    return int(min(max(max_input_tokens / HISTORY_SHARE, HISTORY_MIN), HISTORY_MAX))


def render_for_summary(messages: list) -> str:
    """``summarize_all``'s text (history.py L98-107): ``# USER`` / ``# ASSISTANT`` and the content, each
    ending in a newline; other roles are left out."""
    content = ""
    for m in messages:
        role = str(role_of(m)).upper()
        if role not in ("USER", "ASSISTANT"):
            continue
        content += f"# {role}\n"
        raw = m.get("content")
        content += raw if isinstance(raw, str) else text_of(m)
        if not content.endswith("\n"):
            content += "\n"
    return content


def _memo(size: Callable[[Message], int]) -> Callable[[Message], int]:
    """``size`` measured once per message object in one call (aider sizes the tail again at each depth)."""
    seen: dict[int, tuple[Message, int]] = {}

    def measured(m: Message) -> int:
        hit = seen.get(id(m))
        if hit is None or hit[0] is not m:
            hit = seen[id(m)] = (m, size(m))
        return hit[1]

    return measured


class SummaryFailed(Exception):
    """The weak model (the summarizer) gave no summary: aider raises ValueError here."""


@dataclass
class AiderRun:
    """One ``summarize`` call's working state: sizes, the summarizer, how many calls were made."""

    size: Callable[[Message], int]
    tokens: Callable[[Message], int]
    ask: Callable[[list], Any]
    max_tokens: int
    head_cap: int
    pairs: bool
    calls: int = 0

    def summarize_all(self, messages: list) -> list:
        self.calls += 1
        try:
            reply = self.ask(messages)
        except Exception as exc:  # aider prints the failure and tries its next model (history.py L114-121)
            raise SummaryFailed(f"{type(exc).__name__}: {exc}") from None
        if not isinstance(reply, str):
            raise SummaryFailed("summarizer unexpectedly failed for all models")
        return [{"role": "user", "content": SUMMARY_PREFIX + reply}]

    def split(self, messages: list, sized: list[int]) -> int:
        """The tail walk (L46-57) and the head ending on an assistant message (L59-61); with ``pairs``,
        an assistant whose tool results would open the tail is not an end (the lab's pairing rule)."""
        tail, split = 0, len(messages)
        half = self.max_tokens // 2
        for i in range(len(sized) - 1, -1, -1):
            if tail + sized[i] < half:
                tail += sized[i]
                split = i
            else:
                break
        while split > 1 and not self._ends_head(messages, split):
            split -= 1
        return split

    def _ends_head(self, messages: list, split: int) -> bool:
        if role_of(messages[split - 1]) != "assistant":
            return False
        return not (self.pairs and calls_of(messages[split - 1]) and split < len(messages)
                    and role_of(messages[split]) == "tool")

    def summarize_real(self, messages: list, depth: int = 0) -> list:
        """``ChatSummary.summarize_real`` (history.py L33-96)."""
        sized = [self.size(m) for m in messages]
        if sum(sized) <= self.max_tokens and depth == 0:
            return messages
        if len(messages) <= MIN_SPLIT or depth > MAX_DEPTH:
            return self.summarize_all(messages)
        split = self.split(messages, sized)
        if split <= MIN_SPLIT:
            return self.summarize_all(messages)
        keep, total = [], 0
        for m in messages[:split]:
            total += self.tokens(m)
            if total > self.head_cap:
                break
            keep.append(m)
        summary = self.summarize_all(keep)
        if sum(self.size(m) for m in summary) + sum(sized[split:]) < self.max_tokens:
            return summary + messages[split:]
        return self.summarize_real(summary + messages[split:], depth + 1)


@register
@dataclass(frozen=True)
class AiderPolicy(Policy, AgentRule):
    """Aider ``ChatSummary.summarize``: a tail of at most half the budget kept, the head summarized, to depth 3.

    Source: aider-chat 0.86.2 (PyPI wheel), ``aider/history.py`` L27-123 (``summarize``,
    ``summarize_real``, ``summarize_all``), ``aider/prompts.py`` L61 (``summary_prefix``),
    ``aider/models.py`` L344-346 (``max_chat_history_tokens``) and
    ``aider/coders/base_coder.py`` L510-513 (``ChatSummary([weak_model, main_model],
    max_chat_history_tokens)``), L1002-1034 (when: ``too_big(done_messages)``; the worker and its
    failure path). Proven against that code (``peers/aider.py``, tests/test_peers_aider.py).

    One call: the history (everything after the system prompt, aider's ``done_messages``) is left
    alone when it is within ``max_tokens`` (at depth 0); with ``MIN_SPLIT`` (4) messages or fewer, or
    past depth ``MAX_DEPTH`` (3), all of it is summarized; else a tail is taken from the end while it
    stays under ``max_tokens // 2``, the head is moved back until it ends on an assistant message,
    the head's messages are summarized while they fit the weak model's
    ``weak_model_max_input_tokens - 512`` (the rest of the head is dropped unsummarized: aider's own
    behaviour), and when summary + tail is still not under ``max_tokens`` the same runs again on
    summary + tail one level deeper. The summary is one user message ``SUMMARY_PREFIX + reply``, the
    weak model's reply given ``render_for_summary``'s text (``# USER`` / ``# ASSISTANT`` blocks); an
    ``"Ok."`` assistant message is appended when the result does not end on an assistant message.

    Quirk reproduced: when the summarizer fails, aider's worker keeps its empty result and
    ``summarize_end`` replaces ``done_messages`` with it: the whole history is dropped (the event says
    so; kind ``placeholder``).

    Lab mapping: ``max_tokens`` None is the lab's budget, in the trigger's unit (``env.meter``, as
    hermes' threshold); the weak model's window is counted with ``env.tokens()``. Aider has no tool
    messages (command output is a user message); ``keep_pairs`` (on) never lets the head end on an
    assistant whose tool results would open the tail, so no result is orphaned. On contexts in aider's
    own form (no tool messages) it changes nothing. Trigger (``trigger``): the history's tokens over
    ``max_chat_history_tokens`` (a 16th of the window, within [1,024, 8,192]).

    The weak model is the lab's summarizer, shown the lab's excerpt of the head (aider shows it
    ``render_for_summary``'s ``# USER`` / ``# ASSISTANT`` text; the differential stubs the answer on
    both sides, so only which messages are summarized, and how often, is compared).

    Options: ``max_tokens`` (None), ``weak_model_max_input_tokens`` (None: aider's fallback 4,096 when
    the weak model's window is unknown), ``keep_pairs`` (True), ``excerpt_tool_calls`` (True: calls
    rendered in the summarizer's excerpt, as aider's own history carries its edits in the text).
    """

    max_tokens: int | None = None
    weak_model_max_input_tokens: int | None = None
    keep_pairs: bool = True
    excerpt_tool_calls: bool = True
    name: ClassVar[str] = "aider_rule"
    agent: ClassVar[str] = "aider"
    summary_prefixes: ClassVar[tuple[str, ...]] = (SUMMARY_PREFIX,)

    def __post_init__(self) -> None:
        if self.max_tokens is not None:
            check_positive(self.max_tokens, "max_tokens")
        if self.weak_model_max_input_tokens is not None:
            check_positive(self.weak_model_max_input_tokens, "weak_model_max_input_tokens")

    def trigger(self, window: ModelWindow) -> Trigger:
        limit = self.max_tokens or max_chat_history_tokens(window.context_window)
        return Trigger(self.name, window.context_window, limit, basis="history",
                       note="chat history (system prompt excluded) over max_chat_history_tokens")

    def model_options(self, window: ModelWindow) -> dict:
        return {"max_tokens": max_chat_history_tokens(window.context_window),
                "weak_model_max_input_tokens": window.context_window}

    def runner(self, env: PolicyEnv) -> AiderRun:
        cap = (self.weak_model_max_input_tokens or FALLBACK_MAX_INPUT_TOKENS) - SAFETY_BUFFER
        summarizer = env.summarizer or default_summarizer()

        def ask(messages: list) -> Any:
            return env.excerpts.ask(summarizer, env.excerpts.records(messages, tool_calls=self.excerpt_tool_calls))

        return AiderRun(_memo(env.meter), env.tokens(), ask, self.max_tokens or env.budget, cap, self.keep_pairs)

    def history_budget(self, env: PolicyEnv, system: list) -> int:
        """``max_tokens``, or the lab budget less the system prompt (aider's history excludes it)."""
        return self.max_tokens or max(env.budget - sum(env.meter(m) for m in system), 1)

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        system, history = split_system(context)
        run = replace(self.runner(env), max_tokens=self.history_budget(env, system))
        if sum(run.size(m) for m in history) <= run.max_tokens:  # base_coder.summarize_start: not too big
            return context, None
        failure = None
        try:
            out = run.summarize_real(history)
            if out and role_of(out[-1]) != "assistant":
                out = out + [{"role": "assistant", "content": OK_REPLY}]
        except SummaryFailed as exc:
            out, failure = [], str(exc)
        if out == history and all(a is b for a, b in zip(out, history, strict=True)):
            return context, None
        new = system + out
        ev = make_event(self, "placeholder" if failure else "summary", context, new, env, size)
        detail = (f"aider_rule: {len(history)} messages -> {len(out)} ({run.calls} summaries); "
                  f"{size:,} -> {ev.size_after:,}")
        if failure:
            detail += f"; summarizer failed ({failure}): aider drops the whole history"
        return new, replace(ev, failure=failure, summarizer_calls=run.calls, detail=detail)
