"""Views: tables, plots and widgets, checked on hand-built histories (and one real transcript).

The process uses Agg (conftest); every figure a test makes is closed after it.
"""

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from builders import SYSTEM, assistant, session, tool, tool_round, user
from builders import cut_on_tool_result as known
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection

import nanohermes_nb
from nanohermes_nb import compact, load_transcript, replay, sweep
from nanohermes_nb.context.clamp import clamp_report
from nanohermes_nb.context.display import STATUS_COLOURS
from nanohermes_nb.context.sizing import measure_each
from nanohermes_nb.views import clamp_widgets, plots, tables, widgets
from nanohermes_nb.views.clamp_widgets import clamp_explorer, explore_clamp
from nanohermes_nb.views.context_plots import composition_frame, plot_composition, plot_tool_sizes
from nanohermes_nb.views.cut_widgets import cut_explorer, explore_cut
from nanohermes_nb.views.plots import plot_by_turn, plot_cumulative, plot_ledger
from nanohermes_nb.views.sweep_plots import plot_sweep
from nanohermes_nb.views.tables import compaction_table, message_table
from nanohermes_nb.views.widgets import budget_explorer, explore_budget

pytestmark = pytest.mark.usefixtures("close_figures")


def known_result():
    return compact(known(), keep_recent=5, force=True, summarizer=lambda e: "S")


def turns_session(turns=6, rounds=3, body="z" * 1500):
    msgs = [dict(SYSTEM)]
    for t in range(turns):
        msgs.append(user(f"turn {t}"))
        for k in range(rounds):
            msgs += tool_round(t * 10 + k, body)
        msgs.append(assistant("ok"))
    return msgs


def compacting_ledger(budget=8_000, **kw):
    return replay(session(12, body="x" * 1000), budget=budget, summarizer=lambda e: "S", **kw)


def by_gid(ax, gid, kind="lines"):
    return [a for a in getattr(ax, kind) if a.get_gid() == gid]


# ------------------------------------------------------------------ tables


def test_compaction_table_rows_and_status():
    r = known_result()
    assert r.cut == 7 and r.naive_cut == 6
    frame = compaction_table(r).data
    assert len(frame) == len(known()) + 1
    assert list(frame["status"]) == ["kept", "summary"] + ["dropped"] * 6 + ["kept"] * 4
    assert list(frame["marker"]) == [""] * 7 + ["naive cut", "cut"] + [""] * 3
    assert frame["before"].isna().tolist() == [False, True] + [False] * 10  # the summary has no 'before'
    assert frame["before"].dropna().tolist() == list(range(11))
    assert frame["after"].dropna().tolist() == [0, 1, 2, 3, 4, 5]
    assert frame["role"].tolist()[1] == "system" and frame["preview"].iloc[1] == "[Earlier conversation summary]\u23ceS"
    row4 = frame[frame["before"] == 4].iloc[0]
    assert row4["calls"] == "c2, c3" and row4["answers"] == ""
    assert frame[frame["before"] == 6].iloc[0]["answers"] == "c3"
    assert frame["size"].tolist()[0] == nanohermes_nb.message_size(SYSTEM)


def test_compaction_table_unit_text_html_and_window():
    r = known_result()
    frame = compaction_table(r, unit="chars", as_frame=True)
    assert "size_chars" in frame and frame["size_chars"].tolist() == measure_each([x["message"] for x in r.rows()],
                                                                                   "chars")
    text = compaction_table(r, text=True)
    lines = text.splitlines()
    assert lines[0] == r.describe() and len(lines) == 1 + 2 + len(frame)
    assert "naive cut" in text and "summary" in text
    html = compaction_table(r).to_html()
    for status in ("dropped", "summary", "kept", "cut", "naive cut"):
        assert STATUS_COLOURS[status] in html
    near = compaction_table(r, window=1, as_frame=True)
    assert near["before"].dropna().tolist() == [0, 5, 6, 7, 8]  # system, summary, and 6-1 .. 7+1
    with pytest.raises(ValueError):
        compaction_table(r, text=True, as_frame=True)


