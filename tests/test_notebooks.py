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


SHARED_READERS = [p for p in NOTEBOOKS if "../../shared/" in p.read_text(encoding="utf-8")]


def clone_parameter(path):
    """The parameter a notebook that reads ../shared offers to point it at the vendored data instead.

    The convention: a cell tagged ``parameters`` sets ``<NAME>_DIR = None``, and ``../data/<name>`` is the
    vendored sample a clone has (``AGENTLOGS_DIR`` -> ``../data/agentlogs``).
    """
    tagged = [c for c in code_cells(path) if "parameters" in c.metadata.get("tags", [])]
    found = [m.group(1) for c in tagged for m in re.finditer(r"^(\w+)_DIR = None\b", c.source, re.M)]
    assert found, f"{path.name} reads ../shared: give it a parameters cell with `<NAME>_DIR = None` (docs/course.md)"
    return f"{found[0]}_DIR", f"../data/{found[0].lower()}"


@pytest.mark.parametrize("path", SHARED_READERS, ids=[p.name for p in SHARED_READERS])
def test_a_notebook_reading_shared_runs_and_holds_in_a_clone_without_it(tmp_path, path):
    """A user's clone has no ../shared: the notebook runs on the vendored sample, and its own assertions hold."""
    name, vendored = clone_parameter(path)
    assert (path.parent / vendored).is_dir(), f"{path.name}: no vendored {vendored}"
    run = execute_notebook(path, tmp_path, {name: vendored}, timeout=300, suffix="-clone")
    assert run.ok, f"{path.name} on the vendored sample alone: {run.problem}"


MY_CODE = [p for p in NOTEBOOKS if any(c.source.startswith("MY_CODE = False") for c in code_cells(p)
                                       if "parameters" in c.metadata.get("tags", []))]


def test_the_learners_module_is_their_early_exercises_and_later_notebooks_can_switch_to_it():
    """notebooks/mine.py holds clamp, find_cut and compact as exercises 7.1, 10.1 and 10.2 ask; it agrees with the
    package on the real transcripts; the notebooks that offer the switch are the ones docs/course.md names."""
    import nanohermes_nb as nh
    from nanohermes_nb.course.mine import context_layer

    layer = context_layer(True, ROOT / "notebooks" / "mine.py")
    for t in nh.load_transcripts(ROOT / "data" / "transcripts"):
        msgs = list(t)
        for keep in (0, 4, 10):
            assert layer.find_cut(msgs, keep) == nh.find_cut(msgs, keep)
        theirs, ours = layer.compact(msgs, force=True, keep_recent=4), nh.compact(msgs, force=True, keep_recent=4)
        assert (theirs.messages, theirs.cut, theirs.note) == (ours.messages, ours.cut, ours.note)
        texts = [m["content"] for m in msgs if isinstance(m.get("content"), str)]
        assert all(layer.clamp(x, cap) == nh.clamp(x, cap) for x in texts for cap in (10, 1_000))
        assert layer.replay(msgs, budget=20_000).totals == nh.replay(msgs, budget=20_000).totals
    with pytest.raises(TypeError, match="has no option cut='backward'"):
        layer.compact(msgs, force=True, cut="backward")
    assert [p.name[:2] for p in MY_CODE] == ["12", "13", "21", "22", "25", "26"]
    assert "MY_CODE" in (ROOT / "docs" / "course.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", MY_CODE, ids=[p.name for p in MY_CODE])
def test_a_notebook_runs_end_to_end_on_the_learners_own_code(tmp_path, path):
    run = execute_notebook(path, tmp_path, {"MY_CODE": True}, timeout=300, suffix="-mine")
    assert run.ok, f"{path.name} with MY_CODE = True: {run.problem}"


def test_the_switch_really_runs_the_learners_code(tmp_path):
    """A learner's compact that keeps one message too many: notebook 13 says so (its assertions fail)."""
    broken = (ROOT / "notebooks" / "mine.py").read_text(encoding="utf-8").replace(
        "start = max(len(messages) - keep_recent, 0)", "start = max(len(messages) - keep_recent - 1, 0)")
    (tmp_path / "mine.py").write_text(broken, encoding="utf-8")
    path = next(p for p in MY_CODE if p.name.startswith("13"))
    run = execute_notebook(path, tmp_path, {"MY_CODE": str(tmp_path / "mine.py")}, timeout=300, suffix="-broken")
    assert not run.ok and "AssertionError" in (run.error or "")
