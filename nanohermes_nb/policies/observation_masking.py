"""OpenHands' ``ObservationMaskingCondenser`` as a policy: old observations masked, no summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..context.messages import Message, call_id, calls_of, role_of, text_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register

WINDOWS = ("events", "tool_results")
RENDERS = ("openhands", "in_place")


def event_count(message: Message) -> int:
    """How many OpenHands events a message is: one per tool call of an assistant message, else one."""
    if role_of(message) == "assistant":
        return max(len(calls_of(message)), 1)
    return 1


def _is_placeholder(message: Message, placeholder: str) -> bool:
    """A masked observation left by an earlier pass: a user message reading the placeholder."""
    if role_of(message) != "user":
        return False
    text = text_of(message)
    return text == placeholder or text == "\n\n" + placeholder


def _outside_window(context: Sequence[Message], window: int, counting: str, placeholder: str) -> list[int]:
    """Indices of the tool results the condenser masks (earlier placeholders are not counted again)."""
    tools = [i for i, m in enumerate(context) if role_of(m) == "tool"]
    if counting == "tool_results":
        return tools[: max(len(tools) - window, 0)]
    total = sum(event_count(m) for m in context)
    out, start = [], 0
    for i, m in enumerate(context):
        if role_of(m) == "tool" and start < total - window:
            out.append(i)
        start += event_count(m)
    return out


def _with_initial_user(context: list, placeholder: str) -> list:
    """OpenHands puts the first user message at index 1 whenever the message there is not a user message.

    ``ConversationMemory._ensure_initial_user_message`` (openhands-ai 1.6.0,
    ``openhands/memory/conversation_memory.py`` L875-892) looks at index 1 only,
    never at index 0: a history that starts with the task and then a system
    message (deerflow) gets the task again at index 1. A masked observation
    (a placeholder here) is not a user message there. With no user message at
    all there is nothing to insert (CodeActAgent refuses such a history).
    """
    if not context:
        return context
    if len(context) > 1 and role_of(context[1]) == "user" and not _is_placeholder(context[1], placeholder):
        return context
    first = next((m for m in context if role_of(m) == "user" and not _is_placeholder(m, placeholder)), None)
    return context if first is None else [context[0], first, *context[1:]]


def _conversation(context: Sequence[Message], masked: set[int], placeholder: str) -> list:
    """Messages in OpenHands' order: an assistant message with calls appears once all its calls have
    results (then the results, in call order); a masked observation is a 1-tuple (its earlier
    placeholder message, or None)."""
    out: list = []
    pending: dict[int, list] = {}  # assistant index -> its call ids, in arrival order
    waiting: dict[Any, list[int]] = {}  # call id -> pending assistants that wait for it
    results: dict[Any, Message] = {}
    for i, m in enumerate(context):
        role = role_of(m)
        candidates: list[int] = []
        if i in masked:
            out.append((None,))  # a masked observation: rendered as a user message below
        elif _is_placeholder(m, placeholder):
            out.append((m,))  # masked by an earlier pass: still one masked observation
        elif role == "tool":
            results[m.get("tool_call_id")] = m
            candidates = waiting.get(m.get("tool_call_id"), [])
        elif role == "assistant" and calls_of(m):
            pending[i] = [call_id(c) for c in calls_of(m)]
            for c in pending[i]:
                waiting.setdefault(c, []).append(i)
            candidates = [i]
        else:
            out.append(m)
        # only a result (or a new assistant message) can complete a pending message
        for k in sorted(set(candidates)):
            ids = pending.get(k)
            if ids is not None and all(c in results for c in ids):
                del pending[k]
                out.append(context[k])
                out.extend(results.pop(c) for c in ids)
    return out


def _prefixed(message: Message, text: str) -> dict:
    """A copy of a user message whose (first) text reads ``text``."""
    content = message.get("content")
    if isinstance(content, list):
        parts, done = [], False
        for p in content:
            if not done and isinstance(p, Mapping) and isinstance(p.get("text"), str):
                p, done = {**p, "text": text}, True
            parts.append(p)
        return {**message, "content": parts}
    return {**message, "content": text}


def _format_users(rendered: list, context: Sequence[Message], placeholder: str) -> list:
    """OpenHands' ``"\\n\\n"`` before a user message that follows a user message, applied once.

    A user message that already followed a user message in the given context and
    starts with ``"\\n\\n"`` was formatted by an earlier pass and is left as it is,
    so that masking again never stacks newlines.
    """
    before = {id(m): (role_of(context[i - 1]) == "user" if i else False) for i, m in enumerate(context)}
    out: list = []
    for m in rendered:
        after_user = bool(out) and role_of(out[-1]) == "user"
        if isinstance(m, tuple):
            text = "\n\n" + placeholder if after_user else placeholder
            out.append(m[0] if m[0] is not None and text_of(m[0]) == text else {"role": "user", "content": text})
            continue
        if role_of(m) == "user":
            text = text_of(m)
            base = text[2:] if before.get(id(m)) and text.startswith("\n\n") else text
            want = "\n\n" + base if after_user else base
            m = m if want == text else _prefixed(m, want)
        out.append(m)
    return out


# What OpenHands' ``Message`` carries, by role (openhands/core/message.py, ``Message`` fields and
# ``_add_tool_call_keys``): anything else a transcript message holds is never sent.
SENT_KEYS = {
    "system": ("role", "content"),
    "user": ("role", "content"),
    "assistant": ("role", "content", "tool_calls"),
    "tool": ("role", "content", "tool_call_id", "name"),
}


def _as_sent(message: Message) -> Message:
    """The message with only the fields OpenHands sends (``reasoning_content`` and the like dropped).

    An assistant message without calls is a ``MessageAction`` there: no
    ``tool_calls`` key at all. A message with nothing to drop is returned as it is.
    """
    keys = SENT_KEYS.get(role_of(message))
    if keys is None:
        return message
    if role_of(message) == "assistant" and not calls_of(message):
        keys = ("role", "content")
    if all(k in keys for k in message):
        return message
    return {k: v for k, v in message.items() if k in keys}


@register
@dataclass(frozen=True)
class ObservationMaskingPolicy(Policy):
    """OpenHands ``ObservationMaskingCondenser``: results outside the last 5 events masked, as OpenHands sends them.

    Source: All-Hands-AI/OpenHands ``openhands/memory/condenser/impl/observation_masking_condenser.py``
    (proven against a port of b781d1b0, ``condense`` L18-27) and, for what reaches
    the LLM, ``openhands/memory/conversation_memory.py`` (e94ca25a,
    ``process_events``); full provenance in ``docs/policies.md``.

    The window counts *events*, as OpenHands' view does: one per tool call
    (parallel calls are several events), one per message, one per observation;
    a tool result whose event index is below ``events - attention_window`` is
    masked. OpenHands' masked observation carries no tool-call id, so its
    conversation memory renders it as a **user** message ``<MASKED>`` and never
    releases the assistant message whose calls it answered: that message (its
    text and every call) disappears, and so do the unmasked results of the same
    batch. A user message right after another gets ``"\\n\\n"`` in front, so
    consecutive placeholders read ``"\\n\\n<MASKED>"``. Results appear in call
    order after their assistant message, as OpenHands emits them.

    Defaults: ``attention_window=5`` is the condenser class default (the lab
    takes every peer's code-level defaults); OpenHands' configuration
    (``ObservationMaskingCondenserConfig``) defaults to 100, i.e.
    ``ObservationMaskingPolicy(attention_window=100)``.

    Options (departures, off by default): ``window="tool_results"`` counts the
    last ``attention_window`` tool results instead of events (the lab's earlier
    reading); ``render="in_place"`` masks the tool message's content and keeps
    every call and pairing (what the condenser's docstring suggests, not what
    OpenHands sends). The lab's earlier behaviour is both together.

    Trigger: OpenHands masks before every LLM call at any size; here it masks
    only when over budget, and declines when no tool result is outside the window.
    """

    attention_window: int = 5
    window: str = "events"
    render: str = "openhands"
    placeholder: str = "<MASKED>"
    name: ClassVar[str] = "observation_masking"

    def __post_init__(self) -> None:
        check_positive(self.attention_window, "attention_window", zero=True)
        if self.window not in WINDOWS:
            raise ValueError(f"window must be one of {WINDOWS}, got {self.window!r}")
        if self.render not in RENDERS:
            raise ValueError(f"render must be one of {RENDERS}, got {self.render!r}")

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        masked = _outside_window(context, self.attention_window, self.window, self.placeholder)
        if self.render == "in_place":
            masked = [i for i in masked if context[i].get("content") != self.placeholder]
            if not masked:
                return context, None
            new = list(context)
            for i in masked:
                new[i] = {**context[i], "content": self.placeholder}
        else:
            new, notes = self._render(context, masked)
            if len(new) == len(context) and all(a is b for a, b in zip(new, context)):
                return context, None  # OpenHands would send exactly this context: nothing to do
            ev = make_event(self, "mask", context, new, env, size)
            return new, replace(ev, detail=self._detail(len(masked), size, ev.size_after, notes))
        ev = make_event(self, "mask", context, new, env, size)
        return new, replace(ev, detail=self._detail(len(masked), size, ev.size_after))

    def _render(self, context: list, masked: list[int]) -> tuple[list, list[str]]:
        """The context as OpenHands' ``process_events`` sends it, the results at ``masked`` masked.

        OpenHands renders on every step, whether or not the condenser masked
        anything (``CodeActAgent.step``, openhands-ai 1.6.0 codeact_agent.py
        L207-222, then ``process_events``, conversation_memory.py L76-174): so
        does this policy whenever it is asked, masking or not. It declines only
        when the rendering is the context itself. Also returns what changed
        besides the masking, for the event's detail.
        """
        source = _with_initial_user(context, self.placeholder)
        shift = len(source) - len(context)
        hidden = {i + shift for i in masked}
        rendered = _format_users(_conversation(source, hidden, self.placeholder), source, self.placeholder)
        kept = {id(m) for m in rendered}
        notes = []
        lost = sum(1 for m in context if role_of(m) == "assistant" and calls_of(m) and id(m) not in kept)
        if masked or lost:
            notes.append(f"{lost} tool-call messages no longer sent")
        if shift:
            notes.append("the task repeated at index 1")
        sent = [_as_sent(m) for m in rendered]
        dropped = sum(1 for a, b in zip(rendered, sent) if a is not b)
        if dropped:
            notes.append(f"fields OpenHands does not send dropped from {dropped} messages")
        return sent, notes

    def _detail(self, masked: int, size: int, after: int, notes: Sequence[str] = ()) -> str:
        unit = "events" if self.window == "events" else "tool results"
        text = f"observation_masking: masked {masked} tool results outside the last {self.attention_window} {unit}"
        if self.render == "openhands":
            text += " (as user messages" + "".join(f"; {n}" for n in notes) + ")"
        return text + f"; {size:,} -> {after:,}"
