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
    assert built.cells[4].source == nb.cells[2].source and "prove(['99.1']" in built.cells[-1].source
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


# ---------------------------------------------------------------- wrong implementations: checks that catch wrong code


def _exercises():
    """(notebook name, Exercise, cells) of every exercise of every notebook."""
    for path in NOTEBOOKS:
        cells = _cells(path)
        for e in ex.exercise_cells(cells).values():
            yield path.name, e, cells


IMPLEMENT = [(name, e, cells) for name, e, cells in _exercises() if e.implement and not e.design]
PREDICT = [(name, e, cells) for name, e, cells in _exercises() if not e.implement and not e.design]


def test_every_implement_exercise_keeps_three_wrong_implementations_and_each_applies():
    """At least 3 per implement exercise, 66 in all; each is its solution with an edit that applies, and differs."""
    from nanohermes_nb.course.wrong import definitions, wrong_implementations

    registered = wrong_implementations()
    assert len(registered) >= 66, f"{len(registered)} wrong implementations registered; the course keeps 66 or more"
    by_id = {e.id: (name, cells[e.solution].source) for name, e, cells in IMPLEMENT}
    orphans = sorted({w.exercise for w in registered} - set(by_id))
    assert not orphans, f"wrong implementations registered for exercises that are not implement exercises: {orphans}"
    few = [f"{name} {e}: {sum(w.exercise == e for w in registered)}" for e, (name, _) in by_id.items()
           if sum(w.exercise == e for w in registered) < 3]
    assert not few, "implement exercises with fewer than 3 wrong implementations (nanohermes_nb/course/wrong/): " + \
        "; ".join(few)
    for w in registered:
        solution = by_id[w.exercise][1]
        code = w.code(solution)  # raises, naming it, when an edit no longer applies to the solution
        compile(code, f"wrong implementation {w.exercise} {w.name!r}", "exec")
        assert code != definitions(solution), f"{w.exercise} {w.name!r} is the solution itself"
    assert len({(w.exercise, w.name) for w in registered}) == len(registered), "two wrong implementations share a name"


def test_a_wrong_implementation_must_name_what_it_changes():
    from nanohermes_nb.course.wrong import WrongImplementation

    with pytest.raises(ValueError, match="either replace or source"):
        WrongImplementation("1.1", "nothing")
    bad = WrongImplementation("1.1", "gone", replace=(("x + x", "x"),))
    with pytest.raises(ValueError, match="'x \\+ x' is not in the solution"):
        bad.code("def f(x):\n    return 2 * x")
    kept = WrongImplementation("1.1", "off by one", replace=(("2 * x", "2 * x + 1"),))
    assert kept.code("import math\n\n\ndef f(x):\n    return 2 * x\n\n\nprint(f(3))\n") == \
        "import math\n\n\ndef f(x):\n    return 2 * x + 1"            # the definitions only: the print is not run


def test_for_build_runs_each_wrong_implementation_before_the_solution(monkeypatch):
    from nanohermes_nb.course.wrong import WrongImplementation

    wrongs = [WrongImplementation("99.1", "adds", replace=(("2 * x", "x + 2"),)),
              WrongImplementation("99.1", "halves", source="def double(x):\n    return x // 2")]
    monkeypatch.setattr(ex, "_wrong_for", lambda exercise: wrongs if exercise == "99.1" else [])
    built = ex.for_build(_notebook("return 2 * x"))
    ids = [c.get("id") for c in built.cells]
    assert ids[3:9] == ["injected-wrong-99.1-0", "injected-wrong-check-99.1-0", "injected-wrong-99.1-1",
                        "injected-wrong-check-99.1-1", "injected-solution-99.1", "injected-check-99.1"]
    assert 'attempt("99.1", "adds")' in built.cells[3].source.replace("'", '"') and "x + 2" in built.cells[3].source
    assert "[('99.1', 'adds'), ('99.1', 'halves')]" in built.cells[-1].source


