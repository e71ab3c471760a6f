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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..context.clamp import ClampReport, clamp_report
from ..context.compaction import (
    CUT_DIRECTIONS,
    SUMMARY_ROLES,
    CompactionResult,
    compact_at,
    find_cut,
    find_cut_backward,
)
from ..context.history import PROFILES, Problem, check_history
from ..context.sizing import UNITS, Meter
from ..context.summarizers import Summarizer
from ..engine.ledger import Ledger, replay
from ..engine.recorded import RecordedSession
from ..policies import resolve_policy
from .plots import plot_ledger, plural
from .tables import compaction_frame, style_frame

__all__ = [
    "BudgetView",
    "CutView",
    "ClampView",
    "explore_budget",
    "explore_cut",
    "explore_clamp",
    "hand_cut",
    "cut_frame",
    "totals_line",
    "render",
    "wipe",
    "BudgetExplorer",
    "CutExplorer",
    "ClampExplorer",
    "budget_explorer",
    "cut_explorer",
    "clamp_explorer",
]

_OK = "#1b7f3b"
_BAD = "#b00020"


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
        plural(t.requests, "request"),
        f"peak {t.peak_request:,} {unit} (request {t.peak_request_number})",
        f"{plural(t.compactions, 'compaction')} ({plural(t.summarizer_calls, 'summarizer call')}, "
        f"{t.ineffective_compactions:,} still over budget)",
        f"cumulative input {t.cumulative_input:,} vs {t.cumulative_input_no_compaction:,} without "
        f"(saving {t.saving_share:.0%})",
    ]
    bad = {p: n for p, n in t.problems.items() if n}
    parts.append("history legal for " + ", ".join(t.problems) if not bad else
                 "rejected by " + ", ".join(f"{p} ({n} problem{'s' if n != 1 else ''} at worst)"
                                            for p, n in bad.items()))
    return " \u00b7 ".join(parts)


