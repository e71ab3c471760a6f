"""A sweep's results as lines: one metric against the budget, one line per policy and setting.

``ax=None`` makes a new figure; the Axes is returned (``views.plots`` has the shared look).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter

from .plots import RATIO_METRICS, SIZE_METRICS, THOUSANDS, axes_or_new, one_unit, unit_label

__all__ = ["plot_sweep"]



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


def _heatmap(ax: Axes, sweep_df: pd.DataFrame, x: str, y: str, metric: str, how: str, cmap: str, fmt: Any,
             label: str, unit: str) -> None:
    """``metric`` aggregated by ``how`` over y by x, its value written in each cell; one policy only."""
    ratio = metric in RATIO_METRICS
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


def _lines(ax: Axes, sweep_df: pd.DataFrame, x: str, hue: str | None, metric: str, how: str, fmt: Any,
           label: str, unit: str) -> None:
    """``metric`` aggregated by ``how`` against ``x``, one line per ``hue`` value."""
    groups = [(None, sweep_df)] if hue is None or hue not in sweep_df else list(sweep_df.groupby(hue, sort=True))
    for k, (name, part) in enumerate(groups):
        series = part.groupby(x, sort=True)[metric].agg(how)
        ax.plot(series.index.astype(float), series.to_numpy(dtype=float), marker="o", color=f"C{k}",
                label=None if name is None else str(name), gid="sweep")
    ax.set_xlabel(_axis_label(x, unit))
    ax.set_ylabel(label)
    ax.yaxis.set_major_formatter(fmt)
    if x == "budget":
        ax.xaxis.set_major_formatter(THOUSANDS)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, title=hue, title_fontsize=8)


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
    ax = axes_or_new(ax, (7.0, 4.2))
    unit = one_unit(sweep_df["unit"].dropna().unique().tolist()) if "unit" in sweep_df else "bytes"
    how = "mean" if metric in RATIO_METRICS else agg
    n_transcripts = sweep_df["transcript"].nunique() if "transcript" in sweep_df else 1
    ratio = metric in RATIO_METRICS
    fmt = FuncFormatter(lambda v, _p: f"{v:.0%}") if ratio else THOUSANDS
    label = _metric_label(metric, unit, how)
    heat = y is not None and sweep_df[y].dropna().nunique() > 1
    if heat and y is not None:
        _heatmap(ax, sweep_df, x, y, metric, how, cmap, fmt, label, unit)
    else:
        _lines(ax, sweep_df, x, hue, metric, how, fmt, label, unit)
    if title is None:
        scored = sweep_df.dropna(subset=[metric])["transcript"].nunique() if "transcript" in sweep_df else 1
        over = (f"{n_transcripts} transcript{'s' if n_transcripts != 1 else ''}" if scored == n_transcripts
                else f"the {scored} of {n_transcripts} transcripts that have a value")
        title = f"{metric.replace('_', ' ')}, {how} over {over}"
        if y is not None and not heat and y in sweep_df and sweep_df[y].dropna().nunique() == 1:
            title += f" ({y} = {sweep_df[y].dropna().iloc[0]})"
    ax.set_title(title, fontsize=10)
    return ax