def test_compaction_table_without_compaction():
    r = compact(known(), budget=10**9)
    frame = compaction_table(r, as_frame=True)
    assert len(frame) == len(known()) and set(frame["status"]) == {"kept"}
    assert frame["before"].tolist() == frame["after"].tolist()


def test_message_table():
    msgs = known() + [user("word " * 40)]
    styler = message_table(msgs)
    frame = styler.data
    assert len(frame) == len(msgs) and frame["index"].tolist() == list(range(len(msgs)))
    assert frame["preview"].iloc[1] == "line one\u23celine two"
    assert frame["preview"].iloc[-1].endswith("\u2026") and len(frame["preview"].iloc[-1]) == 72
    assert frame["calls"].iloc[4] == "c2, c3" and frame["answers"].iloc[5] == "c2"
    assert frame["preview"].iloc[2].startswith("\u2192 read_file(")  # a bare call shows as a call
    tok = message_table(msgs, unit="tokens_approx", as_frame=True)
    assert tok["size_tokens_approx"].tolist() == measure_each(msgs, "tokens_approx")
    text = message_table(msgs, text=True, unit="chars")
    assert len(text.splitlines()) == 1 + 2 + len(msgs) and "size_chars" in text
    assert f"{sum(frame['size']):,} bytes" in styler.caption
    with pytest.raises(ValueError):
        message_table(msgs, unit="furlongs")


# ------------------------------------------------------------------ ledger plots


def test_plot_ledger_artists():
    L = compacting_ledger()
    n = L.totals.n_compactions
    assert n >= 2
    ax = plot_ledger(L)
    assert isinstance(ax, Axes)
    size = by_gid(ax, "size")
    assert len(size) == 1 and list(size[0].get_ydata()) == L.requests["size"].tolist()
    budget = by_gid(ax, "budget")
    assert len(budget) == 1 and list(budget[0].get_ydata()) == [L.budget, L.budget]
    marks = by_gid(ax, "compactions", "collections")
    assert len(marks) == 1 and isinstance(marks[0], PathCollection) and len(marks[0].get_offsets()) == n
    hit = L.requests[L.requests["compacted"]]
    assert [tuple(p) for p in marks[0].get_offsets()] == list(zip(hit["request"], hit["size_before"], strict=True))
    notes = [t.get_text() for t in ax.texts if "\u2192" in t.get_text()]
    assert len(notes) == n
    assert notes[0] == f"\u2212{hit['dropped'].iloc[0]} \u2192 {hit['size_after'].iloc[0]:,}"
    assert "bytes" in ax.get_ylabel() and "request" in ax.get_xlabel()
    assert any("counterfactual" in t.get_text() for t in ax.texts)


def test_plot_ledger_unit_and_ax_reuse():
    L = compacting_ledger(budget=6_000, unit="chars")
    fig, ax = plt.subplots()
    assert plot_ledger(L, ax=ax) is ax
    assert "characters" in ax.get_ylabel()
    L2 = replay(session(8), unit="tokens_approx", budget=300)
    assert "tokens" in plot_ledger(L2).get_ylabel()


def test_plot_ledger_several_ledgers():
    a, b = compacting_ledger(8_000), compacting_ledger(6_000)
    ax = plot_ledger([a, b])
    lines = by_gid(ax, "size")
    assert len(lines) == 2
    labels = [line.get_label() for line in lines]
    assert labels[0].startswith("nanohermes (budget 8,000") and labels[1].startswith("nanohermes (budget 6,000")
    assert f"{a.totals.n_compactions} compactions" in labels[0]
    assert sorted(line.get_ydata()[0] for line in by_gid(ax, "budget")) == [6_000, 8_000]
    assert len(by_gid(ax, "compactions", "collections")) == 2
    ax = plot_ledger({"generous": a, "tight": b})
    assert [line.get_label().split(":")[0] for line in by_gid(ax, "size")] == ["generous", "tight"]
    with pytest.raises(ValueError, match="units"):
        plot_ledger([a, compacting_ledger(unit="chars")])


