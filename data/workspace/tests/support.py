"""Helpers for the tests: parametrized cases and readable equality failures."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Callable, Iterable

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def params(items: Iterable[tuple[str, tuple]]) -> Callable:
    """Run the decorated test once per ``(case_id, args)``."""
    items = list(items)

    def mark(fn: Callable) -> Callable:
        fn.params = items
        return fn

    return mark


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def expect_equal(actual, expected, what: str = "value") -> None:
    """Fail with the expected and actual values, and a diff when both are text."""
    if actual == expected:
        return
    lines = [f"{what} differs"]
    if isinstance(actual, str) and isinstance(expected, str):
        lines += ["--- expected", expected, "--- actual", actual, "--- diff"]
        lines += difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                      "expected", "actual", lineterm="")
    else:
        lines += [f"expected: {expected!r}", f"actual:   {actual!r}"]
    raise AssertionError("\n".join(lines))
