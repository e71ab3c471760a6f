"""Predictions of notebook 10: keep ten messages, and the cut."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import Wrong, close_to, same_value
from . import Judge


def p10_4(result_bytes, *, make_session):
    """A result size that makes the first compaction fire in turn 5."""
    if not isinstance(result_bytes, int):
        raise Wrong("my_result_bytes is not a number of bytes yet")
    first = nh.replay(make_session(result_bytes)).compactions
    if not first or first[0].turn != 5:
        raise Wrong(f"the first compaction fires {'never' if not first else f'in turn {first[0].turn}'}, not in turn 5")


def p10_5(cut, smallest_keep, *, trap, last_user):
    """The cut of the trap session at keep_recent=4, and the smallest keep_recent that keeps the last instruction."""
    def kept_user(k):
        return any(m is trap[last_user] for m in nh.compact(trap, keep_recent=k, force=True).messages)

    same_value(cut, nh.find_cut(trap, 4), "your cut")
    same_value(smallest_keep, next(k for k in range(1, len(trap) + 1) if kept_user(k)), "your smallest keep_recent")


def p10_6(share, *, transcripts, simple_cut, keep_recent):
    """The share of contexts at tool batches where the cut without its loop leaves an orphan."""
    contexts = []
    for t in transcripts:
        msgs = list(t) if t[0].get("role") == "system" else [{"role": "system", "content": ""}, *t]
        for i, m in enumerate(msgs):
            if m.get("role") == "assistant" and m.get("tool_calls"):
                end = i + 1
                while end < len(msgs) and msgs[end].get("role") == "tool":
                    end += 1
                contexts.append(msgs[:end])
    long_enough = [c for c in contexts if len(c) > keep_recent + 1]
    truth = sum(c[simple_cut(c)].get("role") == "tool" for c in long_enough) / len(long_enough)
    close_to(share, truth, rel=0.3, what="your share")


JUDGES: dict[str, Judge] = {"10.4": p10_4, "10.5": p10_5, "10.6": p10_6}
