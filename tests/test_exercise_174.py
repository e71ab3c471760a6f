"""Exercise 17.4 (Cline's halving): the notebook's own check rejects plausible wrong answers and takes the solution.

The wrong answers are the exercise's wrong implementations in ``nanohermes_nb/course/wrong/nb17.py`` (the ones
``make course`` runs in a kernel): here the check cell of ``notebooks/17_policy_lab.ipynb``, run as the notebook
runs it but without a kernel, must answer ``✗`` to every one, and each must be wrong on a length a learner would try.
"""

import json
from pathlib import Path

import pytest

from nanohermes_nb.course.wrong import wrong_implementations
from nanohermes_nb.transcripts import load_transcripts

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "17_policy_lab.ipynb"


def _cell(cell_id: str) -> str:
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    return "".join(next(c for c in cells if c.get("id") == cell_id)["source"])


WRONG_174 = {w.name: w.code(_cell("ag37-12")) for w in wrong_implementations("17.4")}


@pytest.fixture(scope="module")
def namespace():
    return {"transcripts": load_transcripts(ROOT / "data" / "transcripts")}


def _run(namespace: dict, answer: str) -> str:
    import contextlib
    import io

    ns = dict(namespace)
    exec(answer, ns)  # noqa: S102 - the learner's cell, as the notebook runs it
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_cell("ag37-11"), ns)  # noqa: S102 - the notebook's own check cell
    return out.getvalue().strip()


def test_the_exercise_keeps_its_wrong_implementations():
    assert len(WRONG_174) >= 3


@pytest.mark.parametrize("name", sorted(WRONG_174))
def test_the_check_rejects_a_wrong_implementation(namespace, name):
    line = _run(namespace, WRONG_174[name])
    assert line.startswith("✗ 17.4") and "\n" not in line, (name, line)


def test_the_check_takes_the_solution_and_rejects_the_starter(namespace):
    assert _run(namespace, _cell("ag37-12")).splitlines()[-1] == "✓ 17.4: right"
    assert "not written yet" in _run(namespace, _cell("ag37-10"))


def test_the_wrong_answers_are_wrong_somewhere_a_learner_would_look():
    """Each wrong answer differs from the policy's function on a small, real length (not only at 80 turns)."""
    from nanohermes_nb.policies.cline import next_truncation_range

    for name, answer in WRONG_174.items():
        ns: dict = {}
        exec(answer, ns)  # noqa: S102
        roles = lambda n: ["user" if k % 2 == 0 else "assistant" for k in range(n)]  # noqa: E731
        assert any(tuple(ns["my_truncation_range"](n, keep)) != tuple(next_truncation_range(n, roles(n), None, keep))
                   for n in range(3, 30) for keep in ("half", "quarter")), name
