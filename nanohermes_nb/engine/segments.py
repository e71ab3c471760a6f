r"""Counting a text by segments: the places where the BPE pre-tokenizers never join two pieces.

The o200k and cl100k pre-tokenizers (``sizing._PATTERNS``) never start a
pre-token with a line break, and every pre-token that holds one ends with the
run of line breaks (plus ``/`` in o200k) it is in; none looks behind. So no
pre-token spans the point right after a line break that a printable ASCII
character other than ``/`` follows, and a text's token count is the sum of the
counts of the segments cut there. Nor the point right after a line break that
spaces or tabs, then a printable ASCII character, follow (indented code, numbered
lines): the pre-token that holds the line break is the whitespace run up to its
last line break (``\s*[\r\n]+`` is tried before the other whitespace rules), or
a punctuation run with the line breaks (and ``/``) right after it, and both end
there. The cost book (``costbook``) counts each
segment once per session: a new summary repeats the lines of the summaries
before it, so most of its lines are counted already. ``tests/test_pricing.py``
holds the sums equal to the whole counts on generated texts.
"""

from __future__ import annotations

import re

__all__ = ["BPE_UNITS", "CUT", "SEGMENT", "segments", "last_cut"]

BPE_UNITS = ("o200k", "cl100k")  # the token units whose pre-tokenizers have that property
# what follows a line break at a cut: a printable ASCII character other than ``/``, or spaces and tabs, then any
_NEXT = "(?:[!-.0-~]|[ \t]+[!-~])"
SEGMENT = re.compile(rf"(?<=\n)(?={_NEXT})")  # the cut points (zero width)
CUT = re.compile(rf"\n(?={_NEXT})")  # a line break right before a cut point


def segments(text: str) -> list[str]:
    """``text`` cut right after each line break that a printable ASCII character other than ``/`` follows."""
    return SEGMENT.split(text)


def last_cut(text: str) -> int:
    """Where ``text`` is cut last (see ``segments``); the caller knows there is such a place."""
    i = text.rfind("\n")
    while not CUT.match(text, i):
        i = text.rfind("\n", 0, i)
    return i + 1
