"""LangChain ``trim_messages`` as a policy: keep the newest messages that fit.

``trim_last`` is LangChain's ``strategy="last"`` algorithm on OpenAI-form
messages (``_last_max_tokens`` over ``_first_max_tokens`` in
``langchain_core/messages/utils.py``); ``langchain_summarize`` reuses it for the
messages it hands to the summarizer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..context.messages import Message, role_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register

__all__ = ["LangChainTrimPolicy", "trim_last", "SYSTEM_ROLES"]

SYSTEM_ROLES = ("system", "developer")  # convert_to_messages makes both a SystemMessage
Sizer = Callable[[Message], int]


def _split_lines(text: str) -> list[str]:
    """LangChain's ``_default_text_splitter``: split on newlines, keeping them."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + parts[-1:]


def _first_text(blocks: Sequence[Any]) -> str | None:
    for block in blocks:
        if isinstance(block, str):
            return block
        if isinstance(block, Mapping) and block.get("type") == "text":
            return block.get("text")
    return None


def _partial(message: Message, room: int, size: Sizer) -> Message | None:
    """The newest part of ``message`` that fits in ``room`` (``allow_partial``), or None.

    LangChain first drops whole content blocks from the old end, measuring each
    candidate with its blocks in reverse order; failing that it keeps the newest
    lines of the first text block, binary-searching how many fit and measuring
    each candidate with its lines in reverse order (both quirks kept: they
    matter to a tokenizer, not to a byte count).
    """
    content = message.get("content")
    text = content if isinstance(content, str) else None
    if isinstance(content, list):
        blocks = list(reversed(content))
        for _ in range(1, len(blocks)):
            blocks = blocks[:-1]
            if size({**message, "content": blocks}) <= room:
                return {**message, "content": list(reversed(blocks))}
        text = _first_text(blocks)
    if not text:
        return None
    splits = _split_lines(text)[::-1]
    left, right = 0, len(splits)
    for _ in range(len(splits).bit_length()):
        if left >= right:
            break
        mid = (left + right + 1) // 2
        if size({**message, "content": "".join(splits[:mid])}) <= room:
            left = mid
        else:
            right = mid - 1
    if left == 0:
        return None
    return {**message, "content": "".join(reversed(splits[:left]))}


def trim_last(messages: Sequence[Message], max_tokens: int, size: Sizer, *, include_system: bool = True,
              start_on: str | None = "user", allow_partial: bool = False) -> tuple[list, int]:
    """``trim_messages(strategy="last")``: the newest messages within ``max_tokens``; returns (kept, start).

    A leading system message is set aside first (``include_system``) and the rest
    gets ``max(0, max_tokens - its size)``; the newest messages are kept while the
    running total fits; with ``allow_partial`` the next older one may be cut to
    its newest part; then messages are dropped from the old end until one has the
    role ``start_on``. The system message is kept even when nothing else is, as
    LangChain does. ``start`` is the index of the first whole message kept
    (``len(messages)`` when none is). Sizes are per message, summed.
    """
    msgs = list(messages)
    if not msgs:
        return [], 0
    first = 1 if include_system and role_of(msgs[0]) in SYSTEM_ROLES else 0
    room = max(0, max_tokens - size(msgs[0])) if first else max_tokens
    start, used = len(msgs), 0
    while start > first:
        s = size(msgs[start - 1])
        if used + s > room:
            break
        used += s
        start -= 1
    tail = msgs[start:]
    if allow_partial and start > first:
        part = _partial(msgs[start - 1], room - used, size)
        if part is not None:
            tail = [part] + tail
    skip = 0
    if start_on is not None:
        while skip < len(tail) and role_of(tail[skip]) != start_on:
            skip += 1
    whole = len(tail) - (len(msgs) - start)  # 1 when a partial message leads the tail
    return msgs[:first] + tail[skip:], start + max(0, skip - whole)


@register
@dataclass(frozen=True)
class LangChainTrimPolicy(Policy):
    """LangChain ``trim_messages`` (last, keep system, start on human): keep the newest messages that fit.

    Proven against langchain-core 1.7.2 (``langchain_core/messages/utils.py``,
    ``trim_messages`` → ``_last_max_tokens`` → ``_first_max_tokens``) called as
    ``trim_messages(strategy="last", start_on="human", include_system=True,
    token_counter=<the lab's per-message size>, max_tokens=<target>)``: every
    tool-batch point of the corpus gives the identical context (tests/
    test_peers_langchain.py). Source and provenance: docs/policies.md.

    The system message at index 0 (``system`` or ``developer``: both become a
    ``SystemMessage``) is set aside; the rest is walked from the newest message
    backward and the longest run that fits in what the system message leaves is
    kept; ``start_on`` then drops messages from the old end of that run until it
    starts on a user message. When no user message fits, LangChain returns the
    system message alone (``_last_max_tokens`` re-adds it whatever is left), and
    so does this port. ``allow_partial`` (LangChain's option, default False) cuts
    the next older message to its newest lines when they fit.

    Constants: ``trim_messages`` has no default ``max_tokens``; the lab sets it
    to ``target_share x env.budget``, counted with ``env.meter`` (the token
    counter LangChain takes as a parameter). The default share 1.0 is the
    library's semantics: a no-op under ``max_tokens``, a trim to it otherwise.
    Starting on a user message keeps the history legal (a user message closes
    every earlier call). Teaching point: in a single-task agent log the only user
    message is the first one, so once the context outgrows the budget the task
    and everything after it go, and only the system message is left.
    """

    target_share: float = 1.0
    include_system: bool = True
    start_on: str = "user"
    allow_partial: bool = False
    name: ClassVar[str] = "langchain_trim"

    def __post_init__(self) -> None:
        check_positive(self.target_share, "target_share", upper=1.0)

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        if not context:
            return context, None
        target = int(env.budget * self.target_share)
        new, start = trim_last(context, target, env.meter, include_system=self.include_system,
                               start_on=self.start_on, allow_partial=self.allow_partial)
        if len(new) == len(context) and all(a is b for a, b in zip(new, context, strict=True)):
            return context, None
        ev = make_event(self, "trim", context, new, env, size)
        first = 1 if self.include_system and role_of(context[0]) in SYSTEM_ROLES else 0
        only_system = len(new) == first
        detail = (
            f"langchain_trim: kept {len(new) - first} messages within {target:,} {env.unit}"
            f" ({self.target_share:g} x budget), dropped {start - first}"
            + (f" and cut message {start - 1} to its newest lines" if len(new) - first > len(context) - start else "")
            + ("; no user message fits: only the system message is left" if only_system and first else "")
            + f"; {size:,} -> {ev.size_after:,}")
        return new, replace(ev, cut=start, detail=detail)