def test_prove_fails_when_a_wrong_implementation_passes(capsys):
    ex.reset()
    ex.check("3.1", lambda: ex.close_to(None, 1))           # the starter
    ex.attempt("3.1", "off by one")
    ex.check("3.1", lambda: ex.close_to(2, 1))               # rejected
    ex.attempt("3.1", "the same in disguise")
    ex.check("3.1", lambda: None)                            # passed: the check cannot tell
    ex.check("3.1", lambda: None)                            # the solution
    assert ex.verdicts() == {"3.1": [False, True]}
    assert ex.attempts() == {("3.1", "off by one"): False, ("3.1", "the same in disguise"): True}
    with pytest.raises(AssertionError, match="3.1: the wrong implementation 'the same in disguise' passed"):
        ex.prove(["3.1"], [("3.1", "off by one"), ("3.1", "the same in disguise")])
    with pytest.raises(AssertionError, match="'never tried' was never checked"):
        ex.prove(["3.1"], [("3.1", "never tried")])
    assert "rejected all 1 wrong implementation" in ex.prove(["3.1"], [("3.1", "off by one")])


@pytest.mark.slow  # starts a kernel
def test_the_build_fails_when_a_check_passes_a_wrong_implementation(tmp_path, monkeypatch):
    from nanohermes_nb.course.wrong import WrongImplementation

    sneaky = [WrongImplementation("99.1", "right only on the cases", replace=(("2 * x", "x + x + (x == 7)"),))]
    monkeypatch.setattr(ex, "_wrong_for", lambda exercise: sneaky)
    path = tmp_path / "99_demo.ipynb"
    nbformat.write(_notebook("return 2 * x"), path)
    run = execute_notebook(path, tmp_path / "out", timeout=60)
    assert not run.ok and "'right only on the cases' passed" in (run.error or "")


@pytest.mark.slow
def test_every_wrong_implementation_was_rejected_in_the_built_course(built_course):
    """The executed course: every notebook's proof names how many wrong implementations its checks rejected."""
    import re

    from nanohermes_nb.course.wrong import wrong_implementations

    _, runs = built_course
    rejected = 0
    for run in runs.values():
        assert run.ok, f"{run.name}: {run.problem}"
        text = "".join(o.get("text", "") for c in nbformat.read(run.ipynb, as_version=4).cells
                       if ex.PROOF in c.metadata.get("tags", []) for o in c.get("outputs", []))
        rejected += sum(int(n) for n in re.findall(r"rejected all (\d+) wrong implementation", text))
    assert rejected == len(wrong_implementations()) >= 66


# ---------------------------------------------------------------- predict exercises: the answer is not in the check


def test_every_predict_exercise_is_judged_out_of_sight():
    """A predict exercise's check cell computes nothing: it hands the answers and the notebook's objects to
    ``predictions.judge``, which works out the true value where the learner cannot read it off the cell."""
    import ast

    from nanohermes_nb.course.predictions import judges

    registered, problems = judges(), []
    for name, e, cells in PREDICT:
        where = f"{name} exercise {e.id}"
        if e.id not in registered:
            problems.append(f"{where}: no judge in nanohermes_nb/course/predictions/")
        tree = ast.parse(cells[e.check].source)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nanohermes_nb.course."):
                continue
            call = node.value if isinstance(node, ast.Expr) else None
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "check":
                calls = [c for c in ast.walk(node.value) if isinstance(c, ast.Call)]
                named = sorted({getattr(c.func, "id", "") or ast.unparse(c.func) for c in calls} - {"check", "judge"})
                if named:
                    problems.append(f"{where}: the check cell computes ({', '.join(named)}); let the judge do it")
                continue
            problems.append(f"{where}: the check cell does more than import and call check(..., judge(...)): "
                            f"{ast.unparse(node)[:60]}")
    stale = sorted(set(registered) - {e.id for _, e, _ in PREDICT})
    assert not stale, f"judges for exercises that are not predict exercises: {stale}"
    assert not problems, "\n".join(problems)
