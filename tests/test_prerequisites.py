"""Prerequisites run forwards: no package name is used before the notebook that teaches it (issue 28)."""

import json

import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.course import prerequisites as pre
from nanohermes_nb.course.build import notebook_paths

NOTEBOOKS = notebook_paths(ROOT / "notebooks")
MAP = json.loads((ROOT / "data" / "course_map.json").read_text(encoding="utf-8"))
TEACHER = pre.teaching_notebooks(MAP)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_name_is_used_before_its_lesson(path):
    assert pre.problems(path.name[:2], nbformat.read(path, as_version=4).cells, TEACHER) == []


def test_every_taught_name_exists_and_is_used_where_it_is_taught():
    used = {n: {u.name for u in pre.uses_in_cells(nbformat.read(p, as_version=4).cells)}
            for n, p in ((p.name[:2], p) for p in NOTEBOOKS)}
    for name, number in TEACHER.items():
        assert name in used[number], f"notebook {number} is said to teach {name} but never uses it"


def _cells(*sources, preview=None):
    cells = [nbformat.v4.new_code_cell(s) for s in sources]
    if preview is not None:
        cells.insert(0, nbformat.v4.new_markdown_cell(preview, metadata={"tags": [pre.PREVIEW_TAG]}))
    return cells


def test_uses_resolve_through_modules_to_the_name():
    cells = _cells("x = nh.DEFAULT_BUDGETS.session\nnh.agent.prompt.MODES\nnh.context",
                   "from nanohermes_nb.context.clamp import utf8_boundary, clamp_report as cr\n%time 1",
                   "from nanohermes_nb.course.exercises import check")
    assert [u.name for u in pre.uses_in_cells(cells)] == ["DEFAULT_BUDGETS", "MODES", "utf8_boundary",
                                                         "clamp_report"]


def test_a_use_ahead_of_its_lesson_needs_a_preview_naming_it_and_its_notebook():
    teacher = {"replay": "08", "clamp": "07"}
    cells = _cells("nh.replay([])", "nh.clamp('x', 3)")
    assert len(pre.problems("03", cells, teacher)) == 2
    assert pre.problems("09", cells, teacher) == []
    half = _cells("nh.replay([])", "nh.clamp('x', 3)", preview="`replay` is taught in notebook 08.")
    assert [p.split(" ")[2] for p in pre.problems("03", half, teacher)] == ["nanohermes_nb.clamp"]
    both = _cells("nh.replay([])", "nh.clamp('x', 3)",
                  preview="`replay` (notebook 08) and `clamp` (notebook 07) are used here before their lessons.")
    assert pre.problems("03", both, teacher) == []
    assert "no notebook" in pre.problems("09", _cells("nh.sweep"), teacher)[0]


def test_a_name_taught_twice_is_an_error():
    with pytest.raises(ValueError, match="taught by both"):
        pre.teaching_notebooks({"notebooks": [{"file": "01_a", "teaches": ["x"]}, {"file": "02_b", "teaches": ["x"]}]})
