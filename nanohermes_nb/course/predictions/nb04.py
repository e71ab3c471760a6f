"""Predictions of notebook 04: the stable prefix and the system prompt."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import same_value
from . import Judge


def p4_2(prediction, *, layout, contexts, table):
    """Which of two layouts the timestamp-last share is closer to (or between, if neither by far)."""
    built = [layout(ctx) for ctx in contexts]
    reps = [nh.agent.prompt.prefix_reuse(p, c) for p, c in zip(built, built[1:], strict=False)]
    share = sum(r.shared_bytes for r in reps) / sum(r.total_bytes for r in reps)
    end, first = table.loc["memory block at the end", "share"], table.loc["timestamp first", "share"]
    if abs(share - first) < (end - first) / 4:
        truth = "near the timestamp first"
    else:
        truth = "near the memory block at the end" if abs(share - end) < (end - first) / 4 else "in between"
    same_value(prediction, truth, "your prediction")


def p4_3(prediction, *, ws, home, persona, session):
    """What a persona adds to the session's total input with compaction out of the way."""
    configs = (nh.SystemConfig(workspace=ws, home=home, persona=persona), nh.SystemConfig(workspace=ws, home=home))
    runs = [
        nh.replay(nh.agent.prompt.refresh_system(session, c), budget=10**9).totals.cumulative_input for c in configs
    ]
    same_value(prediction, runs[0] - runs[1], "your number of bytes")


JUDGES: dict[str, Judge] = {"4.2": p4_2, "4.3": p4_3}
