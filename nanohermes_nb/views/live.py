"""The live ledger: a widget that redraws an agent's ledger after every request.

``live_ledger(agent)`` subscribes to the agent (``agent.listeners``); while
``agent.run(...)`` works, each request redraws the ledger plot (size sent per
request, the budget, each compaction), a line of totals and what the last
request did, and the before/after table of the latest compaction. Jupyter
shows the updates as they happen, even while the cell that runs the agent is
still running.

The widget wraps two plain functions the tests drive: ``live_view(agent)`` (the
ledger of the session so far, a totals line, the latest change) and
``event_change(live_event)`` (a before/after record of one policy event that
``compaction_table`` can show, whatever the policy).
"""

from __future__ import annotations

import html
import traceback
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets

from ..engine.ledger import Ledger
from .plots import plot_ledger, plural
from .tables import compaction_table
from .widgets import Explorer, figure_pane, render, totals_line, wipe

__all__ = ["LiveView", "EventChange", "event_change", "live_view", "LiveLedger", "live_ledger"]


@dataclass(frozen=True)
class EventChange:
    """One policy event as a before/after record (``rows``, ``describe``), for ``compaction_table``.

    Messages are matched by identity: a message of ``before`` that is in ``after``
    is kept, one that is not is dropped, a message of ``after`` that was not in
    ``before`` is what the policy inserted (a summary, a placeholder, a mask).
    """

    request: int
    before: tuple = field(repr=False)
    after: tuple = field(repr=False)
    event: Any = None
    size: int = 0

    @property
    def compacted(self) -> bool:
        return self.event is not None

    @property
    def cut(self) -> int | None:
        return getattr(self.event, "cut", None)

    @property
    def naive_cut(self) -> int | None:
        return getattr(self.event, "naive_cut", None)

    @property
    def adjusted_cut(self) -> int | None:
        return self.cut

    @property
    def source(self) -> list:
        return list(self.before)

    def rows(self) -> list[dict]:
        """Every message of ``before`` (kept or dropped) and, after its neighbour, each inserted one."""
        where = {id(m): k for k, m in enumerate(self.after)}
        old = {id(m) for m in self.before}
        rows = []
        for i, m in enumerate(self.before):
            marker = ""
            if self.cut is not None and i == self.cut:
                marker = "cut"
            elif self.naive_cut is not None and i == self.naive_cut and self.naive_cut != self.cut:
                marker = "naive cut"
            k = where.get(id(m))
            rows.append({"before": i, "after": k, "status": "kept" if k is not None else "dropped",
                         "marker": marker, "message": m})
        kind = getattr(self.event, "kind", "")
        status = "summary" if kind in ("summary", "placeholder") else "inserted"
        for k, m in enumerate(self.after):
            if id(m) in old:
                continue
            at = next((j + 1 for j, r in enumerate(rows) if r["after"] == k - 1), len(rows))
            rows.insert(at, {"before": None, "after": k, "status": status, "marker": "", "message": m})
        return rows

    def describe(self) -> str:
        e = self.event
        if e is None:
            return f"after request {self.request}: over the budget at {self.size:,}; the policy declined"
        detail = e.detail or (f"{e.policy}: {e.kind}, removed {e.dropped_count}, inserted {len(e.inserted)}")
        return f"after request {self.request}: {detail}"


def event_change(live_event: Any) -> EventChange:
    """The before/after record of one ``LiveEvent`` (``agent.events[k]``)."""
    return EventChange(live_event.request, live_event.before, live_event.after, live_event.event, live_event.size)


@dataclass(frozen=True)
class LiveView:
    """The session so far: its ledger, a totals line, the last request's line, the latest change."""

    ledger: Ledger
    line: str
    last: str
    change: EventChange | None


def live_view(agent: Any, step: Any = None) -> LiveView:
    """What the live ledger shows now for ``agent`` (``step``: the request just made, if any)."""
    ledger = agent.ledger()
    events = [e for e in agent.events if e.event is not None] or list(agent.events)
    change = event_change(events[-1]) if events else None
    last = step.line() if step is not None else ("no request yet" if not agent.usage else "")
    return LiveView(ledger, totals_line(ledger) if agent.usage else "no request yet", last, change)


class LiveLedger(Explorer):
    """The ledger plot, the totals, the last request and the latest compaction, redrawn per request."""

    def __init__(self, agent: Any, *, figsize: tuple[float, float] = (8.0, 3.4), dpi: int = 80,
                 image_format: str = "svg", window: int = 4, annotations: int = 8) -> None:
        self.agent = agent
        self.image_format = image_format
        self.dpi = dpi
        self.window = window
        self.annotations = annotations
        self.controls: dict = {}
        self.figure, self.ax, self.image = figure_pane(figsize, image_format)
        self.totals = widgets.HTML()
        self.table = widgets.HTML()
        self.error = widgets.HTML()
        self.view: LiveView | None = None
        self.updates = 0
        self._table_key: tuple | None = None
        super().__init__([self.totals, self.image, self.table, self.error])
        agent.listeners.append(self._on_request)
        self.update()

    def _on_request(self, step: Any) -> None:
        """Redraw after a request; a failure to draw is shown in the widget and never stops the agent."""
        try:
            self.update(step)
            self.error.value = ""
        except Exception:
            self.error.value = f"<pre style='color:#b00020'>{html.escape(traceback.format_exc(limit=3))}</pre>"

    def detach(self) -> None:
        """Stop following the agent."""
        if self._on_request in self.agent.listeners:
            self.agent.listeners.remove(self._on_request)

    def snapshot(self) -> dict[str, Any]:
        """The static copy of the current view (the explorers' snapshot, without a row of settings)."""
        out = super().snapshot()
        out["text/html"] = out["text/html"].replace(
            "<table style='font-size:12px;border-collapse:collapse'><tr></tr></table>", "", 1)
        return out

    def update(self, step: Any = None) -> None:
        """Rebuild the session's ledger, redraw the plot, the lines and the latest before/after table."""
        view = live_view(self.agent, step)
        wipe(self.ax)
        if len(view.ledger.requests):
            t = view.ledger.totals
            plot_ledger(view.ledger, ax=self.ax, max_annotations=self.annotations, caveat=False,
                        title=f"live: {plural(t.n_requests, 'request')}, {plural(t.n_compactions, 'compaction')}")
        else:
            self.ax.set_title("live: no request yet")
        self.image.value = render(self.figure, self.image_format, self.dpi)
        self.totals.value = (f"<div style='font-size:12px'>{html.escape(view.line)}<br>"
                             f"<code>{html.escape(view.last)}</code></div>")
        key = None if view.change is None else (view.change.request, id(view.change.event))
        if key != self._table_key:  # the latest change is redrawn only when there is a new one
            window = self.window if view.change is not None and view.change.cut is not None else None
            self.table.value = "" if view.change is None else compaction_table(view.change, window=window).to_html()
            self._table_key = key
        self.view = view
        self.updates += 1


def live_ledger(agent: Any, **options: Any) -> LiveLedger:
    """A widget that follows ``agent`` and redraws its ledger after every request; see ``LiveLedger``."""
    return LiveLedger(agent, **options)
