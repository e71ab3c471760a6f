"""Wrong implementations: plausible mistakes that each implement exercise's check must reject.

A check that passes wrong code teaches nothing. So every implement exercise keeps a few wrong
implementations a learner could plausibly write (an off-by-one at the cut, characters for bytes,
``<`` for ``<=`` at an exact fit, an untrimmed summary, the first read kept instead of the last, …),
and ``make course`` runs each one against the exercise's check: ``exercises.for_build`` inserts, after
the check on the untouched starter, every wrong implementation followed by the check again, then the
solution and the check once more; ``exercises.prove`` fails the notebook if a wrong implementation
passed. So every build proves that each check fails on the starter, rejects every wrong
implementation, and passes on the solution.

The registry is data: one module per notebook in this package (``nb07.py`` for notebook 07), each with
a list ``WRONG`` of :class:`WrongImplementation`. A wrong implementation is written either as edits
of the exercise's solution (``replace``: pairs of text, each of which must occur in it, so a solution
that changes under it fails loudly) or in full (``source``). Only the solution's definitions (its
imports, functions and classes) are used, never the code that runs after them. To add one: append
to the notebook's module (create it if needed); ``tests/test_exercises.py`` checks that it applies,
that it differs from the solution, and, through the built course, that its check rejects it.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["WrongImplementation", "wrong_implementations", "definitions"]


@dataclass(frozen=True)
class WrongImplementation:
    """One plausible mistake for exercise ``exercise`` ("7.1"), named by what it gets wrong."""

    exercise: str
    name: str
    replace: tuple[tuple[str, str], ...] = ()
    source: str | None = None

    def __post_init__(self) -> None:
        if (self.source is None) == (not self.replace):
            raise ValueError(f"wrong implementation {self.exercise} {self.name!r}: give either replace or source")

    def code(self, solution: str) -> str:
        """The code to run in place of the solution: the solution's definitions with the edits, or ``source``."""
        if self.source is not None:
            return self.source.strip("\n")
        code = definitions(solution)
        for old, new in self.replace:
            if old not in code:
                raise ValueError(
                    f"wrong implementation {self.exercise} {self.name!r}: {old!r} is not in the "
                    f"solution's definitions any more"
                )
            code = code.replace(old, new)
        return code


def definitions(source: str) -> str:
    """The imports, functions and classes of a cell, in order: what defines the answer, not what runs after it."""
    tree = ast.parse(source)
    kinds = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return "\n\n\n".join(ast.get_source_segment(source, node) or "" for node in tree.body if isinstance(node, kinds))


def wrong_implementations(
    exercise: str | None = None, modules: Sequence[str] | None = None
) -> list[WrongImplementation]:
    """Every registered wrong implementation (of one exercise, when given), in module and list order."""
    names = (
        modules
        if modules is not None
        else sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("nb"))
    )
    found: list[WrongImplementation] = []
    for name in names:
        found += list(importlib.import_module(f"{__name__}.{name}").WRONG)
    return [w for w in found if exercise is None or w.exercise == exercise]
