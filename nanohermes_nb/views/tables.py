"""Message tables: one row per message, as a styled pandas table or plain text.

The rows come from ``display.message_rows`` / ``display.compaction_rows`` (the same
rows the CLI prints), so the notebook and the terminal never disagree. This module
only turns them into a DataFrame, adds an optional size column in another unit,
and styles it: row colours by status, a border at the cut and at the naive cut,
sizes drawn as bars.

It also holds the one plain-text table renderer (``text_table``: the CLI's ledger,
check, compact and sweep tables and the notebooks' ``text=True`` tables), whose every
cell passes through ``transcripts.base.printable`` (re-exported here: the one escape for
text bound for a terminal).
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..context import display
from ..context.sizing import UNITS, measure_each
from ..engine.frames import frame as text_frame
from ..transcripts.base import printable

if TYPE_CHECKING:  # pandas is imported where a frame is built, so the CLI's text tables start fast
    import pandas as pd

__all__ = [
    "message_frame",
    "compaction_frame",
    "message_table",
    "compaction_table",
    "table_text",
    "style_frame",
    "MESSAGE_COLUMNS",
    "COMPACTION_COLUMNS",
    "MARKER_COLOURS",
    "text_table",
    "printable",
    "terminal_width",
    "DEFAULT_WIDTH",
]

MESSAGE_COLUMNS = ("index", "role", "size", "calls", "answers", "preview")
COMPACTION_COLUMNS = ("before", "after", "role", "size", "status", "marker", "calls", "answers", "preview")
_INDEX_COLUMNS = ("index", "before", "after")
_NUMERIC = frozenset(_INDEX_COLUMNS) | {"size"}
_BAR_COLOUR = "#b3cde3"
_MARKER_BORDERS = {"cut": "2px solid #c77c02", "naive cut": "2px dashed #8e44ad", "rule cut": "2px dotted #0c5460"}
# display's colours, plus the rule's cut the cut explorer marks beside a hand-placed one
MARKER_COLOURS = {**display.STATUS_COLOURS, "rule cut": "#d1ecf1"}


def _unit_column(unit: str | None) -> str | None:
    """The extra size column's name, or None when the unit is bytes (already shown)."""
    if unit is None or unit == "bytes":
        return None
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(UNITS)}")
    return f"size_{unit}"


def _frame(rows: list[dict], columns: Sequence[str], messages: Sequence[Mapping[str, Any]],
           unit: str | None) -> pd.DataFrame:
    frame = text_frame(rows, list(columns))
    for c in _INDEX_COLUMNS:
        if c in frame:
            frame[c] = frame[c].astype("Int64")  # the summary has no 'before', dropped rows no 'after'
    extra = _unit_column(unit)
    if extra is not None and unit is not None:
        frame.insert(frame.columns.get_loc("size") + 1, extra, measure_each(messages, unit))
    return frame


def message_frame(messages: Sequence[Mapping[str, Any]], *, unit: str | None = None,
                  width: int = 72) -> pd.DataFrame:
    """One row per message: index, role, size in bytes (and ``unit``), calls, answers, preview."""
    rows = display.message_rows(messages, width=width)
    for r in rows:
        r["index"] = r["before"]
    return _frame(rows, MESSAGE_COLUMNS, messages, unit)


def compaction_frame(result: Any, *, unit: str | None = None, width: int = 72,
                     window: int | None = None) -> pd.DataFrame:
    """The before/after rows of a ``CompactionResult``: every input message plus the summary.

    ``status`` is kept, dropped or summary; ``marker`` flags the cut (first kept
    message) and the naive cut (``len - keep_recent``) when the rule moved it.
    ``window`` keeps only the system message, the summary and the rows within
    ``window`` of either cut (a long transcript's table stays readable).
    """
    raw = result.rows()
    rows = display.compaction_rows(result, width=width)
    if window is not None:
        keep = _near_cuts(raw, result, window)
        raw = [r for k, r in enumerate(raw) if k in keep]
        rows = [r for k, r in enumerate(rows) if k in keep]
    return _frame(rows, COMPACTION_COLUMNS, [r["message"] for r in raw], unit)


def _near_cuts(raw: list[dict], result: Any, window: int) -> set[int]:
    cuts = [c for c in (result.cut, result.naive_cut, result.adjusted_cut) if c is not None]
    lo, hi = min(cuts) - window, max(cuts) + window
    return {k for k, r in enumerate(raw)
            if r["before"] is None or r["before"] == 0 or lo <= r["before"] <= hi}


# ---------------------------------------------------------------- styling


def _size_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c == "size" or c.startswith("size_")]


