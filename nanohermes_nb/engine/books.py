"""The ledger's books: small accumulators the replay loop feeds.

Each book keeps one group of columns and totals. The loop tells every book two
things: "requests ``r0..r1`` were sent while the context only grew" (a
stretch) and "after request ``k`` the policy rewrote the context" (an event).
Over a stretch a book reads prefix sums of the recorded session, so its work
does not depend on how long the stretch is unless per-request rows are asked
for; after an event it measures only the new context, never the whole history
again.

- ``SizeBook`` (always on): request size, size before/after the check, the
  outcome, cumulative input, the same without compaction, peak, final size.
- ``PrefixBook``: request bytes and the bytes a prefix cache could reuse.
- ``TokenBook``: the same sizes counted in tokens (one book per token unit).
- ``HistoryBook``: how many problems a provider would find in each request's
  history (one book per profile).
- ``RetentionBook``: what each event kept of the goal and the dropped paths.
- ``CostBook`` (in ``costbook``): tokens and dollars per request under a
  ``Pricing``, the summarizer's extra request, and the run without compaction.
- ``NeededLaterBook``: for every event, the removed identifiers the recorded
  future mentions again and the share of them the kept context still names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..context.budgets import over_budget
from ..context.metrics import retention
from ..context.needed import needed_later
from ..context.sizing import shared_prefix_bytes
from ..policies.base import Event, summary_prefixes
from .fast import HistoryWalk, ProfileCounts, written_signature
from .recorded import Context, RecordedSession

__all__ = ["Book", "SizeBook", "PrefixBook", "TokenBook", "HistoryBook", "RetentionBook", "NeededLaterBook",
           "merge_fields"]


class Book:
    """One group of ledger columns. ``rows`` False keeps totals only (sweeps)."""

    def __init__(self, session: RecordedSession, rows: bool) -> None:
        self.session = session
        self.rows = rows
        self.cols: dict[str, list] = {}

    def stretch(self, ctx: Context, r0: int, r1: int) -> None:
        """Requests ``r0..r1`` (0-based) were sent; the context only grew meanwhile."""

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        """After request ``k`` the policy turned ``before`` into ``after``; fields for the ledger's event record."""
        return {}

    def finish(self, ctx: Context) -> None:
        """The transcript ended with the context ``ctx``."""

    def totals(self) -> dict[str, Any]:
        return {}

    def _column(self, name: str) -> list:
        return self.cols.setdefault(name, [])


class SizeBook(Book):
    """Sizes in the trigger's unit, the check's outcome per request, and the cost in input."""

    def __init__(self, session: RecordedSession, rows: bool, unit: str, budget: int) -> None:
        super().__init__(session, rows)
        self.unit, self.budget = unit, budget
        self.p = session.prefix(unit)
        self.sent = session.sent_sums(unit)
        self.cumulative = 0
        self.peak, self.peak_at = 0, 0
        self.compactions = self.summarizer_calls = self.ineffective = 0
        self.final_size = 0
        self.bases: list[tuple[int, int, int]] = []

    def stretch(self, ctx: Context, r0: int, r1: int) -> None:
        s, p = self.session, self.p
        base = ctx.size - p[ctx.start]
        if self.rows:
            self._rows(ctx, base, r0, r1)
        self.cumulative += (r1 - r0 + 1) * base + self.sent[r1 + 1] - self.sent[r0]
        last = base + p[s.reply[r1]]  # sizes rise within a stretch: its last request is its largest
        if last > self.peak:
            self.peak, self.peak_at = last, r1 + 1

    def _rows(self, ctx: Context, base: int, r0: int, r1: int) -> None:
        s, p = self.session, self.p
        cumulative = self.cumulative
        c = self.cols
        for r in range(r0, r1 + 1):
            size = base + p[s.reply[r]]
            cumulative += size
            row = {
                "request": r + 1, "turn": s.turn[r], "index": s.reply[r], "messages": ctx.length(s.reply[r]),
                "size": size, "size_before": base + p[s.end[r]], "compacted": False, "dropped": 0,
                "size_after": base + p[s.end[r]], "cumulative_input": cumulative,
                "size_no_compaction": p[s.reply[r]], "cumulative_no_compaction": self.sent[r + 1], "event": "",
            }
            for name, value in row.items():
                c.setdefault(name, []).append(value)
            self.bases.append((ctx.events - 1, ctx.start, s.reply[r]))

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        self.compactions += 1
        self.summarizer_calls += event.summarizer_calls
        if over_budget(event.size_after, self.budget):
            self.ineffective += 1
        if self.rows:
            c = self.cols
            c["compacted"][k], c["dropped"][k] = True, event.dropped_count
            c["size_after"][k], c["event"][k] = event.size_after, event.kind
        return {}

    def finish(self, ctx: Context) -> None:
        self.final_size = ctx.size + self.p[len(self.session.messages)] - self.p[ctx.start]

    def totals(self) -> dict[str, Any]:
        return {
            "requests": self.session.n_requests, "peak_request": self.peak, "peak_request_number": self.peak_at,
            "compactions": self.compactions, "summarizer_calls": self.summarizer_calls,
            "cumulative_input": self.cumulative, "cumulative_input_no_compaction": self.sent[-1],
            "final_size": self.final_size, "ineffective_compactions": self.ineffective,
        }


