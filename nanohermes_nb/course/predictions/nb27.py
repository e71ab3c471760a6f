"""Predictions of notebook 27: what was lost."""

from __future__ import annotations

from typing import Any

from ..exercises import close_to


def p27_2(share: Any, *, fates: Any) -> None:
    """The share of a compaction's probes that survived (kept or re-injected: Codex's summary is not in its log)."""
    fates = list(fates)
    close_to(share, sum(f.survived for f in fates) / len(fates), rel=0.2, what="your share")


JUDGES = {"27.2": p27_2}
