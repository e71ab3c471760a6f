"""A recorded session, cut into the model requests it was made of (SPEC section 5).

Every assistant message in a transcript was produced by one model request. A
request sends the context as it is; its reply is appended, then, when the reply
called tools, the tool results that follow it, and only then is the trigger
checked. ``RecordedSession`` finds those requests once per transcript and keeps
running totals of message sizes (prefix sums, in any unit, measured once per
message), so that every setting of a sweep reads the sizes instead of measuring
them again.

Why prefix sums: between two policy events the context only grows, by appending
the transcript in order. Its size at any request is then the size it had after
the last event plus the sizes of the transcript messages appended since, which
is a difference of two prefix sums. The replay loop uses that to jump from one
trigger to the next.
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from .._deprecated import renamed
from ..context.budgets import over_budget
from ..context.messages import Message, calls_of, role_of
from ..context.sizing import Meter
from ..transcripts.session import Session, SessionLike
from .fast import SessionCache

__all__ = ["RecordedSession", "Context", "ContextView", "prepare", "EMPTY_SYSTEM"]

EMPTY_SYSTEM = {"role": "system", "content": ""}


def prepare(messages: Sequence[Mapping[str, Any]]) -> tuple[list, list[str]]:
    """The transcript as replayed: an empty system message prepended when missing (SPEC 5)."""
    msgs = list(messages)
    if msgs and role_of(msgs[0]) == "system":
        return msgs, []
    note = "messages[0] was not a system message: an empty one was prepended (indices shift by 1)"
    return [dict(EMPTY_SYSTEM)] + msgs, [note]


@dataclass(frozen=True)
class Context:
    """The context during a replay: what the last event left (``head``), then the transcript from ``start``.

    Before any event the head is empty and ``start`` is 0: the context is the
    transcript itself, up to wherever the loop has reached. ``size`` is the
    head's size in the trigger's unit.
    """

    head: tuple = ()
    start: int = 0
    size: int = 0
    events: int = 0  # how many events shaped it (0: none yet)

    def messages(self, transcript: Sequence[Message], stop: int) -> list:
        """The context as a list, once the transcript has been appended up to ``stop``."""
        return list(self.head) + list(transcript[self.start:stop])

    def length(self, stop: int) -> int:
        return len(self.head) + stop - self.start

    def view(self, transcript: Sequence[Message], stop: int) -> ContextView:
        """The same messages as ``messages``, without copying the list."""
        return ContextView(self.head, transcript, self.start, stop)


class ContextView(Sequence):
    """A read-only view of a context: ``head``, then ``transcript[start:stop]``, nothing copied."""

    __slots__ = ("head", "transcript", "start", "stop")

    def __init__(self, head: Sequence[Message], transcript: Sequence[Message], start: int, stop: int) -> None:
        self.head, self.transcript, self.start, self.stop = head, transcript, start, stop

    def __len__(self) -> int:
        return len(self.head) + self.stop - self.start

    def __getitem__(self, i: int) -> Message:  # type: ignore[override]
        n = len(self)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        h = len(self.head)
        return self.head[i] if i < h else self.transcript[self.start + i - h]

    def __iter__(self) -> Iterator[Message]:
        yield from self.head
        transcript = self.transcript
        for i in range(self.start, self.stop):
            yield transcript[i]


def _meters(meters: dict | None, billed: bool) -> dict:
    """The meters given; by default, an agent log's o200k counts an inline image as the provider bills it
    (``costmodel.ProviderMeter``, issue 33), so that every table of it measures what the cost model fits."""
    if meters is not None:
        return meters
    if not billed:
        return {}
    from .costmodel import ProviderMeter

    return {"o200k": ProviderMeter("o200k")}


@dataclass
class RecordedSession:
    """A prepared transcript, its requests, and prefix sums of message sizes per unit.

    Request ``r`` (0-based) is the assistant message at ``reply[r]``; ``end[r]`` is
    where the messages it brought stop (after its tool results when it called
    tools); ``checks[r]`` says whether the trigger is checked after it.
    ``cache`` keeps what the books and policies work out once for this transcript.
    """

    messages: list
    notes: list
    reply: list
    end: list
    checks: list
    turn: list
    meters: dict = field(default_factory=dict, repr=False)
    _prefix: dict = field(default_factory=dict, repr=False)
    _request_sums: dict = field(default_factory=dict, repr=False)
    # issue 24: what an agent log reports per API request (``Session.requests``), by the session index of
    # the request's assistant message; empty for a transcript that reports nothing (``bill.BillBook`` reads it)
    reported: dict = field(default_factory=dict, repr=False)
    # issue 33: the agent log it was cut from (its file, requests and compactions), which the cost model fits on
    source: Session | None = field(default=None, repr=False, compare=False)
    cache: SessionCache = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.cache = SessionCache(self.messages, self.reply)

    @classmethod
    def of(cls, messages: SessionLike, meters: dict | None = None) -> RecordedSession:
        """Cut ``messages`` (a ``Session``, a ``Transcript`` or a list of messages) into requests (one walk, no
        sizes measured yet)."""
        log = Session.of(messages)
        msgs, notes = prepare(log.messages)
        reply, end, checks, turn = [], [], [], []
        users, i, n = 0, 1, len(msgs)
        while i < n:
            role = role_of(msgs[i])
            if role == "user":
                users += 1
            if role != "assistant":
                i += 1
                continue
            reply.append(i)
            turn.append(users)
            i += 1
            called = bool(calls_of(msgs[i - 1]))
            if called:
                while i < n and role_of(msgs[i]) == "tool":
                    i += 1
            end.append(i)
            checks.append(called)
        shift = len(msgs) - len(log.messages)  # 1 when an empty system message was prepended
        reported = {int(q.message) + shift: q for q in log.requests}
        return cls(msgs, notes, reply, end, checks, turn, _meters(meters, bool(reported)), reported=reported,
                   source=log if reported else None)

    @property
    def n_requests(self) -> int:
        """How many model requests the session was cut into (one per assistant message)."""
        return len(self.reply)

    @property
    def requests(self) -> int:
        """Deprecated since 0.3.0: ``n_requests`` (a ``Session``'s ``requests`` are the requests themselves)."""
        return renamed(self, "requests", "n_requests")

    def meter(self, unit: str) -> Callable[[Message], int]:
        """One message's size in ``unit``, measured once per message for this session."""
        m = self.meters.get(unit)
        if m is None:
            m = self.meters[unit] = Meter(unit)
        return m

    def prefix(self, unit: str) -> list[int]:
        """``prefix(unit)[i]``: total size of ``messages[:i]`` in ``unit``."""
        p = self._prefix.get(unit)
        if p is None:
            p = self._prefix[unit] = list(accumulate(map(self.meter(unit), self.messages), initial=0))
        return p

    def request_sums(self, key: str, values: Callable[[], Sequence[int]]) -> list[int]:
        """Prefix sums over requests of a per-request value (cached under ``key``)."""
        s = self._request_sums.get(key)
        if s is None:
            s = self._request_sums[key] = list(accumulate(values(), initial=0))
        return s

    def sent_sums(self, unit: str) -> list[int]:
        """Prefix sums over requests of ``prefix(unit)[reply[r]]`` (what request r would send uncompacted)."""
        p = self.prefix(unit)
        return self.request_sums(f"sent:{unit}", lambda: [p[i] for i in self.reply])

    def reply_sums(self, unit: str) -> list[int]:
        """Prefix sums over requests of the reply's size in ``unit`` (each request's output)."""
        meter = self.meter(unit)
        return self.request_sums(f"reply:{unit}", lambda: [meter(self.messages[i]) for i in self.reply])

    def residue_sums(self, unit: str, step: int, residues: Callable[[], Sequence[int]]) -> list[int]:
        """Prefix sums over requests of ``residues()`` (what ``step`` rounds off each request's size)."""
        return self.request_sums(f"residue:{unit}:{step}", residues)

    def grown(self, unit: str, start: int, stop: int) -> int:
        """Size in ``unit`` of ``messages[start:stop]``."""
        p = self.prefix(unit)
        return p[stop] - p[start]

    def checked_requests(self) -> list[int]:
        """The requests after which the trigger is checked (those whose reply called tools), ascending."""
        return self._checked

    @functools.cached_property
    def _checked(self) -> list[int]:
        return [k for k in range(self.n_requests) if self.checks[k]]

    def first_over_budget(self, ctx: Context, r: int, unit: str, budget: int) -> int | None:
        """The first request from ``r`` on whose tool batch leaves the context over budget, or None.

        The check runs after every request that called tools (SPEC 5). Between
        events the context only grows, so the checked sizes rise and the first
        one over budget is found by bisection with the one trigger, ``over_budget``.
        """
        candidates = self.checked_requests()
        p = self.prefix(unit)
        base = ctx.size - p[ctx.start]
        lo = bisect_left(candidates, r)
        j = bisect_left(range(lo, len(candidates)), True,
                        key=lambda k: over_budget(base + p[self.end[candidates[k]]], budget))
        return candidates[lo + j] if lo + j < len(candidates) else None
