"""CONTRIBUTING.md and docs/architecture.md describe the code as it is (issue 34).

Every name they cite in backticks (a file, a module, a function, a class, ``module.attr``) must
exist, and the tree of docs/architecture.md must name every module of the packages it lists
module by module. CONTRIBUTING described a policy interface (``apply(...) -> Applied``) and a
book hook (``request(...)``) that no longer existed, and the tree left out ``bill``,
``calibrate``, ``ccusage``, ``whatif``, ``quality``, ``cached`` and ``chunked``.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "nanohermes_nb"
DOCS = (ROOT / "CONTRIBUTING.md", ROOT / "docs" / "architecture.md")
# packages whose modules the tree lists one by one (policies and peers: one module per policy or peer)
LISTED = ("context", "transcripts", "transcripts/agentlogs", "engine", "agent", "agent/tools", "views", "course",
          "cli")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SHELL = ("make", "python", "nanohermes-nb", "pip", "git")
# names of the real code the peer policies are proven against (the peer libraries, codex-rs's Rust sources):
# cited as what a port follows, not defined here
EXTERNAL = frozenset({"trim_messages", "langchain_core.messages.trim_messages", "SummarizationMiddleware",
                      "SummarizationMiddleware.before_model", "ContextCompressor", "ContextCompressor.compress",
                      "ClearToolUsesEdit", "ClearToolUsesEdit.apply", "ObservationMaskingCondenser",
                      "ObservationMaskingCondenser.condense", "ConversationMemory.process_events", "compact.rs",
                      "tests/suite/compact.rs",
                      "name(arguments)"})  # and how an excerpt shows a tool call


@cache
def defined_names() -> frozenset[str]:
    """Every name the package defines: modules, functions, classes, methods, fields, assigned names."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        names.add(path.stem)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    import builtins

    import nanohermes_nb as nh

    return frozenset(names | set(nh.POLICIES) | set(dir(builtins)))  # a policy is cited by its registered name


@cache
def signatures() -> dict[str, list[tuple[int, int, frozenset[str], bool]]]:
    """name -> for each function, method or class of that name: (required positional, positional, parameter
    names, takes ``*args``/``**kwargs``), ``self``/``cls`` left out and a class by its ``__init__``."""
    out: dict[str, list[tuple[int, int, frozenset[str], bool]]] = {}

    def shape(f: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> tuple[int, int, frozenset[str], bool]:
        a = f.args
        positional = [x.arg for x in a.posonlyargs + a.args][1 if method else 0:]
        names = frozenset(positional + [x.arg for x in a.kwonlyargs])
        return len(positional) - len(a.defaults), len(positional), names, bool(a.vararg or a.kwarg)

    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        methods = {id(f) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body
                   if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.setdefault(node.name, []).append(shape(node, id(node) in methods))
            elif isinstance(node, ast.ClassDef):
                init = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
                fields = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)
                          and isinstance(s.target, ast.Name) and "ClassVar" not in ast.unparse(s.annotation)]
                out.setdefault(node.name, []).append(shape(init[0], True) if init else
                                                     (0, len(fields), frozenset(fields), not fields))
    return out


def _callable_as_cited(name: str, arguments: str) -> bool:
    """Whether a function of that name takes the arguments the doc shows (``...`` stands for any)."""
    shapes = signatures().get(name, [])
    if arguments.strip() == "...":
        return bool(shapes)
    given = [a.strip() for a in arguments.split(",") if a.strip()]
    positional = [a for a in given if "=" not in a and a != "..."]
    keywords = {a.split("=")[0].strip() for a in given if "=" in a}
    if keywords and not positional:  # an option shown alone (``compact(cut="backward")``): its name must exist
        return any(keywords <= names or rest for _low, _high, names, rest in shapes)
    return any((low <= len(positional) <= high or (rest and len(positional) >= low)) and (keywords <= names or rest)
               for low, high, names, rest in shapes)


def cited(text: str) -> list[str]:
    """The backticked spans of a Markdown text, outside fenced code blocks."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.findall(r"`([^`\n]+)`", prose)


def _resolves(dotted: str) -> bool:
    """``a.b.c`` names a module of the package and an attribute chain in it, or ends in a defined name."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(["nanohermes_nb", *parts[:k]]))
        except ImportError:
            continue
        for attr in parts[k:]:
            if not hasattr(value, attr):
                return False
            value = getattr(value, attr)
        return True
    # a value's attribute (``env.excerpts``, ``Replay.books``), or what CONTRIBUTING says of the tests themselves
    return parts[-1] in defined_names() or _in_the_suite(parts)


# what pytest and pytest-xdist themselves provide, cited where CONTRIBUTING says how a test stays parallel-safe
PYTEST_NAMES = frozenset({"tmp_path", "monkeypatch", "xdist_group"})


