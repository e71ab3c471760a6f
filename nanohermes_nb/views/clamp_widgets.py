"""The clamp explorer: one tool result under any cap, the UTF-8 back-off and what the note says.

Built on ``widgets.Explorer`` (one output pane, errors shown in it, a static snapshot).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from ..context.clamp import ClampReport, clamp_report
from .widgets import Explorer

__all__ = ["ClampView", "explore_clamp", "ClampExplorer", "clamp_explorer"]

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


class ClampExplorer(Explorer):
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
