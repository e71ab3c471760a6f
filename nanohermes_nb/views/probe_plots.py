"""What compaction loses, drawn (issue 36): a survival ledger per category, every policy's survival, the cost.

Each helper takes ``ax=None`` (a new figure) and returns the Axes:

- ``plot_survival_ledger``: one horizontal bar per probe category, split into kept,
  re-injected, summarized and lost (a survival ledger: ``survival.Fate`` objects or its rows);
- ``plot_probe_survival``: a policy x category heatmap of survival (a ``compare_policies``
  frame with ``probes=True``), the share written in each cell;
- ``plot_cost_and_survival``: each row's cost against its probe survival (the shape of the
  masking-versus-summary comparison);
- ``plot_rereads``: the tokens an agent re-read after each of its own compactions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ..context.probes import CATEGORIES
from ..context.survival import STATUSES
from .labels import label as lab
from .plots import axes_or_new

__all__ = ["plot_survival_ledger", "plot_probe_survival", "plot_cost_and_survival", "plot_rereads",
           "STATUS_COLOURS"]

STATUS_COLOURS = {"kept": "#2f7d32", "re-injected": "#5c9bd1", "summarized": "#e0a030", "lost": "#c0392b"}
_MARKERS = ("o", "s", "^", "D")  # with the ten colours: forty rows told apart


def _ledger_counts(ledger: Any) -> dict[str, dict[str, int]]:
    """Counts per category and status, from ``Fate`` objects or ledger rows (dicts or a DataFrame)."""
    if hasattr(ledger, "to_dict") and hasattr(ledger, "columns"):
        ledger = ledger.to_dict("records")
    counts = {c: dict.fromkeys(STATUSES, 0) for c in CATEGORIES}
    for item in ledger:
        if isinstance(item, dict):
            category, status = item["category"], item["status"]
        else:
            category, status = item.probe.category, item.status
        counts[category][status] += 1
    return counts


def plot_survival_ledger(ledger: Iterable[Any], ax: Axes | None = None, title: str = "") -> Axes:
    """Probes per category, split by what became of them (kept, re-injected, summarized, lost)."""
    counts = _ledger_counts(ledger)
    ax = axes_or_new(ax, (7.5, 3.2))
    rows = [c for c in CATEGORIES if sum(counts[c].values())]
    left = np.zeros(len(rows))
    for status in STATUSES:
        widths = np.array([counts[c][status] for c in rows], dtype=float)
        ax.barh(rows, widths, left=left, color=STATUS_COLOURS[status], label=lab(status), gid=f"ledger-{status}")
        left += widths
    ax.invert_yaxis()
    ax.set_xlabel(lab("probes"))
    ax.legend(ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize="small", frameon=False)
    ax.set_title(title or lab("Survival ledger: what each probe became"))
    if not rows:
        ax.text(0.5, 0.5, lab("no probe: nothing was compacted"), ha="center", va="center", transform=ax.transAxes)
    return ax


def plot_probe_survival(frame: Any, ax: Axes | None = None, categories: Sequence[str] = CATEGORIES,
                        title: str = "") -> Axes:
    """Policies (rows) by category (columns): the share of probes that survived, written in each cell."""
    cols = [f"probe_{c}" for c in categories]
    data = frame[cols].astype(float)
    ax = axes_or_new(ax, (0.95 * len(cols) + 2.6, 0.45 * len(data) + 1.5))  # 8.3 inches for the six categories
    values = data.to_numpy()
    ax.imshow(np.ma.masked_invalid(values), aspect="auto", cmap="RdYlGn", vmin=0.0, vmax=1.0, gid="survival")
    for (i, j), v in np.ndenumerate(values):
        ax.text(j, i, "–" if np.isnan(v) else f"{v:.0%}", ha="center", va="center", fontsize="small")
    ax.set_xticks(range(len(cols)), list(categories))
    ax.set_yticks(range(len(data)), [str(i) if not isinstance(i, tuple) else " / ".join(i) for i in data.index])
    ax.set_title(title or lab("Probe survival by category (share of probes still answerable)"))
    return ax


def plot_cost_and_survival(frame: Any, cost: str = "cumulative_input", ax: Axes | None = None,
                           title: str = "") -> Axes:
    """Each row's ``cost`` (x) against its probe survival (y), named by its index in a legend under the plot (a
    colour and a marker per row: names written beside the points would overlap where the points do)."""
    points = []
    for label, row in frame.iterrows():
        x, y = row.get(cost), row.get("probe_survival")
        if pd.isna(x) or pd.isna(y):  # a tool's own row has no replayed cost; a row without events no survival
            continue
        points.append((" / ".join(label) if isinstance(label, tuple) else str(label), float(x), float(y)))
    ax = axes_or_new(ax, (7.0, 3.6 + 0.2 * len(points)))  # room for the legend, one row per point
    for k, (name, x, y) in enumerate(points):
        ax.scatter(x, y, gid=f"point-{name}", label=lab(name), color=f"C{k % 10}",
                   marker=_MARKERS[k // 10 % len(_MARKERS)], zorder=3)
    ax.set_xlabel(lab(cost.replace("_", " ")))
    ax.set_ylabel(lab("probe survival"))
    ax.set_ylim(0, 1.05)
    ax.set_title(title or lab("Cost against what survives"))
    if points:
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.14), fontsize="small", frameon=False)
    return ax


def plot_rereads(table: Any, ax: Axes | None = None, title: str = "") -> Axes:
    """Tokens re-read after each real compaction (a ``compactions_table``), one bar each, coloured by agent."""
    ax = axes_or_new(ax, (7.6, 3.4))  # its tick labels small, not smaller: legible at the site's width
    colours = {"claude_code": "#d97757", "codex_cli": "#10a37f"}
    labels = [f"{t[:18]}#{n}" for t, n in zip(table["transcript"], table["compaction"], strict=True)]
    ax.bar(range(len(table)), table["reread_tokens"], color=[colours.get(a, "grey") for a in table["agent"]],
           gid="rereads")
    ax.set_xticks(range(len(table)), labels, rotation=70, ha="right", fontsize="small")
    ax.set_ylabel(lab("tokens re-read (o200k)"))
    ax.set_title(title or lab("Files read again in the 20 calls after each real compaction"))
    return ax
