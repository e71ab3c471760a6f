"""Predictions of notebook 11: the summary."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import same_value
from . import Judge


def p11_2(excerpt, with_calls, *, message):
    """What the excerpt keeps of an assistant message that only calls tools, without and with tool_calls."""
    same_value(excerpt, nh.build_excerpt([message]), "your excerpt")
    same_value(with_calls, nh.build_excerpt([message], tool_calls=True), "your excerpt with tool_calls=True")


def p11_3(line, *, message):
    """The excerpt line of a message made of text parts and an image."""
    same_value(line, nh.build_excerpt([message]), "your line")


def p11_4(note, called, *, state, summarizer):
    """The note compact inserts when the summarizer answers blank, and whether it was called."""
    result = nh.compact(state, summarizer=summarizer)
    same_value(note, result.note, "your note")
    same_value(called, result.summarizer_called, "whether it was called")


JUDGES: dict[str, Judge] = {"11.2": p11_2, "11.3": p11_3, "11.4": p11_4}