def test_plot_cumulative():
    L = compacting_ledger()
    ax = plot_cumulative(L)
    (cum,) = by_gid(ax, "cumulative")
    (base,) = by_gid(ax, "no_compaction")
    assert cum.get_ydata()[-1] == L.totals.cumulative_input
    assert base.get_ydata()[-1] == L.totals.cumulative_input_no_compaction
    assert any(f"{L.totals.saving:,} bytes" in t.get_text() for t in ax.texts)
    assert "cumulative" in ax.get_ylabel() and "bytes" in ax.get_ylabel()
    ax = plot_cumulative({"8k": L, "6k": compacting_ledger(6_000)})
    labels = [line.get_label() for line in by_gid(ax, "cumulative")]
    assert len(labels) == 2 and labels[0].startswith("8k (saving") and labels[1].startswith("6k")
    assert len(by_gid(ax, "no_compaction")) == 1  # same transcript: one baseline


def test_plot_by_turn_ledger_and_table():
    L = replay(turns_session(), budget=20_000, summarizer=lambda e: "S")
    turns = L.by_turn()
    assert turns["compacted"].any()
    ax = plot_by_turn(L)
    bars = [p for c in ax.containers for p in c]
    assert len(bars) == len(turns)
    assert [p.get_height() for p in bars] == turns["size"].tolist()
    assert [bool(p.get_hatch()) for p in bars] == turns["compacted"].tolist()
    (after,) = by_gid(ax, "size_after")
    assert list(after.get_ydata()) == turns["size_after"].tolist()
    assert list(by_gid(ax, "budget")[0].get_ydata()) == [20_000, 20_000]
    assert "bytes" in ax.get_ylabel() and "turn" in ax.get_xlabel()
    table = pd.DataFrame({"turn": [1, 2, 3], "size": [10, 30, 50], "size_after": [10, 30, 12]})
    table.attrs.update(budget=40, label="article")
    fig, (left, right) = plt.subplots(1, 2)
    plot_by_turn(table, ax=left)
    plot_by_turn(L, ax=right)
    assert [bool(p.get_hatch()) for c in left.containers for p in c] == [False, False, True]
    assert list(by_gid(left, "budget")[0].get_ydata()) == [40, 40]
    ax = plot_by_turn([L, replay(turns_session(), budget=30_000)])
    assert len(ax.containers) == 2 and len(by_gid(ax, "size_after")) == 2


# ------------------------------------------------------------------ composition


def test_composition_matches_the_ledger():
    L = replay(turns_session(), budget=20_000, summarizer=lambda e: "S")
    frame = composition_frame(L)
    assert frame["total"].tolist() == L.requests["size"].tolist()
    after = frame[frame["request"] > L.compactions[0].request]
    assert (after["summary"] > 0).all() and (frame["summary"].iloc[: L.compactions[0].request] == 0).all()
    ax = plot_composition(L)
    cats = [c.get_label() for c in ax.containers]
    assert cats == ["system", "summary", "user", "assistant", "tool"]
    tops = [sum(c[k].get_height() for c in ax.containers) for k in range(len(frame))]
    assert tops == L.requests["size"].tolist()
    assert "bytes" in ax.get_ylabel()


def test_composition_of_a_message_list():
    msgs = known()
    frame = composition_frame(msgs)
    assert len(frame) == sum(1 for m in msgs if m["role"] == "assistant")
    whole = composition_frame(msgs, per_request=False)
    assert len(whole) == 1 and whole["total"].iloc[0] == sum(measure_each(msgs))
    ax = plot_composition(msgs, per_request=False)
    assert len(ax.containers) == 4 and "all 11 messages" in [t.get_text() for t in ax.get_xticklabels()]


