"""Plots of ledgers, sweeps and tool results (matplotlib).

Every function takes ``ax=None`` (a new figure when omitted), draws on that one
Axes, labels both axes with their unit, and returns the Axes; none calls
``plt.show()``. Numbers in labels and annotations are read from the ledger, never
typed. Replays are counterfactual (``ledger.caveat``), and the ledger plots say so
in a small footnote.

Artists carry a ``gid`` so tests and callers can find them: ``size``,
``no_compaction``, ``budget``, ``compactions``, ``cumulative``, ``size_after``,
``cap`` and one per composition category.

Chinese text (the article's titles, the Chinese session) is drawn with a CJK font
when one is installed (``use_cjk_font``, run once at import): it is appended to
matplotlib's font families as a per-glyph fallback, so Latin text keeps the
default font and a machine without a CJK font draws exactly what it drew before.

This module holds the shared look (units, colours, the footnote, the CJK font) and the
ledger plots; ``context_plots`` draws what a context is made of (composition, tool
results, the cut) and ``sweep_plots`` a sweep. Their names import from here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import matplotlib
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from .labels import label as lab

__all__ = [
    "plot_ledger",
    "plot_cumulative",
    "plot_by_turn",
    "unit_label",
    "ledger_labels",
    "CATEGORIES",
    "CATEGORY_COLOURS",
]

UNIT_LABELS = {  # figure labels: views/labels.py has their Chinese
    "bytes": lab("bytes of compact JSON"),
    "chars": lab("characters of compact JSON"),
    "tokens_approx": lab("tokens, approx."),
    "cl100k": lab("cl100k tokens"),
    "o200k": lab("o200k tokens"),
}
CATEGORIES = ("system", "summary", "user", "assistant", "tool", "other")
CATEGORY_COLOURS = {
    "system": "#7f7f7f",
    "summary": "#1f77b4",
    "user": "#2ca02c",
    "assistant": "#ff7f0e",
    "tool": "#d62728",
    "other": "#9467bd",
}
CAVEAT_MARK = lab("counterfactual replay (see ledger.caveat)")
RATIO_METRICS = ("saving_share", "prefix_reuse_share", "retention")
SIZE_METRICS = ("peak_request", "cumulative_input", "cumulative_input_no_compaction", "saving", "final_size",
                "size", "size_before", "size_after")
THOUSANDS = FuncFormatter(lambda v, _pos: f"{v:,.0f}")
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
             "Microsoft YaHei", "PingFang SC", "SimHei")  # Debian's fonts-noto-cjk first


def use_cjk_font() -> str | None:
    """Add the first installed CJK font to matplotlib's font families as a fallback; return its name (or None).

    Without it, every Chinese character in a figure renders as an empty box. matplotlib
    falls back glyph by glyph along ``font.family``, so Latin text keeps the first family.
    Idempotent.
    """
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    name = next((n for n in CJK_FONTS if n in installed), None)
    families = list(matplotlib.rcParams["font.family"])
    if name and name not in families:
        matplotlib.rcParams["font.family"] = [*families, name]
    return name


CJK_FONT = use_cjk_font()


def plural(n: int, word: str) -> str:
    """``1 compaction``, ``2 compactions``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def unit_label(unit: str) -> str:
    """A unit as an axis label says it: ``bytes`` -> ``bytes of compact JSON``."""
    return UNIT_LABELS.get(unit, unit)


