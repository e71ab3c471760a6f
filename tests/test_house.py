"""The house rules a maintainer can check: no module over 500 lines, no function over 60 (issue 25); imports
flow one way through the layers, and no module imports another's private names; one atomic writer; what a
type checker sees of the public names is what loads at run time (issue 34)."""

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


def type_checking_imports(init: Path) -> dict[str, str]:
    """name -> module (relative to the package) of every import in ``init``'s ``if TYPE_CHECKING:`` block."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1 and imp.module
                found.update({alias.name: imp.module for alias in imp.names})
    return found


def test_every_public_name_is_in_the_type_checking_block_from_the_module_that_loads_it():
    """``nanohermes_nb.__init__`` loads its names lazily (``_EXPORTS``); a type checker and an editor see only the
    ``TYPE_CHECKING`` imports, so the two must list the same names from the same modules (``find_sessions`` was
    missing)."""
    import nanohermes_nb

    seen = type_checking_imports(PACKAGE / "__init__.py")
    assert seen == dict(nanohermes_nb._EXPORTS)


# CONTRIBUTING.md: imports flow one way. A module may import from its own layer and the layers before it.
LAYERS = ("context", "transcripts", "policies", "engine", "agent", "views", "course")
# entry points beside the stack: they may import any layer, and no layer imports them
OUTSIDE = frozenset({"cli", "peers", "__main__"})
# the package's own plumbing (files, lazy loading, the checkout, the shipped data): any layer may import it,
# and it imports no layer
BASE = frozenset({"_files", "_lazy", "_checkout", "_deprecated", "resources", "__init__"})


def imported_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """``(line, absolute module)`` of every import in ``path`` (relative ones resolved; imports inside functions
    and ``TYPE_CHECKING`` blocks included: a lazy import is a dependency all the same)."""
    package = list(path.relative_to(root.parent).parts[:-1])  # what a relative import starts from
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            if node.module:
                found.append((node.lineno, module))
            else:  # from . import a, b: each name may be a submodule
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def layer(module: str, package: str) -> str | None:
    """The layer (or outside/base name) of a module of ``package``; None for another package."""
    parts = module.split(".")
    if parts[0] != package:
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(root: Path) -> list[str]:
    """Every import in the package at ``root`` that goes against the layers, as ``file:line: a imports b``."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        mine = layer(".".join(path.relative_to(root.parent).with_suffix("").parts), root.name)
        for line, module in imported_modules(path, root):
            theirs = layer(module, root.name)
            if theirs is None or theirs == mine or mine in OUTSIDE:
                continue
            if mine in BASE and mine != "__init__":
                ok = theirs in BASE
            elif mine == "__init__":
                ok = True  # the package's lazy public names
            else:
                ok = theirs in BASE or (theirs in LAYERS and LAYERS.index(theirs) <= LAYERS.index(mine))
            if not ok:
                bad.append(f"{path.relative_to(root.parent)}:{line}: {mine} imports {module}")
    return bad


def test_imports_flow_one_way_through_the_layers():
    assert {p.name.removesuffix(".py") for p in PACKAGE.iterdir() if not p.name.startswith(".")} - {"__pycache__"} \
        <= set(LAYERS) | OUTSIDE | BASE, "a new top-level module: give it a place in LAYERS, OUTSIDE or BASE"
    assert upward_imports(PACKAGE) == []