def test_composition_on_a_real_transcript(corpus):
    path = corpus.largest()
    L = replay(load_transcript(path), budget=30_000, retention=False)
    assert composition_frame(L)["total"].tolist() == L.requests["size"].tolist()


# ------------------------------------------------------------------ sweep, tool sizes


def test_plot_sweep_heatmap_and_lines():
    runs = {"a": session(10, body="x" * 800), "b": turns_session(3)}
    df = sweep(runs, budgets=[4_000, 8_000, 16_000], keep_recent=[4, 10])
    ax = plot_sweep(df)
    (image,) = ax.images
    assert image.get_array().shape == (2, 3)
    expected = df.groupby(["keep_recent", "budget"])["cumulative_input"].sum().unstack().to_numpy()
    assert (image.get_array() == expected).all()
    assert len(ax.texts) == 6
    assert "bytes" in ax.get_xlabel() and ax.get_ylabel() == "keep recent"
    mean = plot_sweep(df, agg="mean").images[0].get_array()
    assert (mean * 2 == expected).all()
    lines = plot_sweep(df[df["keep_recent"] == 10], metric="peak_request")
    (line,) = by_gid(lines, "sweep")
    assert list(line.get_xdata()) == [4_000, 8_000, 16_000] and "bytes" in lines.get_ylabel()
    two = sweep(runs, budgets=[4_000, 8_000], policies=["nanohermes", "nanohermes"])
    assert len(by_gid(plot_sweep(two, y=None), "sweep")) == 1  # one policy name, one line
    with pytest.raises(ValueError):
        plot_sweep(df, agg="median")


def test_plot_tool_sizes():
    msgs = [SYSTEM, user(), assistant("", ["a", "b", "c"]), tool("a", "x" * 50), tool("b", "\u4e2d" * 40),
            tool("c", "y" * 10)]
    cap = 100
    ax = plot_tool_sizes(msgs, cap=cap)
    (line,) = by_gid(ax, "cap")
    assert list(line.get_ydata()) == [cap, cap]
    kept = [p.get_height() for p in ax.containers[0]]
    cut = [p.get_height() for p in ax.containers[1]]
    reports = [clamp_report(t, cap) for t in ("x" * 50, "\u4e2d" * 40, "y" * 10)]
    assert kept == [r.kept_bytes for r in reports] == [50, 99, 10]
    assert cut == [r.omitted_bytes for r in reports] == [0, 21, 0]
    assert "1 of 3" in ax.get_title() and "21" in ax.get_title()
    assert "bytes" in ax.get_ylabel()
    assert plot_tool_sizes([SYSTEM, user()]).texts[0].get_text() == "no tool results"


# ------------------------------------------------------------------ widgets


def test_explore_budget_plain():
    msgs = session(12, body="x" * 1000)
    meters: dict = {}
    v = explore_budget(msgs, budget=8_000, meters=meters)
    assert v.ledger.budget == 8_000 and f"{v.ledger.totals.n_compactions} compactions" in v.line
    assert v.ledger.totals.n_compactions >= 2 and f"{v.ledger.totals.n_requests} requests" in v.line
    assert "bytes" in meters  # the meters dict is filled and reused
    v2 = explore_budget(msgs, budget=10**9, meters=meters)
    assert v2.ledger.totals.n_compactions == 0 and v2.line != v.line


