"""Predictions of notebook 08: when compaction triggers."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import Wrong, same_value
from . import Judge


def p8_2(request, turn, *, session):
    """The request and turn of the first compaction at half the budget."""
    first = nh.replay(session, budget=60_000).compactions[0]
    same_value(request, first.request, "your request")
    same_value(turn, first.turn, "your turn")


def p8_3(guess):
    """The bytes one more character adds to a message, for seven characters."""
    def grow(ch):
        return (

        nh.message_size({"role": "user", "content": "x" + ch}) - nh.message_size({"role": "user", "content": "x"})
    )
    if not isinstance(guess, dict):
        raise Wrong("my_guess is not a dict of characters yet")
    wrong = [repr(ch) for ch, g in guess.items() if g != grow(ch)]
    if wrong:
        raise Wrong(f"{len(wrong)} of {len(guess)} are off: {', '.join(wrong)}")


def p8_4(smallest, *, session):
    """The fewest messages before an unforced compact can act with keep_recent=4."""
    truth = next(
        k for k in range(1, len(session) + 1) if nh.compact(session[:k], keep_recent=4, budget=1_000).compacted
    )
    same_value(smallest, truth, "your number of messages")


JUDGES: dict[str, Judge] = {"8.2": p8_2, "8.3": p8_3, "8.4": p8_4}
