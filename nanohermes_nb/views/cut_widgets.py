"""The cut explorer: move the cut by hand and see what is dropped, what is kept, and whether it is legal.

Built on ``widgets.Explorer`` (one output pane, errors shown in it, a static snapshot).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets

from ..context.budgets import DEFAULT_BUDGETS
from ..context.compaction import CompactionResult, compact_at, find_cut, find_cut_backward
from ..context.history import PROFILES, Problem, check_history
from ..context.sizing import Meter
from ..context.summarizers import Summarizer
from .tables import compaction_frame, style_frame
from .widgets import BAD_COLOUR, OK_COLOUR, Explorer, keep_recent_slider, summary_role_dropdown

__all__ = ["CutView", "explore_cut", "hand_cut", "cut_frame", "CutExplorer", "cut_explorer"]


# ================================================================ cut


def hand_cut(messages: Sequence[Mapping[str, Any]], cut: int, keep_recent: int = DEFAULT_BUDGETS.keep_recent, *,
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


def explore_cut(messages: Sequence[Mapping[str, Any]], cut: int, keep_recent: int = DEFAULT_BUDGETS.keep_recent, *,
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


class CutExplorer(Explorer):
    """Move the cut with a slider; see the rules' cuts, the table and the legality verdict."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], *, cut: int | None = None,
                 keep_recent: int = DEFAULT_BUDGETS.keep_recent, profile: str = "openai", summary_role: str = "system",
                 summarizer: Summarizer | None = None, window: int = 6) -> None:
        self.messages = list(messages)
        self.summarizer = summarizer
        self.window = window
        self.meter = Meter("bytes")
        n = len(self.messages)
        start = find_cut(self.messages, keep_recent) if cut is None else cut
        self.controls = {
            "cut": widgets.IntSlider(value=min(max(start, 1), max(n, 1)), min=1, max=max(n, 1), description="cut",
                                     continuous_update=False, layout=widgets.Layout(width="420px")),
            "keep_recent": keep_recent_slider(keep_recent),
            "profile": widgets.Dropdown(options=list(PROFILES), value=profile, description="provider",
                                        layout=widgets.Layout(width="200px")),
            "summary_role": summary_role_dropdown(summary_role),
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
        colour = OK_COLOUR if view.legal else BAD_COLOUR
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

