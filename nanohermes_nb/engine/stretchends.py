"""The cost book's stretch ends and the messages two contexts share at their start (``costbook``).

A stretch end is the last request of a stretch between two events: what the next stretches may read
from the cache. ``shared_prefix`` counts the leading messages two contexts share, the same objects skipped in C.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from typing import Any

from .recorded import ContextView

__all__ = ["StretchEnd", "shared_prefix", "message_at", "same_message", "message_key", "UNSET", "NO_MESSAGE"]


def _items(v: Sequence, lo: int, hi: int) -> list:
    """``v[lo:hi]`` as a list, copied in C (a ``ContextView`` by its two parts)."""
    if type(v) is not ContextView:
        return list(v[lo:hi])
    h = len(v.head)
    out = list(v.head[lo:hi]) if lo < h else []
    out.extend(v.transcript[v.start + max(lo - h, 0):v.start + max(hi - h, 0)])
    return out


def shared_prefix(a: Sequence, b: Sequence, lo: int = 0) -> int:
    """Leading messages ``a`` and ``b`` share (equal in the same place), comparing from ``lo``.

    The same objects are skipped in C (``map(is_)``); only where two differ are they compared by value.
    """
    n = min(len(a), len(b))
    if lo >= n:
        return lo
    x, y = _items(a, lo, n), _items(b, lo, n)
    i = 0
    while True:
        try:
            i += list(map(is_, x[i:], y[i:])).index(False)
        except ValueError:
            return n
        if x[i] != y[i]:
            return lo + i
        i += 1


def same_message(a: Any, b: Any) -> bool:
    return a is b or a == b


def message_key(message: Any) -> Any:
    """A hashable key equal for two messages exactly when they are equal: plain ``{role, content}`` texts only."""
    if type(message) is dict and len(message) == 2:
        role, content = message.get("role"), message.get("content")
        if type(role) is str and type(content) is str:
            return role, content
    return None


UNSET = object()  # a branch message not looked up yet
NO_MESSAGE = object()  # no branch message: the end stops where the next one leaves it


def message_at(e: StretchEnd, transcript: Sequence, i: int) -> Any:
    """Message ``i`` of stretch end ``e`` (``NO_MESSAGE`` past its end)."""
    h = len(e.head)
    if i < h:
        return e.head[i]
    return transcript[e.start + i - h] if i < h + e.stop - e.start else NO_MESSAGE


class StretchEnd:
    """The last request of a stretch: ``head`` then ``transcript[start:stop]``, its requests ``r0..r1``."""

    __slots__ = ("head", "start", "stop", "base", "r0", "r1", "need")

    def __init__(self, head: tuple, start: int, stop: int, base: int, r0: int, r1: int, need: int) -> None:
        self.head, self.start, self.stop, self.base, self.r0, self.r1 = head, start, stop, base, r0, r1
        self.need = need  # messages of request ``r0``: a shorter shared prefix reads nothing this stretch wrote

    def view(self, transcript: Sequence) -> ContextView:
        return ContextView(self.head, transcript, self.start, self.stop)

    def __len__(self) -> int:
        return len(self.head) + self.stop - self.start
