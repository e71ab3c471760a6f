"""The course build around the notebooks: the execution and the README's picture (the site: test_site.py)."""

import json
import re

import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.course import build as course
from nanohermes_nb.course.build import write_ledger_figure


def test_a_widget_without_a_snapshot_fails_the_run(tmp_path):
    nb = nbformat.v4.new_notebook()
    bare = nbformat.v4.new_code_cell("import ipywidgets as w\nw.IntSlider()")
    nb.cells = [bare]
    path = tmp_path / "bare.ipynb"
    nbformat.write(nb, path)
    run = course.execute_notebook(path, tmp_path / "out", timeout=120)
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
