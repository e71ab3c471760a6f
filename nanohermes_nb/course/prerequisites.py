"""Prerequisites run forwards: no name of the package is used before the notebook that teaches it.

The course map (``data/course_map.json``) says, for each notebook, which of the package's names it
*teaches* (``"teaches": [...]``). This module derives, from the notebooks' code cells, every name of
the package each notebook *uses* (``nh.replay(...)``, ``nh.agent.prompt.MODES``,
``from nanohermes_nb.context.clamp import utf``), resolved against the package so that
``nh.DEFAULT_BUDGETS.session`` counts as a use of ``DEFAULT_BUDGETS``. A use is in order when the
teaching notebook comes no later than the using one, or when the using notebook introduces the name
where it is first used: a Markdown cell tagged ``preview`` that names it in backticks and says which
notebook teaches it ("notebook 13"). The course's own tooling (``nanohermes_nb.course``: checks,
the map, the build) is not a lesson and is left out.
"""

from __future__ import annotations

import ast
import importlib
import re
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import nanohermes_nb

__all__ = ["Use", "uses_in_cells", "teaching_notebooks", "problems", "PREVIEW_TAG"]

PREVIEW_TAG = "preview"
_ATTR = re.compile(r"\bnh((?:\.[A-Za-z_]\w*)+)")
_MAGIC = re.compile(r"^\s*[%!].*$", re.M)


@dataclass(frozen=True)
class Use:
    """One name of the package used in a notebook: the name and the dotted path it was reached by."""

    name: str
    path: str


def _resolve(dotted: Iterable[str], start: Any, prefix: str) -> Use | None:
    """Walk ``start.a.b.c`` while the objects are modules; the first non-module is the name used."""
    obj, path = start, prefix
    for part in dotted:
        try:
            nxt = getattr(obj, part)
        except AttributeError:
            try:
                nxt = importlib.import_module(f"{obj.__name__}.{part}")
            except (ImportError, AttributeError):
                return None
        path = f"{path}.{part}"
        if not isinstance(nxt, types.ModuleType):
            return None if path.startswith("nanohermes_nb.course") else Use(part, path)
        obj = nxt
    return None  # only a module was named (``nh.context``): nothing used yet


def _imports(source: str) -> list[Use]:
    """``from nanohermes_nb.x import A, B`` in a cell: uses of A and B (modules imported this way skipped)."""
    try:
        tree = ast.parse(_MAGIC.sub("", source))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nanohermes_nb"):
            module = importlib.import_module(node.module or "nanohermes_nb")
            for alias in node.names:
                use = _resolve([alias.name], module, module.__name__)
                if use is not None:
                    found.append(use)
    return found


def uses_in_cells(cells: Iterable[Mapping[str, Any]]) -> list[Use]:
    """Every use of a package name in the code cells, in order of appearance (repeats kept)."""
    found: list[Use] = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        for match in _ATTR.finditer(source):
            use = _resolve(match.group(1).split(".")[1:], nanohermes_nb, "nanohermes_nb")
            if use is not None:
                found.append(use)
        found.extend(_imports(source))
    return found


def teaching_notebooks(course_map: Mapping[str, Any]) -> dict[str, str]:
    """name -> number of the notebook that teaches it, from the map's ``teaches`` lists."""
    teacher: dict[str, str] = {}
    for entry in course_map["notebooks"]:
        for name in entry.get("teaches", []):
            if name in teacher:
                raise ValueError(f"course map: {name!r} is taught by both {teacher[name]} and {entry['file'][:2]}")
            teacher[name] = entry["file"][:2]
    return teacher


def _previewed(cells: Iterable[Mapping[str, Any]]) -> str:
    """The text of a notebook's ``preview`` cells, where names are introduced ahead of their lesson."""
    return "\n".join("".join(c.get("source", "")) for c in cells
                     if c.get("cell_type") == "markdown" and PREVIEW_TAG in c.get("metadata", {}).get("tags", []))


def problems(number: str, cells: list[Mapping[str, Any]], teacher: Mapping[str, str]) -> list[str]:
    """What breaks the forward order in notebook ``number``: one line per name."""
    out, seen = [], set()
    preview = _previewed(cells)
    for use in uses_in_cells(cells):
        if use.name in seen:
            continue
        seen.add(use.name)
        taught = teacher.get(use.name)
        if taught is None:
            out.append(f"{number}: uses {use.path}, which no notebook's 'teaches' list in the course map names")
        elif taught > number and not (f"`{use.name}" in preview and f"notebook {taught}" in preview.lower()):
            out.append(f"{number}: uses {use.path} before notebook {taught} teaches it, with no 'preview' cell "
                       f"naming `{use.name}` and notebook {taught}")
    return out
