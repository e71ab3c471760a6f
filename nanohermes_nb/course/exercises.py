"""Exercises: one layout for the whole course, checks that never reveal, and the proof the build runs.

Every exercise ``NN.k`` is four cells, tagged (nbformat cell tags):

- ``exercise`` — Markdown starting ``**Exercise NN.k**``: the task. An open-ended design task also
  carries the tag ``design``.
- ``starter`` — code starting ``# Starter NN.k``: the learner's cell. It sets up and prints nothing
  (so it cannot print the answer). When the learner writes a function, the cell is also tagged
  ``implement`` and the function raises ``NotImplementedError`` until written.
- ``check`` — code starting ``# Check NN.k``: calls :func:`check`, which runs the learner's answer
  against expectations computed from the package and prints one line, right or how it is wrong,
  never the expected value. A check does not raise, so "Run all" goes on past an unfinished exercise.
- ``solution`` — code starting ``# Solution NN.k``: folded, and all of a notebook's solutions sit
  under the one heading the course map names (``data/course_map.json``, ``layout.solutions_heading``):
  the notebook's last section, after its closing assertions.

:func:`for_build` turns a notebook into what ``make course`` executes: after each check cell it
inserts the exercise's solution and the check again, and at the end a cell that calls :func:`prove`.
So one run shows that every check failed on the untouched starter and passed on the solution, and
the build fails otherwise. Before the solution it also runs every registered wrong implementation of
the exercise (``nanohermes_nb.course.wrong``) against the check: each must be rejected.
:func:`for_reader` removes the inserted cells again (the proof's one
line stays), so the built pages show what a learner sees on a first run, and the solutions folded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Wrong", "check", "same_function", "same_value", "close_to", "verdicts", "prove", "reset", "Exercise",
           "attempt", "attempts",
           "exercise_cells", "layout_problems", "for_build", "for_reader", "solutions_heading", "counts",
           "EXERCISE", "STARTER", "CHECK", "SOLUTION", "IMPLEMENT", "DESIGN", "INJECTED"]

EXERCISE, STARTER, CHECK, SOLUTION, IMPLEMENT, DESIGN = "exercise", "starter", "check", "solution", "implement", \
    "design"
INJECTED = "injected-exercise"  # cells for_build inserts; for_reader removes all but the proof
PROOF = "exercise-proof"
_HEAD = {EXERCISE: re.compile(r"^\*\*Exercise (\d+\.\d+)\*\*"), STARTER: re.compile(r"^# Starter (\d+\.\d+)\b"),
         CHECK: re.compile(r"^# Check (\d+\.\d+)\b"), SOLUTION: re.compile(r"^# Solution (\d+\.\d+)\b")}
MAP_FILE = Path(__file__).resolve().parents[2] / "data" / "course_map.json"

_VERDICTS: dict[str, list[bool]] = {}
_ATTEMPTS: dict[tuple[str, str], bool] = {}  # (exercise, wrong implementation) -> did its check pass it?
_PENDING: list[tuple[str, str]] = []


class Wrong(AssertionError):
    """Raised inside a check's test: says how the answer is wrong, without the expected value."""


# ---------------------------------------------------------------- in the notebook: checks


def check(exercise: str, test: Callable[[], Any]) -> None:
    """Run ``test`` (which raises :class:`Wrong` or ``AssertionError`` when the answer is wrong); print one line.

    The verdict is recorded for :func:`prove` (and :func:`verdicts`). Returns None, so a check cell shows
    only its line.
    """
    message: str | None
    try:
        test()
    except NotImplementedError:
        message = "not written yet: the starter still raises NotImplementedError"
    except AssertionError as exc:
        message = str(exc).strip() or "not right yet"
    except Exception as exc:  # the learner's code may raise anything; say what, on one line
        message = f"your code raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
    else:
        message = None
    if _PENDING and _PENDING[-1][0] == exercise:
        _ATTEMPTS[_PENDING.pop()] = message is None
    else:
        _VERDICTS.setdefault(exercise, []).append(message is None)
    print(f"✓ {exercise}: right" if message is None else f"✗ {exercise}: {message}")


