"""The probe plots (issue 36): each takes ``ax=None`` and returns the Axes, and draws what it is given."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
from conftest import LEGIBLE_PX, figure_on_site

import nanohermes_nb as nh
from nanohermes_nb.context.probes import CATEGORIES
from nanohermes_nb.engine.forgetting_report import compactions_table, study
from nanohermes_nb.engine.own_compactions import own_compactions
from nanohermes_nb.views.probe_plots import (
    plot_cost_and_survival,
    plot_probe_survival,
    plot_rereads,
    plot_survival_ledger,
)

ROOT = Path(__file__).resolve().parents[1]
CC = ROOT / "data" / "compactions" / "claude-code" / "entire-cli_opus45_fe0600aa.cut95.jsonl"


def test_the_survival_ledger_stacks_each_status_per_category():
    (own,) = own_compactions(nh.load_transcript(CC), path=CC)
    ax = plot_survival_ledger(own.fates)
    bars: dict = {}
    for patch in ax.patches:
        bars.setdefault(patch.get_gid(), []).append(round(patch.get_width()))
    assert sum(sum(v) for v in bars.values()) == len(own.fates)
    assert bars["ledger-lost"] and bars["ledger-summarized"]
    _fig, given = plt.subplots()
    assert plot_survival_ledger([], ax=given) is given  # nothing compacted: an empty plot that says so


def test_the_policy_heatmap_and_the_cost_scatter():
    frame = nh.compare_policies([str(CC)], probes=True, budget=60_000)
    ax = plot_probe_survival(frame)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(CATEGORIES)
    assert len(ax.get_yticklabels()) == len(frame)
    ax = plot_cost_and_survival(frame)
    points = [c.get_gid() for c in ax.collections]
    assert "point-nanohermes" in points and "point-claude_code" not in points  # a tool's row has no replayed cost


def test_the_rereads_bar_per_compaction():
    table = compactions_table(study([CC], policies=[]))
    ax = plot_rereads(table)
    assert [round(p.get_height()) for p in ax.patches] == list(table["reread_tokens"])


def test_every_probe_plot_is_legible_on_the_site_and_in_chinese():
    """Each helper's own figure: its smallest label at least LEGIBLE_PX on the site, every label translated (the
    scatter's points are named by the frame's rows, which stay as they are)."""
    (own,) = own_compactions(nh.load_transcript(CC), path=CC)
    frame = nh.compare_policies([str(CC)], probes=True, budget=60_000)
    table = compactions_table(study([CC], policies=[]))
    drawn = {"ledger": plot_survival_ledger(own.fates), "heatmap": plot_probe_survival(frame),
             "scatter": plot_cost_and_survival(frame), "rereads": plot_rereads(table)}
    for name, ax in drawn.items():
        px, english = figure_on_site(ax.figure)
        assert px >= LEGIBLE_PX, f"{name}: smallest label {px:.1f} px on the site"
        assert set(english) <= {str(i) for i in frame.index}, f"{name}: labels without Chinese: {english}"