def test_the_layer_check_sees_an_upward_import(tmp_path):
    pkg = tmp_path / "nanohermes_nb"
    for name, text in {"context/a.py": "def f():\n    from ..views.report import x\n",
                       "context/b.py": "from .a import f\nfrom nanohermes_nb.engine import ledger\n",
                       "engine/c.py": "from ..context import a\nfrom .. import _files\nfrom ..cli import main\n",
                       "views/d.py": "from ..agent import loop\nfrom ..engine.c import g\n",
                       "_files.py": "from .engine import c\n"}.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text, encoding="utf-8")
    assert upward_imports(pkg) == [
        "nanohermes_nb/_files.py:1: _files imports nanohermes_nb.engine",
        "nanohermes_nb/context/a.py:2: context imports nanohermes_nb.views.report",
        "nanohermes_nb/context/b.py:2: context imports nanohermes_nb.engine",
        "nanohermes_nb/engine/c.py:3: engine imports nanohermes_nb.cli",
    ]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(root: Path) -> list[str]:
    """Every private name (``_x``) one module of the package takes from another: ``from .m import _x``, or
    ``m._x`` on a module of the package it imported. What one module needs of another is public there."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root.parent)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        ours: set[str] = set()  # names bound to the package's own modules (or anything imported from them)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == root.name):
                ours |= {alias.asname or alias.name for alias in node.names}
                bad += [f"{where}:{node.lineno}: imports {alias.name}" for alias in node.names if _private(alias.name)]
            elif isinstance(node, ast.Import):
                ours |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == root.name}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in ours):
                bad.append(f"{where}:{node.lineno}: uses {node.value.id}.{node.attr}")
    return bad


def test_no_module_imports_another_modules_private_names():
    assert private_imports(PACKAGE) == []


def test_the_private_name_check_sees_each_form(tmp_path):
    pkg = tmp_path / "nanohermes_nb"
    (pkg / "engine").mkdir(parents=True)
    (pkg / "engine" / "a.py").write_text(
        "import argparse\nfrom agent.context_compressor import _peer\nfrom .b import _x, y, __version__\n"
        "from . import b\nfrom nanohermes_nb.engine import c as cc\n"
        "def f():\n    return b._z, cc._w, b.y, argparse._SubParsersAction, _peer\n", encoding="utf-8")
    assert private_imports(pkg) == ["nanohermes_nb/engine/a.py:3: imports _x", "nanohermes_nb/engine/a.py:7: uses b._z",
                                    "nanohermes_nb/engine/a.py:7: uses cc._w"]


def renames(root: Path) -> list[str]:
    """Every call of ``os.replace`` or ``os.rename`` in the package, as ``file:line``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("replace", "rename") and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "os"):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_one_atomic_writer():
    """Every file the package replaces goes through ``_files.AtomicOutput`` (there were five writers, each with
    its own temporary name, permissions and clean-up): the one rename of the package is there."""
    assert [r.split(":")[0] for r in renames(PACKAGE)] == ["nanohermes_nb/_files.py"]


def literal_defaults(root: Path) -> list[str]:
    """Every default of a parameter or a dataclass field that writes out the article's session budget
    (``budget: int = 120_000``) or its ``keep_recent`` (``keep_recent: int = 10``), outside ``Budgets``."""
    from nanohermes_nb.context.budgets import DEFAULT_BUDGETS

    budget, keep = DEFAULT_BUDGETS.context_char_budget, DEFAULT_BUDGETS.keep_recent
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root.parent)
        if where == Path("nanohermes_nb/context/budgets.py"):
            continue
        pairs: list[tuple[str, ast.expr, int]] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                positional = a.posonlyargs + a.args
                pairs += [(arg.arg, d, d.lineno) for arg, d in zip(positional[len(positional) - len(a.defaults):],
                                                                    a.defaults, strict=True)]
                pairs += [(arg.arg, d, d.lineno) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                pairs.append((node.target.id, node.value, node.lineno))
        for name, value, line in pairs:
            number = value.value if isinstance(value, ast.Constant) and type(value.value) is int else None
            if number is not None and (number == budget or (name == "keep_recent" and number == keep)):
                found.append(f"{where}:{line}: {name} = {number}")
    return found


def test_the_article_defaults_are_written_once_in_budgets():
    """120,000 and keep_recent 10 were written out in a dozen signatures; each now reads ``DEFAULT_BUDGETS``."""
    assert literal_defaults(PACKAGE) == []


def test_the_default_check_sees_a_number_written_out(tmp_path):
    pkg = tmp_path / "nanohermes_nb"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f(m, budget=120_000, *, keep_recent: int = 10, other=120_000):\n    pass\n"
                              "class C:\n    keep_recent: int = DEFAULT_BUDGETS.keep_recent\n    budget: int = 9\n",
                              encoding="utf-8")
    assert literal_defaults(pkg) == ["nanohermes_nb/a.py:1: budget = 120000", "nanohermes_nb/a.py:1: keep_recent = 10",
                                     "nanohermes_nb/a.py:1: other = 120000"]  # budget = 9 is another default


def test_mypy_checks_the_whole_package_in_make_lint():
    """mypy covered 44 of 121 files (context, engine, policies); it covers the package now, and ``make lint``
    runs it over the package whatever the configuration's file list says."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["files"] == ["nanohermes_nb"] and not config.get("exclude")
    lint = (ROOT / "Makefile").read_text(encoding="utf-8").split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "-m mypy nanohermes_nb" in lint and "ruff check nanohermes_nb" in lint
