"""Plain renderings of messages and compactions: rows and a small HTML table.

These need nothing beyond the standard library, so ``CompactionResult._repr_html_``
uses them from this layer (``context`` imports nothing above it); the text table
(``views.tables.text_table``, also the CLI's) and the richer pandas and matplotlib
views build on the same rows. Until 0.3.0 this module was ``views.report``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .messages import text_of
from .sizing import message_size

__all__ = [
    "preview",
    "call_ids",
    "answers",
    "message_rows",
    "compaction_rows",
    "html_table",
    "compaction_html",
    "STATUS_COLOURS",
    "NO_MATH",
]

NEWLINE_MARK = "\u23ce"  # ⏎
# classes MathJax skips (2: tex2jax_ignore, 3: mathjax_ignore): "$5 and $10" in a message is not math
NO_MATH = "tex2jax_ignore mathjax_ignore"
STATUS_COLOURS = {
    "kept": "#e8f5e9",
    "dropped": "#fdecea",
    "summary": "#e3f2fd",
    "cut": "#fff3cd",
    "naive cut": "#f3e5f5",
}


def preview(message: Mapping[str, Any], width: int = 72) -> str:
    """One line: newlines shown as ⏎, long text ellipsized; bare tool calls shown as calls."""
    text = text_of(message)
    if not text.strip() and isinstance(message.get("tool_calls"), list):
        parts = []
        for c in message["tool_calls"]:
            fn = c.get("function", {}) if isinstance(c, Mapping) else {}
            parts.append(f"{fn.get('name', '?')}({fn.get('arguments', '')})")
        text = "→ " + "; ".join(parts)
    text = text.replace("\r\n", NEWLINE_MARK).replace("\n", NEWLINE_MARK).replace("\r", NEWLINE_MARK)
    text = text.replace("\t", " ")
    return text if len(text) <= width else text[: width - 1] + "\u2026"


SHOWN_CALLS = 8  # a row names this many call ids, then how many more (one message may carry 20,000)


def call_ids(message: Mapping[str, Any]) -> str:
    """The message's call ids, comma-separated; past ``SHOWN_CALLS``, the count of the others."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return ""
    ids = [str(c.get("id", "?")) for c in calls[: SHOWN_CALLS + 1] if isinstance(c, Mapping)]
    if len(calls) <= SHOWN_CALLS:
        return ", ".join(ids)
    return ", ".join(ids[:SHOWN_CALLS]) + f", \u2026 ({len(calls):,} calls)"


def answers(message: Mapping[str, Any]) -> str:
    value = message.get("tool_call_id")
    return "" if value is None else str(value)


def _row(index_before, index_after, message, status, marker, size, width) -> dict:
    return {
        "before": index_before,
        "after": index_after,
        "role": message.get("role", "?") if isinstance(message, Mapping) else "?",
        "size": size,
        "status": status,
        "marker": marker,
        "calls": call_ids(message),
        "answers": answers(message),
        "preview": preview(message, width),
    }


def message_rows(messages: Sequence[Mapping[str, Any]], *, size=message_size, width: int = 72) -> list[dict]:
    """One row per message of a plain history."""
    return [_row(i, i, m, "kept", "", size(m), width) for i, m in enumerate(messages)]


def compaction_rows(result: Any, *, size=message_size, width: int = 72) -> list[dict]:
    """One row per input message plus the inserted summary, with before/after status."""
    return [
        _row(r["before"], r["after"], r["message"], r["status"], r["marker"], size(r["message"]), width)
        for r in result.rows()
    ]


_COLUMNS = ("before", "after", "role", "size", "status", "marker", "calls", "answers", "preview")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def html_table(rows: Iterable[Mapping[str, Any]], columns: Sequence[str] = _COLUMNS, caption: str = "") -> str:
    """A small HTML table, rows coloured by status (or marker); MathJax skips it (``NO_MATH``)."""
    out = [f'<table class="{NO_MATH}" style="border-collapse:collapse;font-family:monospace;font-size:12px">']
    if caption:
        out.append(f"<caption style='text-align:left'>{html.escape(caption)}</caption>")
    out.append("<tr>" + "".join(f"<th style='text-align:left;padding:2px 6px'>{c}</th>" for c in columns) + "</tr>")
    for r in rows:
        colour = STATUS_COLOURS.get(r.get("marker") or "", STATUS_COLOURS.get(r.get("status", ""), ""))
        out.append(
            f"<tr style='background:{colour}'>"
            + "".join(f"<td style='padding:2px 6px'>{html.escape(_cell(r.get(c)))}</td>" for c in columns)
            + "</tr>"
        )
    out.append("</table>")
    return "".join(out)


def compaction_html(result: Any) -> str:
    return f'<p class="{NO_MATH}">{html.escape(result.describe())}</p>' + html_table(compaction_rows(result))