def _row_styles(row: pd.Series, maxima: Mapping[str, float]) -> list[str]:
    """CSS for one row: status colour, a border above the cut rows, size bars over the row colour."""
    colour = MARKER_COLOURS.get(row.get("status", "kept"), "transparent")
    marker = row.get("marker") or ""
    border = f"; border-top: {_MARKER_BORDERS[marker]}" if marker in _MARKER_BORDERS else ""
    styles = []
    for col in row.index:
        if col in maxima:
            share = 100.0 * float(row[col]) / maxima[col] if maxima[col] else 0.0
            s = (f"background: linear-gradient(90deg, {_BAR_COLOUR} {share:.1f}%, {colour} {share:.1f}%); "
                 "width: 7em; text-align: right")
        elif col == "marker" and marker:
            s = f"background-color: {MARKER_COLOURS.get(marker, colour)}; font-weight: bold"
        else:
            s = f"background-color: {colour}"
            if col == "status" and row.get("status") == "summary":
                s += "; font-weight: bold"
        styles.append(s + border)
    return styles


def style_frame(frame: pd.DataFrame, caption: str = "") -> Any:
    """A Styler for a message frame: status colours, cut borders, size bars, no index.

    Rows are coloured by ``status`` (``display.STATUS_COLOURS``); the cut row has
    a solid top border, the naive cut a dashed one, and their ``marker`` cell
    their own colour. Size cells carry a bar proportional to the column's largest.
    The table carries ``display.NO_MATH`` so MathJax leaves message text alone.
    """
    sizes = _size_columns(frame)
    maxima = {c: float(frame[c].max()) if len(frame) else 0.0 for c in sizes}
    styler = frame.style.hide(axis="index").apply(_row_styles, axis=1, maxima=maxima)
    from pandas.api.types import is_numeric_dtype

    text_cols = [c for c in frame.columns if c not in sizes and not is_numeric_dtype(frame[c])]
    if text_cols:  # message text is data, not markup: '<MASKED>' must show, '<b>' must not bold
        styler = styler.format(escape="html", subset=text_cols)
    styler = styler.format("{:,}", subset=sizes)
    index_cols = [c for c in _INDEX_COLUMNS if c in frame]
    if index_cols:
        styler = styler.format(na_rep="\u2013", subset=index_cols)
    styler = styler.set_properties(subset=["preview"], **{"font-family": "monospace", "text-align": "left",
                                                           "white-space": "pre"})
    styler = styler.set_table_styles([
        {"selector": "", "props": "border-collapse: collapse; font-size: 12px;"},
        {"selector": "th", "props": "text-align: left; padding: 2px 6px;"},
        {"selector": "td", "props": "padding: 2px 6px;"},
        {"selector": "caption", "props": "text-align: left; caption-side: top; padding-bottom: 4px;"},
    ])
    if caption:
        styler = styler.set_caption(html.escape(caption))
    # message text is data: "$5 and $10" must not be typeset as math by MathJax in notebooks
    # and nbconvert's HTML (tex2jax_ignore for MathJax 2, mathjax_ignore for MathJax 3)
    return styler.set_table_attributes(f'class="{display.NO_MATH}"')


# ---------------------------------------------------------------- plain text

DEFAULT_WIDTH = 100  # columns of a text table when COLUMNS does not say
_MIN_SHRUNK = 12  # a shrunk column keeps at least this many characters (or its header)

def terminal_width(environ: Mapping[str, str] | None = None) -> int:
    """The width tables fit: ``COLUMNS`` when it is a sensible number, else ``DEFAULT_WIDTH`` (100).

    Read from the environment only (not the terminal), so output is the same in a
    pipe, a test and a window.
    """
    text = (os.environ if environ is None else environ).get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and 20 <= int(text) <= 10_000 else DEFAULT_WIDTH


def _cell(value: Any, missing: str) -> str:
    """A table cell: integers with thousands separators, ``missing`` for missing values and False."""
    if value is None or value is False or _is_na(value):
        return missing
    if value is True:
        return "yes"
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        value = value.item()
    if isinstance(value, bool):
        return "yes" if value else missing
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return missing if math.isnan(value) else f"{value:,.4g}"
    text = printable(value)
    return missing if text in ("<NA>", "nan", "NaT") else text


def _numeric(cells: Sequence[str], missing: str) -> bool:
    return all(c == missing or c.replace(",", "").replace(".", "").replace("-", "").replace("%", "").isdigit()
               for c in cells)


def _fit_widths(widths: dict[str, int], headers: Mapping[str, str], shown: list[str], width: int,
                shrink: Sequence[str], keep: Sequence[str] = ()) -> None:
    """Cut the ``shrink`` columns (in order, down to ``_MIN_SHRUNK``), then drop columns from the right,
    the ``keep`` columns last (the last of them first)."""
    def total() -> int:
        return sum(widths[c] for c in shown) + max(len(shown) - 1, 0)

    for c in shrink:
        if c in widths and total() > width:
            widths[c] = max(_MIN_SHRUNK, len(headers.get(c, c)), widths[c] - (total() - width))
    while len(shown) > 1 and total() > width:
        others = [k for k, c in enumerate(shown[1:], 1) if c not in keep]
        kept = sorted(range(1, len(shown)), key=lambda k: keep.index(shown[k]) if shown[k] in keep else -1)
        shown.pop(others[-1] if others else kept[-1])


