"""Explorers: sliders over the engine, each a thin widget around a plain function.

- ``explore_budget`` / ``budget_explorer``: replay a transcript under a budget,
  keep_recent, unit, summary role and cut direction; the ledger plot and a line
  of totals.
- ``explore_cut`` / ``cut_explorer``: place the cut by hand; the naive cut, the
  forward and backward rules, the before/after table and whether each provider
  would accept the history left behind (with the error text it would send).
- ``explore_clamp`` / ``clamp_explorer``: clamp a text at a byte cap; the kept
  tail, the back-off to a character boundary, and the note.

The plain functions return frozen dataclasses and are what the tests drive. The
widgets subclass ``ipywidgets.VBox``, expose their inputs as ``.controls`` (set
``.value`` to drive them) and the last result as ``.view``. Displayed, each one
also puts a static snapshot of its current view in the same output bundle
(``text/html``: the settings, the readouts and the plot; ``image/png``: the
plot), so a page without a widget manager (the built HTML course, GitHub,
nbviewer without state) still shows what the explorer showed. The figure is a
``matplotlib.figure.Figure`` rendered (SVG by default, PNG on request) into an
``ipywidgets.Image``: no pyplot state, no window, one Axes wiped and redrawn
per update. Meters are kept
across updates, so each message is measured once per unit.
"""

from __future__ import annotations

import base64
import html
import io
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..context.budgets import DEFAULT_BUDGETS
from ..context.compaction import CUT_DIRECTIONS, SUMMARY_ROLES
from ..context.sizing import UNITS, Meter
from ..context.summarizers import Summarizer
from ..engine.ledger import Ledger, replay
from ..engine.recorded import RecordedSession
from ..policies import resolve_policy
from .labels import ZH_PNG, chinese_png
from .plots import plot_ledger, plural

__all__ = [
    "BudgetView",
    "explore_budget",
    "totals_line",
    "render",
    "wipe",
    "BudgetExplorer",
    "budget_explorer",
]

OK_COLOUR = "#1b7f3b"
BAD_COLOUR = "#b00020"


# ================================================================ budget


@dataclass(frozen=True)
class BudgetView:
    """One replay under the explorer's settings, and the line of totals shown under it."""

    ledger: Ledger
    settings: dict
    line: str


def totals_line(ledger: Ledger) -> str:
    """The ledger's totals in one line: peak, events, cumulative input, saving, legality."""
    t = ledger.totals
    unit = ledger.unit
    parts = [
        plural(t.n_requests, "request"),
        f"peak {t.peak_request:,} {unit} (request {t.peak_request_number})",
        f"{plural(t.n_compactions, 'compaction')} ({plural(t.summarizer_calls, 'summarizer call')}, "
        f"{t.ineffective_compactions:,} still over budget)",
        f"cumulative input {t.cumulative_input:,} vs {t.cumulative_input_no_compaction:,} without "
        f"(saving {t.saving_share:.0%})",
    ]
    bad = {p: n for p, n in t.problems.items() if n}
    parts.append("history legal for " + ", ".join(t.problems) if not bad else
                 "rejected by " + ", ".join(f"{p} ({n} problem{'s' if n != 1 else ''} at worst)"
                                            for p, n in bad.items()))
    return " \u00b7 ".join(parts)


def explore_budget(messages: Sequence[Mapping[str, Any]], *, budget: int = DEFAULT_BUDGETS.context_char_budget,
                   keep_recent: int = DEFAULT_BUDGETS.keep_recent,
                   unit: str = "bytes", summary_role: str = "system", cut: str = "forward",
                   summarizer: Summarizer | None = None, meters: dict | None = None,
                   retention: bool = False) -> BudgetView:
    """Replay ``messages`` with these settings (SPEC 5) and summarize the totals.

    Pass the same ``meters`` dict on every call: each message is then measured
    once per unit, which is what keeps a slider responsive.
    """
    session = RecordedSession.of(messages, meters)  # the shared meters measure each message once
    policy = resolve_policy("nanohermes", keep_recent=keep_recent, summary_role=summary_role, cut=cut)
    ledger = replay(session, budget=budget, unit=unit, summarizer=summarizer, retention=retention, policy=policy)
    settings = {"budget": budget, "keep_recent": keep_recent, "unit": unit, "summary_role": summary_role,
                "cut": cut}
    return BudgetView(ledger, settings, totals_line(ledger))


def figure_pane(figsize: tuple[float, float], image_format: str) -> tuple[Figure, Any, widgets.Image]:
    """A figure drawn off-screen, its Axes, and the image widget that shows each render of it.

    Fixed margins: a constrained layout would double the render time of every update.
    """
    figure = Figure(figsize=figsize)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    figure.subplots_adjust(left=0.125, right=0.985, top=0.9, bottom=0.19)
    return figure, ax, widgets.Image(format="svg+xml" if image_format == "svg" else image_format)


