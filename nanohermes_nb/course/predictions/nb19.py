"""Predictions of notebook 19: what compaction costs in money."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import Wrong, same_value
from . import Judge


def p19_1(guess, *, session):
    """Whether the one compaction saves or costs money at DeepSeek's prices."""
    if guess not in ("saves", "costs"):
        raise Wrong('answer "saves" or "costs"')
    net = (
        nh.replay(session, pricing="deepseek-chat", budget=10**9, profiles=()).totals.cost_usd
        - nh.replay(session, pricing="deepseek-chat", profiles=()).totals.cost_usd
    )
    if guess != ("saves" if net > 0 else "costs"):
        raise Wrong("the other way round: compare the cached tokens before and after the compaction")


def p19_2(cheapest_in_dollars, fewest_bytes, *, session):
    """The cheapest budget in dollars under GPT-4.1's prices, and the one that sends the fewest bytes."""
    by_budget = nh.sweep(
        [("twelve_turns", session)], budgets=[60_000, 90_000, 120_000, 200_000], pricing="gpt-4.1", profiles=()
    ).set_index("budget")
    same_value(cheapest_in_dollars, by_budget["cost_usd"].idxmin(), "your cheapest budget in dollars")
    same_value(fewest_bytes, by_budget["cumulative_input"].idxmin(), "your budget with the fewest bytes")


JUDGES: dict[str, Judge] = {"19.1": p19_1, "19.2": p19_2}
