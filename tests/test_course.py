"""The course build around the notebooks: the offline HTML, the home page, the README's picture."""

import json
import re

import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.course import build as course
from nanohermes_nb.course.build import (
    NotebookRun,
    html_exporter,
    notebook_info,
    write_index,
    write_ledger_figure,
)


def _notebook(tmp_path, name, heading, metadata=None, words=400, code_lines=0):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"{heading}\n\n" + "word " * words)]
    if code_lines:
        nb.cells.append(nbformat.v4.new_code_cell("\n".join(f"x{k} = {k}" for k in range(code_lines))))
    nb.metadata.update(metadata or {})
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def test_notebook_info_reads_the_topic_from_the_notebook(tmp_path):
    info = notebook_info(_notebook(tmp_path, "07_x.ipynb", "# 07 · Bytes, not `tokens`", words=598))
    assert (info.number, info.topic, info.minutes) == ("07", "Bytes, not `tokens`", 3)
    info = notebook_info(_notebook(tmp_path, "08_y.ipynb", "## Plain title", words=10, code_lines=100))
    assert (info.topic, info.minutes) == ("Plain title", 2)  # 10 words + 3 per code line = 310 -> 2 min
    override = _notebook(tmp_path, "09_z.ipynb", "# 09 · Heading", {"nanohermes": {"topic": "Chosen topic"}})
    assert notebook_info(override).topic == "Chosen topic"


def test_index_links_every_notebook_with_its_topic_and_times(tmp_path):
    sources = [_notebook(tmp_path, "00_a.ipynb", "# 00 · First `thing`"),
               _notebook(tmp_path, "01_b.ipynb", "# 01 · Second <thing>")]
    out = tmp_path / "course"
    runs = [NotebookRun("00_a.ipynb", 2.5, str(out / "00_a.ipynb"), str(out / "00_a.html")),
            NotebookRun("01_b.ipynb", 7.25, str(out / "01_b.ipynb"), str(out / "01_b.html"), error="boom")]
    page = write_index(runs, out, sources).read_text(encoding="utf-8")
    assert re.findall(r"href='([^']+)'", page) == ["00_a.html", "01_b.html"]
    assert "First <code>thing</code>" in page and "Second &lt;thing&gt;" in page  # Markdown code, HTML escaped
    assert "about 2 min to read &middot; runs in 2.5 s" in page and "runs in 7.2 s" in page
    assert "failed: boom" in page and "<script" not in page


def test_the_html_exporter_loads_nothing_and_shows_a_widgets_snapshot():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("w")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "text/plain": "Explorer(...)",
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2, "version_minor": 0},
        "text/html": "<div class='nanohermes-snapshot'>the last view</div>",
    })]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), cell]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                             "version_minor": 0}}
    body, _ = html_exporter().from_notebook_node(nb)
    assert not re.search(r"<script[^>]+src=", body)
    assert not re.search(r"(require|mathjax|mermaid|html-manager|embed-amd)[^\n]*\.m?js", body, re.I)
    assert "the last view" in body and 'type="application/vnd.jupyter.widget-view+json"' not in body
    assert "widget-state" in body  # the state stays in the page, as data


def test_a_widget_without_a_snapshot_fails_the_run(tmp_path):
    nb = nbformat.v4.new_notebook()
    bare = nbformat.v4.new_code_cell("import ipywidgets as w\nw.IntSlider()")
    nb.cells = [bare]
    path = tmp_path / "bare.ipynb"
    nbformat.write(nb, path)
    run = course.execute_notebook(path, tmp_path / "out", html=False, timeout=120)
    assert run.error is None and run.widgets == 1 and run.bare_widgets == 1
    assert not run.ok and "without a static snapshot" in run.problem


def test_the_readme_picture_is_current(tmp_path):
    """docs/ledger_vs_article.png records the hash of the data it plots; that data must not have moved."""
    data = course.ledger_figure_data()
    digest = course._data_hash(data)
    assert course.figure_hash(course.LEDGER_FIGURE) == digest, \
        "docs/ledger_vs_article.png is stale: run `python -m nanohermes_nb.course --figure`"
    assert [r["turn"] for r in data["replay"]] == list(range(1, 13)) == [r["turn"] for r in data["article"]]
    assert sum(r["compacted"] for r in data["replay"]) == 1 and data["budget"] == 120_000
    fresh = tmp_path / "fig.png"
    assert write_ledger_figure(fresh) is True and course.figure_hash(fresh) == digest
    assert write_ledger_figure(fresh) is False  # current: not redrawn
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/ledger_vs_article.png" in readme


def test_a_changed_ledger_makes_the_picture_stale(tmp_path):
    root = tmp_path / "repo"
    (root / "data" / "sessions").mkdir(parents=True)
    session = json.loads((ROOT / "data" / "sessions" / "twelve_turns.json").read_text(encoding="utf-8"))
    (root / "data" / "sessions" / "twelve_turns.json").write_text(json.dumps(session[:-2]), encoding="utf-8")
    (root / "data" / "article_ledger.csv").write_bytes((ROOT / "data" / "article_ledger.csv").read_bytes())
    changed = course._data_hash(course.ledger_figure_data(root))
    assert changed != course.figure_hash(course.LEDGER_FIGURE)
    fig = tmp_path / "fig.png"
    assert write_ledger_figure(fig, root) and course.figure_hash(fig) == changed


@pytest.mark.parametrize("target", ["course", "test", "lab"])
def test_the_readme_commands_exist(target):
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(rf"^{target}:", makefile, re.M)


def test_docs_rules_state_every_cap_with_its_default():
    import dataclasses

    from nanohermes_nb import DEFAULT_BUDGETS

    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for f in dataclasses.fields(DEFAULT_BUDGETS):
        value = getattr(DEFAULT_BUDGETS, f.name)
        row = next((ln for ln in text.splitlines() if ln.startswith("|") and f"`{f.name}`" in ln), None)
        assert row is not None and f"| {value:,} |" in row, f.name
    for section in ("How size is measured", "Compaction", "The summary", "Replaying a recorded transcript"):
        assert section in text
    assert "ledger_vs_article.png" in text


def test_the_readme_needs_nothing_outside_the_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/rules.md)" in readme and "SPEC.md" not in readme
    for paragraph in readme.split("\n\n"):
        if "../shared" in paragraph:  # only ever as CI's extended corpus
            assert "corpus" in paragraph and "CI" in paragraph, paragraph
    assert "## Open the course" in readme and "make lab" in readme and "index.html" in readme
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert ".ipynb_checkpoints/" in ignored
