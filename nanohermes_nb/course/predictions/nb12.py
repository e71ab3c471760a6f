"""Predictions of notebook 12: what to keep, what to drop."""

from __future__ import annotations

import nanohermes_nb as nh

from ...context.summarizers import find_paths
from ..exercises import Wrong, same_value
from . import Judge


def p12_1(under_one_percent, less_than_file_contents, *, session, acks, base, file_contents_ledger):
    """Whether emptying the acknowledgements saves under 1% of the input, and less than dropping file contents."""
    ack_saving = (
        1 - nh.replay([{**m, "content": ""} if m in acks else m for m in session]).totals.cumulative_input / base
    )
    file_saving = 1 - file_contents_ledger.totals.cumulative_input / base
    same_value(under_one_percent, ack_saving < 0.01, "under one per cent")
    same_value(less_than_file_contents, ack_saving < file_saving, "less than file contents")


def p12_2(prediction, *, path_a, path_b, note):
    """Which of the two dropped files the summary still names."""
    if prediction not in ("A", "B", "both", "neither"):
        raise Wrong('answer "A", "B", "both" or "neither"')
    in_note = "".join(label for label, p in (("A", path_a), ("B", path_b)) if p in find_paths(note))
    if prediction != {"AB": "both", "A": "A", "B": "B", "": "neither"}[in_note]:
        raise Wrong("not that one: look at where each file is named in the dropped messages")


JUDGES: dict[str, Judge] = {"12.1": p12_1, "12.2": p12_2}