def text_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *,
               headers: Mapping[str, str] | None = None, width: int | None = None,
               shrink: str | Sequence[str] = (), rule: bool = False, missing: str = "",
               keep: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """Rows as fixed-width text lines, and the columns left out to fit ``width``.

    The one plain-text table of the package. Columns are taken in order while
    they fit ``width`` (None: every column, however wide); the ``shrink`` columns
    are cut with an ellipsis first, then columns are left out from the right, the
    ``keep`` ones last (in the reverse of their order there), the first never.
    Numbers are right-aligned, text left-aligned,
    one space between columns; ``rule`` draws dashes under the header. Every cell
    passes through ``printable``, and a cell is never longer than its column.
    """
    headers = dict(headers or {})
    shrink = (shrink,) if isinstance(shrink, str) else tuple(shrink)
    cells = {c: [_cell(r.get(c), missing) for r in rows] for c in columns}
    widths = {c: max([len(headers.get(c, c))] + [len(x) for x in cells[c]]) for c in columns}
    shown = list(columns)
    if width is not None:
        _fit_widths(widths, headers, shown, width, shrink, keep)
    right = {c: _numeric(cells[c], missing) for c in shown}

    def fit(text: str, c: str) -> str:
        if len(text) > widths[c]:
            text = text[: widths[c] - 1] + "\u2026"
        return text.rjust(widths[c]) if right[c] else text.ljust(widths[c])

    lines = [" ".join(fit(headers.get(c, c), c) for c in shown).rstrip()]
    if rule:
        lines.append(" ".join("-" * widths[c] for c in shown))
    lines += [" ".join(fit(cells[c][i], c) for c in shown).rstrip() for i in range(len(rows))]
    return lines, [c for c in columns if c not in shown]


def table_text(frame: pd.DataFrame, *, width: int | None = None) -> str:
    """The frame as a fixed-width text table, a rule under the header (``width``: fit, shrinking text)."""
    numeric = [c for c in frame.columns if c == "index" or c in _NUMERIC or c.startswith("size_")]
    rows = [{c: (None if _missing(v) else int(v)) if c in numeric else v for c, v in record.items()}
            for record in frame.to_dict("records")]
    lines, _ = text_table(rows, list(frame.columns), width=width, shrink=("preview", "calls", "answers"),
                          rule=True, missing="\u2013")
    return "\n".join(lines)


def _missing(value: Any) -> bool:
    return value is None or _is_na(value) or (isinstance(value, float) and value != value)


def _is_na(value: Any) -> bool:
    """pandas' missing value, recognised without importing pandas."""
    return type(value).__name__ == "NAType"


# ---------------------------------------------------------------- the public tables


def _output(frame: pd.DataFrame, caption: str, text: bool, as_frame: bool) -> Any:
    if text and as_frame:
        raise ValueError("choose one of text=True or as_frame=True")
    if as_frame:
        return frame
    if text:
        return (caption + "\n" if caption else "") + table_text(frame)
    return style_frame(frame, caption)


def message_table(messages: Sequence[Mapping[str, Any]], *, unit: str | None = None, width: int = 72,
                  text: bool = False, as_frame: bool = False) -> Any:
    """One row per message, as a Styler (HTML in Jupyter; ``.data`` is the DataFrame).

    ``unit`` adds a size column in that unit next to the bytes; ``text=True``
    returns the plain-text table, ``as_frame=True`` the DataFrame.
    """
    frame = message_frame(messages, unit=unit, width=width)
    total = int(frame["size"].sum()) if len(frame) else 0
    caption = f"{len(frame)} messages, {total:,} bytes of compact JSON"
    extra = _unit_column(unit)
    if extra is not None:
        caption += f" ({int(frame[extra].sum()):,} {unit})"
    return _output(frame, caption, text, as_frame)


def compaction_table(result: Any, *, unit: str | None = None, width: int = 72, window: int | None = None,
                     text: bool = False, as_frame: bool = False) -> Any:
    """Before/after view of one compaction: input rows plus the inserted summary.

    Rows are coloured kept / dropped / summary; the cut row has a solid top
    border, the naive cut (when the forward rule moved it) a dashed one. The
    caption is ``result.describe()``. ``window`` shows only the rows near the cuts.
    """
    frame = compaction_frame(result, unit=unit, width=width, window=window)
    caption = result.describe()
    if window is not None:
        total = len(result.source) + (1 if result.compacted else 0)
        caption += f" [showing {len(frame)} of {total} rows: the start and {window} around the cut]"
    return _output(frame, caption, text, as_frame)