def _how(mine: Any, expected: Any) -> str:
    """How ``mine`` differs from ``expected``, without showing ``expected``."""
    if mine is None:
        return "no answer yet (still None)"
    if isinstance(expected, bool) or isinstance(mine, bool):
        return "the yes/no answer is the other one"
    if isinstance(expected, (int, float)) and isinstance(mine, (int, float)):
        return "too high" if mine > expected else "too low"
    if isinstance(expected, (str, bytes)) and isinstance(mine, type(expected)):
        if len(mine) != len(expected):
            return f"{abs(len(mine) - len(expected)):,} {'longer' if len(mine) > len(expected) else 'shorter'}"
        k = next(i for i, (a, b) in enumerate(zip(mine, expected, strict=False)) if a != b)
        return f"same length, first difference at position {k:,}"
    if isinstance(expected, (list, tuple)) and isinstance(mine, (list, tuple)):
        if len(mine) != len(expected):
            return f"{len(mine)} items where {len(expected)} are expected"
        k = next(i for i, (a, b) in enumerate(zip(mine, expected, strict=False)) if a != b)
        return f"item {k} differs ({_how(mine[k], expected[k])})"
    if type(mine) is not type(expected):
        return f"a {type(mine).__name__} where a {type(expected).__name__} is expected"
    return "the value differs"


def same_function(mine: Callable, reference: Callable, cases: Iterable[tuple[str, tuple, Mapping[str, Any]]]) -> int:
    """Raise :class:`Wrong` at the first case where ``mine(*args, **kw) != reference(*args, **kw)``.

    ``cases`` yields ``(label, args, kwargs)``; the label names the case (a transcript and a place in
    it) in the message. Returns the number of cases compared. The reference's result is never shown.
    """
    n = 0
    for label, args, kwargs in cases:
        expected = reference(*args, **kwargs)
        got = mine(*args, **kwargs)
        n += 1
        if got != expected:
            raise Wrong(f"differs from the package on {label}: {_how(got, expected)} ({n - 1} earlier cases agreed)")
    if n == 0:
        raise Wrong("no case was compared")
    return n


def same_value(mine: Any, expected: Any, what: str = "your answer") -> None:
    """Raise :class:`Wrong` unless ``mine == expected``; the message says how it differs, not what is expected."""
    if mine != expected:
        raise Wrong(f"{what}: {_how(mine, expected)}")


def close_to(mine: Any, expected: float, rel: float = 0.1, what: str = "your answer") -> None:
    """Raise :class:`Wrong` unless ``mine`` is a number within ``rel`` (relative) of ``expected``."""
    if not isinstance(mine, (int, float)) or isinstance(mine, bool) or math.isnan(mine):
        raise Wrong(f"{what} is {mine!r}, not a number yet")
    if abs(mine - expected) > rel * abs(expected):
        raise Wrong(f"{what} is {_how(mine, expected)} (more than {rel:.0%} off)")


def verdicts() -> dict[str, list[bool]]:
    """Every check's verdicts so far in this kernel, in order: exercise -> [right?, ...]."""
    return {k: list(v) for k, v in _VERDICTS.items()}


def reset() -> None:
    _VERDICTS.clear()
    _ATTEMPTS.clear()
    _PENDING.clear()


def attempt(exercise: str, name: str) -> None:
    """The next check of ``exercise`` judges the wrong implementation ``name`` (recorded apart, for :func:`prove`)."""
    _PENDING.append((exercise, name))


def attempts() -> dict[tuple[str, str], bool]:
    """Every wrong implementation checked so far in this kernel: (exercise, name) -> whether its check passed it."""
    return dict(_ATTEMPTS)