def explore_budget(messages: Sequence[Mapping[str, Any]], *, budget: int = 120_000, keep_recent: int = 10,
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


def _keep_recent_slider(value: int) -> widgets.IntSlider:
    return widgets.IntSlider(value=value, min=1, max=max(40, value), description="keep_recent",
                             continuous_update=False, style={"description_width": "initial"})


def _summary_role_dropdown(value: str) -> widgets.Dropdown:
    return widgets.Dropdown(options=list(SUMMARY_ROLES), value=value, description="summary role",
                            style={"description_width": "initial"}, layout=widgets.Layout(width="210px"))


SNAPSHOT_CLASS = "nanohermes-snapshot"
SNAPSHOT_DPI = 100


def _value_text(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


class _Explorer(widgets.VBox):
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
            self.error.value = f"<pre style='color:{_BAD}'>{html.escape(traceback.format_exc(limit=3))}</pre>"
            raise


class BudgetExplorer(_Explorer):
    """Sliders for budget and keep_recent, menus for unit, summary role and cut; the ledger plot."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], *, budget: int | None = None, keep_recent: int = 10,
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
        start = budget if budget is not None else (120_000 if unit == "bytes" and total > 120_000 else total // 2)
        self.controls = {
            "budget": widgets.IntSlider(value=start, min=step, max=max(total + step, start), step=step,
                                        description="budget", continuous_update=False,
                                        style={"description_width": "initial"},
                                        layout=widgets.Layout(width="420px")),
            "keep_recent": _keep_recent_slider(keep_recent),
            "unit": widgets.Dropdown(options=list(UNITS), value=unit, description="unit",
                                     layout=widgets.Layout(width="190px")),
            "summary_role": _summary_role_dropdown(summary_role),
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


# ================================================================ cut


def hand_cut(messages: Sequence[Mapping[str, Any]], cut: int, keep_recent: int = 10, *,
             summary_role: str = "system", summarizer: Summarizer | None = None,
             meter: Callable[[Mapping[str, Any]], int] | None = None) -> CompactionResult:
    """What ``compact`` would return had it cut at ``cut`` (first kept message): no rule applied."""
    return compact_at(messages, cut, keep_recent=keep_recent, summary_role=summary_role, summarizer=summarizer,
                      meter=meter or Meter("bytes"))


@dataclass(frozen=True)
class CutView:
    """A hand-placed cut, the rules' cuts beside it, and every provider's verdict on the result."""

    cut: int
    keep_recent: int
    naive_cut: int
    forward_cut: int
    backward_cut: int
    result: CompactionResult
    problems: dict = field(default_factory=dict)  # profile -> list[Problem] on result.messages
    profile: str = "openai"

    @property
    def selected(self) -> list[Problem]:
        return self.problems.get(self.profile, [])

    @property
    def legal(self) -> bool:
        return not self.selected

    def cuts_line(self) -> str:
        n = len(self.result.source)
        moved = self.forward_cut - self.naive_cut
        fwd = f"forward rule {self.forward_cut}" + (f" (skips {moved} tool result{'s' if moved != 1 else ''})"
                                                     if moved else " (unmoved)")
        return (f"naive cut {self.naive_cut} (len {n} \u2212 keep_recent {self.keep_recent}) \u00b7 {fwd} "
                f"\u00b7 backward rule {self.backward_cut} \u00b7 your cut {self.cut}")

    def verdict_lines(self) -> list[str]:
        """One line per problem for the selected profile (reason, then the API's error), or 'legal'."""
        if not self.result.compacted:
            head = "nothing dropped: the history is the input's"
        else:
            head = f"dropped {self.result.dropped_count} messages, {len(self.result.messages)} left"
        if self.legal:
            return [f"{head}; {self.profile}: legal"]
        lines = [f"{head}; {self.profile}: rejected ({len(self.selected)} problem"
                 f"{'s' if len(self.selected) != 1 else ''})"]
        for p in self.selected:
            lines.append(f"message {p.index} [{p.code}]: {p.reason}")
            if p.api_error:
                lines.append(f"    API error: {p.api_error}")
        return lines

    def profiles_line(self) -> str:
        return " \u00b7 ".join(f"{p}: {'legal' if not probs else f'{len(probs)} problem(s)'}"
                               for p, probs in self.problems.items())


def explore_cut(messages: Sequence[Mapping[str, Any]], cut: int, keep_recent: int = 10, *,
                profile: str = "openai", summary_role: str = "system",
                summarizer: Summarizer | None = None, meter: Meter | None = None) -> CutView:
    """Cut ``messages`` at ``cut`` by hand and check the history it leaves for every provider."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; use one of {', '.join(PROFILES)}")
    result = hand_cut(messages, cut, keep_recent, summary_role=summary_role, summarizer=summarizer, meter=meter)
    problems = {p: check_history(result.messages, p) for p in PROFILES}
    return CutView(cut=result.cut if result.cut is not None else min(max(cut, 0), len(result.source)),
                   keep_recent=keep_recent, naive_cut=result.naive_cut,
                   forward_cut=find_cut(result.source, keep_recent),
                   backward_cut=find_cut_backward(result.source, keep_recent),
                   result=result, problems=problems, profile=profile)


def cut_frame(view: CutView, *, window: int | None = 6):
    """The before/after rows of a hand cut, with the forward rule's cut marked ``rule cut``."""
    frame = compaction_frame(view.result, window=None)
    if view.forward_cut != view.cut:
        at = (frame["before"] == view.forward_cut) & (frame["marker"] == "")
        frame.loc[at, "marker"] = "rule cut"
    if window is not None:
        marks = [view.cut, view.naive_cut, view.forward_cut]
        lo, hi = min(marks) - window, max(marks) + window
        before = frame["before"]
        keep = before.isna() | (before == 0) | ((before >= lo) & (before <= hi))
        frame = frame[keep.fillna(True).astype(bool)].reset_index(drop=True)
    return frame


class CutExplorer(_Explorer):
    """Move the cut with a slider; see the rules' cuts, the table and the legality verdict."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], *, cut: int | None = None, keep_recent: int = 10,
                 profile: str = "openai", summary_role: str = "system", summarizer: Summarizer | None = None,
                 window: int = 6) -> None:
        self.messages = list(messages)
        self.summarizer = summarizer
        self.window = window
        self.meter = Meter("bytes")
        n = len(self.messages)
        start = find_cut(self.messages, keep_recent) if cut is None else cut
        self.controls = {
            "cut": widgets.IntSlider(value=min(max(start, 1), max(n, 1)), min=1, max=max(n, 1), description="cut",
                                     continuous_update=False, layout=widgets.Layout(width="420px")),
            "keep_recent": _keep_recent_slider(keep_recent),
            "profile": widgets.Dropdown(options=list(PROFILES), value=profile, description="provider",
                                        layout=widgets.Layout(width="200px")),
            "summary_role": _summary_role_dropdown(summary_role),
        }
        self.cuts = widgets.HTML()
        self.verdict = widgets.HTML()
        self.table = widgets.HTML()
        self.error = widgets.HTML()
        self.view: CutView | None = None
        c = self.controls
        super().__init__([
            widgets.HBox([c["cut"], c["keep_recent"]]),
            widgets.HBox([c["profile"], c["summary_role"]]),
            self.cuts, self.verdict, self.table, self.error,
        ])
        self._watch()
        self.update()

    def compute(self) -> CutView:
        c = self.controls
        return explore_cut(self.messages, c["cut"].value, c["keep_recent"].value, profile=c["profile"].value,
                           summary_role=c["summary_role"].value, summarizer=self.summarizer, meter=self.meter)

    def update(self) -> None:
        view = self.compute()
        self.cuts.value = f"<div style='font-size:12px'>{html.escape(view.cuts_line())}</div>"
        colour = _OK if view.legal else _BAD
        lines = view.verdict_lines()
        self.verdict.value = (
            f"<div style='font-size:12px;color:{colour}'><b>{html.escape(lines[0])}</b>"
            + "".join(f"<br><code>{html.escape(x)}</code>" for x in lines[1:])
            + f"<br><span style='color:#555'>{html.escape(view.profiles_line())}</span></div>")
        caption = view.result.describe()
        self.table.value = style_frame(cut_frame(view, window=self.window), caption).to_html()
        self.view = view


def cut_explorer(messages: Sequence[Mapping[str, Any]], **options: Any) -> CutExplorer:
    """A widget to place the compaction cut by hand; see ``CutExplorer`` and ``explore_cut``."""
    return CutExplorer(messages, **options)


# ================================================================ clamp


@dataclass(frozen=True)
class ClampView:
    """A clamp at one cap: the report, the end of what is kept, the back-off, a summary line."""

    report: ClampReport
    tail: str
    boundary: str
    line: str

    @property
    def note(self) -> str:
        return self.report.note


def _boundary(text: str, r: ClampReport) -> str:
    if not r.truncated:
        return f"fits: {r.input_bytes:,} bytes <= {r.max_bytes:,}, nothing cut"
    if not r.backoff_bytes:
        return f"byte {r.max_bytes:,} is a character boundary: no back-off"
    ch = text[r.kept_chars]
    raw = ch.encode("utf-8", "surrogatepass")
    return (f"byte {r.max_bytes:,} falls inside {ch!r} (U+{ord(ch):04X}, {len(raw)} bytes: {raw.hex(' ')} at "
            f"{r.kept_bytes:,}..{r.kept_bytes + len(raw) - 1:,}): backed off {r.backoff_bytes} "
            f"byte{'s' if r.backoff_bytes != 1 else ''} to {r.kept_bytes:,}")


def explore_clamp(text: str, max_bytes: int = 20_000, *, unit_label: str = "chars", tail: int = 160) -> ClampView:
    """Clamp ``text`` at ``max_bytes`` and describe each step for display."""
    r = clamp_report(text, max_bytes, unit_label=unit_label)
    end = r.kept if len(r.kept) <= tail else "\u2026" + r.kept[-tail:]
    if r.truncated:
        line = (f"kept {r.kept_bytes:,} of {r.input_bytes:,} bytes ({r.kept_chars:,} of {r.input_chars:,} "
                f"characters); the note says {r.omitted_bytes:,} {unit_label} omitted: it counts bytes, "
                f"and {r.omitted_chars:,} characters were omitted")
    else:
        line = f"unchanged: {r.input_bytes:,} bytes ({r.input_chars:,} characters) fit in {r.max_bytes:,}"
    return ClampView(r, end, _boundary(text, r), line)


class ClampExplorer(_Explorer):
    """A max-bytes slider over one text: the kept tail, the back-off, the note."""

    def __init__(self, text: str, *, max_bytes: int | None = None, unit_label: str = "chars",
                 tail: int = 160) -> None:
        self.text = text
        self.tail = tail
        size = len(text.encode("utf-8", "surrogatepass"))
        start = max_bytes if max_bytes is not None else (20_000 if size > 20_000 else size // 2)
        self.controls = {
            "max_bytes": widgets.IntSlider(value=start, min=0, max=max(size + 16, start), description="max bytes",
                                           continuous_update=True, style={"description_width": "initial"},
                                           layout=widgets.Layout(width="520px")),
            "unit_label": widgets.Dropdown(options=["chars", "bytes"], value=unit_label, description="note says",
                                           style={"description_width": "initial"},
                                           layout=widgets.Layout(width="200px")),
        }
        self.summary = widgets.HTML()
        self.kept = widgets.HTML()
        self.error = widgets.HTML()
        self.view: ClampView | None = None
        c = self.controls
        super().__init__([widgets.HBox([c["max_bytes"], c["unit_label"]]), self.summary, self.kept, self.error])
        self._watch()
        self.update()

    def compute(self) -> ClampView:
        c = self.controls
        return explore_clamp(self.text, c["max_bytes"].value, unit_label=c["unit_label"].value, tail=self.tail)

    def update(self) -> None:
        view = self.compute()
        self.summary.value = (f"<div style='font-size:12px'>{html.escape(view.line)}<br>"
                              f"{html.escape(view.boundary)}</div>")
        note = html.escape(view.note)
        self.kept.value = ("<pre style='white-space:pre-wrap;font-size:12px;background:#f7f7f7;padding:4px'>"
                           f"{html.escape(view.tail)}<span style='background:#fff3cd'>{note}</span></pre>")
        self.view = view


def clamp_explorer(text: str, **options: Any) -> ClampExplorer:
    """A widget to clamp ``text`` at any byte cap; see ``ClampExplorer`` and ``explore_clamp``."""
    return ClampExplorer(text, **options)
