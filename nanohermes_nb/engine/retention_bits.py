"""The retention score's counts for a sweep, from bit masks per message (an acceleration, as ``fast``).

``metrics.retention`` states the rule: of the goal and the paths the removed messages
name, which does the kept context still carry. A sweep needs only its two counts per
event. ``RetentionBits`` reads each message once into bit masks and answers an event
with a few integer ORs; ``tests/test_fast.py`` holds its counts equal to the rule's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate
from operator import is_
from typing import Any

from ..context.compaction import is_summary_message
from ..context.messages import calls_of, text_of
from ..context.metrics import GOAL_TERM_SHARE, TextIndex, message_path_set, message_terms

__all__ = ["RetentionBits"]


class RetentionBits:
    """``metrics.retention``'s counts (items at stake, items kept) for one transcript's goal, from bit masks.

    A sweep needs only the two counts per event, not the paths in order. Each
    message is read once into: whether it is a real user message with text (the
    removed goal), a mask of the paths it names (one bit per distinct path of the
    transcript) and, when first asked, a mask of the goal terms it holds; they
    are found as ``retention`` finds them (``message_path_set``, ``message_terms``).
    A message a policy wrote (a new dict at every event, often with the same
    summary) is remembered by its role and text. What an event removed or kept
    ends, as a rule, with a run of the transcript's own messages: that run's
    masks are ORed in one step from a table built once over the transcript
    (``mask[i:i + 2**j]`` for every ``i`` and ``j``), and the few messages before
    it one by one. ``tests/test_fast.py`` holds the counts equal to
    ``retention``'s on every event of the corpus.
    """

    def __init__(self, transcript: Sequence[Mapping[str, Any]], goal: str, index: TextIndex,
                 summary_prefixes: tuple[str, ...]) -> None:
        self.transcript = transcript  # the session's messages; ``index``: the goal's terms (``SessionCache.goal``)
        self.goal, self.terms, self.prefixes = goal, index.terms, summary_prefixes
        self._term_bit = {t: 1 << k for k, t in enumerate(self.terms)}
        self._path_bit: dict[str, int] = {}
        self._by_id: dict[int, tuple[Mapping[str, Any], list]] = {}  # id -> (message, entry)
        self._by_text: dict[tuple[Any, str], list] = {}  # (role, content) of a message without calls -> entry
        self._position: dict[int, int] = {}  # id of a transcript message -> its index
        self._table: list[list[int]] = []  # _table[j][i]: the path masks of transcript[i:i + 2**j] ORed
        self._goals: list[int] = []  # goal messages among transcript[:i]
        self._built = False  # every transcript message read: any message read later is one a policy wrote

    def _entry(self, m: Mapping[str, Any]) -> list:
        """``[is the goal, path mask, goal-term mask]`` of one message, each None until first asked."""
        hit = self._by_id.get(id(m))
        if hit is not None and hit[0] is m:
            return hit[1]
        content = m.get("content") if isinstance(m, Mapping) else None
        key = (m.get("role"), content) if isinstance(content, str) and not calls_of(m) else None
        entry = self._by_text.get(key) if key is not None else None
        if entry is None:
            entry = [None, None, None]
            if key is not None:
                if len(self._by_text) >= 50_000:
                    self._by_text.clear()
                self._by_text[key] = entry
        if len(self._by_id) >= 200_000:
            self._by_id.clear()
        self._by_id[id(m)] = (m, entry)
        return entry

    def _paths(self, m: Mapping[str, Any]) -> list:
        """The entry of ``m`` with whether it is the goal and its path mask read."""
        e = self._entry(m)
        if e[1] is None:
            e[0] = (isinstance(m, Mapping) and m.get("role") == "user"
                    and not is_summary_message(m, self.prefixes) and bool(text_of(m).strip()))
            bits, mask = self._path_bit, 0
            for p in message_path_set(m, by_line=self._built):  # once built, a message the policy wrote
                bit = bits.get(p)
                if bit is None:
                    bit = bits[p] = 1 << len(bits)
                mask |= bit
            e[1] = mask
        return e

    def _terms(self, m: Mapping[str, Any]) -> int:
        """The goal-term mask of ``m``."""
        e = self._entry(m)
        if e[2] is None:
            bits = self._term_bit
            e[2] = sum(bits[t] for t in message_terms(m, self.terms))
        return e[2]

    def _build(self) -> None:
        """Every transcript message read, the table of ORed masks, the running count of goal messages."""
        entries = [self._paths(m) for m in self.transcript]
        self._built = True
        self._position = {id(m): i for i, m in enumerate(self.transcript)}
        level = [e[1] for e in entries]
        self._table = [level]
        span = 1
        while 2 * span <= len(entries):
            level = [level[i] | level[i + span] for i in range(len(level) - span)]
            self._table.append(level)
            span *= 2
        self._goals = list(accumulate((e[0] for e in entries), initial=0))

    def _scan(self, messages: Sequence[Mapping[str, Any]], wanted: int = -1) -> tuple[bool, int]:
        """Whether a goal message is among ``messages``, and their path masks ORed.

        The run of the transcript that ends ``messages`` is read first; the messages before it only
        while some bit of ``wanted`` is still missing (the kept context of an event is read only until
        it names every removed path; the goal flag is then not asked)."""
        if not self._table:
            self._build()
        transcript, k = self.transcript, len(messages)
        goal, mask = False, 0
        last = self._position.get(id(messages[-1])) if k else None
        if last is not None and transcript[last] is messages[-1]:  # the run of transcript messages that ends it
            k, p = self._run_start(messages, last)
            j = (last + 1 - p).bit_length() - 1
            level = self._table[j]
            mask = level[p] | level[last + 1 - (1 << j)]
            goal = self._goals[last + 1] > self._goals[p]
        read = self._paths
        for i in range(k):
            if not wanted & ~mask:
                break
            e = read(messages[i])
            goal = goal or e[0]
            mask |= e[1]
        return goal, mask

    def _run_start(self, messages: Sequence[Mapping[str, Any]], last: int) -> tuple[int, int]:
        """``(k, p)``: ``messages[k:]`` are ``transcript[p:last + 1]`` and ``messages[k - 1]`` is not
        ``transcript[p - 1]``. A policy writes few messages, then keeps a run of the transcript: a start
        among the first three is tried with one comparison of the whole run, else the run is walked back."""
        transcript, n = self.transcript, len(messages)
        for k in range(min(n, 3)):
            p = last - (n - 1 - k)
            if p >= 0 and messages[k] is transcript[p] and all(map(is_, messages[k:], transcript[p:last + 1])):
                if k == 0 or p == 0 or messages[k - 1] is not transcript[p - 1]:
                    return k, p
                break
        k, p = n - 1, last
        while k > 0 and p > 0 and messages[k - 1] is transcript[p - 1]:
            k, p = k - 1, p - 1
        return k, p

    def counts(self, removed: Sequence[Mapping[str, Any]], kept: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
        """``(kept, items)`` of ``retention(removed, kept, goal, summary_prefixes=...)`` with this goal."""
        at_stake, lost = self._scan(removed)
        carried = self._scan(kept, lost)[1] if lost else 0
        items, kept_count = lost.bit_count(), (lost & carried).bit_count()
        if at_stake and self.goal:
            items += 1
            kept_count += self._goal_kept(kept)
        return kept_count, items

    def _goal_kept(self, kept: Sequence[Mapping[str, Any]]) -> bool:
        """Whether ``GOAL_TERM_SHARE`` of the goal's terms are in ``kept`` (read until the answer is known)."""
        if not self.terms:
            goal = self.goal.strip()
            return any(goal in text_of(m) for m in kept)
        present, need = 0, len(self.terms)
        for m in kept:
            present |= self._terms(m)
            if present.bit_count() / need >= GOAL_TERM_SHARE:
                return True
        return False
