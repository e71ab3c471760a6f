"""Predictions of notebook 18: run the loop yourself."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import Wrong, same_value
from . import Judge


def p18_1(first_check_compacts, more_compactions, more_input, *, run, policy):
    """With keep_recent=10: does the first check compact, and more compactions and input than with 4?"""
    four, ten = run(policy), run(nh.NanoHermesPolicy())
    same_value(first_check_compacts, ten.events[0].event is not None, "the first check")
    same_value(more_compactions, ten.n_compactions > four.n_compactions, "more compactions")
    same_value(more_input, ten.ledger.totals.cumulative_input > four.ledger.totals.cumulative_input, "more input")


def p18_2(rejecting, user_role_clean, *, run, policy):
    """The providers that reject a system-role summary at index 1, and whether the user role leaves none."""
    if not isinstance(rejecting, (set, frozenset, list, tuple)) or set(rejecting) - {"openai", "anthropic", "gemini"}:
        raise Wrong('my_rejecting is not a set of "openai", "anthropic", "gemini" yet')
    as_system = run(policy).ledger.totals.problems
    as_user = run(nh.NanoHermesPolicy(keep_recent=4, summary_role="user")).ledger.totals.problems
    truth = {p for p, n in as_system.items() if n}
    if set(rejecting) != truth:
        raise Wrong(f"{len(set(rejecting) ^ truth)} provider(s) misjudged")
    same_value(user_role_clean, not any(as_user.values()), "the user role")


JUDGES: dict[str, Judge] = {"18.1": p18_1, "18.2": p18_2}
