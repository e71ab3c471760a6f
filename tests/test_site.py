"""The site build's pieces without a browser: the offline scan, the hooks, reading times, the CJK font for figures."""

from __future__ import annotations

from pathlib import Path

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


def test_headings_get_jupyterlab_ids_and_the_toc_is_built_from_them():
    page = ('<h1 id="x">07 · Clamp<a class="anchor-link" href="#x">¶</a></h1>'
            '<h2 id="checked">Checked against <code>nh.clamp</code><a class="anchor-link" href="#checked">¶</a></h2>'
            '<h2 id="">从零构建 clamp <a id="clamp,-built-from-scratch"></a><a class="anchor-link" href="#">¶</a></h2>'
            '<h3>Try it</h3><h2>Try it</h2><h2 id="q">The note says "chars"</h2><h2>。</h2>')
    html, tokens = site_hooks.set_heading_ids(page)
    ids = [t["id"] for t in tokens[0]["children"]]
    assert tokens[0]["id"] == "07-·-Clamp" and len(tokens) == 1
    assert ids == ["Checked-against-nh.clamp", "clamp,-built-from-scratch", "Try-it-2", "The-note-says-chars", "。"]
    assert [t["id"] for t in tokens[0]["children"][1]["children"]] == ["Try-it"]     # the h3 under the h2 before it
    marked = ('<h2 id="clamp,-built-from-scratch">从零构建 clamp'
              '<a class="anchor-link" href="#clamp,-built-from-scratch">')
    assert marked in html and '<a id="clamp' not in html                            # the mark became the id
    assert html.count('id="') == 7 and 'id=""' not in html and 'href="#"' not in html
    assert site_hooks.set_heading_ids("<h2> </h2>")[1][0]["id"] == "section-1"      # never an empty id


@pytest.mark.parametrize("heading", [
    "Checked against `nh.clamp` on real tool outputs", "The note says \"chars\" but", "The `max_project_docs` cap",
    "`read_file`: refuse big files, stop at the line cap", "Trap 6 — **appending** a block", "A [link](x.ipynb) in it"])
def test_a_link_written_for_jupyterlab_lands_on_the_site(heading):
    """map.anchor (what links are written with) and the site's id for the rendered heading are one and the same."""
    from nanohermes_nb.course.map import anchor

    rendered = nbformat.v4.new_markdown_cell(f"## {heading}")
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    html = markdown2html_mistune(rendered.source)
    _, tokens = site_hooks.set_heading_ids(html)
    assert tokens[0]["id"] == anchor(heading)


def test_a_notebooks_link_to_the_docs_lands_on_the_built_docs_page_from_either_edition(tmp_path):
    """``../docs/quality.md`` is right in JupyterLab (from notebooks/); on the site the docs are built once, as HTML,
    under the English edition: the English page links ``docs/quality.html``, the Chinese one ``../docs/...``."""
    from types import SimpleNamespace

    from nanohermes_nb.course.links import check_site

    page = ('<a href="../docs/quality.md">q</a> <a href="../docs/quality.md#Probes">p</a> '
            '<a href="../docs/ledger_vs_article.png">f</a> <a href="07_x.ipynb">n</a>')
    en = site_hooks.docs_links(page, site_hooks._site_root(SimpleNamespace(url="27_x.html"), "en"))
    zh = site_hooks.docs_links(page, site_hooks._site_root(SimpleNamespace(url="27_x.html"), "zh"))
    assert en == ('<a href="docs/quality.html">q</a> <a href="docs/quality.html#Probes">p</a> '
                  '<a href="docs/ledger_vs_article.png">f</a> <a href="07_x.ipynb">n</a>')
    assert zh == en.replace('href="docs/', 'href="../docs/')
    (tmp_path / "docs").mkdir()
    (tmp_path / "zh").mkdir()
    (tmp_path / "docs" / "quality.html").write_text('<h2 id="Probes">Probes</h2>', encoding="utf-8")
    (tmp_path / "docs" / "ledger_vs_article.png").write_bytes(b"png")
    (tmp_path / "07_x.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "zh" / "07_x.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "27_x.html").write_text(en, encoding="utf-8")
    (tmp_path / "zh" / "27_x.html").write_text(zh, encoding="utf-8")
    assert check_site(tmp_path).ok
    (tmp_path / "27_x.html").write_text(page, encoding="utf-8")           # as it was: the link check names it
    assert [link.href for link, _ in check_site(tmp_path).broken][:1] == ["../docs/quality.md"]


