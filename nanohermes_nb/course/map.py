"""The course map: which notebook teaches which section of the article, and the way through.

``data/course_map.json`` is the one source: the article's 28 section titles
(verbatim, with an English rendering) each mapped to the notebook and heading
where it is taught, and every notebook's title and prerequisites; the glossary of
the article's terms with the names the code uses is ``data/glossary.json`` beside it. From it come the first and
last cell of every notebook (the sections it covers, what to read first, the
previous and next notebook: ``update_navigation``), the course map notebook and
the home page of the built course.

Exercises follow one convention, checked by the tests: a Markdown cell tagged
``exercise`` that starts with ``**Exercise NN.k**`` (predict, then run), and a
code cell tagged ``solution`` that starts with ``# Solution NN.k``, asserts its
answer, and is shown collapsed (in JupyterLab and in the built HTML).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._files import write_text_atomic

__all__ = ["Section", "NotebookEntry", "CourseMap", "course_map", "anchor", "heading_text", "headings", "exercises",
           "update_navigation", "HEADER_TAG", "FOOTER_TAG", "EXERCISE_TAG", "SOLUTION_TAG"]

ROOT = Path(__file__).resolve().parents[2]
MAP_FILE = ROOT / "data" / "course_map.json"
GLOSSARY_FILE = ROOT / "data" / "glossary.json"  # the one glossary; the Chinese edition annotates from it too
HEADER_TAG, FOOTER_TAG = "course-header", "course-footer"
EXERCISE_TAG, SOLUTION_TAG = "exercise", "solution"
_EXERCISE = re.compile(r"^\*\*Exercise (\d+\.\d+)\*\*")
_SOLUTION = re.compile(r"^# Solution (\d+\.\d+)\b")


@dataclass(frozen=True)
class Section:
    """One section of the article and where the course teaches it."""

    n: int
    zh: str
    en: str
    notebook: str
    heading: str


@dataclass(frozen=True)
class NotebookEntry:
    file: str
    title: str
    prerequisites: tuple[str, ...] = ()

    @property
    def number(self) -> str:
        return self.file[:2]


@dataclass(frozen=True)
class CourseMap:
    article: dict
    notebooks: tuple[NotebookEntry, ...]
    sections: tuple[Section, ...]
    glossary: tuple[dict, ...]

    @classmethod
    def load(cls, path: str | os.PathLike = MAP_FILE) -> CourseMap:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        notebooks = tuple(NotebookEntry(n["file"], n["title"], tuple(n.get("prerequisites", ())))
                          for n in data["notebooks"])
        glossary = data.get("glossary")
        if glossary is None:  # the map's own list wins (tests); else the course's one glossary file beside it
            glossary = json.loads((Path(path).parent / GLOSSARY_FILE.name).read_text(encoding="utf-8"))["terms"]
        return cls(data["article"], notebooks, tuple(Section(**s) for s in data["sections"]), tuple(glossary))

    def entry(self, file: str) -> NotebookEntry:
        for e in self.notebooks:
            if e.file == file:
                return e
        raise KeyError(f"{file} is not in the course map")

    def by_number(self, number: str) -> NotebookEntry:
        return next(e for e in self.notebooks if e.number == number)

    def sections_of(self, file: str) -> list[Section]:
        return [s for s in self.sections if s.notebook == file]

    def neighbours(self, file: str) -> tuple[NotebookEntry | None, NotebookEntry | None]:
        files = [e.file for e in self.notebooks]
        i = files.index(file)
        return (self.notebooks[i - 1] if i > 0 else None,
                self.notebooks[i + 1] if i + 1 < len(files) else None)

    def frame(self):
        """The 28 sections as a table: number, Chinese title, English, notebook, heading."""
        import pandas as pd

        return pd.DataFrame([{"§": s.n, "article (中文)": s.zh, "in English": s.en, "notebook": s.notebook[:2],
                              "taught under": s.heading} for s in self.sections]).set_index("§")


def course_map(path: str | os.PathLike = MAP_FILE) -> CourseMap:
    """The course map of ``data/course_map.json``."""
    return CourseMap.load(path)


_INLINE = [(re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),         # a link or image: its text
           (re.compile(r"`([^`]*)`"), r"\1"),                          # inline code: its text
           (re.compile(r"(\*\*?)(?=\S)(.+?)(?<=\S)\1"), r"\2"),          # *emphasis*, **strong**
           (re.compile(r"(?<!\w)(__?)(?=\S)(.+?)(?<=\S)\1(?!\w)"), r"\2"),  # _emphasis_ (not snake_case)
           (re.compile(r"<[^>]+>"), "")]                                # inline HTML


def heading_text(heading: str) -> str:
    """A Markdown heading's text as a reader sees it: code, emphasis, links and HTML reduced to their text."""
    import html

    text = heading.strip()
    for pattern, repl in _INLINE:
        text = pattern.sub(repl, text)
    return html.unescape(text).strip()


