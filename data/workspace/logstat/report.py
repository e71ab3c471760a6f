"""Aggregate records into the numbers the reports show, and render them as text tables.

Every function takes an iterable of ``Record`` and returns plain data, so the
CLI, the exporters and the tests share one definition of each number.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

from .parse import Record

STATUS_CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx")


@dataclass(frozen=True)
class PathStats:
    """What the top-paths report shows for one path."""

    path: str
    hits: int
    errors: int
    bytes: int

    @property
    def error_rate(self) -> float:
        return self.errors / self.hits if self.hits else 0.0


def status_class(status: int) -> str:
    """'2xx' for 204, '4xx' for 404, and so on."""
    return f"{status // 100}xx"


def status_counts(records: Iterable[Record]) -> dict[str, int]:
    """Requests per status class, every class present (zero when unseen)."""
    counts = Counter(status_class(r.status) for r in records)
    return {c: counts.get(c, 0) for c in STATUS_CLASSES}


def path_stats(records: Iterable[Record]) -> dict[str, PathStats]:
    """Hits, errors (status >= 400) and bytes per path."""
    hits: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    sizes: defaultdict[str, int] = defaultdict(int)
    for r in records:
        hits[r.path] += 1
        sizes[r.path] += r.size
        if r.status >= 400:
            errors[r.path] += 1
    return {p: PathStats(p, hits[p], errors[p], sizes[p]) for p in hits}


def top_paths(records: Iterable[Record], n: int = 10) -> list[PathStats]:
    """The ``n`` most requested paths; ties broken by path so the order is stable."""
    stats = path_stats(records)
    ranked = sorted(stats.values(), key=lambda s: (-s.hits, s.path))
    return ranked[:n]


def busiest_hosts(records: Iterable[Record], n: int = 5) -> list[tuple[str, int]]:
    """The ``n`` hosts with the most requests, ties broken by host."""
    counts = Counter(r.host for r in records)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'; exact below 1 KiB."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """A plain text table: columns padded to their widest cell, numbers right-aligned."""
    widths = [len(h) for h in header]
    for row in rows:
        for k, cell in enumerate(row):
            widths[k] = max(widths[k], len(cell))

    def line(cells: Sequence[str]) -> str:
        out = []
        for k, cell in enumerate(cells):
            out.append(cell.rjust(widths[k]) if k in right else cell.ljust(widths[k]))
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def render_top_paths(stats: Sequence[PathStats]) -> str:
    """The top-paths table: rank, path, hits, error rate, bytes."""
    rows = [
        (str(k), s.path, str(s.hits), f"{s.error_rate:.0%}", human_bytes(s.bytes))
        for k, s in enumerate(stats, start=1)
    ]
    return _table(("#", "path", "hits", "errors", "bytes"), rows, right={0, 2, 3, 4})


def render_status(counts: dict[str, int]) -> str:
    """The status table: class, requests, share of all requests."""
    total = sum(counts.values())
    rows = [
        (c, str(n), f"{n / total:.1%}" if total else "-")
        for c, n in counts.items()
    ]
    return _table(("status", "requests", "share"), rows, right={1, 2})