def test_the_link_check_finds_every_kind_of_broken_link(tmp_path):
    from nanohermes_nb.course.links import check_site

    (tmp_path / "zh").mkdir()
    (tmp_path / "a.html").write_text('<h2 id="Here">x</h2><a href="#Here">ok</a><a href="b.html#There">ok</a>'
                                     '<a href="#Gone">1</a><a href="#">2</a><a href="missing.html">3</a>'
                                     '<a href="https://example.org/#x">external</a><a href="/root.html">4</a>',
                                     encoding="utf-8")
    (tmp_path / "b.html").write_text('<p name="There"></p><a href="zh/c.html#%E4%B8%AD">ok</a>', encoding="utf-8")
    (tmp_path / "zh" / "c.html").write_text('<h2 id="中">中</h2><a href="../a.html#here">5</a>', encoding="utf-8")
    (tmp_path / "404.html").write_text('<a href="/nowhere.html">skipped</a>', encoding="utf-8")
    report = check_site(tmp_path)
    assert report.links == {"en": 7, "zh": 1} and report.anchors == {"en": 5, "zh": 1}
    assert sorted((link.page, link.href) for link, _ in report.broken) == [
        ("a.html", "#"), ("a.html", "#Gone"), ("a.html", "/root.html"), ("a.html", "missing.html"),
        ("zh/c.html", "../a.html#here")]                                            # ids are case-sensitive
    assert not report.ok and "no element with id 'Gone' in a.html" in " ".join(report.lines())


@pytest.mark.parametrize("text, expected", [
    ("# The bill, and the model proven against it (issue 24)", "# The bill, and the model proven against it"),
    ("before and after the three fixes of issue 26:", "before and after its three fixes:"),
    ("the shape at which issue 10's sweep was blocked", "the shape at which an earlier sweep was blocked"),
    ("NanoHermes (SPEC section 3): over", 'NanoHermes (<a href="r.html">the rules, §3</a>): over'),
    ("compact JSON (SPEC\nsection 1): that", 'compact JSON (<a href="r.html">the rules, §1</a>): that'),
    ("(SPEC sections 3 and 4)", '(<a href="r.html">the rules, §3 and §4</a>)'),
    ("TOOL_SPECS and SPEC: 120,000 bytes", "TOOL_SPECS and the rules: 120,000 bytes")])
def test_the_reader_sees_the_rules_not_spec_and_no_issue_numbers(text, expected):
    assert site_hooks.reader_text(text, "r.html") == expected
    assert "](rules.md)" in site_hooks.reader_text("SPEC 5", "rules.md", markdown=True)


def test_make_course_fails_on_a_broken_link(capsys):
    from nanohermes_nb.course.build import _report_site
    from nanohermes_nb.course.links import Link, LinkReport

    broken = LinkReport({"en": 2, "zh": 0}, {"en": 1, "zh": 0},
                        ((Link("a.html", "#Gone", "a.html", "Gone"), "no element with id 'Gone' in a.html"),))
    good = LinkReport({"en": 2, "zh": 0}, {"en": 1, "zh": 0})
    build = site.SiteBuild(Path("/x"), {"en": 1, "zh": 0}, 1.0, {}, broken)
    assert _report_site(build, Path("/x")) is False
    assert "broken link: a.html: #Gone (no element with id 'Gone' in a.html)" in capsys.readouterr().out
    assert _report_site(site.SiteBuild(Path("/x"), {"en": 1}, 1.0, {}, good), Path("/x")) is True
