"""Predictions of notebook 09: bytes, characters or tokens."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import same_value
from . import Judge


def p9_1(count):
    """How many Chinese characters fit in a tool message of at most 1,000 bytes."""
    def fits(n):
        return nh.message_size({"role": "tool", "tool_call_id": "call_1", "content": "中" * n}) <= 1_000

    same_value(count, max(n for n in range(1_000) if fits(n)), "your count")


def p9_2(same_request, difference, *, session, by_chars):
    """Whether counting characters moves the first compaction, and bytes minus characters there."""
    first_bytes, first_chars = nh.replay(session).compactions[0], by_chars.compactions[0]
    same_value(same_request, first_bytes.request == first_chars.request, "same request?")
    same_value(difference, first_bytes.size_before - first_chars.size_before, "your difference")


JUDGES: dict[str, Judge] = {"9.1": p9_1, "9.2": p9_2}