def render(figure: Figure, image_format: str = "svg", dpi: int = 80) -> bytes:
    """The figure as image bytes for an ``ipywidgets.Image``.

    SVG with text left as text (``svg.fonttype: none``) is the default: the
    browser draws the glyphs, which makes an update about twice as fast as
    rasterizing a PNG with Agg (see bench/bench_views.py).
    """
    buf = io.BytesIO()
    if image_format == "svg":
        with matplotlib.rc_context({"svg.fonttype": "none"}):
            figure.savefig(buf, format="svg")
    elif image_format == "png":
        figure.savefig(buf, format="png", dpi=dpi)
    else:
        raise ValueError(f"image_format must be 'svg' or 'png', got {image_format!r}")
    return buf.getvalue()


def wipe(ax: Any) -> None:
    """Clear what the last update drew on ``ax``, keeping its axis and tick objects.

    ``ax.clear()`` also rebuilds every tick, about a third of an update's
    render time; removing the artists leaves an Axes as good as new for the
    next plot call, which sets its own limits, formatters and labels.
    """
    for artist in [*ax.lines, *ax.collections, *ax.texts, *ax.patches, *ax.images, *ax.artists, *ax.tables]:
        artist.remove()
    ax.containers.clear()
    if ax.legend_ is not None:
        ax.legend_.remove()
    ax.set_title("")
    ax.ignore_existing_data_limits = True
    ax.set_autoscale_on(True)


def _nice_step(span: float) -> int:
    """A round slider step near span / 200 (1, 2 or 5 times a power of ten)."""
    raw = max(span / 200.0, 1.0)
    power = 10 ** (len(str(int(raw))) - 1)
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return int(m * power)
    return int(10 * power)


def keep_recent_slider(value: int) -> widgets.IntSlider:
    return widgets.IntSlider(value=value, min=1, max=max(40, value), description="keep_recent",
                             continuous_update=False, style={"description_width": "initial"})


def summary_role_dropdown(value: str) -> widgets.Dropdown:
    return widgets.Dropdown(options=list(SUMMARY_ROLES), value=value, description="summary role",
                            style={"description_width": "initial"}, layout=widgets.Layout(width="210px"))


SNAPSHOT_CLASS = "nanohermes-snapshot"
SNAPSHOT_DPI = 100