class PrefixBook(Book):
    """Bytes of each request's ``messages`` array and how many leading bytes repeat the previous request.

    Without an event in between, a request repeats all of the previous one but
    its closing ``]``; after an event only the bytes up to the first changed
    message repeat (``shared_prefix_bytes``), measured once per event.
    """

    def __init__(self, session: RecordedSession, rows: bool, unit: str) -> None:
        super().__init__(session, rows)
        self.same_unit = unit == "bytes"  # then an event's size after is the head's bytes
        self.b = session.prefix("bytes")
        self.bsize = session.meter("bytes")
        self.bsent = session.sent_sums("bytes")
        self.isent = session.request_sums("reply", lambda: session.reply)
        self.head_bytes = 0
        self.last_bytes: int | None = None  # the previous request's bytes
        self.after_event: int | None = None  # reuse of the first request after an event
        self.reuse = self.total = 0

    def _bytes(self, ctx: Context, r: int) -> int:
        stop = self.session.reply[r]
        return 2 + max(ctx.length(stop) - 1, 0) + self.head_bytes + self.b[stop] - self.b[ctx.start]

    def stretch(self, ctx: Context, r0: int, r1: int) -> None:
        first = self._bytes(ctx, r0)
        if self.last_bytes is None:
            first_reuse = 0
        elif self.after_event is not None:
            first_reuse = self.after_event
        else:
            first_reuse = self.last_bytes - 1
        self.after_event = None
        n = r1 - r0 + 1
        # requests after the first have at least one message, so bytes = 1 + length + message bytes
        fixed = 1 + len(ctx.head) - ctx.start + self.head_bytes - self.b[ctx.start]
        total = (n * fixed + self.isent[r1 + 1] - self.isent[r0] + self.bsent[r1 + 1] - self.bsent[r0]
                 + (first - (fixed + self.session.reply[r0] + self.b[self.session.reply[r0]])))
        last = self._bytes(ctx, r1)
        self.total += total
        self.reuse += first_reuse + (total - last) - (r1 - r0)
        if self.rows:
            previous = None
            for r in range(r0, r1 + 1):
                size = self._bytes(ctx, r)
                self._column("request_bytes").append(size)
                self._column("prefix_reuse").append(first_reuse if previous is None else previous - 1)
                previous = size
        self.last_bytes = last

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        s = self.session
        self.head_bytes = event.size_after if self.same_unit else sum(self.bsize(m) for m in after.head)
        if k + 1 < s.n_requests:
            sent = before.view(s.messages, s.reply[k])
            nxt = after.view(s.messages, s.reply[k + 1])
            self.after_event = shared_prefix_bytes(sent, nxt, self.bsize)
        return {}

    def totals(self) -> dict[str, Any]:
        return {"prefix_reuse": self.reuse, "request_bytes": self.total}


class TokenBook(Book):
    """Each request's size in a token unit (``cl100k``, ``o200k``, ``tokens_approx``) and its running sum."""

    def __init__(self, session: RecordedSession, rows: bool, unit: str, trigger_unit: str) -> None:
        super().__init__(session, rows)
        self.unit = unit
        self.same_unit = unit == trigger_unit  # then an event's size after is the head's size here
        self.p = session.prefix(unit)
        self.sent = session.sent_sums(unit)
        self.meter = session.meter(unit)
        self.head = 0
        self.cumulative = 0

    def stretch(self, ctx: Context, r0: int, r1: int) -> None:
        s, p = self.session, self.p
        base = self.head - p[ctx.start]
        if self.rows:
            cumulative = self.cumulative
            for r in range(r0, r1 + 1):
                size = base + p[s.reply[r]]
                cumulative += size
                self._column(f"size_{self.unit}").append(size)
                self._column(f"cumulative_{self.unit}").append(cumulative)
        self.cumulative += (r1 - r0 + 1) * base + self.sent[r1 + 1] - self.sent[r0]

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        self.head = event.size_after if self.same_unit else sum(self.meter(m) for m in after.head)
        return {}

    def totals(self) -> dict[str, Any]:
        return {"tokens": {self.unit: self.cumulative}}