def prove(exercises: Sequence[str], wrong: Sequence[tuple[str, str]] = ()) -> str:
    """Assert that each exercise's check failed on its starter, rejected every wrong one, and passed the solution."""
    seen = verdicts()
    bad = [f"{e}: {'never checked' if e not in seen else 'starter passed' if seen[e][0] else 'solution failed'}"
           for e in exercises if seen.get(e, [True, False])[:1] != [False] or seen[e][-1:] != [True]]
    bad += [f"{e}: the wrong implementation {name!r} {'was never checked' if (e, name) not in _ATTEMPTS else 'passed'}"
            for e, name in wrong if _ATTEMPTS.get((e, name), True)]
    assert not bad, "exercise checks not proved: " + "; ".join(bad)
    line = f"{len(exercises)} exercise check(s) failed on the untouched starter and passed on the solution: " + \
        ", ".join(exercises)
    if wrong:
        line += f"; they rejected all {len(wrong)} wrong implementation(s) tried"
    print(line)
    return line


# ---------------------------------------------------------------- the layout


@dataclass(frozen=True)
class Exercise:
    """The cells of one exercise, by their index in the notebook."""

    id: str
    exercise: int | None = None
    starter: int | None = None
    check: int | None = None
    solution: int | None = None
    implement: bool = False
    design: bool = False

    def cells(self) -> tuple[int, int, int, int] | None:
        """``(exercise, starter, check, solution)``: where its four cells are, or None when one is missing."""
        if self.exercise is None or self.starter is None or self.check is None or self.solution is None:
            return None
        return self.exercise, self.starter, self.check, self.solution


