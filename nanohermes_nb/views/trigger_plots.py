"""The trigger timeline as a picture: one lane per agent rule, the session's context size behind them.

``plot_triggers(timeline, ax=None)`` takes ``engine.triggers.trigger_timeline``'s result
and returns the Axes: each lane marks the requests at which its rule fires (a firing
within ``within`` requests of the one before, a loop, in red), the log's own compactions
and NanoHermes's rule as lanes of their own; behind them, on the right-hand axis, the
tokens each request would send with no compaction (filled) and as the log sent them (line),
with each prompt-based rule's threshold as a dotted line.
"""

from __future__ import annotations

from typing import Any

from matplotlib.axes import Axes

from .labels import label as lab
from .plots import THOUSANDS, axes_or_new

__all__ = ["plot_triggers", "LOOP_COLOR", "FIRE_COLOR"]

FIRE_COLOR = "#1f5fa8"
LOOP_COLOR = "#c0392b"
SIZE_COLOR = "#d9d9d9"


def _lane_label(lane: Any) -> str:
    if lane.rule == "log":
        return f"{lane.agent} (log)"
    return lane.rule


def plot_triggers(timeline: Any, ax: Axes | None = None, *, show_thresholds: bool = True) -> Axes:
    """One lane per rule (firings as bars, loops in red), the requests' token counts behind. Returns the Axes."""
    lanes = list(timeline.lanes)
    ax = axes_or_new(ax, (8.6, 0.45 * len(lanes) + 1.6))  # at most about 9 inches: legible at the site's width
    x = list(range(1, timeline.n_requests + 1))
    back = ax.twinx()
    behind = list(timeline.uncompacted) or list(timeline.tokens)
    back.fill_between(x, behind, step="mid", color=SIZE_COLOR, zorder=0, label=lab("with no compaction"))
    back.step(x, list(timeline.tokens), where="mid", color="#7f7f7f", lw=0.8, zorder=0, label=lab("as the log sent it"))
    back.set_ylabel(lab("tokens per request"))
    back.yaxis.set_major_formatter(THOUSANDS)
    back.set_ylim(0, max([*behind, *timeline.tokens, 1]) * 1.1)
    back.legend(loc="upper left", fontsize="small", frameon=False)
    if show_thresholds:
        for lane in lanes:
            t = lane.trigger
            if t is not None and t.basis == "prompt" and t.threshold <= back.get_ylim()[1]:
                back.axhline(t.threshold, color=FIRE_COLOR, lw=0.6, ls=":", zorder=1)
    ax.set_zorder(back.get_zorder() + 1)
    ax.patch.set_visible(False)
    for y, lane in enumerate(lanes):
        fires = list(lane.firings)
        looped = {b for a, b in zip(fires, fires[1:], strict=False) if b - a <= timeline.within}
        plain = [r for r in fires if r not in looped]
        ax.vlines(plain, y - 0.35, y + 0.35, color=FIRE_COLOR, lw=2)
        ax.vlines(sorted(looped), y - 0.35, y + 0.35, color=LOOP_COLOR, lw=2)
    ax.set_yticks(range(len(lanes)), [_lane_label(lane) for lane in lanes])
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlim(0.5, timeline.n_requests + 0.5)
    ax.set_xlabel(lab("request"))
    ax.set_title(lab(f"{timeline.name}:\nwhen each rule fires ({timeline.model or 'unknown model'}, "
                     f"window {timeline.window.context_window:,})"), fontsize=9)  # two lines: a long name still fits
    return ax