def axes_or_new(ax: Axes | None, size: tuple[float, float] = (8.0, 3.6)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt  # only when the caller gave no Axes

    _fig, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def is_ledger(obj: Any) -> bool:
    return hasattr(obj, "requests") and hasattr(obj, "totals") and hasattr(obj, "compactions")


def _settings_of(ledger: Any) -> dict:
    """What may tell ledgers of one policy apart: budget, keep_recent, unit, and the cut and summary role."""
    out = {"budget": f"budget {ledger.budget:,}", "keep_recent": f"keep {ledger.keep_recent}", "unit": ledger.unit}
    policy = ledger.settings.policy
    for option in ("cut", "summary_role"):
        value = policy.option(option)
        if value is not None:
            out[option] = f"{option.replace('_', ' ')} {value}"
    return out


def ledger_labels(ledgers: Any) -> list[tuple[str, Any]]:
    """``(label, ledger)`` pairs from a ledger, a list or a dict name -> ledger.

    A list is labelled by policy; ledgers of the same policy get the settings
    that tell them apart (budget, keep_recent, cut, ...).
    """
    if is_ledger(ledgers):
        return [(ledgers.policy, ledgers)]
    if isinstance(ledgers, Mapping):
        return [(str(k), v) for k, v in ledgers.items()]
    items = list(ledgers)
    if not items:
        raise ValueError("no ledger to plot")
    labels = []
    for L in items:
        same = [o for o in items if o.policy == L.policy]
        if len(same) == 1:
            labels.append(L.policy)
            continue
        mine = _settings_of(L)
        differ = [k for k in mine if any(_settings_of(o).get(k) != mine[k] for o in same)]
        labels.append(L.policy + (" (" + ", ".join(mine[k] for k in differ) + ")" if differ else ""))
    seen: dict[str, int] = {}
    out = []
    for label, L in zip(labels, items, strict=True):
        seen[label] = seen.get(label, 0) + 1
        out.append((label if labels.count(label) == 1 else f"{label} #{seen[label]}", L))
    return out


def one_unit(units: Sequence[str]) -> str:
    distinct = sorted(set(units))
    if len(distinct) > 1:
        raise ValueError(f"these share one y axis but use different units: {', '.join(distinct)}")
    return distinct[0] if distinct else "bytes"


def budget_lines(ax: Axes, budgets: Sequence[int], unit: str) -> None:
    for b in sorted(set(int(x) for x in budgets if x is not None)):
        ax.axhline(b, color="0.25", linestyle="--", linewidth=1, label=lab(f"budget {b:,} {unit}"), gid="budget")


def caveat_note(ax: Axes) -> None:
    """A footnote under the x label, right-aligned, clear of the data."""
    ax.annotate(CAVEAT_MARK, xy=(1.0, 0.0), xycoords="axes fraction", xytext=(0, -34), textcoords="offset points",
                ha="right", va="top", fontsize=7, style="italic", color="0.45")


def finish(ax: Axes, xlabel: str, ylabel: str, title: str | None, legend: str = "best") -> Axes:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.yaxis.set_major_formatter(THOUSANDS)
    ax.set_ylim(bottom=0)
    if title:
        ax.set_title(title, fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        if legend == "outside":
            ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      borderaxespad=0)
        else:
            ax.legend(handles, labels, fontsize=8, loc=cast(Any, legend))  # one of matplotlib's loc names
    return ax


# ---------------------------------------------------------------- ledger plots


def _spaced(xs: list[int], span: int, limit: int) -> set[int]:
    """Up to ``limit`` of the sorted positions ``xs``, at least ``span / 40`` apart, so labels do not pile up."""
    gap = max(span / 40.0, 1.0)
    chosen: list[int] = []
    for x in xs:
        if len(chosen) >= limit:
            break
        if not chosen or x - chosen[-1] >= gap:
            chosen.append(x)
    return set(chosen)


def plot_ledger(ledgers: Any, *, ax: Axes | None = None, no_compaction: bool = False,
                annotate: bool | None = None, max_annotations: int = 12, caveat: bool = True,
                title: str | None = None) -> Axes:
    """Request size per request, the budget line, one marker per compaction.

    Each compaction is a ``v`` at the size the check saw (``size_before``) with a
    dotted drop to ``size_after``, annotated ``-dropped -> size_after`` (at most
    ``max_annotations``, spaced apart, the legend says how many; by default only
    when one ledger is drawn). Several
    ledgers (list or dict) give one line each, labelled with their compaction
    count; ``no_compaction`` adds the size the context would have without any.
    """
    ax = axes_or_new(ax)
    pairs = ledger_labels(ledgers)
    unit = one_unit([L.unit for _, L in pairs])
    single = len(pairs) == 1
    annotate = single if annotate is None else annotate
    annotated = 0
    top = 0.0
    for k, (label, L) in enumerate(pairs):
        colour = f"C{k}"
        req = L.requests
        hit = req[req["compacted"]]
        n = len(hit)
        count = plural(n, "compaction")
        ax.plot(req["request"], req["size"], color=colour, linewidth=1.3,
                label=lab("request size") if single else lab(f"{label}: {count}"), gid="size")
        top = max(top, float(req["size_before"].max()) if len(req) else 0.0)
        if no_compaction:
            ax.plot(req["request"], req["size_no_compaction"], color=colour, linestyle=":", linewidth=1,
                    alpha=0.7, label=lab("without compaction") if single else lab(f"{label} without compaction"),
                    gid="no_compaction")
            top = max(top, float(req["size_no_compaction"].max()) if len(req) else 0.0)
        if not n:
            continue
        ax.vlines(hit["request"], hit["size_after"], hit["size_before"], colors=colour, linestyles=":",
                  linewidth=1)
        chosen = _spaced(hit["request"].tolist(), len(req), max_annotations - annotated) if annotate else []
        shown = f" ({len(chosen)} labelled: \u2212dropped \u2192 size after)" if len(chosen) < n else ""
        ax.scatter(hit["request"], hit["size_before"], marker="v", s=36, color=colour, edgecolors="black",
                   linewidths=0.5, zorder=3, gid="compactions", label=count + shown if single else "_nolegend_")
        for row in hit.itertuples():
            if row.request in chosen:
                ax.annotate(f"\u2212{int(row.dropped)} \u2192 {int(row.size_after):,}",
                            xy=(row.request, row.size_before), xytext=(0, 6), textcoords="offset points",
                            rotation=90, ha="center", va="bottom", fontsize=7, color=colour)
                annotated += 1
    budgets = [L.budget for _, L in pairs]
    budget_lines(ax, budgets, unit)
    if caveat:
        caveat_note(ax)
    if title is None and single:
        t = pairs[0][1].totals
        title = lab(f"{pairs[0][0]}: {plural(t.n_requests, 'request')}, {plural(t.n_compactions, 'compaction')}, "
                    f"peak {t.peak_request:,} {unit}")
    finish(ax, lab("request (model call)"), lab(f"context sent ({unit_label(unit)})"), title,
           "best" if single else "outside")
    ax.set_ylim(0, max([top] + budgets) * (1.45 if annotated else 1.08) or 1)
    return ax


def plot_cumulative(ledgers: Any, *, ax: Axes | None = None, caveat: bool = True,
                    title: str | None = None) -> Axes:
    """Cumulative input with compaction against without any, the saving annotated.

    The saving (``totals.saving``, ``totals.saving_share``) is in each line's
    label; a single ledger also gets an arrow between the two curves at the end.
    """
    ax = axes_or_new(ax)
    pairs = ledger_labels(ledgers)
    unit = one_unit([L.unit for _, L in pairs])
    single = len(pairs) == 1
    baselines: list[tuple[tuple, str]] = []
    for k, (label, L) in enumerate(pairs):
        req = L.requests
        t = L.totals
        saving = f"saving {t.saving:,} {unit}, {t.saving_share:.0%}"
        ax.plot(req["request"], req["cumulative_input"], color=f"C{k}", linewidth=1.5,
                label=lab(f"with compaction ({saving})") if single else lab(f"{label} ({saving})"), gid="cumulative")
        base = tuple(req["cumulative_no_compaction"].tolist())
        if base not in [b for b, _ in baselines]:
            baselines.append((base, label))
            ax.plot(req["request"], req["cumulative_no_compaction"], color="0.45", linestyle="--", linewidth=1.2,
                    label=lab("without compaction") if single else lab(f"without compaction ({label})"),
                    gid="no_compaction")
        if single and len(req):
            x = int(req["request"].iloc[-1])
            lo, hi = int(req["cumulative_input"].iloc[-1]), int(req["cumulative_no_compaction"].iloc[-1])
            if hi > lo:
                ax.annotate("", xy=(x, lo), xytext=(x, hi),
                            arrowprops={"arrowstyle": "<->", "color": "C2", "linewidth": 1.2})
                ax.annotate(lab(f"{t.saving:,} {unit}\n({t.saving_share:.0%}) saved"), xy=(x, (lo + hi) / 2),
                            xytext=(-6, 0), textcoords="offset points", ha="right", va="center", fontsize=8,
                            color="C2")
    if caveat:
        caveat_note(ax)
    if title is None and single:
        title = f"{pairs[0][0]}: cumulative input over {pairs[0][1].totals.n_requests} requests"
    return finish(ax, "request (model call)", f"cumulative input ({unit_label(unit)})", title)


@dataclass(frozen=True)
class _TurnSeries:
    label: str
    frame: pd.DataFrame
    budget: int | None
    unit: str
    replayed: bool  # from a ledger (counterfactual), not a given table


def _turn_series(data: Any, budget: int | None, unit: str | None) -> list[_TurnSeries]:
    if isinstance(data, pd.DataFrame):
        missing = {"turn", "size", "size_after"} - set(data.columns)
        if missing:
            raise ValueError(f"a turn table needs the columns turn, size, size_after (missing {sorted(missing)})")
        frame = data.copy()
        if "compacted" not in frame:
            frame["compacted"] = frame["size_after"] < frame["size"]
        return [_TurnSeries(str(data.attrs.get("label", "table")), frame,
                            budget if budget is not None else data.attrs.get("budget"),
                            unit or data.attrs.get("unit", "bytes"), False)]
    if is_ledger(data):
        return [_TurnSeries(data.policy, data.by_turn(), data.budget, data.unit, True)]
    if isinstance(data, Mapping):
        return [_TurnSeries(str(name), s.frame, s.budget, s.unit, s.replayed)
                for name, item in data.items() for s in _turn_series(item, budget, unit)]
    items = list(data)
    if items and all(is_ledger(x) for x in items):
        return [_TurnSeries(label, L.by_turn(), L.budget, L.unit, True) for label, L in ledger_labels(items)]
    return [_TurnSeries(f"{s.label} #{k + 1}", s.frame, s.budget, s.unit, s.replayed)
            for k, item in enumerate(items) for s in _turn_series(item, budget, unit)]


def _turn_bars(ax: Axes, s: _TurnSeries, k: int, n: int, annotate: bool) -> None:
    """One series of ``plot_by_turn``: its bars (compactions hatched), ``size_after`` dots, the labels."""
    width = 0.8 / n
    single = n == 1
    frame = s.frame
    offset = (k - (n - 1) / 2) * width
    x = frame["turn"].astype(float) + offset
    compacted = frame["compacted"].astype(bool).tolist()
    base = "C0" if single else f"C{k}"
    colours = ["C3" if (single and c) else base for c in compacted]
    bars = ax.bar(x, frame["size"], width=width * 0.95, color=colours, alpha=0.8,
                  label=lab("size (largest in the turn)") if single else s.label, gid="size")
    for patch, c in zip(bars, compacted, strict=True):
        if c:
            patch.set_hatch("//")
            patch.set_edgecolor("0.15")
    ax.plot(x, frame["size_after"], linestyle="none", marker="_", markersize=max(4.0, 24.0 / n),
            markeredgewidth=2, color="0.1", label=lab("size after the turn") if k == 0 else "_nolegend_",
            gid="size_after")
    if annotate:
        for xi, row in zip(x, frame.itertuples(), strict=True):
            if bool(row.compacted):
                ax.annotate(f"\u2192 {int(row.size_after):,}", xy=(xi, row.size), xytext=(0, 3),
                            textcoords="offset points", ha="center", fontsize=7)


def _turn_legend(ax: Axes, items: list[_TurnSeries]) -> None:
    """The legend: one patch per series, the lines drawn, and the hatched compaction patch."""
    single = len(items) == 1
    # proxies: a container's legend entry copies its first bar, which may be a hatched compaction
    handles: list[Artist] = []
    labels: list[str] = []
    for k, s in enumerate(items):
        handles.append(Patch(facecolor="C0" if single else f"C{k}", alpha=0.8))
        labels.append("size (largest in the turn)" if single else s.label)
    for line in ax.lines:
        label = str(line.get_label())
        if not label.startswith("_"):
            handles.append(line)
            labels.append(label)
    handles.append(Patch(facecolor="C3" if single else "white", edgecolor="0.15", hatch="//"))
    labels.append("compaction in this turn")
    ax.legend(handles, labels, fontsize=8, loc="best")


def plot_by_turn(data: Any, *, ax: Axes | None = None, budget: int | None = None, unit: str | None = None,
                 annotate: bool = True, title: str | None = None) -> Axes:
    """The article's turn table as a figure: size per turn as bars, compaction turns highlighted.

    ``data`` is a ledger (``ledger.by_turn()``), a DataFrame with columns turn,
    size, size_after and optionally compacted (e.g. the article's illustrative
    figures; ``budget``, ``unit`` and a ``label`` from the arguments or
    ``frame.attrs``), or a list/dict of either: grouped bars, one series each.
    ``size_after`` is drawn as a line with dots; compacted bars are hatched and
    labelled ``-> size_after``. Draw two tables side by side by passing two Axes.
    """
    ax = axes_or_new(ax)
    items = _turn_series(data, budget, unit)
    if not items:
        raise ValueError("no turn table to plot")
    unit = one_unit([s.unit for s in items])
    for k, s in enumerate(items):
        _turn_bars(ax, s, k, len(items), annotate)
    budget_lines(ax, [s.budget for s in items if s.budget is not None], unit)
    turns = sorted(set().union(*[set(s.frame["turn"].tolist()) for s in items]))
    if 0 < len(turns) <= 30:
        ax.set_xticks(turns)
    if any(s.replayed for s in items):
        caveat_note(ax)
    if title is None and len(items) == 1:
        title = f"{items[0].label}: size per turn"
    finish(ax, "turn (from one user message to the next)", f"context size ({unit_label(unit)})", title)
    tops = [float(s.frame["size"].max()) for s in items if len(s.frame)] + [float(s.budget) for s in items if s.budget]
    ax.set_ylim(0, (max(tops) if tops else 1.0) * 1.12)
    _turn_legend(ax, items)
    return ax
