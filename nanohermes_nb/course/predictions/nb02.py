"""Predictions of notebook 02: the four layers of budgets."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import same_value
from . import Judge


def p2_1(prediction, *, workspace, budgets):
    """The lines glob returns through dispatch with a smaller glob cap, and its last line."""
    listed = nh.Tools(workspace, budgets).dispatch("glob", {"pattern": "logstat/*.py"}).splitlines()
    same_value(prediction, (len(listed), listed[-1]), "your (lines, last line)")


def p2_2(prediction, *, ws, budgets, with_result, late_totals):
    """The largest door without a compaction, and how its session's input compares with compaction only."""
    totals = {
        cap: nh.replay(
            with_result(nh.Tools(ws, budgets.replace(max_output=cap)).dispatch("read_file", {"path": "big.log"}))
        ).totals
        for cap in range(budgets.max_output, 200_001, 10_000)
    }
    widest = max(cap for cap, t in totals.items() if t.n_compactions == 0)
    truth = widest, "smaller" if totals[widest].cumulative_input < late_totals.cumulative_input else "larger"
    same_value(prediction, truth, "your (cap, smaller/larger)")


JUDGES: dict[str, Judge] = {"2.1": p2_1, "2.2": p2_2}