def anchor(heading: str) -> str:
    """The link target JupyterLab gives a Markdown heading: its text as shown, with spaces as dashes.

    Double quotes and angle brackets are left out (they would break the site's links). The course
    site gives every heading the same id (``site_hooks.set_heading_ids``), so one link works in both.
    """
    return re.sub(r'["<>]', "", heading_text(heading).replace(" ", "-"))


def _tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def headings(path: str | os.PathLike) -> list[str]:
    """Every Markdown heading of a notebook, as text (without the ``#`` marks)."""
    import nbformat

    nb = nbformat.read(Path(path), as_version=4)
    out = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            out += [re.sub(r"^#+\s*", "", ln).strip() for ln in cell.source.splitlines() if re.match(r"^#{1,6} ", ln)]
    return out


def exercises(path: str | os.PathLike) -> tuple[list[str], list[str]]:
    """The exercise numbers of a notebook's ``exercise`` cells and of its ``solution`` cells, in order."""
    import nbformat

    nb = nbformat.read(Path(path), as_version=4)
    asked = [m.group(1) for c in nb.cells if EXERCISE_TAG in _tags(c)
             for m in [_EXERCISE.match(c.source.strip())] if m]
    solved = [m.group(1) for c in nb.cells if SOLUTION_TAG in _tags(c)
              for m in [_SOLUTION.match(c.source.strip())] if m]
    return asked, solved


def _link(entry: NotebookEntry, text: str | None = None) -> str:
    return f"[{text or f'{entry.number} · {entry.title}'}]({entry.file})"


def header_source(cmap: CourseMap, entry: NotebookEntry) -> str:
    """The first cell: title, the article sections taught here (linked to their headings), what to read first."""
    lines = [f"# {entry.number} · {entry.title}", ""]
    sections = cmap.sections_of(entry.file)
    if sections:
        lines.append("**Article sections taught here:** " + " · ".join(
            f"§{s.n} {s.zh} — *{s.en}* ([↓](#{anchor(s.heading)}))" for s in sections))
    elif entry.file != cmap.notebooks[0].file:
        lines.append("**Article sections taught here:** none — this notebook goes beyond the article.")
    prereq = [cmap.by_number(n) for n in entry.prerequisites]
    first = "**Read first:** " + (", ".join(_link(p) for p in prereq) if prereq else "nothing; start here")
    lines += ["", f"{first} · [the course map]({cmap.notebooks[0].file})"]
    return "\n".join(lines)


def footer_source(cmap: CourseMap, entry: NotebookEntry) -> str:
    """The last cell: previous and next notebook, and the map."""
    before, after = cmap.neighbours(entry.file)
    parts = [f"← {_link(before)}" if before else "← (start of the course)",
             f"[the course map]({cmap.notebooks[0].file})",
             f"{_link(after)} →" if after else "(end of the course) →"]
    return "---\n\n" + " · ".join(parts)


def _cell(nbformat: Any, source: str, tag: str) -> Any:
    cell = nbformat.v4.new_markdown_cell(source)
    cell.metadata["tags"] = [tag]
    cell["id"] = tag  # a fixed id: rewriting the cell causes no churn in git
    return cell


def _navigated(nb: Any, nbformat: Any, cmap: CourseMap, entry: NotebookEntry) -> Any:
    cells = [c for c in nb.cells if HEADER_TAG not in _tags(c) and FOOTER_TAG not in _tags(c)]
    for cell in cells:  # solutions stay folded in JupyterLab too
        if SOLUTION_TAG in _tags(cell):
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
    header, footer = _cell(nbformat, header_source(cmap, entry), HEADER_TAG), \
        _cell(nbformat, footer_source(cmap, entry), FOOTER_TAG)
    nb.cells = [header, *cells, footer]
    return nb


def update_navigation(folder: str | os.PathLike = ROOT / "notebooks", cmap: CourseMap | None = None, *,
                      write: bool = True) -> list[str]:
    """Rewrite every mapped notebook's header and footer cell from the map; return the names that changed."""
    import nbformat

    cmap = cmap or course_map()
    changed = []
    for entry in cmap.notebooks:
        path = Path(folder) / entry.file
        if not path.exists():
            continue
        before = path.read_text(encoding="utf-8")
        nb = _navigated(nbformat.reads(before, as_version=4), nbformat, cmap, entry)
        after = nbformat.writes(nb) + ("\n" if before.endswith("\n") else "")
        if after != before:
            changed.append(entry.file)
            if write:
                write_text_atomic(path, after)
    return changed


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import sys

    from .._checkout import missing_checkout

    missing = missing_checkout("python -m nanohermes_nb.course.map")
    if missing is not None:  # installed from a wheel: there is no repository to work on
        print(f"error: {missing}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="python -m nanohermes_nb.course.map",
                                     description="Rewrite each notebook's header and footer from data/course_map.json.")
    parser.add_argument("--check", action="store_true", help="exit 1 if any notebook is not current; change nothing")
    args = parser.parse_args(argv)
    changed = update_navigation(write=not args.check)
    for name in changed:
        print(f"{'out of date' if args.check else 'updated'}: {name}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(_main())
