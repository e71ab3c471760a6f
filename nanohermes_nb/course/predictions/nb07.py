"""Predictions of notebook 07: refuse, truncate, summarise, and clamp."""

from __future__ import annotations

import re

import nanohermes_nb as nh

from ..exercises import same_value
from . import Judge


def p7_2(kept, n):
    """What clamp keeps of "上下文压缩" at 8 bytes, and the N of its note."""
    clamped = nh.clamp("上下文压缩", 8)
    same_value(kept, clamped.split("\n")[0], "the kept text")
    same_value(n, int(re.search(r"\((\d+) chars", clamped).group(1)), "your N")


def p7_3(prediction, *, clamp, text, cap):
    """What a clamp without its step back does to a Chinese text: the same, garbled, or an error."""
    try:
        happened = "same" if clamp(text, cap) == nh.clamp(text, cap) else "garbled"
    except UnicodeDecodeError:
        happened = "error"
    same_value(prediction, happened, "your prediction")


JUDGES: dict[str, Judge] = {"7.2": p7_2, "7.3": p7_3}
