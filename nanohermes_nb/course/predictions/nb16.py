"""Predictions of notebook 16: the tuning lab."""

from __future__ import annotations

from ..exercises import Wrong
from . import Judge


def p16_1(cheapest, *, grid, keeps):
    """The cheapest keep_recent of the grid at 60,000 bytes, or "all the same"."""
    at_60k = grid.xs(60_000, level="budget")["cumulative_input"]
    expected = "all the same" if at_60k.nunique() == 1 else at_60k.idxmin()
    if cheapest not in [*keeps, "all the same"]:
        raise Wrong(f'answer one of {keeps} or "all the same"')
    if cheapest != expected:
        raise Wrong("not that one" if expected != "all the same" else "the costs are not all different")


def p16_2(quiet, *, grid, budgets):
    """The smallest budget of the grid at which nothing compacts, or "none"."""
    by_budget = grid.groupby(level="budget")["compactions"].sum()
    expected = min((b for b in budgets if by_budget[b] == 0), default="none")
    if quiet not in [*budgets, "none"]:
        raise Wrong(f'answer a budget of the grid {budgets} or "none"')
    if quiet != expected:
        raise Wrong(
            "something still compacts at that budget"
            if quiet != "none" and by_budget[quiet]
            else "a smaller budget of the grid is already quiet"
            if quiet != "none"
            else "some budget of the grid is quiet"
        )


JUDGES: dict[str, Judge] = {"16.1": p16_1, "16.2": p16_2}