def test_budget_explorer_controls_drive_the_output():
    msgs = session(12, body="x" * 1000)
    open_before = plt.get_fignums()  # another test of this worker may have left its figures open (pytest-xdist)
    w = budget_explorer(msgs, budget=30_000)
    assert set(w.controls) == {"budget", "keep_recent", "unit", "summary_role", "cut"}
    first_png, first_line = w.image.value, w.totals.value
    assert w.view.ledger.totals.n_compactions == 0 and b"<svg" in bytes(first_png) and w.image.format == "svg+xml"
    w.controls["budget"].value = 8_000
    assert w.view.ledger.budget == 8_000 and w.view.ledger.totals.n_compactions >= 2
    assert w.totals.value != first_line and w.image.value != first_png
    assert list(by_gid(w.ax, "budget")[0].get_ydata()) == [8_000, 8_000]
    assert len(w.figure.axes) == 1  # one Axes, wiped and redrawn
    w.controls["budget"].value = 7_000
    w.controls["budget"].value = 8_000
    assert len(by_gid(w.ax, "size")) == 1 and len(by_gid(w.ax, "budget")) == 1
    assert len(by_gid(w.ax, "compactions", "collections")) == 1 and len(w.ax.collections) == 2  # markers, drops
    assert list(by_gid(w.ax, "size")[0].get_ydata()) == w.view.ledger.requests["size"].tolist()
    keep = w.view.ledger.compactions[0].dropped_count
    w.controls["keep_recent"].value = 4
    assert w.view.ledger.keep_recent == 4 and w.view.ledger.compactions[0].dropped_count != keep
    before = w.controls["budget"].value
    w.controls["unit"].value = "chars"
    assert w.view.ledger.unit == "chars" and "characters" in w.ax.get_ylabel()
    assert w.controls["budget"].value == w.view.ledger.budget and abs(w.controls["budget"].value - before) <= 1_000
    w.controls["cut"].value = "backward"
    assert w.view.settings["cut"] == "backward"
    line = w.totals.value
    w.controls["summary_role"].value = "user"
    assert w.view.settings["summary_role"] == "user" and w.totals.value != line
    assert plt.get_fignums() == open_before  # the widget's figure never touches pyplot
    png = budget_explorer(msgs, budget=8_000, image_format="png")
    assert bytes(png.image.value)[:4] == b"\x89PNG" and png.image.format == "png"


def test_explore_cut_and_legality():
    msgs = known()
    on_tool = explore_cut(msgs, 6, keep_recent=5)
    assert (on_tool.naive_cut, on_tool.forward_cut, on_tool.backward_cut) == (6, 7, 4)
    (problem,) = on_tool.selected
    assert (problem.index, problem.code) == (2, "starts_with_tool")  # tool c3 right after the summary
    assert f"API error: {problem.api_error}" in "\n".join(on_tool.verdict_lines()) and problem.api_error
    rule = explore_cut(msgs, 7, keep_recent=5)
    assert rule.legal and rule.result.dropped_count == 6
    assert rule.result.messages == compact(msgs, keep_recent=5, force=True).messages
    assert not explore_cut(msgs, 7, keep_recent=5, profile="anthropic").legal  # system summary at index 1
    assert explore_cut(msgs, 7, keep_recent=5, profile="anthropic", summary_role="user").selected == []
    none = explore_cut(msgs, 1)
    assert not none.result.compacted and none.legal


def test_cut_explorer_controls_drive_the_output():
    w = cut_explorer(known(), keep_recent=5)
    assert set(w.controls) == {"cut", "keep_recent", "profile", "summary_role"}
    assert w.controls["cut"].value == 7 and w.view.legal
    legal_html, table = w.verdict.value, w.table.value
    assert "legal" in legal_html and "naive cut 6" in w.cuts.value
    w.controls["cut"].value = 6
    assert not w.view.legal and "API error" in w.verdict.value and w.verdict.value != legal_html
    assert w.table.value != table and "your cut 6" in w.cuts.value
    w.controls["cut"].value = 7
    w.controls["profile"].value = "gemini"
    assert "system_not_first" in w.verdict.value
    w.controls["summary_role"].value = "user"
    assert w.view.legal
    assert "rule cut" not in w.table.value
    w.controls["cut"].value = 4
    assert "rule cut" in w.table.value  # the forward rule's cut marked beside the hand cut


