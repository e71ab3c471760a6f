"""Plots of what a context is made of: its composition by role, each tool result against its cap, and one cut.

Like every plot here: ``ax=None`` makes a new figure, both axes say their unit, the
Axes is returned (``views.plots`` has the shared look).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch, Polygon, Rectangle

from ..context.clamp import clamp_report
from ..context.compaction import CompactionResult
from ..context.messages import text_of
from ..context.sizing import UNITS, Meter
from ..engine.ledger import replay
from ..policies import is_summary_message
from .labels import label as lab
from .plots import (
    CATEGORIES,
    CATEGORY_COLOURS,
    axes_or_new,
    budget_lines,
    caveat_note,
    finish,
    is_ledger,
    plural,
    unit_label,
)

__all__ = ["composition_frame", "plot_composition", "plot_tool_sizes", "plot_cut"]


# ---------------------------------------------------------------- composition


def _category(message: Any, inserted: set[int]) -> str:
    role = message.get("role") if isinstance(message, Mapping) else None
    if role == "system":
        return "summary" if (is_summary_message(message) or id(message) in inserted) else "system"
    if is_summary_message(message):
        return "summary"  # summary_role='user' or 'assistant'
    return role if role in ("user", "assistant", "tool") else "other"


def _meter(meters: dict | None, unit: str) -> Meter:
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(UNITS)}")
    if meters is None:
        return Meter(unit)
    if unit not in meters:
        meters[unit] = Meter(unit)
    return meters[unit]


def composition_frame(source: Any, *, unit: str | None = None, per_request: bool = True,
                      meters: dict | None = None) -> pd.DataFrame:
    """What each request is made of: one row per request, one size column per category.

    For a ledger the contexts come from ``Ledger.contexts()``, so the row totals
    equal ``ledger.requests["size"]`` (in the ledger's unit). For a message list
    the requests are those the transcript makes with no compaction (one per
    assistant message; the whole list when there is none); ``per_request=False``
    gives one row for the whole list (request 0). Columns: request, the
    categories of ``CATEGORIES`` (system, summary, user, assistant, tool, other), total.
    """
    ledger = source if is_ledger(source) else None
    unit = unit or (ledger.unit if ledger is not None else "bytes")
    size = _meter(meters, unit)
    if ledger is None and per_request:
        ledger = replay(list(source), budget=10**18, profiles=(), retention=False)
    if ledger is None:
        contexts, inserted = [(0, list(source))], set()
    else:
        inserted = {id(m) for e in ledger.compactions for m in getattr(e, "inserted", ())}
        contexts = list(zip(ledger.requests["request"], ledger.contexts(), strict=False))
        if not contexts:
            contexts = [(0, list(ledger.messages))]
    rows = []
    for request, ctx in contexts:
        totals = dict.fromkeys(CATEGORIES, 0)
        for m in ctx:
            totals[_category(m, inserted)] += size(m)
        rows.append({"request": int(request), **totals})
    frame = pd.DataFrame(rows, columns=["request", *CATEGORIES])
    frame["total"] = frame[list(CATEGORIES)].sum(axis=1)
    return frame


def plot_composition(source: Any, *, ax: Axes | None = None, unit: str | None = None, per_request: bool = True,
                     meters: dict | None = None, caveat: bool = True, title: str | None = None) -> Axes:
    """Stacked bars: how much of each request is system, summary, user, assistant, tool.

    ``source`` is a ledger (one bar per replayed request, the budget drawn) or a
    message list (one bar per request without compaction, or with
    ``per_request=False`` a single bar for the list). See ``composition_frame``.
    """
    ax = axes_or_new(ax)
    ledger = source if is_ledger(source) else None
    frame = composition_frame(source, unit=unit, per_request=per_request, meters=meters)
    unit = unit or (ledger.unit if ledger is not None else "bytes")
    x = frame["request"].to_numpy()
    many = len(frame) > 60
    bottom = pd.Series(0, index=frame.index)
    for cat in CATEGORIES:
        values = frame[cat]
        if not values.any():
            continue
        ax.bar(x, values, bottom=bottom, width=1.0 if many else 0.8, color=CATEGORY_COLOURS[cat],
               linewidth=0, label=cat, gid=cat)
        bottom = bottom + values
    if ledger is not None:
        if unit == ledger.unit:
            budget_lines(ax, [ledger.budget], unit)
        if caveat:
            caveat_note(ax)
    if len(frame) == 1 and int(frame["request"].iloc[0]) == 0:
        ax.set_xticks([0], [f"all {len(ledger.messages if ledger else source)} messages"])
        xlabel = "message list"
    else:
        xlabel = "request (model call)"
    finish(ax, xlabel, f"request size ({unit_label(unit)})", title, "outside")
    legend = ax.get_legend()
    if legend is not None:  # list the stack top-down, as it is drawn
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[::-1], labels[::-1], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0)
    return ax


# ---------------------------------------------------------------- tool results


def plot_tool_sizes(messages: Sequence[Mapping[str, Any]], cap: int = 20_000, *, ax: Axes | None = None,
                    annotate: bool = True, max_annotations: int = 8, title: str | None = None) -> Axes:
    """Each tool result's size against the clamp cap; the part the cap would cut shaded.

    Sizes are UTF-8 bytes of the result text (what ``clamp`` measures); the cut
    is ``clamp_report(text, cap).omitted_bytes``, so the character-boundary
    back-off is counted exactly. Recorded logs may be truncated already by the
    agent that made them.
    """
    ax = axes_or_new(ax)
    reports = [clamp_report(text_of(m), cap) for m in messages
               if isinstance(m, Mapping) and m.get("role") == "tool"]
    ax.axhline(cap, color="0.25", linestyle="--", linewidth=1, label=lab(f"cap {cap:,} bytes (max_output)"), gid="cap")
    if not reports:
        ax.text(0.5, 0.5, lab("no tool results"), transform=ax.transAxes, ha="center", va="center")
        return finish(ax, "tool result (in transcript order)", "tool result text (UTF-8 bytes)", title)
    x = list(range(1, len(reports) + 1))
    kept = [r.kept_bytes for r in reports]
    cut = [r.omitted_bytes for r in reports]
    ax.bar(x, kept, width=0.85, color="C0", linewidth=0, label=lab("kept"), gid="kept")
    if any(cut):
        ax.bar(x, cut, bottom=kept, width=0.85, color="C3", alpha=0.45, hatch="//", edgecolor="C3",
               linewidth=0, label=lab("cut by the cap"), gid="cut")
    over = [(xi, r) for xi, r in zip(x, reports, strict=True) if r.truncated]
    total = sum(r.input_bytes for r in reports)
    lost = sum(cut)
    if title is None:
        title = (f"{len(over)} of {len(reports)} tool results over the {cap:,}-byte cap; "
                 f"{lost:,} of {total:,} bytes cut ({lost / total if total else 0:.1%})")
    if annotate:
        largest = sorted(over, key=lambda p: -p[1].omitted_bytes)[:max_annotations]
        for xi, r in largest:
            ax.annotate(f"\u2212{r.omitted_bytes:,}", xy=(xi, r.input_bytes), xytext=(0, 3),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7, color="C3",
                        rotation=90 if len(reports) > 30 else 0)
    finish(ax, "tool result (in transcript order)", "tool result text (UTF-8 bytes)", title)
    ax.set_ylim(0, max([cap] + [r.input_bytes for r in reports]) * 1.18)
    return ax


# ---------------------------------------------------------------- the cut


_ROLE_LETTER = {"system": "S", "summary": "Σ", "user": "U", "assistant": "A", "tool": "T", "other": "?"}


def _cut_bands(ax: Axes, cut: int, n: int, top: float, bottom: float, height: float) -> None:
    """The bands from where the dropped and the kept messages were to where they went, and the note's arrow."""
    link: dict[str, Any] = {"facecolor": "0.6", "alpha": 0.18, "linewidth": 0}
    ax.add_patch(Polygon([(1, top - 0.25), (cut, top - 0.25), (2, bottom + height + 0.05),
                          (1, bottom + height + 0.05)], **link, gid="dropped_band"))
    if cut < n:
        ax.add_patch(Polygon([(cut, top - 0.25), (n, top - 0.25), (2 + n - cut, bottom + height + 0.05),
                              (2, bottom + height + 0.05)], facecolor="C0", alpha=0.12, linewidth=0,
                             gid="kept_band"))
    ax.text((1 + cut) / 2, top - 0.32, lab(f"dropped: {plural(cut - 1, 'message')}"),
            ha="center", va="top", fontsize=8, color="0.3")
    ax.annotate(lab("note at index 1"), xy=(1.5, bottom - 0.25), xytext=(1.5, bottom - 0.6), ha="center", va="top",
                fontsize=8, color=CATEGORY_COLOURS["summary"],
                arrowprops=dict(arrowstyle="->", color=CATEGORY_COLOURS["summary"], linewidth=0.8))


def _cut_marks(ax: Axes, result: CompactionResult, cut: int | None, n: int, top: float, height: float) -> None:
    """The cut used (and the simple cut, where it differs) as vertical lines above the input row."""
    if cut is None:
        return
    naive = result.naive_cut
    marks = []
    if naive is not None and naive != cut:
        marks.append((naive, f"simple cut {naive}", "0.25", "--", "naive_cut"))
    marks.append((cut, f"cut {cut}" + (" (past the end)" if cut == n else ""), "C3", "-", "cut"))
    for k, (x, label, colour, style, gid) in enumerate(marks):
        ax.plot([x, x], [top - 0.15, top + height + 0.55], color=colour, linestyle=style, linewidth=1.6, gid=gid)
        right = x > 0.75 * n  # near the right edge the label goes to the left of its line
        ax.text(x - 0.15 if right else x + 0.15, top + height + 0.5 - 0.28 * k, label, ha="right" if right else "left",
                va="top", fontsize=8, color=colour)


def plot_cut(result: CompactionResult, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """The message array before and after one compaction: a box per message, coloured by role.

    ``result`` is a ``CompactionResult`` (from ``compact`` or ``compact_at``). The top
    row is the input: the messages the compaction drops are faded, the simple cut
    (``len - keep_recent``) and the cut used are marked. The bottom row is the
    result: the system message, the note at index 1, then the kept messages, each
    joined by a band to where it came from. Nothing compacted: the bottom row
    repeats the input and the title gives the reason. Indices are printed under
    the boxes (every fifth one past 40 messages).
    """
    ax = axes_or_new(ax, (8.6, 3.4))  # at most about 9 inches: legible at the course site's width
    source = list(result.source or result.messages)
    after = list(result.messages)
    n, cut = len(source), result.cut
    compacted = cut is not None
    height, top, bottom = 0.8, 2.0, 0.0
    inserted = {id(after[1])} if compacted and len(after) > 1 else set()

    def box(x: float, y: float, message: Any, *, faded: bool, gid: str) -> None:
        cat = _category(message, inserted)
        ax.add_patch(Rectangle((x + 0.06, y), 0.88, height, facecolor=CATEGORY_COLOURS[cat],
                               alpha=0.3 if faded else 0.95, edgecolor="white", linewidth=0.6, gid=gid))
        if n <= 60:
            ax.text(x + 0.5, y + height / 2, _ROLE_LETTER[cat], ha="center", va="center", fontsize=7,
                    color="white" if not faded else "0.35")

    def index_label(x: float, y: float, i: int) -> None:
        if n <= 40 or i % 5 == 0:
            ax.text(x + 0.5, y - 0.08, str(i), ha="center", va="top", fontsize=6, color="0.35")

    for i, m in enumerate(source):
        box(i, top, m, faded=cut is not None and 0 < i < cut, gid="before")
        index_label(i, top, i)
    for j, m in enumerate(after):
        box(j, bottom, m, faded=False, gid="summary" if compacted and j == 1 else "after")
        index_label(j, bottom, j)
    if cut is not None:  # bands from where each part was to where it went
        _cut_bands(ax, cut, n, top, bottom, height)
    _cut_marks(ax, result, cut, n, top, height)
    handles = [Patch(facecolor=CATEGORY_COLOURS[c], label=c) for c in CATEGORIES
               if any(_category(m, inserted) == c for m in (*source, *after))]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_xlim(-0.5, max(n, len(after)) + 0.5)
    ax.set_ylim(bottom - 1.0, top + height + 0.7)
    ax.set_yticks([bottom + height / 2, top + height / 2], [f"after\n{len(after)} messages", f"before\n{n} messages"])
    ax.set_xticks([])
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0)
    if title is None:
        title = (f"keep_recent={result.keep_recent}: {cut - 1} dropped, note at index 1, {n - cut} kept"
                 if cut is not None else f"no compaction: {result.reason}")
    ax.set_title(title, fontsize=10)
    return ax
