"""The report's plots: a session's context against its bill, the agent's own compactions marked; the money parts.

The process uses Agg (conftest); every figure made here is closed.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from nanohermes_nb.engine.usage_report import context_series, money_parts, usage_rows
from nanohermes_nb.transcripts import load_transcript
from nanohermes_nb.views import plot_context_series, plot_money_parts
from nanohermes_nb.views.usage_plots import COMPACTION_GID

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "agentlogs"
LOGS = [next((SAMPLE / "claude-code").glob("oh-my-posh*.jsonl")), next((SAMPLE / "codex").glob("*.jsonl")),
        next((SAMPLE / "aider").glob("*.md"))]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.parent.name)
def test_the_context_plot_draws_the_series_and_marks_each_compaction(path: Path) -> None:
    t = load_transcript(path)
    s = context_series(t)
    fig, ax = plt.subplots()
    assert plot_context_series(t, ax=ax) is ax, "draws into the Axes it is given, and returns it"
    lines = {line.get_label(): line for line in ax.get_lines()}
    shown = next(v for k, v in lines.items() if k.startswith("context the log shows"))
    assert list(shown.get_xdata()) == s["request"] and list(shown.get_ydata()) == s["context"]
    billed = [p for p in s["prompt_tokens"] if p is not None]
    bill = [v for k, v in lines.items() if k.startswith("prompt tokens the bill")]
    assert (list(bill[0].get_ydata()) if bill else []) == billed, "the bill beside it, where the log reports one"
    marks = [line for line in ax.get_lines() if line.get_gid() == COMPACTION_GID]
    assert [m.get_xdata()[0] + 0.5 for m in marks] == s["compactions"] and len(marks) >= 1
    assert ax.get_xlabel() == "request" and ax.get_ylabel() == "tokens"
    assert ax.get_title() == f"{t.agent}: {path.name}: the context against the bill", "which agent, which file"


def test_a_restart_is_labelled_as_one() -> None:
    ax = plot_context_series(load_transcript(LOGS[2]))
    assert any(text.get_text().startswith("a new run") for text in ax.get_legend().get_texts())
    assert context_series(load_transcript(LOGS[2]))["triggers"] == ["restart"]


def test_the_money_parts_are_bars_of_the_report_s_dollars() -> None:
    parts = money_parts(usage_rows(SAMPLE).rows)
    ax = plot_money_parts(parts)
    widths = [bar.get_width() for bar in ax.patches]
    assert widths == pytest.approx([p["cost_usd"] for p in parts])
    assert [t.get_text() for t in ax.get_yticklabels()] == [p["part"] for p in parts]
    assert [t.get_text() for t in ax.texts] == [f"{p['share']:.0%}" for p in parts]


def test_the_report_plots_are_legible_on_the_site_and_in_chinese() -> None:
    from conftest import LEGIBLE_PX, figure_on_site

    for ax in (plot_context_series(load_transcript(LOGS[0])), plot_context_series(load_transcript(LOGS[2])),
               plot_money_parts(money_parts(usage_rows(SAMPLE).rows))):
        px, english = figure_on_site(ax.figure)
        assert px >= LEGIBLE_PX and english == [], (ax.get_title(), px, english)
