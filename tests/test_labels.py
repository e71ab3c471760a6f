"""Figure labels in Chinese (views/labels.py): one table, applied to a drawn figure, the same plot in both editions."""

from __future__ import annotations

import ast
import base64
import json

import matplotlib
import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.views import labels

pytestmark = pytest.mark.usefixtures("close_figures")


def test_a_label_is_looked_up_exactly_then_by_the_most_specific_template():
    table = {"kept": "保留", "cut {}": "切点 {}", "cut {} (past the end)": "切点 {}（越过末尾）",
             "{} compactions": "{} 次压缩", "{}: {}": "{}：{}"}
    assert labels.translate("kept", table) == "保留"
    assert labels.translate("cut 34 (past the end)", table) == "切点 34（越过末尾）"   # not "切点 34 (past the end)"
    assert labels.translate("cut 3", table) == "切点 3"
    assert labels.translate("codex: 2 compactions", table) == "codex：2 次压缩"       # each piece translated in turn
    assert labels.translate("something else", table) is None


def _ledger_figure():
    import nanohermes_nb as nh
    from nanohermes_nb.transcripts import load_transcript

    ledger = nh.replay(load_transcript(ROOT / "data" / "sessions" / "twelve_turns.json"))
    ax = nh.plot_ledger(ledger)
    nh.views.plot_cumulative(ledger, ax=ax.figure.add_subplot(2, 1, 2))
    return ax.figure


def test_a_ledger_plot_is_all_in_chinese_and_comes_back_in_english():
    figure = _ledger_figure()
    before = [t.get_text() for t in labels.figure_texts(figure)]
    assert any("request" in t for t in before)
    with labels.in_chinese(figure) as unknown:
        during = [t.get_text() for t in labels.figure_texts(figure)]
        assert unknown == [], f"texts without a Chinese label: {unknown}"
        assert not any("request" in t or "budget" in t for t in during), during
    assert [t.get_text() for t in labels.figure_texts(figure)] == before


def test_the_chinese_png_records_what_it_left_in_english():
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 2))
    ax = figure.subplots()
    ax.set_title("words nobody translated")
    ax.set_xlabel("kept")
    ax.set_ylabel("twelve_turns.json")     # looks like code: left as it is, not reported
    png = labels.chinese_png(figure, dpi=50)
    assert png.startswith(b"\x89PNG") and labels.untranslated_of(png) == ["words nobody translated"]
    assert ax.get_xlabel() == "kept"


def test_every_label_the_views_mark_has_a_line_in_the_table():
    """Each lab("...") / label("...") of the plot helpers; an f-string counts as its template ({} for each value)."""
    missing = []
    for path in sorted((ROOT / "nanohermes_nb" / "views").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("lab", "label") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    text = arg.value
                elif isinstance(arg, ast.JoinedStr):
                    text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in arg.values)
                else:
                    continue
                if any(ch.isalpha() for ch in text.replace("{}", "")) and labels.translate(text) is None:
                    missing.append(f"{path.name}:{node.lineno}: {text!r}")
    assert not missing, "labels without a Chinese line in views/labels.py LABELS:\n" + "\n".join(missing)


def test_outside_ipython_nothing_is_wrapped():
    assert labels.bilingual_figures(shell=None) is False or labels.bilingual_figures() is False


def test_the_chinese_edition_shows_the_chinese_figure_and_neither_page_keeps_both():
    from nanohermes_nb.course.site import stage_notebook

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("fig")
    en, zh = base64.b64encode(b"EN-PNG").decode(), base64.b64encode(b"ZH-PNG").decode()
    html = f"<img src='data:image/png;base64,{en}'>"
    data = {"image/png": en, labels.ZH_PNG: zh, "text/html": html}
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    nb.cells = [cell]
    english = stage_notebook(nb, "en").cells[0].outputs[0].data
    chinese = stage_notebook(nb, "zh").cells[0].outputs[0].data
    assert english["image/png"] == en and labels.ZH_PNG not in english and en in english["text/html"]
    assert chinese["image/png"] == zh and labels.ZH_PNG not in chinese and zh in chinese["text/html"]
    assert labels.ZH_PNG in nb.cells[0].outputs[0].data                       # the executed notebook is untouched


def test_the_cjk_font_draws_the_chinese_labels():
    from nanohermes_nb.views.plots import CJK_FONT

    if CJK_FONT is None:
        pytest.skip("no CJK font installed (Debian: apt-get install fonts-noto-cjk)")
    assert CJK_FONT in matplotlib.rcParams["font.family"]
    assert json.loads(json.dumps(labels.LABELS))  # the table is plain data
