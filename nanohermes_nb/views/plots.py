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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch, Polygon, Rectangle
from matplotlib.ticker import FuncFormatter

from ..context.clamp import clamp_report
from ..context.compaction import is_summary_message
from ..context.messages import text_of
from ..context.sizing import UNITS, Meter
from ..engine.ledger import replay

__all__ = [
    "plot_ledger",
    "plot_cumulative",
    "plot_by_turn",
    "plot_composition",
    "plot_sweep",
    "plot_tool_sizes",
    "plot_cut",
    "composition_frame",
    "unit_label",
    "ledger_labels",
    "CATEGORIES",
    "CATEGORY_COLOURS",
]

UNIT_LABELS = {
    "bytes": "bytes of compact JSON",
    "chars": "characters of compact JSON",
    "tokens_approx": "tokens, approx.",
    "cl100k": "cl100k tokens",
    "o200k": "o200k tokens",
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
CAVEAT_MARK = "counterfactual replay (see ledger.caveat)"
RATIO_METRICS = ("saving_share", "prefix_reuse_share", "retention")
SIZE_METRICS = ("peak_request", "cumulative_input", "cumulative_input_no_compaction", "saving", "final_size",
                "size", "size_before", "size_after")
_THOUSANDS = FuncFormatter(lambda v, _pos: f"{v:,.0f}")
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


def _axes(ax: Axes | None, size: tuple[float, float] = (8.0, 3.6)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt  # only when the caller gave no Axes

    _fig, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def _is_ledger(obj: Any) -> bool:
    return hasattr(obj, "requests") and hasattr(obj, "totals") and hasattr(obj, "compactions")


def _settings_of(ledger: Any) -> dict:
    s = ledger.settings
    out = {"budget": f"budget {s.get('budget'):,}", "keep_recent": f"keep {s.get('keep_recent')}",
           "unit": s.get("unit", "bytes")}
    pol = s.get("policy_object")
    for attr in ("cut", "summary_role"):
        if hasattr(pol, attr):
            out[attr] = f"{attr.replace('_', ' ')} {getattr(pol, attr)}"
    return out


def ledger_labels(ledgers: Any) -> list[tuple[str, Any]]:
    """``(label, ledger)`` pairs from a ledger, a list or a dict name -> ledger.

    A list is labelled by policy; ledgers of the same policy get the settings
    that tell them apart (budget, keep_recent, cut, ...).
    """
    if _is_ledger(ledgers):
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


def _one_unit(units: Sequence[str]) -> str:
    distinct = sorted(set(units))
    if len(distinct) > 1:
        raise ValueError(f"these share one y axis but use different units: {', '.join(distinct)}")
    return distinct[0] if distinct else "bytes"


def _budget_lines(ax: Axes, budgets: Sequence[int], unit: str) -> None:
    for b in sorted(set(int(x) for x in budgets if x is not None)):
        ax.axhline(b, color="0.25", linestyle="--", linewidth=1, label=f"budget {b:,} {unit}", gid="budget")


def _caveat(ax: Axes) -> None:
    """A footnote under the x label, right-aligned, clear of the data."""
    ax.annotate(CAVEAT_MARK, xy=(1.0, 0.0), xycoords="axes fraction", xytext=(0, -34), textcoords="offset points",
                ha="right", va="top", fontsize=7, style="italic", color="0.45")


def _finish(ax: Axes, xlabel: str, ylabel: str, title: str | None, legend: str = "best") -> Axes:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.yaxis.set_major_formatter(_THOUSANDS)
    ax.set_ylim(bottom=0)
    if title:
        ax.set_title(title, fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        if legend == "outside":
            ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      borderaxespad=0)
        else:
            ax.legend(handles, labels, fontsize=8, loc=legend)
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
    ax = _axes(ax)
    pairs = ledger_labels(ledgers)
    unit = _one_unit([L.unit for _, L in pairs])
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
                label="request size" if single else f"{label}: {count}", gid="size")
        top = max(top, float(req["size_before"].max()) if len(req) else 0.0)
        if no_compaction:
            ax.plot(req["request"], req["size_no_compaction"], color=colour, linestyle=":", linewidth=1,
                    alpha=0.7, label="without compaction" if single else f"{label} without compaction",
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
    _budget_lines(ax, budgets, unit)
    if caveat:
        _caveat(ax)
    if title is None and single:
        t = pairs[0][1].totals
        title = (f"{pairs[0][0]}: {plural(t.requests, 'request')}, {plural(t.compactions, 'compaction')}, "
                 f"peak {t.peak_request:,} {unit}")
    _finish(ax, "request (model call)", f"context sent ({unit_label(unit)})", title,
            "best" if single else "outside")
    ax.set_ylim(0, max([top] + budgets) * (1.45 if annotated else 1.08) or 1)
    return ax


def plot_cumulative(ledgers: Any, *, ax: Axes | None = None, caveat: bool = True,
                    title: str | None = None) -> Axes:
    """Cumulative input with compaction against without any, the saving annotated.

    The saving (``totals.saving``, ``totals.saving_share``) is in each line's
    label; a single ledger also gets an arrow between the two curves at the end.
    """
    ax = _axes(ax)
    pairs = ledger_labels(ledgers)
    unit = _one_unit([L.unit for _, L in pairs])
    single = len(pairs) == 1
    baselines: list[tuple[tuple, str]] = []
    for k, (label, L) in enumerate(pairs):
        req = L.requests
        t = L.totals
        saving = f"saving {t.saving:,} {unit}, {t.saving_share:.0%}"
        ax.plot(req["request"], req["cumulative_input"], color=f"C{k}", linewidth=1.5,
                label=f"with compaction ({saving})" if single else f"{label} ({saving})", gid="cumulative")
        base = tuple(req["cumulative_no_compaction"].tolist())
        if base not in [b for b, _ in baselines]:
            baselines.append((base, label))
            ax.plot(req["request"], req["cumulative_no_compaction"], color="0.45", linestyle="--", linewidth=1.2,
                    label="without compaction" if single else f"without compaction ({label})",
                    gid="no_compaction")
        if single and len(req):
            x = int(req["request"].iloc[-1])
            lo, hi = int(req["cumulative_input"].iloc[-1]), int(req["cumulative_no_compaction"].iloc[-1])
            if hi > lo:
                ax.annotate("", xy=(x, lo), xytext=(x, hi),
                            arrowprops={"arrowstyle": "<->", "color": "C2", "linewidth": 1.2})
                ax.annotate(f"{t.saving:,} {unit}\n({t.saving_share:.0%}) saved", xy=(x, (lo + hi) / 2),
                            xytext=(-6, 0), textcoords="offset points", ha="right", va="center", fontsize=8,
                            color="C2")
    if caveat:
        _caveat(ax)
    if title is None and single:
        title = f"{pairs[0][0]}: cumulative input over {pairs[0][1].totals.requests} requests"
    return _finish(ax, "request (model call)", f"cumulative input ({unit_label(unit)})", title)


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
    if _is_ledger(data):
        return [_TurnSeries(data.policy, data.by_turn(), data.budget, data.unit, True)]
    if isinstance(data, Mapping):
        return [_TurnSeries(str(name), s.frame, s.budget, s.unit, s.replayed)
                for name, item in data.items() for s in _turn_series(item, budget, unit)]
    items = list(data)
    if items and all(_is_ledger(x) for x in items):
        return [_TurnSeries(label, L.by_turn(), L.budget, L.unit, True) for label, L in ledger_labels(items)]
    return [_TurnSeries(f"{s.label} #{k + 1}", s.frame, s.budget, s.unit, s.replayed)
            for k, item in enumerate(items) for s in _turn_series(item, budget, unit)]


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
    ax = _axes(ax)
    items = _turn_series(data, budget, unit)
    if not items:
        raise ValueError("no turn table to plot")
    unit = _one_unit([s.unit for s in items])
    n = len(items)
    width = 0.8 / n
    single = n == 1
    for k, s in enumerate(items):
        frame = s.frame
        offset = (k - (n - 1) / 2) * width
        x = frame["turn"].astype(float) + offset
        compacted = frame["compacted"].astype(bool).tolist()
        base = "C0" if single else f"C{k}"
        colours = ["C3" if (single and c) else base for c in compacted]
        bars = ax.bar(x, frame["size"], width=width * 0.95, color=colours, alpha=0.8,
                      label="size (largest in the turn)" if single else s.label, gid="size")
        for patch, c in zip(bars, compacted, strict=True):
            if c:
                patch.set_hatch("//")
                patch.set_edgecolor("0.15")
        ax.plot(x, frame["size_after"], linestyle="none", marker="_", markersize=max(4.0, 24.0 / n),
                markeredgewidth=2, color="0.1", label="size after the turn" if k == 0 else "_nolegend_",
                gid="size_after")
        if annotate:
            for xi, row in zip(x, frame.itertuples(), strict=True):
                if bool(row.compacted):
                    ax.annotate(f"\u2192 {int(row.size_after):,}", xy=(xi, row.size), xytext=(0, 3),
                                textcoords="offset points", ha="center", fontsize=7)
    _budget_lines(ax, [s.budget for s in items if s.budget is not None], unit)
    turns = sorted(set().union(*[set(s.frame["turn"].tolist()) for s in items]))
    if 0 < len(turns) <= 30:
        ax.set_xticks(turns)
    if any(s.replayed for s in items):
        _caveat(ax)
    if title is None and single:
        title = f"{items[0].label}: size per turn"
    _finish(ax, "turn (from one user message to the next)", f"context size ({unit_label(unit)})", title)
    tops = [float(s.frame["size"].max()) for s in items if len(s.frame)] + [float(s.budget) for s in items if s.budget]
    ax.set_ylim(0, (max(tops) if tops else 1.0) * 1.12)
    # proxies: a container's legend entry copies its first bar, which may be a hatched compaction
    handles, labels = [], []
    for k, s in enumerate(items):
        handles.append(Patch(facecolor="C0" if single else f"C{k}", alpha=0.8))
        labels.append("size (largest in the turn)" if single else s.label)
    for line in ax.lines:
        if not line.get_label().startswith("_"):
            handles.append(line)
            labels.append(line.get_label())
    handles.append(Patch(facecolor="C3" if single else "white", edgecolor="0.15", hatch="//"))
    labels.append("compaction in this turn")
    ax.legend(handles, labels, fontsize=8, loc="best")
    return ax


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
    ledger = source if _is_ledger(source) else None
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
    ax = _axes(ax)
    ledger = source if _is_ledger(source) else None
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
            _budget_lines(ax, [ledger.budget], unit)
        if caveat:
            _caveat(ax)
    if len(frame) == 1 and int(frame["request"].iloc[0]) == 0:
        ax.set_xticks([0], [f"all {len(ledger.messages if ledger else source)} messages"])
        xlabel = "message list"
    else:
        xlabel = "request (model call)"
    _finish(ax, xlabel, f"request size ({unit_label(unit)})", title, "outside")
    legend = ax.get_legend()
    if legend is not None:  # list the stack top-down, as it is drawn
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[::-1], labels[::-1], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0)
    return ax


# ---------------------------------------------------------------- sweeps


def _short(value: float, ratio: bool) -> str:
    if ratio:
        return f"{value:.0%}"
    a = abs(value)
    if a >= 1e6:
        return f"{value / 1e6:.2f}M"
    if a >= 1e4:
        return f"{value / 1e3:.0f}k"
    return f"{value:,.0f}" if float(value).is_integer() or a >= 100 else f"{value:.2f}"


def _metric_label(metric: str, unit: str, agg: str) -> str:
    name = metric.replace("_", " ")
    if metric in RATIO_METRICS:
        return f"{name} (mean share)"
    if metric in SIZE_METRICS or metric.startswith("cumulative_"):
        return f"{name} ({agg}, {unit_label(unit)})"
    if metric in ("prefix_reuse", "request_bytes"):
        return f"{name} ({agg}, bytes of the request)"
    return f"{name} ({agg})"


def _axis_label(column: str, unit: str) -> str:
    return f"budget ({unit_label(unit)})" if column == "budget" else column.replace("_", " ")


def plot_sweep(sweep_df: pd.DataFrame, x: str = "budget", y: str | None = "keep_recent",
               metric: str = "cumulative_input", *, agg: str = "sum", hue: str | None = "policy",
               ax: Axes | None = None, cmap: str = "viridis", title: str | None = None) -> Axes:
    """A sweep as a heatmap (x by y, values written in the cells) or a line family.

    Values are aggregated over transcripts with ``agg`` ("sum" or "mean"; ratio
    metrics such as saving_share are always averaged). With ``y`` None or a single
    y value, draws one line per ``hue`` value (policy by default) against ``x``.
    A heatmap needs one policy: filter the frame first.
    """
    if agg not in ("sum", "mean"):
        raise ValueError(f"agg must be 'sum' or 'mean', got {agg!r}")
    for col in [x, metric] + ([y] if y else []):
        if col not in sweep_df.columns:
            raise ValueError(f"no column {col!r} in the sweep frame")
    ax = _axes(ax, (7.0, 4.2))
    unit = _one_unit(sweep_df["unit"].dropna().unique().tolist()) if "unit" in sweep_df else "bytes"
    how = "mean" if metric in RATIO_METRICS else agg
    n_transcripts = sweep_df["transcript"].nunique() if "transcript" in sweep_df else 1
    ratio = metric in RATIO_METRICS
    fmt = FuncFormatter(lambda v, _p: f"{v:.0%}") if ratio else _THOUSANDS
    label = _metric_label(metric, unit, how)
    heat = y is not None and sweep_df[y].dropna().nunique() > 1
    if heat:
        data = sweep_df.dropna(subset=[y])
        if "policy" in data and data["policy"].nunique() > 1:
            raise ValueError("the sweep holds several policies: filter it to one for a heatmap, "
                             "or pass y=None for one line per policy")
        table = data.pivot_table(index=y, columns=x, values=metric, aggfunc=how).sort_index()
        values = table.to_numpy(dtype=float)
        image = ax.imshow(values, aspect="auto", origin="lower", cmap=cmap, gid="heatmap")
        lo, hi = float(pd.Series(values.ravel()).min()), float(pd.Series(values.ravel()).max())
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                v = values[i, j]
                if v != v:  # NaN: no run with these settings
                    continue
                light = (v - lo) / (hi - lo) > 0.6 if hi > lo else False
                ax.text(j, i, _short(v, ratio), ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
        ax.set_xticks(range(len(table.columns)), [_short(float(c), False) for c in table.columns])
        ax.set_yticks(range(len(table.index)), [str(v) for v in table.index])
        ax.figure.colorbar(image, ax=ax, label=label, format=fmt)
        ax.set_xlabel(_axis_label(x, unit))
        ax.set_ylabel(_axis_label(y, unit))
    else:
        groups = [(None, sweep_df)] if hue is None or hue not in sweep_df else list(sweep_df.groupby(hue, sort=True))
        for k, (name, part) in enumerate(groups):
            series = part.groupby(x, sort=True)[metric].agg(how)
            ax.plot(series.index.astype(float), series.to_numpy(dtype=float), marker="o", color=f"C{k}",
                    label=None if name is None else str(name), gid="sweep")
        ax.set_xlabel(_axis_label(x, unit))
        ax.set_ylabel(label)
        ax.yaxis.set_major_formatter(fmt)
        if x == "budget":
            ax.xaxis.set_major_formatter(_THOUSANDS)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, title=hue, title_fontsize=8)
    if title is None:
        scored = sweep_df.dropna(subset=[metric])["transcript"].nunique() if "transcript" in sweep_df else 1
        over = (f"{n_transcripts} transcript{'s' if n_transcripts != 1 else ''}" if scored == n_transcripts
                else f"the {scored} of {n_transcripts} transcripts that have a value")
        title = f"{metric.replace('_', ' ')}, {how} over {over}"
        if y is not None and not heat and y in sweep_df and sweep_df[y].dropna().nunique() == 1:
            title += f" ({y} = {sweep_df[y].dropna().iloc[0]})"
    ax.set_title(title, fontsize=10)
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
    ax = _axes(ax)
    reports = [clamp_report(text_of(m), cap) for m in messages
               if isinstance(m, Mapping) and m.get("role") == "tool"]
    ax.axhline(cap, color="0.25", linestyle="--", linewidth=1, label=f"cap {cap:,} bytes (max_output)", gid="cap")
    if not reports:
        ax.text(0.5, 0.5, "no tool results", transform=ax.transAxes, ha="center", va="center")
        return _finish(ax, "tool result (in transcript order)", "tool result text (UTF-8 bytes)", title)
    x = list(range(1, len(reports) + 1))
    kept = [r.kept_bytes for r in reports]
    cut = [r.omitted_bytes for r in reports]
    ax.bar(x, kept, width=0.85, color="C0", linewidth=0, label="kept", gid="kept")
    if any(cut):
        ax.bar(x, cut, bottom=kept, width=0.85, color="C3", alpha=0.45, hatch="//", edgecolor="C3",
               linewidth=0, label="cut by the cap", gid="cut")
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
    _finish(ax, "tool result (in transcript order)", "tool result text (UTF-8 bytes)", title)
    ax.set_ylim(0, max([cap] + [r.input_bytes for r in reports]) * 1.18)
    return ax


# ---------------------------------------------------------------- the cut


_ROLE_LETTER = {"system": "S", "summary": "Σ", "user": "U", "assistant": "A", "tool": "T", "other": "?"}


def plot_cut(result: Any, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """The message array before and after one compaction: a box per message, coloured by role.

    ``result`` is a ``CompactionResult`` (from ``compact`` or ``compact_at``). The top
    row is the input: the messages the compaction drops are faded, the simple cut
    (``len - keep_recent``) and the cut used are marked. The bottom row is the
    result: the system message, the note at index 1, then the kept messages, each
    joined by a band to where it came from. Nothing compacted: the bottom row
    repeats the input and the title gives the reason. Indices are printed under
    the boxes (every fifth one past 40 messages).
    """
    ax = _axes(ax, (10.0, 3.4))
    source = list(getattr(result, "source", None) or result.messages)
    after = list(result.messages)
    n, compacted = len(source), result.cut is not None
    cut = result.cut if compacted else None
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
        box(i, top, m, faded=compacted and 0 < i < cut, gid="before")
        index_label(i, top, i)
    for j, m in enumerate(after):
        box(j, bottom, m, faded=False, gid="summary" if compacted and j == 1 else "after")
        index_label(j, bottom, j)
    if compacted:  # bands from where each part was to where it went
        link = dict(facecolor="0.6", alpha=0.18, linewidth=0)
        ax.add_patch(Polygon([(1, top - 0.25), (cut, top - 0.25), (2, bottom + height + 0.05),
                              (1, bottom + height + 0.05)], **link, gid="dropped_band"))
        if cut < n:
            ax.add_patch(Polygon([(cut, top - 0.25), (n, top - 0.25), (2 + n - cut, bottom + height + 0.05),
                                  (2, bottom + height + 0.05)], facecolor="C0", alpha=0.12, linewidth=0,
                                 gid="kept_band"))
        ax.text((1 + cut) / 2, top - 0.32, f"dropped: {cut - 1} message{'s' if cut - 1 != 1 else ''}",
                ha="center", va="top", fontsize=8, color="0.3")
        ax.annotate("note at index 1", xy=(1.5, bottom - 0.25), xytext=(1.5, bottom - 0.6), ha="center", va="top",
                    fontsize=8, color=CATEGORY_COLOURS["summary"],
                    arrowprops=dict(arrowstyle="->", color=CATEGORY_COLOURS["summary"], linewidth=0.8))
    naive = getattr(result, "naive_cut", None)
    marks = []
    if compacted and naive is not None and naive != cut:
        marks.append((naive, f"simple cut {naive}", "0.25", "--", "naive_cut"))
    if compacted:
        marks.append((cut, f"cut {cut}" + (" (past the end)" if cut == n else ""), "C3", "-", "cut"))
    for k, (x, label, colour, style, gid) in enumerate(marks):
        ax.plot([x, x], [top - 0.15, top + height + 0.55], color=colour, linestyle=style, linewidth=1.6, gid=gid)
        right = x > 0.75 * n  # near the right edge the label goes to the left of its line
        ax.text(x - 0.15 if right else x + 0.15, top + height + 0.5 - 0.28 * k, label, ha="right" if right else "left",
                va="top", fontsize=8, color=colour)
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
                 if compacted else f"no compaction: {result.reason}")
    ax.set_title(title, fontsize=10)
    return ax
