"""The site build's pieces without a browser: the offline scan, the hooks, reading times, the CJK font for figures."""

from __future__ import annotations

import matplotlib
import nbformat
import pytest

from nanohermes_nb.course import site, site_hooks
from nanohermes_nb.views import plots


def test_the_offline_scan_finds_every_kind_of_fetch(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "page.html").write_text(
        '<script src="https://cdn.example/x.js"></script><link rel="stylesheet" href="//fonts.example/f.css">'
        '<img src="http://img.example/i.png"><a href="https://example.org/">a link is not a fetch</a>'
        '<p>https://example.org/ in prose is not a fetch</p><script src="local.js"></script>', encoding="utf-8")
    (tmp_path / "s.css").write_text("@import 'https://x.example/a.css'; b { background: url(//x.example/b.png) }",
                                    encoding="utf-8")
    (tmp_path / "w.js").write_text("importScripts('https://x.example/w.js'); const u = 'https://shown.example/';",
                                   encoding="utf-8")
    found = sorted(url for _, url in site.external_urls(tmp_path))
    assert found == ["//fonts.example/f.css", "//x.example/b.png", "http://img.example/i.png",
                     "https://cdn.example/x.js", "https://x.example/a.css", "https://x.example/w.js"]


def test_network_scripts_are_stripped_and_data_scripts_kept():
    html = ('<script src="https://cdnjs.example/mathjax.js"> </script>'
            '<script type="text/x-mathjax-config">init_mathjax()</script>'
            '<script type="module">const m = await import("https://cdn.example/mermaid.mjs")</script>'
            '<script type="application/vnd.jupyter.widget-state+json">{"u": "https://kept.example"}</script>'
            '<script>document.title = "kept"</script>')
    out = site_hooks.strip_network_scripts(html)
    assert out == ('<script type="application/vnd.jupyter.widget-state+json">{"u": "https://kept.example"}</script>'
                   '<script>document.title = "kept"</script>')


def test_solution_cells_fold_and_nothing_else():
    html = ('<div class="jp-Cell celltag_solution"><div class="in">x</div><div>y</div></div>'
            '<div class="jp-Cell"><div>z</div></div>')
    out = site_hooks.fold_solutions(html, "zh")
    assert out == ('<details class="solution"><summary>答案（先自己尝试，再打开）</summary>'
                   '<div class="jp-Cell celltag_solution"><div class="in">x</div><div>y</div></div></details>'
                   '<div class="jp-Cell"><div>z</div></div>')


@pytest.mark.parametrize("url, lang, expected", [
    ("07_x.html", "en", "zh/07_x.html"), ("docs/rules.html", "en", "../zh/index.html"),
    ("07_x.html", "zh", "../07_x.html"), ("index.html", "zh", "../index.html")])
def test_the_language_switch_points_at_the_same_page(url, lang, expected):
    assert site_hooks.switch_target(url, lang, {"07_x.html", "index.html"}) == expected


def test_a_widget_output_keeps_its_snapshot_and_loses_its_view():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("w")
    view = {"model_id": "m", "version_major": 2, "version_minor": 0}
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        site.WIDGET_VIEW: view, "text/html": "<div class='nanohermes-snapshot'>last view</div>", "text/plain": "W"})]
    nb.cells = [cell]
    nb.metadata["widgets"] = {"state": {}}
    staged = site.stage_notebook(nb)
    assert site.WIDGET_VIEW not in staged.cells[0].outputs[0].data and "widgets" not in staged.metadata
    assert site.WIDGET_VIEW in nb.cells[0].outputs[0].data and "widgets" in nb.metadata  # the input is untouched


def test_reading_time_counts_prose_and_code_apart():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("word " * 600), nbformat.v4.new_code_cell("a = 1\n\nb = 2\n")]
    assert site.reading_time(nb) == (3, 2)
    nb.cells[0].source = "上下文" * 400  # 1,200 characters at 400 a minute
    assert site.reading_time(nb, "zh") == (3, 2)


def test_notebook_info_reads_the_topic_and_counts_prose_and_code_apart(tmp_path):
    from nanohermes_nb.course.build import notebook_info

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 07 · Bytes, not `tokens`\n\n" + "word " * 594),
                nbformat.v4.new_code_cell("\n".join(f"x{k} = {k}" for k in range(100)))]
    nbformat.write(nb, tmp_path / "07_x.ipynb")
    info = notebook_info(tmp_path / "07_x.ipynb")
    assert (info.number, info.topic, info.minutes, info.code_lines) == ("07", "Bytes, not `tokens`", 3, 100)
    nb.metadata["nanohermes"] = {"topic": "Chosen topic"}
    nbformat.write(nb, tmp_path / "08_y.ipynb")
    assert notebook_info(tmp_path / "08_y.ipynb").topic == "Chosen topic"


def test_every_public_module_gets_an_api_page():
    modules = site.api_modules()
    assert "nanohermes_nb.context.clamp" in modules and "nanohermes_nb.engine.ledger" in modules
    assert not any(part.startswith("_") for m in modules for part in m.split("."))
    assert "nanohermes_nb.course.site_hooks" not in modules


def test_figures_draw_chinese_with_a_cjk_font_when_one_is_installed():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if plots.CJK_FONT is None:
        pytest.skip("no CJK font installed (Debian: apt-get install fonts-noto-cjk)")
    assert plots.CJK_FONT in matplotlib.rcParams["font.family"]

    def pixels(text):
        figure = Figure(figsize=(1, 1), dpi=50)
        canvas = FigureCanvasAgg(figure)
        figure.text(0.1, 0.4, text, fontsize=30)
        canvas.draw()
        return bytes(canvas.buffer_rgba())

    assert pixels("上") != pixels("下")  # real glyphs, not two identical empty boxes


def test_no_cjk_font_leaves_matplotlib_as_it_was(monkeypatch):
    monkeypatch.setattr(plots, "CJK_FONTS", ("No Such Font CJK",))
    before = list(matplotlib.rcParams["font.family"])
    assert plots.use_cjk_font() is None and list(matplotlib.rcParams["font.family"]) == before
