"""Plots of what an agent's logs report: a session's context against its bill, and where the money went.

Like every plot here: ``ax=None`` makes a new figure, both axes say their unit, the Axes is returned
(``views.plots`` has the shared look). The numbers come from ``engine.usage_report`` (the rows
``nanohermes-nb report`` prints), so a plot and the report never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.axes import Axes

from ..engine.usage_report import context_series
from ..transcripts.session import Session, SessionLike
from .labels import label as lab
from .plots import axes_or_new, finish, unit_label

__all__ = ["plot_context_series", "plot_money_parts", "COMPACTION_GID", "PART_COLOURS"]

COMPACTION_GID = "agent-compaction"  # the gid of each compaction's line, so a test can count them
PART_COLOURS = {"input": "#d62728", "cache_write_5m": "#ff7f0e", "cache_write_1h": "#ffbb78",
                "cache_read": "#2ca02c", "output": "#1f77b4", "reasoning": "#9467bd"}
_TRIGGER_LABELS = {"restart": lab("a new run (the chat starts empty)"),
                   "auto": lab("the agent's own compaction (auto)"),
                   "manual": lab("the agent's own compaction (manual)")}


def plot_context_series(transcript: SessionLike, *, unit: str = "tokens_approx", ax: Axes | None = None,
                        title: str | None = None) -> Axes:
    """A session's context, request by request, with the agent's own compactions marked and the bill beside it.

    The context is what the log shows before each request, since the agent's last compaction (its
    summary included), in ``unit``; the bill's prompt tokens are what the provider counted, which also
    holds what the log does not show (the system prompt and the tool schemas). A dashed line stands just
    before the first request after each compaction the log records (``context_series``).
    """
    s = context_series(transcript, unit)
    ax = axes_or_new(ax, (8.6, 3.6))  # at most about 9 inches: legible at the site's width
    shows = lab(f"context the log shows ({unit_label(unit)})")
    ax.plot(s["request"], s["context"], color="tab:blue", lw=1.4, label=shows)
    billed = [(r, p) for r, p in zip(s["request"], s["prompt_tokens"], strict=True) if p is not None]
    if billed:
        xs, ys = zip(*billed, strict=True)
        ax.plot(xs, ys, color="black", lw=1.2, label=lab("prompt tokens the bill reports (hidden prefix included)"))
    labelled: set[str] = set()
    for request, trigger in zip(s["compactions"], s["triggers"], strict=True):
        label = _TRIGGER_LABELS.get(trigger, lab("the agent's own compaction"))
        ax.axvline(request - 0.5, color="tab:purple", ls="--", lw=1, gid=COMPACTION_GID,
                   label=None if label in labelled else label)
        labelled.add(label)
    session = Session.of(transcript)
    name = session.name or "session"
    who = f"{session.agent}: {name}" if session.agent else name
    default = lab(f"{who}: the context against the bill")
    return finish(ax, lab("request"), lab("tokens"), title if title is not None else default, legend="upper left")


def plot_money_parts(parts: Sequence[Mapping[str, Any]], *, ax: Axes | None = None,
                     title: str | None = lab("where the money went")) -> Axes:
    """``money_parts`` as horizontal bars: the dollars of each part of the bill, with its share."""
    ax = axes_or_new(ax, (8.0, 3.0))
    names = [str(p["part"]) for p in parts]
    dollars = [float(p["cost_usd"]) for p in parts]
    bars = ax.barh(names, dollars, color=[PART_COLOURS.get(n, "0.5") for n in names])
    for bar, p in zip(bars, parts, strict=True):
        if p.get("share") is not None:
            ax.annotate(f"{p['share']:.0%}", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                        xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(lab("USD"))
    if title:
        ax.set_title(title, fontsize=10)
    return ax
