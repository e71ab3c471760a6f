"""Predictions of notebook 03: why one tool result can eat the window."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import Wrong, close_to, same_value
from . import Judge


def p3_1(prediction, *, tool_msg, text):
    """The size of the tool message carrying ``text``, to the byte."""
    same_value(prediction, nh.message_size(tool_msg(text)), "your size in bytes")


def p3_2(prediction, *, ws, budgets, tool_msg, budget):
    """The share of the budget one clamped read takes through a halved door, and how many fit."""
    if not isinstance(prediction, tuple) or len(prediction) != 2:
        raise Wrong("write a pair: (share of the budget, how many fit)")
    size = nh.message_size(tool_msg(nh.Tools(ws, budgets).dispatch("read_file", {"path": "wide.txt"})))
    close_to(prediction[0], size / budget, rel=0.05, what="your share")
    same_value(prediction[1], budget // size, "how many fit")


def p3_3(m, *, tools, page):
    """The largest max_chars whose own note still passes the dispatch door."""
    if not isinstance(m, int):
        raise Wrong("no answer yet: write an int")
    def survives(k):
        return (

        tools.dispatch("web_fetch", {**page, "max_chars": k}).splitlines()[-1].endswith(" chars omitted")
    )
    if not survives(m):
        raise Wrong("at your max_chars the door already cuts the tool's note: too high")
    if survives(m + 1):
        raise Wrong("the note still survives one character more: too low")


JUDGES: dict[str, Judge] = {"3.1": p3_1, "3.2": p3_2, "3.3": p3_3}
