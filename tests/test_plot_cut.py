"""plot_cut: the message array before and after one compaction, drawn from the CompactionResult."""

import matplotlib.pyplot as plt
import pytest
from builders import SYSTEM, assistant, tool, user
from builders import cut_on_tool_result as known
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba

from nanohermes_nb import compact
from nanohermes_nb.views import plot_cut
from nanohermes_nb.views.plots import CATEGORY_COLOURS

pytestmark = pytest.mark.usefixtures("close_figures")


def patches(ax, gid):
    return [p for p in ax.patches if p.get_gid() == gid]


def lines(ax, gid):
    return [ln for ln in ax.lines if ln.get_gid() == gid]


def test_one_box_per_message_before_and_after_and_the_note_at_index_1():
    result = compact(known(), keep_recent=5, force=True, summarizer=lambda e: "S")
    fig, ax = plt.subplots()
    assert plot_cut(result, ax=ax) is ax
    before, after, note = patches(ax, "before"), patches(ax, "after"), patches(ax, "summary")
    assert len(before) == 11 and len(after) + len(note) == len(result.messages) == 2 + 11 - 7
    assert len(note) == 1 and note[0].get_x() == pytest.approx(1.06)  # the box of index 1
    faded = [p for p in before if p.get_alpha() < 0.5]
    assert [round(p.get_x()) for p in faded] == list(range(1, 7)), "messages 1..6 are dropped"
    assert note[0].get_facecolor()[:3] == pytest.approx(to_rgba(CATEGORY_COLOURS["summary"])[:3])
    assert before[3].get_facecolor()[:3] == pytest.approx(to_rgba(CATEGORY_COLOURS["tool"])[:3])


def test_the_simple_cut_and_the_cut_used_are_marked_where_they_fall():
    result = compact(known(), keep_recent=5, force=True, summarizer=lambda e: "S")
    ax = plot_cut(result)
    assert isinstance(ax, Axes)
    (naive,), (cut,) = lines(ax, "naive_cut"), lines(ax, "cut")
    assert set(naive.get_xdata()) == {6} and set(cut.get_xdata()) == {7}
    assert any("simple cut 6" in t.get_text() for t in ax.texts) and any(t.get_text() == "cut 7" for t in ax.texts)


def test_a_cut_that_needs_no_move_draws_one_line():
    msgs = known()[:8] + [user("more"), assistant("ok")]
    result = compact(msgs, keep_recent=3, force=True, summarizer=lambda e: "S")
    assert result.cut == result.naive_cut == 7
    ax = plot_cut(result)
    assert not lines(ax, "naive_cut") and len(lines(ax, "cut")) == 1


def test_a_cut_past_the_end_keeps_nothing_and_says_so():
    msgs = [SYSTEM, user("read them"), assistant("", ["a", "b", "c"]), tool("a"), tool("b"), tool("c")]
    result = compact(msgs, keep_recent=2, force=True, summarizer=lambda e: "S")
    assert result.cut == len(msgs)
    ax = plot_cut(result)
    assert len(patches(ax, "after")) + len(patches(ax, "summary")) == 2
    assert any("past the end" in t.get_text() for t in ax.texts)


def test_nothing_compacted_repeats_the_input_and_gives_the_reason():
    msgs = known()
    result = compact(msgs)  # far under the budget
    ax = plot_cut(result)
    assert len(patches(ax, "before")) == len(patches(ax, "after")) == len(msgs) and not patches(ax, "summary")
    assert not lines(ax, "cut") and not lines(ax, "naive_cut")
    assert ax.get_title().startswith("no compaction: size")
