"""The probe book: at every event of a replay, the probes of what it removed and whether each survived (issue 36).

``Settings(probes=True)`` adds it to a replay: each ``LedgerEvent`` carries its survival
ledger (``event.probes``: one ``Fate`` per probe), and the totals (a sweep row) the survival
per category beside cost and compactions (``PROBE_COLUMNS``). The probes of an event are those
of the transcript messages it removed (``context.probes.ProbeIndex``, built once per
transcript); the compacted context is the one the next request carries, its summary messages
told apart by every registered policy's summary openings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..context.compaction import is_summary_message
from ..context.probes import CATEGORIES
from ..context.survival import Compacted, message_text, survival, tally
from ..policies.base import Event, summary_prefixes
from .books import Book
from .recorded import Context, RecordedSession

__all__ = ["ProbeBook", "probe_totals"]


def probe_totals(counts: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tally`` as the totals' fields: overall counts and shares, ``probes`` per category (None: no probe)."""
    items = counts["items"]

    def share(n: int, of: int) -> float | None:
        return round(n / of, 4) if of else None

    out: dict[str, Any] = {"probe_items": items,
                           "probe_survival": share(items - counts["lost"], items),
                           "probe_kept": share(counts["kept"], items),
                           "probe_reinjected": share(counts["re-injected"], items),
                           "probe_summarized": share(counts["summarized"], items)}
    per: dict[str, Any] = {}
    for c in CATEGORIES:
        cat = counts["by_category"][c]
        per[c] = share(cat["survived"], cat["items"])
        per[f"{c}_items"] = cat["items"]
    return {**out, "probes": per}


class ProbeBook(Book):
    """For every event: the probes of the removed messages and each one's fate in the context after it."""

    def __init__(self, session: RecordedSession, rows: bool) -> None:
        super().__init__(session, rows)
        self.index = session.cache.probes()
        self.prefixes = summary_prefixes()
        self.fates: list = []
        self._read: dict[int, tuple[Any, str, bool]] = {}

    def _message(self, message: Any) -> tuple[str, bool]:
        """A message's text and whether it is a summary, worked out once per message object."""
        hit = self._read.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1], hit[2]
        text, summary = message_text(message), is_summary_message(message, self.prefixes)
        if len(self._read) > 50_000:
            self._read.clear()
        self._read[id(message)] = (message, text, summary)
        return text, summary

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        probes = self.index.probes(event.removed, after.start)
        if not probes:
            return {"probes": ()}
        kept: list[str] = []
        summaries: list[str] = []
        for m in after.head:  # ``Compacted.of`` with each message read once per transcript
            text, summary = self._message(m)
            (summaries if summary else kept).append(text)
        fates = tuple(survival(probes, Compacted("\n".join(kept), "\n".join(summaries))))
        self.fates.extend(fates)
        return {"probes": fates}

    def totals(self) -> dict[str, Any]:
        return probe_totals(tally(self.fates))