class HistoryBook(Book):
    """Problems a provider would report in each request's history (``check_history``), per profile.

    The transcript is checked once per profile (the baseline). After an event
    only what the policy wrote is checked, then the unchanged messages until
    the checker's state equals the baseline's at the same message; from there
    on the counts are the baseline's, shifted by a constant (``fast.py``).
    """

    def __init__(self, session: RecordedSession, rows: bool, profiles: Sequence[str]) -> None:
        super().__init__(session, rows)
        self.profiles = tuple(profiles)
        self.states = {p: ProfileCounts(session.cache.history(p)) for p in self.profiles}

    def stretch(self, ctx: Context, r0: int, r1: int) -> None:
        reply = self.session.reply
        for p, st in self.states.items():
            lo = r0
            while lo <= r1 and reply[lo] < st.converged_at:  # the few requests before convergence
                st.max = max(st.max, st.count(reply[lo]))
                lo += 1
            if lo <= r1:
                st.max = max(st.max, st.offset + st.base.max_between(lo, r1))
            if self.rows:
                self._column(f"problems_{p}").extend(st.count(reply[r]) for r in range(r0, r1 + 1))

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        msgs, head, stop = self.session.messages, after.head, after.start
        run, j = len(head), stop  # the new context ends with msgs[j:stop] unchanged: where does that run start?
        while run > 0 and j > 0 and head[run - 1] is msgs[j - 1]:
            run, j = run - 1, j - 1
        # The check reads only what a checker reads of the written messages, and where the unchanged run
        # starts; many settings of a sweep compact at the same place, so the walk is remembered per transcript.
        key = written_signature(head[:run])
        memo = self.session.cache.walks if key is not None else None
        problems = {}
        for p, st in self.states.items():
            walk = memo.get((p, key, j)) if memo is not None else None
            if walk is None:
                walk = HistoryWalk.of(head[:run], j, msgs, st.base, p)
                if memo is not None and len(walk.counts) <= 256:  # a walk that never converges stays unshared
                    memo[(p, key, j)] = walk
            problems[p] = st.rebase(walk, stop)
        return {"problems": problems}

    def totals(self) -> dict[str, Any]:
        return {"problems": {p: st.max for p, st in self.states.items()}}


class RetentionBook(Book):
    """For every event: the goal and the dropped paths, and which of them the kept context still carries.

    With ``rows`` (a ledger) each event gets its ``Retention`` (the paths by name); a sweep keeps the
    totals only, so it counts with the transcript's bit masks (``fast.RetentionBits``), the same counts.
    """

    def __init__(self, session: RecordedSession, rows: bool) -> None:
        super().__init__(session, rows)
        self.goal, self.index = session.cache.goal()
        self.prefixes = summary_prefixes()  # a removed summary of any registered policy is not the goal
        self.bits = None if rows else session.cache.retention_bits(self.prefixes)
        self.kept = self.items = 0

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        if self.bits is not None:
            kept, items = self.bits.counts(event.removed, after.head)
            self.kept += kept
            self.items += items
            return {}
        ret = retention(event.removed, after.head, self.goal, self.index, self.prefixes)
        self.kept += ret.kept
        self.items += ret.items
        return {"retention": ret}

    def totals(self) -> dict[str, Any]:
        return {"retention": (self.kept / self.items) if self.items else None}


class NeededLaterBook(Book):
    """For every event: the removed identifiers the recorded future mentions again, and those still kept."""

    def __init__(self, session: RecordedSession, rows: bool) -> None:
        super().__init__(session, rows)
        self.index = session.cache.identifiers()
        self.needed = self.kept = 0

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        found = needed_later(event.removed, after.head, after.start, self.index)
        self.needed += len(found.needed)
        self.kept += len(found.kept)
        return {"needed_later": found}

    def totals(self) -> dict[str, Any]:
        return {"needed_later": self.kept / self.needed if self.needed else None, "needed_later_items": self.needed}


def merge_fields(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Several books' fields in one dict; per-profile and per-unit dicts are merged, not replaced."""
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if isinstance(value, dict):
                out.setdefault(key, {}).update(value)
            else:
                out[key] = value
    return out
