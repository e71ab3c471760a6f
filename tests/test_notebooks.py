"""The course: committed clean, each ends with its assertions, and every notebook executes."""

import json
import re
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.course.build import execute_notebook, notebook_paths

NOTEBOOKS = notebook_paths(ROOT / "notebooks")
NAMES = [p.name for p in NOTEBOOKS]
PLOTTING = re.compile(r"\bplot_\w+\(|\bplt\.")  # explorers draw into widget state, checked below
LABS = {"16": "TRANSCRIPTS", "17": "TRANSCRIPTS"}  # notebook prefix -> its parameter name


def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def committed_code_cells(path):
    """The code cells git holds for ``path`` (its index version), else the file's.

    A notebook saved from JupyterLab has outputs in the working tree; the clean filter
    (``make lab``, ``.gitattributes``) keeps them out of git, and git is what must stay clean.
    """
    import subprocess

    rel = path.relative_to(ROOT).as_posix()
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "show", f":{rel}"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        out = None
    if out is None or out.returncode != 0:
        return code_cells(path)
    return [c for c in nbformat.reads(out.stdout, as_version=4).cells if c.cell_type == "code"]


def test_the_course_is_complete():
    from nanohermes_nb.course.map import course_map

    mapped = [e.file for e in course_map().notebooks]
    assert NAMES == mapped, "every notebook is in data/course_map.json, in order, and every entry exists"
    assert [n[:2] for n in NAMES] == [f"{k:02d}" for k in range(len(NAMES))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_committed_without_outputs(path):
    for cell in committed_code_cells(path):
        assert not cell.get("outputs") and cell.get("execution_count") is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_ends_with_an_assertion_cell(path):
    lesson = [c for c in code_cells(path) if "solution" not in c.metadata.get("tags", [])]   # solutions come after
    last = lesson[-1].source
    assert last.count("assert ") >= 3, f"{path.name}: the last code cell should assert the lesson's claims"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_labs_have_a_parameters_cell(path):
    if path.name[:2] in LABS:
        tagged = [c for c in code_cells(path) if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1 and LABS[path.name[:2]] in tagged[0].source


@pytest.fixture(scope="session")
def executed(built_course):
    return built_course[1]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_notebook_executes(executed, path):
    run = executed[path.name]
    assert run.error is None, f"{path.name}: {run.error}"
    assert run.error_outputs == 0
    nb = nbformat.read(run.ipynb, as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    if PLOTTING.search(source):
        assert run.images >= 1, f"{path.name} draws plots but produced no image"
    if "_explorer(" in source:
        state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
        assert state.get("state"), f"{path.name}: widget state not stored"
        assert run.widgets >= 1 and run.bare_widgets == 0, f"{path.name}: a widget output has no static snapshot"


@pytest.mark.parametrize("prefix", sorted(LABS))
def test_labs_run_over_the_real_transcripts(tmp_path, prefix, corpus):
    path = next(p for p in NOTEBOOKS if p.name.startswith(prefix))
    run = execute_notebook(path, tmp_path, {LABS[prefix]: str(corpus.path)}, timeout=300, suffix=f"-{corpus}")
    assert run.ok, run.error
    nb = json.loads(Path(run.ipynb).read_text(encoding="utf-8"))
    assert any("injected-parameters" in c["metadata"].get("tags", []) for c in nb["cells"])
