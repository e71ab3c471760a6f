"""Predictions of notebook 15: verifying compaction."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import Wrong, same_value
from . import Judge


def p15_1(budget, *, source, result):
    """The largest budget at which the checklist's "budget effective" fails."""
    if not isinstance(budget, int):
        raise Wrong("my_budget is not a whole number of bytes yet")
    def fails(b):
        return (

        not next(c.result for c in nh.verify_compaction(nh.compact(source, budget=b)) if c.check == "budget effective")
    )
    largest = result.size_after  # the check asks for size after < budget
    assert fails(largest) and not fails(largest + 1), "the check moved: the exercise needs a new answer"
    same_value(budget, largest, "your budget")


def p15_2(failing, *, source):
    """The checks of the checklist that fail when the summarizer fails."""
    if not isinstance(failing, (set, frozenset, list, tuple)):
        raise Wrong("my_failing is not a set of check names yet")
    checks = nh.verify_compaction(nh.compact(source, summarizer=nh.context.summarizers.PlaceholderSummarizer()))
    names, truth = {c.check for c in checks}, {c.check for c in checks if not c.result}
    unknown = set(failing) - names
    if unknown:
        raise Wrong(f"not a check of the list: {', '.join(sorted(unknown))}")
    if set(failing) - truth:
        raise Wrong(f"{len(set(failing) - truth)} of the checks you name still pass")
    if truth - set(failing):
        raise Wrong(f"{len(truth - set(failing))} failing check(s) missing from your set")


JUDGES: dict[str, Judge] = {"15.1": p15_1, "15.2": p15_2}
