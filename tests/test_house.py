"""The house rules a maintainer can check (issue 25): no module over 500 lines, no function over 60."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "nanohermes_nb"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def sizes(root: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """Lines of every module under ``root`` and of every function (methods and nested functions included)."""
    modules, functions = [], []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(root.parent))
        modules.append((len(text.splitlines()), name))
        for node in ast.walk(ast.parse(text, filename=name)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((node.end_lineno - node.lineno + 1, f"{name}:{node.lineno} {node.name}"))
    return modules, functions


def test_no_module_over_500_lines_and_no_function_over_60():
    modules, functions = sizes(PACKAGE)
    assert len(modules) > 40 and len(functions) > 500  # the walk found the package
    assert [m for m in modules if m[0] > MAX_MODULE_LINES] == []
    assert [f for f in functions if f[0] > MAX_FUNCTION_LINES] == []


def test_the_size_check_sees_a_long_function_and_a_long_module(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "long.py").write_text("def f():\n" + "    x = 1\n" * 70 + "\n" * 450, encoding="utf-8")
    modules, functions = sizes(pkg)
    assert modules == [(521, "pkg/long.py")] and functions == [(71, "pkg/long.py:1 f")]
