"""The exercise layout: enforced on every notebook; checks never reveal; the build proves every check."""

import json
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.course import exercises as ex
from nanohermes_nb.course.build import execute_notebook, notebook_paths

NOTEBOOKS = notebook_paths(ROOT / "notebooks")
HEADING = ex.solutions_heading()
def _cells(path):
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_notebook_follows_the_exercise_layout(path):
    cells = _cells(path)
    assert ex.exercise_cells(cells), f"{path.name}: no exercise"
    assert ex.layout_problems(cells, path.name[:2], HEADING) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_new_notebooks_have_an_implement_or_design_exercise(path):
    kinds = ex.counts(_cells(path))
    assert kinds["implement"] + kinds["design"] >= 1, f"{path.name}: {kinds}"


def _md(source, *tags):
    return nbformat.v4.new_markdown_cell(source, metadata={"tags": list(tags)})


def _code(source, *tags):
    return nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)})


def _notebook(solution_body):
    """A tiny notebook in the layout: implement `double`; the solution's body is given."""
    sol = _code(f"# Solution 99.1\ndef double(x):\n    {solution_body}", "solution")
    sol.metadata["jupyter"] = {"source_hidden": True}
    return nbformat.v4.new_notebook(cells=[
        _md("**Exercise 99.1** — write `double`.", "exercise"),
        _code("# Starter 99.1\ndef double(x):\n    raise NotImplementedError", "starter", "implement"),
        _code('# Check 99.1\nfrom nanohermes_nb.course.exercises import check, same_function\n'
              'check("99.1", lambda: same_function(double, lambda x: 2 * x, [(f"x={k}", (k,), {}) for k in range(5)]))',
              "check"),
        _code("assert double(21) == 42  # later cells use the solution"),
        _md(f"## {HEADING}"),
        sol,
    ])


def test_a_layout_notebook_has_no_problems_and_a_broken_one_names_them():
    good = _notebook("return 2 * x").cells
    assert ex.layout_problems(good, "99", HEADING) == []
    assert ex.counts(good) == {"implement": 1, "design": 0, "other": 0}
    bad = [c.copy() for c in good]
    bad[1] = _code("# Starter 99.1\nprint(42)", "starter", "implement")   # prints, and never raises
    bad[5] = _code("# Solution 99.1\npass", "solution")                    # not folded
    problems = " | ".join(ex.layout_problems(bad, "99", HEADING))
    assert "prints" in problems and "NotImplementedError" in problems and "not folded" in problems
    moved = good[:1] + good[4:5] + good[1:4] + good[5:]                    # check after the Solutions heading
    assert any("after the 'Solutions' heading" in p for p in ex.layout_problems(moved, "99", HEADING))
    assert "numbered for another notebook" in " ".join(ex.layout_problems(good, "98", HEADING))


def test_check_says_how_wrong_without_the_answer(capsys):
    ex.reset()
    ex.check("1.1", lambda: ex.close_to(None, 123_456))
    ex.check("1.1", lambda: ex.close_to(200_000, 123_456))
    ex.check("1.1", lambda: ex.same_function(lambda s: s[:-1], lambda s: s.upper(), [("case a", ("abc",), {})]))
    ex.check("1.1", lambda: 1 / 0)
    ex.check("1.1", lambda: ex.close_to(120_000, 123_456))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "✗ 1.1: your answer is None, not a number yet"
    assert out[1].startswith("✗ 1.1: your answer is too high") and "123" not in out[1]
    assert "case a" in out[2] and "1 shorter" in out[2] and "ABC" not in out[2]
    assert out[3] == "✗ 1.1: your code raised ZeroDivisionError: division by zero"
    assert out[4] == "✓ 1.1: right"
    assert ex.verdicts() == {"1.1": [False, False, False, False, True]}


def test_prove_names_what_is_not_proved():
    ex.reset()
    ex.check("2.1", lambda: None)                 # the starter passed: not proved
    ex.check("2.2", lambda: ex.close_to(None, 1))
    ex.check("2.2", lambda: None)
    with pytest.raises(AssertionError, match="2.1: starter passed; 2.3: never checked"):
        ex.prove(["2.1", "2.2", "2.3"])
    assert ex.prove(["2.2"]).startswith("1 exercise check(s) failed on the untouched starter and passed")


def test_for_build_inserts_solution_and_recheck_and_the_input_is_unchanged():
    nb = _notebook("return 2 * x")
    before = nbformat.writes(nb)
    built = ex.for_build(nb)
    assert nbformat.writes(nb) == before
    tags = [c.metadata.get("tags", []) for c in built.cells]
    assert tags[3] == tags[4] == [ex.INJECTED] and built.cells[3].source == nb.cells[5].source
    assert built.cells[4].source == nb.cells[2].source and "prove(['99.1'])" in built.cells[-1].source
    assert [c.source for c in ex.for_reader(built).cells if ex.INJECTED not in c.metadata.get("tags", [])] == \
        [c.source for c in nb.cells] + [built.cells[-1].source]


@pytest.mark.slow  # starts a kernel
@pytest.mark.parametrize("body, ok", [("return 2 * x", True), ("return x + x + (x == 3)", False)])
def test_the_build_passes_a_right_solution_and_fails_a_wrong_one(tmp_path, body, ok):
    path = tmp_path / "99_demo.ipynb"
    nbformat.write(_notebook(body), path)
    run = execute_notebook(path, tmp_path / "out", timeout=60)
    assert run.ok is ok, run.problem
    executed = nbformat.read(run.ipynb, as_version=4)
    assert not any(ex.INJECTED in c.metadata.get("tags", []) for c in executed.cells)
    check_out = executed.cells[2].outputs[0]["text"]
    assert check_out.startswith("✗ 99.1: not written yet")   # what a learner sees before writing anything
    if ok:
        assert "passed on the solution: 99.1" in executed.cells[-1].outputs[0]["text"]
    else:
        assert "x=3" in (run.error or "") or "99.1" in (run.error or "")


@pytest.mark.slow
def test_no_traceback_and_readable_pages_in_the_built_course(built_course):
    """No built output shows a traceback (07's test server once printed one), and every built file is 0644."""
    out, runs = built_course
    for run in runs.values():
        text = Path(run.ipynb).read_text(encoding="utf-8")
        assert "Traceback (most recent call last)" not in text, f"{run.name}: a traceback in the built output"
    for path in [*out.glob("*.html"), *out.glob("*.ipynb")]:
        assert path.stat().st_mode & 0o777 == 0o644, f"{path.name}: mode {path.stat().st_mode & 0o777:o}"


PARTS = json.loads((ROOT / "data" / "course_map.json").read_text(encoding="utf-8"))["parts"]


def test_the_parts_cover_every_notebook_once():
    numbers = [n for part in PARTS for n in part["notebooks"]]
    assert sorted(numbers) == [p.name[:2] for p in NOTEBOOKS]


@pytest.mark.parametrize("part", PARTS, ids=[f"part{p['n']}" for p in PARTS])
def test_every_part_has_a_design_exercise_with_a_worked_answer(part):
    designs = [e for p in NOTEBOOKS if p.name[:2] in part["notebooks"]
               for e in ex.exercise_cells(_cells(p)).values() if e.design]
    assert designs, f"part {part['n']} ({part['title']}): no design exercise"
    assert all(e.solution is not None for e in designs), "a design exercise without its worked answer"
