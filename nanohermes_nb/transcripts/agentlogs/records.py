"""Reading an agent's JSONL log record by record, keeping what is sound.

A coding agent appends to its log while it runs, so a file may end in half a line;
newer versions add record types; some files hold two JSON objects on one physical
line (a record appended without a newline: seen in Claude Code checkpoints). Unlike
the strict transcript reader, nothing here refuses the whole file for one bad line:
each line is decoded on its own (``raw_decode`` in a loop when one line holds several
objects), a line that cannot be read is left out, and ``Notes`` says in one line per
kind of problem what was left out and where.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["Record", "Notes", "iter_records", "epoch", "text_of", "Counts", "MAX_TOKENS", "LATEST_TIME"]

_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_NUL_ONLY = b"\x00 \t\r\n"
# A token count above this is no count a provider reports for one request (the largest context windows hold
# a few million tokens): 10**18 in a log is damage, and priced it would swamp every total.
MAX_TOKENS = 10**12
LATEST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z: the last second a datetime (and a time column) can show


@dataclass
class Notes:
    """Counts of things left out, by reason, each with the first place it happened."""

    found: dict[str, list] = field(default_factory=dict)

    def add(self, reason: str, line: int) -> None:
        entry = self.found.get(reason)
        if entry is None:
            self.found[reason] = [1, line]
        else:
            entry[0] += 1

    def lines(self) -> tuple[str, ...]:
        """``"line 12: <reason>"`` or ``"line 12 (and 3 more): <reason>"``, one per reason."""
        out = []
        for reason, (count, line) in self.found.items():
            more = f" (and {count - 1} more)" if count > 1 else ""
            out.append(f"line {line}{more}: {reason}")
        return tuple(out)


@dataclass(frozen=True)
class Record:
    """One JSON object of the log and the 1-based line it starts on."""

    line: int
    data: dict


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_STRICT = json.JSONDecoder(parse_constant=_no_constant)


def iter_records(raw: bytes, notes: Notes) -> Iterator[Record]:
    """Every JSON object of a JSONL file, line by line; unreadable lines noted, not raised."""
    start, number, size = 0, 0, len(raw)
    while start < size:
        end = raw.find(b"\n", start)
        last = end < 0
        if last:
            end = size
        number += 1
        line = raw[start:end]
        start = end + 1
        if not line.strip():
            continue
        if not line.strip(_NUL_ONLY):  # space a crash left after the file was preallocated
            notes.add(f"{len(line):,} NUL bytes (space left by a crash, not a record), left out", number)
            continue
        yield from _line_records(line, number, last, notes)


def _line_records(line: bytes, number: int, last: bool, notes: Notes) -> Iterator[Record]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        notes.add("not valid UTF-8, line left out", number)
        return
    try:
        value = _STRICT.decode(text)
    except (ValueError, RecursionError):
        yield from _several(text, number, last, notes)
        return
    if isinstance(value, dict):
        yield Record(number, value)
    else:
        notes.add("not a JSON object, line left out", number)


def _several(text: str, number: int, last: bool, notes: Notes) -> Iterator[Record]:
    """A line that is not one JSON value: several objects back to back, or a cut record."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in _WS:
            i += 1
        if i >= n:
            return
        try:
            value, i = _STRICT.raw_decode(text, i)
        except (ValueError, RecursionError):
            reason = ("the last line is incomplete (the session may still be being written), left out"
                      if last else "invalid JSON, rest of the line left out")
            notes.add(reason, number)
            return
        if isinstance(value, dict):
            yield Record(number, value)
        else:
            notes.add("not a JSON object, line left out", number)


def epoch(stamp: Any) -> float | None:
    """An ISO-8601 time (``2026-02-19T09:56:23.636Z``) or epoch number as epoch seconds.

    None for no time, and for a time outside 1970-01-01 .. 9999-12-31 UTC (year 1 or 9999 with a
    +-14:00 offset, ``1e300``, ``-6.3e10``): no agent wrote a log then, and no time column can show it.
    """
    try:
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
            value = float(stamp)
            value = value / 1000.0 if value > 1e11 else value  # milliseconds
        elif not isinstance(stamp, str) or not stamp:
            return None
        else:
            moment = datetime.fromisoformat(stamp.replace("Z", "+00:00") if stamp.endswith("Z") else stamp)
            if moment.tzinfo is None:
                return None
            value = moment.timestamp()
    except (ValueError, OverflowError, OSError):
        return None
    return value if 0.0 <= value <= LATEST_TIME else None  # NaN fails both comparisons


def text_of(parts: Any) -> str:
    """The text of a string or of a list of text parts (``text`` / ``input_text`` / ``output_text``)."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(texts)


class Counts:
    """A log's usage numbers, checked: a whole number from 0 to ``MAX_TOKENS``, or the request has no usage.

    ``get(usage, key)`` is the count (0 when the key is absent or null, as the agents omit zero fields);
    a negative count, a fraction, a string, a boolean or a count over ``MAX_TOKENS`` makes ``bad`` true and
    is noted once per kind with its line, so the request's usage is left out rather than priced wrong.
    """

    def __init__(self, notes: Notes, line: int) -> None:
        self.notes, self.line, self.bad = notes, line, False
        self.noted: set[str] = set()

    def get(self, usage: Any, key: str) -> int:
        value = usage.get(key) if isinstance(usage, dict) else None
        if value is None:
            return 0
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS:
            return value
        if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_TOKENS:
            return int(value)
        self.bad = True
        if key in self.noted:
            return 0
        self.noted.add(key)
        self.notes.add(f"usage {key[:40]!r} {_what_count(value)}, not a token count (a whole number from 0 to "
                       "10^12): the request's usage left out", self.line)
        return 0


def _what_count(value: Any) -> str:
    if isinstance(value, bool):
        return "is a boolean"
    if isinstance(value, (int, float)):
        return "is negative" if value < 0 else "is over 10^12" if value > MAX_TOKENS else "is a fraction"
    return f"is {'a string' if isinstance(value, str) else 'an array' if isinstance(value, list) else 'an object'}"