def _value_text(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


class Explorer(widgets.VBox):
    """Shared plumbing: controls, an error line, observers that call ``update``, the static snapshot."""

    controls: dict

    def snapshot(self) -> dict[str, Any]:
        """The current view as static outputs: ``text/html`` always, ``image/png`` when there is a plot.

        The HTML holds the control settings, every non-empty readout and the plot
        (a PNG inlined as a data URI): what the widget shows, without the widget.
        """
        figure = getattr(self, "figure", None)
        png = render(figure, "png", SNAPSHOT_DPI) if isinstance(figure, Figure) else None
        settings = "".join(
            f"<td style='padding:2px 10px 2px 0'><b>{html.escape(c.description or name)}</b> "
            f"{html.escape(_value_text(c.value))}</td>" for name, c in self.controls.items())
        parts = [f"<table style='font-size:12px;border-collapse:collapse'><tr>{settings}</tr></table>"]
        for child in self.children:
            if isinstance(child, widgets.Image) and png is not None:
                parts.append(f"<img src='data:image/png;base64,{base64.b64encode(png).decode()}' "
                             f"alt='{html.escape(type(self).__name__)} plot' style='max-width:100%'>")
            elif isinstance(child, widgets.HTML) and child.value:
                parts.append(child.value)
        note = ("<div style='font-size:11px;color:#666'>Static snapshot of the explorer as displayed; run the "
                "notebook in Jupyter to move its controls.</div>")
        page = f"<div class='{SNAPSHOT_CLASS}'>{''.join(parts)}{note}</div>"
        out: dict[str, Any] = {"text/html": page}
        if png is not None:
            out["image/png"] = base64.b64encode(png).decode()
            out[ZH_PNG] = base64.b64encode(chinese_png(figure, dpi=SNAPSHOT_DPI, bbox_inches=None)).decode()
        return out

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """The widget view (live in Jupyter) and, beside it, the snapshot of the current view."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data = dict(bundle[0] if isinstance(bundle, tuple) else bundle or {})
        data.update(self.snapshot())
        return data

    def _watch(self) -> None:
        for control in self.controls.values():
            control.observe(self._changed, names="value")

    def _changed(self, _change: Any = None) -> None:
        if getattr(self, "_quiet", False):
            return
        try:
            self.update()
            self.error.value = ""
        except Exception:
            self.error.value = f"<pre style='color:{BAD_COLOUR}'>{html.escape(traceback.format_exc(limit=3))}</pre>"
            raise


class BudgetExplorer(Explorer):
    """Sliders for budget and keep_recent, menus for unit, summary role and cut; the ledger plot."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], *, budget: int | None = None,
                 keep_recent: int = DEFAULT_BUDGETS.keep_recent,
                 unit: str = "bytes", summary_role: str = "system", cut: str = "forward",
                 summarizer: Summarizer | None = None, figsize: tuple[float, float] = (8.0, 3.4),
                 dpi: int = 80, annotations: int = 8, image_format: str = "svg") -> None:
        self.messages = list(messages)
        self.image_format = image_format
        self.annotations = annotations  # each costs ~2 ms of rendering per update
        self.summarizer = summarizer
        self.meters: dict = {}
        self.dpi = dpi
        self._quiet = False
        total = self._total(unit)
        step = _nice_step(total)
        article = DEFAULT_BUDGETS.context_char_budget  # in bytes: another unit starts half way
        start = budget if budget is not None else (article if unit == "bytes" and total > article else total // 2)
        self.controls = {
            "budget": widgets.IntSlider(value=start, min=step, max=max(total + step, start), step=step,
                                        description="budget", continuous_update=False,
                                        style={"description_width": "initial"},
                                        layout=widgets.Layout(width="420px")),
            "keep_recent": keep_recent_slider(keep_recent),
            "unit": widgets.Dropdown(options=list(UNITS), value=unit, description="unit",
                                     layout=widgets.Layout(width="190px")),
            "summary_role": summary_role_dropdown(summary_role),
            "cut": widgets.Dropdown(options=list(CUT_DIRECTIONS), value=cut, description="cut",
                                    layout=widgets.Layout(width="190px")),
        }
        self._unit = unit
        self.figure, self.ax, self.image = figure_pane(figsize, image_format)
        self.totals = widgets.HTML()
        self.error = widgets.HTML()
        self.view: BudgetView | None = None
        c = self.controls
        super().__init__([
            widgets.HBox([c["budget"], c["keep_recent"]]),
            widgets.HBox([c["unit"], c["summary_role"], c["cut"]]),
            self.totals, self.image, self.error,
        ])
        self._watch()
        c["unit"].unobserve(self._changed, names="value")
        c["unit"].observe(self._unit_changed, names="value")
        self.update()

    def _total(self, unit: str) -> int:
        """The whole transcript's size in ``unit`` (measured once): the largest budget worth offering."""
        meter = self.meters.setdefault(unit, Meter(unit))
        return max(meter.total(self.messages), 1)

    def _unit_changed(self, change: Any) -> None:
        """Rescale the budget slider so it means the same share of the transcript in the new unit."""
        old, new = self._unit, change["new"]
        slider = self.controls["budget"]
        total = self._total(new)
        ratio = total / self._total(old)
        step = _nice_step(total)
        value = max(step, int(round(slider.value * ratio / step)) * step)
        self._quiet = True
        try:
            slider.max = max(total + step, value, slider.max)
            slider.min = step
            slider.step = step
            slider.value = value
            slider.max = max(total + step, value)
        finally:
            self._quiet = False
        self._unit = new
        self._changed()

    def compute(self) -> BudgetView:
        """The plain function with the controls' current values."""
        c = self.controls
        return explore_budget(self.messages, budget=c["budget"].value, keep_recent=c["keep_recent"].value,
                              unit=c["unit"].value, summary_role=c["summary_role"].value, cut=c["cut"].value,
                              summarizer=self.summarizer, meters=self.meters)

    def update(self) -> None:
        """Replay, redraw the one Axes, re-render the image and the totals line."""
        view = self.compute()
        wipe(self.ax)
        plot_ledger(view.ledger, ax=self.ax, max_annotations=self.annotations)
        self.image.value = render(self.figure, self.image_format, self.dpi)
        self.totals.value = (f"<div style='font-size:12px'>{html.escape(view.line)}<br>"
                             f"<i style='color:#666'>{html.escape(view.ledger.caveat)}</i></div>")
        self.view = view


def budget_explorer(messages: Sequence[Mapping[str, Any]], **options: Any) -> BudgetExplorer:
    """A widget to replay ``messages`` under any budget; see ``BudgetExplorer`` and ``explore_budget``."""
    return BudgetExplorer(messages, **options)
