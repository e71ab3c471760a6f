"""Parse access-log lines in the Combined Log Format into records.

A line looks like:

    203.0.113.7 - - [12/Mar/2026:09:14:02 +0000] "GET /search?q=shoes HTTP/1.1" 200 5120 "-" "curl/8.5"

Malformed lines raise ParseError; ``parse_lines`` can skip them instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Iterator

LINE = re.compile(
    r'(?P<host>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] '
    r'"(?P<method>[A-Z]+) (?P<target>\S+) (?P<protocol>[^"]+)" '
    r'(?P<status>\d{3}) (?P<size>\d+|-)'
    r'(?: "(?P<referrer>[^"]*)" "(?P<agent>[^"]*)")?\s*$'
)
TIME_FORMAT = "%d/%b/%Y:%H:%M:%S %z"


class ParseError(ValueError):
    """A line that is not in the Combined Log Format."""

    def __init__(self, number: int, line: str, reason: str) -> None:
        super().__init__(f"line {number}: {reason}: {line[:80]!r}")
        self.number = number
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class Record:
    """One request. ``path`` is the request target exactly as sent."""

    host: str
    time: datetime
    method: str
    path: str
    protocol: str
    status: int
    size: int
    referrer: str = "-"
    agent: str = "-"

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 400


def parse_line(line: str, number: int = 1) -> Record:
    """The record of one log line; raises ParseError when it does not match."""
    m = LINE.match(line.rstrip("\n"))
    if m is None:
        raise ParseError(number, line, "not a combined log line")
    try:
        when = datetime.strptime(m["time"], TIME_FORMAT)
    except ValueError:
        raise ParseError(number, line, "bad timestamp") from None
    size = 0 if m["size"] == "-" else int(m["size"])
    return Record(
        host=m["host"],
        time=when,
        method=m["method"],
        path=m["target"],
        protocol=m["protocol"],
        status=int(m["status"]),
        size=size,
        referrer=m["referrer"] or "-",
        agent=m["agent"] or "-",
    )


def parse_lines(lines: Iterable[str], *, strict: bool = False) -> Iterator[Record]:
    """Records of every non-blank line; bad lines are skipped unless ``strict``."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield parse_line(line, number)
        except ParseError:
            if strict:
                raise
