"""Predictions of notebook 17: the policy lab."""

from __future__ import annotations

import pandas as pd

import nanohermes_nb as nh

from ..exercises import Wrong, same_value
from . import Judge


def _intact_per_event(name, transcripts, budget):
    """Tool results still in the context, unchanged, right after each event of one policy; the mean (None: no event)."""
    counts = []
    for t in transcripts:
        originals = {(m.get("tool_call_id"), str(m.get("content"))) for m in t if m.get("role") == "tool"}
        for e in nh.replay(t, policy=name, budget=budget, retention=False).compactions:
            counts.append(
                sum(
                    (m.get("tool_call_id"), str(m.get("content"))) in originals
                    for m in e.context_after
                    if m.get("role") == "tool"
                )
            )
    return sum(counts) / len(counts) if counts else None


def p17_1(most, none, *, transcripts, budget, policies=None):
    """The policy that leaves the most intact tool results per event, and those that leave none.

    ``policies``: the lab's policies the question is about (all registered ones when None)."""
    lab = list(policies) if policies is not None else list(nh.POLICIES)
    if most not in lab or not isinstance(none, (list, tuple, set)) or set(none) - set(lab):
        raise Wrong(f"name policies of {lab}: one for my_most, a list for my_none")
    intact = pd.Series(
        {name: _intact_per_event(name, transcripts, budget) for name in lab}, dtype=float
    ).dropna()
    if intact.get(most) != intact.max():
        raise Wrong("another policy leaves more intact tool results per event")
    if set(none) != set(intact.index[intact == 0]):
        raise Wrong("the policies that leave none are not those")


def p17_2(policies_acting, transcripts_acted_on, *, transcripts, budget, policies=None):
    """How many policies act at the article's budget, and on how many transcripts (of ``policies``: all when None)."""
    if not all(isinstance(x, int) for x in (policies_acting, transcripts_acted_on)):
        raise Wrong("two whole numbers, please")
    lab = list(policies) if policies is not None else list(nh.POLICIES)
    acts = nh.sweep(transcripts, budgets=[budget], policies=lab).query("compactions > 0")
    same_value(policies_acting, acts["policy"].nunique(), "your number of policies")
    same_value(transcripts_acted_on, acts["transcript"].nunique(), "your number of transcripts")


JUDGES: dict[str, Judge] = {"17.1": p17_1, "17.2": p17_2}