def test_explore_clamp_and_widget():
    text = "ab" + "\u4e2d" * 10  # 2 + 30 bytes
    v = explore_clamp(text, 6)
    assert v.report.kept == "ab\u4e2d" and v.report.backoff_bytes == 1 and "backed off 1 byte" in v.boundary
    assert "e4 b8 ad" in v.boundary and v.note == "\n\u2026 output truncated (27 chars omitted)"
    assert "9 characters were omitted" in v.line
    assert "unchanged" in explore_clamp(text, 100).line
    w = clamp_explorer(text, max_bytes=6)
    assert set(w.controls) == {"max_bytes", "unit_label"}
    first = w.summary.value
    w.controls["max_bytes"].value = 5
    assert w.view.report.backoff_bytes == 0 and w.summary.value != first and "no back-off" in w.summary.value
    w.controls["unit_label"].value = "bytes"
    assert "27 bytes omitted" in w.kept.value
    w.controls["max_bytes"].value = 40
    assert "nothing cut" in w.summary.value and w.view.note == ""


def _png_size(b64: str) -> tuple[int, int]:
    import base64
    import io

    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(b64))).size


def test_every_explorer_output_carries_a_snapshot_of_its_current_view():
    """Beside the live widget view, the same bundle holds the view as HTML (and PNG when there is a plot)."""
    open_before = plt.get_fignums()  # another test of this worker may have left its figures open (pytest-xdist)
    w = budget_explorer(session(12, body="x" * 1000), budget=30_000)
    w.controls["budget"].value = 8_000
    bundle = w._repr_mimebundle_()
    assert {"application/vnd.jupyter.widget-view+json", "text/html", "image/png", "text/plain"} <= set(bundle)
    page = bundle["text/html"]
    assert widgets.SNAPSHOT_CLASS in page and "<b>budget</b> 8,000" in page and w.totals.value in page
    assert page.count("data:image/png;base64,") == 1 and bundle["image/png"] in page
    width, height = _png_size(bundle["image/png"])
    fig_w, fig_h = w.figure.get_size_inches()
    assert (width, height) == (round(fig_w * widgets.SNAPSHOT_DPI), round(fig_h * widgets.SNAPSHOT_DPI))
    w.controls["budget"].value = 9_000
    again = w._repr_mimebundle_()
    assert "<b>budget</b> 9,000" in again["text/html"] and again["image/png"] != bundle["image/png"]
    assert plt.get_fignums() == open_before  # the snapshots opened no pyplot figure

    c = cut_explorer(known(), keep_recent=5)
    c.controls["cut"].value = 6
    cut = c._repr_mimebundle_()
    assert "image/png" not in cut and "application/vnd.jupyter.widget-view+json" in cut
    html = cut["text/html"]
    assert c.verdict.value in html and c.table.value in html and "<b>cut</b> 6" in html

    k = clamp_explorer("ab" + "\u4e2d" * 10, max_bytes=6)
    clamp = k._repr_mimebundle_()
    assert k.summary.value in clamp["text/html"] and k.kept.value in clamp["text/html"]
    assert "<b>max bytes</b> 6" in clamp["text/html"]


# ------------------------------------------------------------------ plumbing


def test_lazy_exports_and_backend():
    assert matplotlib.get_backend().lower() == "agg"
    assert nanohermes_nb.plot_ledger is plots.plot_ledger  # the one view in the public names
    assert nanohermes_nb.views.message_table is tables.message_table
    assert nanohermes_nb.views.clamp_explorer is clamp_widgets.clamp_explorer
    for name in ("plot_cumulative", "plot_by_turn", "plot_composition", "plot_sweep", "plot_tool_sizes",
                 "compaction_table", "budget_explorer", "cut_explorer"):
        assert callable(getattr(nanohermes_nb.views, name))
        assert name not in nanohermes_nb.__all__


def test_tables_escape_message_text():
    from builders import SYSTEM, user

    from nanohermes_nb.views import message_table

    html_out = message_table([SYSTEM, user("<b>bold?</b> and <MASKED>")]).to_html()
    assert "&lt;MASKED&gt;" in html_out and "<b>bold?</b>" not in html_out