def _in_the_suite(parts: list[str]) -> bool:
    """``clocks.FakeClock`` names a helper module of tests/ and a name it defines; one name a registered marker
    (pyproject.toml), a fixture or helper the tests define, or one of pytest's own."""
    if len(parts) == 2 and (ROOT / "tests" / f"{parts[0]}.py").is_file():
        return parts[1] in _names_in(ROOT / "tests" / f"{parts[0]}.py")
    if len(parts) != 1:
        return False
    block = re.search(r"^markers = \[(.*?)^\]", (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M | re.S)
    markers = set(re.findall(r'^\s*"(\w+):', block.group(1), re.M)) if block else set()  # no tomllib on 3.10
    return parts[0] in markers | PYTEST_NAMES or any(parts[0] in _names_in(f) for f in (ROOT / "tests").glob("*.py"))


@cache
def _names_in(path: Path) -> frozenset[str]:
    """The functions, classes and assigned names a file of the tests defines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(n.name if not isinstance(n, ast.Name) else n.id for n in ast.walk(tree)
                     if isinstance(n, (ast.FunctionDef, ast.ClassDef)) or (isinstance(n, ast.Name)
                                                                           and isinstance(n.ctx, ast.Store)))


def problem(span: str) -> str | None:
    """Why a cited span names nothing that exists (None when it does, or when it is not a name)."""
    span = span.strip()
    if span in EXTERNAL:
        return None
    if "<" in span or "*" in span or span.startswith(("-", "@", "../")) or span.split(" ")[0] in _SHELL:
        return None  # a template, a glob, an option, a decorator-like mark, a command line
    if "/" in span or re.search(r"\.(py|md|json|csv|toml|yml)$", span):
        path = span.rstrip("/")
        found = (ROOT / path).exists() or (PACKAGE / path).exists() or (
            "/" not in path and any(next((ROOT / d).rglob(path), None) for d in ("data", "docs", "tests")))
        return None if found else f"no file {span}"
    call = re.fullmatch(r"([\w.]+)\((.*)\)", span.split(" -> ")[0].strip())
    code = call.group(1) if call else span.split(" -> ")[0].strip().rstrip(":")
    if not _IDENTIFIER.fullmatch(code):
        return None  # prose in backticks (``message 12``), an expression
    if call and not _callable_as_cited(code.split(".")[-1], call.group(2)):
        return f"no {code.split('.')[-1]} takes ({call.group(2)})"
    returns = span.split(" -> ")[1].strip() if " -> " in span else ""
    for name in [code, *re.findall(r"[A-Za-z_]\w*", returns)]:
        if name in ("tuple", "list", "None", "str", "int", "dict", "bool"):
            continue
        if not _resolves(name):
            return f"{name} is not defined in the package"
    return None


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_name_the_doc_cites_exists(doc: Path) -> None:
    spans = cited(doc.read_text(encoding="utf-8"))
    assert len(spans) > 40
    assert [f"`{s}`: {why}" for s in spans if (why := problem(s))] == []


def tree_entries(text: str) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The architecture tree as ``(entries, words)``: package -> the names of its entries, and package -> the
    words of a package entry's description (``tools/  toolbox (dispatch), specs ...``), continuation lines
    included; the top level is ``""``."""
    block = text.split("```\nnanohermes_nb/\n", 1)[1].split("```", 1)[0]
    entries: dict[str, set[str]] = {"": set()}
    words: dict[str, set[str]] = {}
    stack: list[str] = []
    last: str | None = None  # the last package entry, whose description a continuation line goes on
    for line in block.splitlines():
        m = re.match(r"^((?:│   |    )*)[├└]── (\S.*?)(?:\s{2,}(.*))?$", line)
        if m is None:
            if last is not None:
                words[last].update(re.findall(r"[a-z_]+", line))
            continue
        stack = stack[:len(m.group(1)) // 4]
        head, description = m.group(2), m.group(3) or ""
        names = [n.strip().rstrip("/") for n in head.split(",")]
        entries.setdefault("/".join(stack), set()).update(names)
        last = None
        if head.endswith("/"):
            stack.append(names[0])
            last = "/".join(stack)
            words[last] = set(re.findall(r"[a-z_]+", description))
    return entries, words


def modules_of(folder: Path) -> set[str]:
    return ({p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
            | {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()})


def test_the_tree_names_every_module_and_only_modules_that_exist() -> None:
    entries, words = tree_entries((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert entries[""] == modules_of(PACKAGE) - {p.stem for p in PACKAGE.glob("*.py")}  # the subpackages
    for package in LISTED:
        modules = modules_of(PACKAGE / package)
        named = entries.get(package, set())
        assert named - modules == set(), f"{package}: the tree names modules that do not exist"
        assert modules - named - words.get(package, set()) == set(), f"{package}: modules the tree does not name"


def test_every_policy_is_named_in_the_architecture() -> None:
    import nanohermes_nb as nh

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert [name for name in nh.POLICIES if f"`{name}`" not in text] == []


def test_the_checks_fail_on_a_name_that_is_gone() -> None:
    assert problem("apply(context, env) -> Applied") == "no apply takes (context, env)"  # the old interface
    assert problem("compact(context, env, size) -> tuple[list, Event | None]") is None
    assert problem("fill_row(...)") is not None and problem("stretch(...)") is None
    assert problem("apply_policy(policy, messages, budget=...)") is None
    assert problem("apply_policy(policy, messages, nonsense=...)") is not None
    assert problem("applied_policy(context)") == "no applied_policy takes (context)"
    assert problem("applied_policy") == "applied_policy is not defined in the package"
    assert problem("compact(context, env, size) -> NoSuchEvent") == "NoSuchEvent is not defined in the package"
    assert problem("engine/books.py") is None and problem("engine/no_such.py") == "no file engine/no_such.py"
    assert problem("policies.summary_prefixes()") is None and problem("policies.no_such()") is not None
    assert problem("make test-fast") is None and problem("message 12") is None
    entries, words = tree_entries("```\nnanohermes_nb/\n├── engine/   the engine\n│   ├── ledger   x\n"
                                  "│   └── sweep, grid   y\n└── cli/   parser,\n            ledger\n```\n")
    assert entries == {"": {"engine", "cli"}, "engine": {"ledger", "sweep", "grid"}}
    assert words == {"engine": {"the", "engine"}, "cli": {"parser", "ledger"}}
