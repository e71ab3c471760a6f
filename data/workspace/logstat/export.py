"""Reports for other programs and people: JSON (contract in docs/json-schema.md),
CSV, and the Markdown summary pasted into the weekly traffic mail.

The JSON layout is a contract with the dashboards that read it: any change to a
field's meaning needs a new ``schema_version`` and a line in CHANGELOG.md.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence

from .parse import Record
from .report import PathStats, busiest_hosts, human_bytes, status_counts

SCHEMA_VERSION = 2
CSV_COLUMNS = ("rank", "path", "hits", "errors", "error_rate", "bytes")


def _iso(when: datetime) -> str:
    """UTC ISO-8601 with a trailing Z, the form the dashboards parse."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def period(records: Sequence[Record]) -> dict[str, Any]:
    """First and last request time, or nulls for an empty log."""
    if not records:
        return {"first": None, "last": None}
    times = [r.time for r in records]
    return {"first": _iso(min(times)), "last": _iso(max(times))}


def path_entry(rank: int, s: PathStats) -> dict[str, Any]:
    """One element of ``top_paths`` in the JSON report."""
    return {
        "rank": rank,
        "path": s.path,
        "hits": s.hits,
        "errors": s.errors,
        "error_rate": round(s.error_rate, 4),
        "bytes": s.bytes,
    }


def report_dict(records: Sequence[Record], top: Sequence[PathStats]) -> dict[str, Any]:
    """The whole JSON report as a dict (see docs/json-schema.md)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "requests": len(records),
        "bytes": sum(r.size for r in records),
        "period": period(records),
        "status": status_counts(records),
        "top_paths": [path_entry(k, s) for k, s in enumerate(top, start=1)],
        "top_hosts": [{"host": h, "requests": n} for h, n in busiest_hosts(records)],
    }


def to_json(records: Iterable[Record], top: Sequence[PathStats]) -> str:
    """The JSON report, keys in schema order, two-space indent."""
    records = list(records)
    return json.dumps(report_dict(records, top), indent=2, ensure_ascii=False)


def to_csv(top: Sequence[PathStats]) -> str:
    """The top paths as CSV with a header row; error rate as a fraction."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for k, s in enumerate(top, start=1):
        writer.writerow((k, s.path, s.hits, s.errors, f"{s.error_rate:.4f}", s.bytes))
    return buf.getvalue()


def _md_cell(text: str) -> str:
    """A Markdown table cell: pipes escaped, code spans for paths."""
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def to_markdown(records: Sequence[Record], top: Sequence[PathStats], *, title: str = "Traffic") -> str:
    """The weekly-mail summary: totals, period, status shares and the top paths as tables."""
    records = list(records)
    span = period(records)
    counts = status_counts(records)
    total = len(records)
    lines = [f"## {title}", ""]
    if not records:
        lines.append("No requests in this log.")
        return "\n".join(lines) + "\n"
    lines += [
        f"{total} requests, {human_bytes(sum(r.size for r in records))} sent, "
        f"from {span['first']} to {span['last']}.",
        "",
        "| status | requests | share |",
        "|---|---:|---:|",
    ]
    lines += [f"| {c} | {n} | {n / total:.1%} |" for c, n in counts.items() if n]
    lines += ["", "| # | path | hits | errors | bytes |", "|---:|---|---:|---:|---:|"]
    lines += [
        f"| {k} | {_md_cell(s.path)} | {s.hits} | {s.error_rate:.0%} | {human_bytes(s.bytes)} |"
        for k, s in enumerate(top, start=1)
    ]
    return "\n".join(lines) + "\n"
