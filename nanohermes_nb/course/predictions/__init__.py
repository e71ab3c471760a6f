"""The expected answers of the predict exercises, kept out of the notebooks' check cells.

A predict exercise asks the learner for a value before they compute it. If its check cell
computed that value in plain sight (``nh.find_cut(trap, 4)``), the check cell would be the answer.
So each predict exercise's check cell only hands the learner's answers and the notebook's
objects to :func:`judge`, and the judge, kept here, works out the true value and says how the
answer is wrong without showing it (``exercises.Wrong``). A learner who wants the answer must
run the experiment, or open the folded solution.

One module per notebook (``nb07.py`` for notebook 07), each with a dict ``JUDGES`` from exercise id
to a function ``(*answers, **objects)`` that raises ``exercises.Wrong`` (or ``AssertionError``)
when an answer is wrong. ``tests/test_exercises.py`` checks that every predict exercise of every
notebook has a judge and that its check cell computes nothing itself.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

__all__ = ["judge", "judges", "Judge"]

Judge = Callable[..., Any]  # the learner's answers, then the notebook's objects by name; raises Wrong when wrong


def judges() -> dict[str, Judge]:
    """Every registered judge, by exercise id."""
    found: dict[str, Judge] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("nb"):
            found.update(importlib.import_module(f"{__name__}.{info.name}").JUDGES)
    return found


def judge(exercise: str, *answers: Any, **objects: Any) -> None:
    """Judge the learner's ``answers`` to predict exercise ``exercise``, given the notebook's ``objects``."""
    found = judges()
    if exercise not in found:
        raise KeyError(f"no judge for exercise {exercise} in nanohermes_nb.course.predictions")
    found[exercise](*answers, **objects)
