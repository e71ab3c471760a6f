"""Predictions of notebook 13: the cost of compaction."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import close_to, same_value
from . import Judge


def p13_2(guess, *, article, stated):
    """Whether the article's sum, with the compaction turn at its size after, lands above or below its figure."""
    sum_after = int(article["size"].where(~article["compacted"], article["size_after"]).sum())
    same_value(guess, "above" if sum_after > stated else "below", "your answer")


def p13_3(guess, *, session, ledger):
    """At half the budget: lower or higher cumulative input, the share saved, the compactions."""
    half, full = nh.replay(session, budget=60_000).totals, ledger.totals
    same_value(guess["lower than at the default"], half.cumulative_input < full.cumulative_input, "lower or higher")
    close_to(guess["share saved"], 1 - half.cumulative_input / full.cumulative_input, rel=0.25, what="your share")
    same_value(guess["compactions"], half.n_compactions, "your number of compactions")


JUDGES: dict[str, Judge] = {"13.2": p13_2, "13.3": p13_3}