def _tags(cell: Mapping[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _source(cell: Mapping[str, Any]) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def solutions_heading(path: str | Path = MAP_FILE) -> str:
    """The heading all solutions sit under, named by the course map."""
    return json.loads(Path(path).read_text(encoding="utf-8"))["layout"]["solutions_heading"]


def exercise_cells(cells: Sequence[Mapping[str, Any]]) -> dict[str, Exercise]:
    """The exercises of a notebook's cells, by id, in the order their task cells appear."""
    found: dict[str, dict[str, Any]] = {}
    for i, cell in enumerate(cells):
        tags = _tags(cell)
        for role in (EXERCISE, STARTER, CHECK, SOLUTION):
            if role in tags:
                m = _HEAD[role].match(_source(cell).strip())
                key = m.group(1) if m else f"?{i}"
                entry = found.setdefault(key, {"id": key})
                entry[role] = i
                entry["implement"] = entry.get("implement", False) or (role == STARTER and IMPLEMENT in tags)
                entry["design"] = entry.get("design", False) or (role == EXERCISE and DESIGN in tags)
    return {k: Exercise(**v) for k, v in found.items()}


def layout_problems(cells: Sequence[Mapping[str, Any]], number: str, heading: str) -> list[str]:
    """Everything in a notebook's cells that breaks the exercise layout (empty when it follows it)."""
    problems = []
    heads = [i for i, c in enumerate(cells) if c.get("cell_type") == "markdown"
             and re.search(rf"^#+\s*{re.escape(heading)}\s*$", _source(c), re.M)]
    if len(heads) > 1:
        problems.append(f"{len(heads)} '{heading}' headings")
    for ex in exercise_cells(cells).values():
        where = f"exercise {ex.id}"
        if ex.id.startswith("?"):
            problems.append(f"cell {ex.id[1:]}: a tagged exercise cell without its '**Exercise NN.k**' / '# Role NN.k' "
                            "first line")
            continue
        if not ex.id.startswith(f"{int(number)}."):
            problems.append(f"{where}: numbered for another notebook")
        places = ex.cells()
        if places is None:
            missing = [r for r in (EXERCISE, STARTER, CHECK, SOLUTION) if getattr(ex, r) is None]
            problems.append(f"{where}: no {', '.join(missing)} cell")
            continue
        task, starter, check_at, solution = places
        if not task < starter < check_at:
            problems.append(f"{where}: the task, starter and check are not in that order")
        kinds = {r: cells[k].get("cell_type") for r, k in zip((EXERCISE, STARTER, CHECK, SOLUTION), places,
                                                                strict=True)}
        if kinds != {EXERCISE: "markdown", STARTER: "code", CHECK: "code", SOLUTION: "code"}:
            problems.append(f"{where}: cell types {kinds}")
        if not heads or solution < heads[0]:
            problems.append(f"{where}: the solution is not under the '{heading}' heading")
        elif check_at > heads[0]:
            problems.append(f"{where}: the check comes after the '{heading}' heading")
        if not cells[solution].get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            problems.append(f"{where}: the solution is not folded")
        if f'check("{ex.id}"' not in _source(cells[check_at]):
            problems.append(f'{where}: the check cell does not call check("{ex.id}", ...)')
        if ex.implement and "NotImplementedError" not in _source(cells[starter]):
            problems.append(f"{where}: an implement starter that does not raise NotImplementedError")
        if re.search(r"\bprint\(|\bdisplay\(", _source(cells[starter])):
            problems.append(f"{where}: the starter prints (it must not show the answer)")
    return problems


def counts(cells: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many exercises of each kind: design (open-ended), implement (write a mechanism), the rest (predict)."""
    exs = exercise_cells(cells).values()
    design = sum(e.design for e in exs)
    impl = sum(e.implement and not e.design for e in exs)
    return {"implement": impl, "design": design, "other": len(exs) - impl - design}


# ---------------------------------------------------------------- the build


def _code(nbformat: Any, source: str, tag: str, cell_id: str) -> Any:
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [tag]})
    cell["id"] = cell_id
    return cell


def for_build(nb: Any) -> Any:
    """The notebook ``make course`` executes: each solution and its check again after the check on the starter.

    Returns a new notebook (the input is not changed); a notebook without exercises comes back as a copy.
    """
    import copy

    import nbformat

    out = copy.deepcopy(nb)
    exs = exercise_cells(out.cells)
    proved = [(e, e.check, e.solution) for e in exs.values()
              if e.starter is not None and e.check is not None and e.solution is not None]
    if not proved:
        return out
    after: dict[int, list] = {}
    tried: list[tuple[str, str]] = []
    for e, check_at, solution_at in proved:
        solution, check_source = _source(out.cells[solution_at]), _source(out.cells[check_at])
        after[check_at] = []
        for k, w in enumerate(_wrong_for(e.id)):
            after[check_at] += [
                _code(nbformat, "from nanohermes_nb.course.exercises import attempt\n\n"
                      f"attempt({e.id!r}, {w.name!r})\n\n{w.code(solution)}", INJECTED, f"injected-wrong-{e.id}-{k}"),
                _code(nbformat, check_source, INJECTED, f"injected-wrong-check-{e.id}-{k}")]
            tried.append((e.id, w.name))
        after[check_at] += [_code(nbformat, solution, INJECTED, f"injected-solution-{e.id}"),
                           _code(nbformat, check_source, INJECTED, f"injected-check-{e.id}")]
    cells = []
    for i, cell in enumerate(out.cells):
        cells += [cell, *after.get(i, [])]
    proof = _code(nbformat, "from nanohermes_nb.course.exercises import prove\n\n"
                  f"prove({[e.id for e, _c, _s in proved]!r}, {tried!r});", PROOF, "exercise-proof")
    footer = len(cells) - 1 if "course-footer" in _tags(cells[-1]) else len(cells)
    cells.insert(footer, proof)
    out.cells = cells
    return out


def _wrong_for(exercise: str) -> list[Any]:
    from .wrong import wrong_implementations

    return wrong_implementations(exercise)


def for_reader(nb: Any) -> Any:
    """The executed notebook as pages show it: the inserted solutions and re-checks removed, the proof kept."""
    nb.cells = [c for c in nb.cells if INJECTED not in _tags(c)]
    for c in nb.cells:
        if PROOF in _tags(c):
            c.metadata.setdefault("jupyter", {})["source_hidden"] = True
    return nb
