"""The Chinese edition of the course: one translation file per notebook, checked against the English.

``notebooks/zh/NN_name.md`` holds the Chinese prose of ``notebooks/NN_name.ipynb``, one block per
Markdown cell, each opened by a comment that names the English cell by its nbformat ``id`` and
the SHA-256 (first 12 hex digits) of that cell's English source::

    <!-- title -->
    课程地图

    <!-- cell 30ab0ab9 en_sha=1f2e3d4c5b6a -->
    这个笔记本是整门课的目录。……

A Markdown file, not JSON, so that a translator edits prose and a reviewer reads a plain diff.
When the English cell changes, its hash no longer matches and the translation is *stale*; a
cell with no block is *missing*. ``python -m nanohermes_nb.course.translations`` lists both (with the
English to translate); ``--stamp`` writes the hash into blocks that have none yet (a new
translation), never over an existing one, so a stale block stays stale until a person has
updated its Chinese, deleted its old hash and stamped it again.

The Chinese notebook is the English one with every Markdown cell replaced: code cells (and
their outputs, when the English notebook was executed) are the very same objects, so the two
editions cannot disagree on a number. The header and footer cells are generated from the
course map in Chinese, like the English ones. Two things are added to the prose on the way:
each English heading's link target, so that a link written for the English page
(``05_x.ipynb#The-skill-body``) lands on the same section of the Chinese one; and, on first
use in each notebook, the English of every term of ``data/glossary.json`` (``压缩（compaction）``).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import html
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._checkout import missing_checkout

__all__ = ["Translation", "Issue", "en_sha", "read_translation", "translation_path", "issues", "zh_notebook",
           "annotate_terms", "glossary_terms", "refused_forms", "term_problems", "stamp", "main", "ZH_DIR"]

ROOT = Path(__file__).resolve().parents[2]
ZH_DIR = ROOT / "notebooks" / "zh"
GLOSSARY = ROOT / "data" / "glossary.json"
HEADER_TAG, FOOTER_TAG = "course-header", "course-footer"
_BLOCK = re.compile(r"^<!-- (title|cell (\S+?)(?: en_sha=([0-9a-f]{12}))?) -->[ \t]*$", re.M)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*$", re.M)
_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
_PROTECTED = re.compile(r"```.*?```|`[^`\n]+`|<[^>\n]+>|\]\([^)\n]*\)|^#{1,6} [^\n]*$", re.M | re.S)


def en_sha(source: str) -> str:
    """The first 12 hex digits of the SHA-256 of an English cell's source (what a translation is keyed to)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Entry:
    """One translated cell: the hash of the English it translates (None until stamped) and the Chinese."""

    en_sha: str | None
    zh: str


@dataclass(frozen=True)
class Translation:
    """A notebook's translation file: the Chinese title and one entry per English Markdown cell id."""

    path: Path
    title: str
    cells: dict[str, Entry]


@dataclass(frozen=True)
class Issue:
    """A prose cell whose translation is missing or stale, or a translation with no English cell."""

    notebook: str
    cell_id: str
    kind: str  # "missing", "stale", "unstamped", "orphan" or "no-title"
    english: str = ""

    def __str__(self) -> str:
        return f"{self.notebook}: cell {self.cell_id}: {self.kind}"


def translation_path(notebook: str | os.PathLike, folder: str | os.PathLike = ZH_DIR) -> Path:
    return Path(folder) / (Path(notebook).stem + ".md")


def read_text(path: str | os.PathLike) -> str:
    """A UTF-8 text file, read only when it is a regular file (a FIFO is refused without blocking);
    anything else, a missing file or another encoding (GBK) is a ValueError naming the file, in one line."""
    from .._files import read_regular

    try:
        raw = read_regular(path)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except OSError as exc:  # NotRegularFile (a folder, a FIFO, a device) or unreadable
        raise ValueError(str(exc) if str(path) in str(exc) else f"{path}: cannot read ({exc.strerror or exc})") \
            from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                         "save the file as UTF-8") from None


def read_notebook(path: str | os.PathLike) -> Any:
    """An nbformat 4 notebook whose cells have ids (4.5 or later), or a ValueError naming the file, in one line."""
    import nbformat

    text = read_text(path)
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # JSON that is not a notebook (a list, a string): nbformat raises many kinds
        why = str(exc).splitlines()[0][:120] if str(exc) else ""
        raise ValueError(f"{path}: not a Jupyter notebook ({type(exc).__name__}{': ' if why else ''}{why})") from None
    if not isinstance(nb.get("cells"), list) or any(not isinstance(c, dict) for c in nb.cells):
        raise ValueError(f"{path}: not a Jupyter notebook (no list of cells)")
    missing = [k for k, c in enumerate(nb.cells) if not isinstance(c.get("id"), str)]
    if missing:
        version = f"{nb.get('nbformat')}.{nb.get('nbformat_minor')}"
        raise ValueError(f"{path}: cell {missing[0]} has no id (nbformat {version}); translations are keyed by "
                         "cell id: save it as nbformat 4.5 or later")
    return nb


def read_translation(path: str | os.PathLike) -> Translation:
    """Parse a translation file; a malformed one raises ValueError naming the file and line."""
    path = Path(path)
    text = read_text(path)
    marks = list(_BLOCK.finditer(text))
    if text.strip() and (not marks or text[:marks[0].start()].strip()):
        raise ValueError(f"{path}:1: text before the first <!-- cell ID --> or <!-- title --> marker")
    title, cells = "", {}
    line, counted = 1, 0  # the line of each marker, counted from the previous one (linear, not quadratic)
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        body = text[m.end():end].strip("\n").rstrip()
        line += text.count("\n", counted, m.start())
        counted = m.start()
        if m.group(1) == "title":
            title = body.strip()
        elif m.group(2) in cells:
            raise ValueError(f"{path}:{line}: cell {m.group(2)} is translated twice")
        else:
            cells[m.group(2)] = Entry(m.group(3), body)
    return Translation(path, title, cells)


def prose_cells(nb: Any) -> list[Any]:
    """The Markdown cells a translator writes (the generated header and footer are not among them)."""
    return [c for c in nb.cells if c.cell_type == "markdown"
            and not {HEADER_TAG, FOOTER_TAG} & set(c.get("metadata", {}).get("tags", []))]


def issues(notebook: str | os.PathLike, folder: str | os.PathLike = ZH_DIR) -> list[Issue]:
    """Every prose cell of ``notebook`` without a current translation, and every translation without a cell."""
    notebook = Path(notebook)
    nb = read_notebook(notebook)
    path = translation_path(notebook, folder)
    tr = read_translation(path) if path.exists() else Translation(path, "", {})
    out = [] if tr.title else [Issue(notebook.name, "-", "no-title")]
    english = {c.id: c.source for c in prose_cells(nb)}
    for cell_id, source in english.items():
        entry = tr.cells.get(cell_id)
        if entry is None or not entry.zh.strip():
            out.append(Issue(notebook.name, cell_id, "missing", source))
        elif entry.en_sha is None:
            out.append(Issue(notebook.name, cell_id, "unstamped", source))
        elif entry.en_sha != en_sha(source):
            out.append(Issue(notebook.name, cell_id, "stale", source))
    out += [Issue(notebook.name, cell_id, "orphan") for cell_id in tr.cells if cell_id not in english]
    return out


def stamp(notebook: str | os.PathLike, folder: str | os.PathLike = ZH_DIR) -> int:
    """Write the English hash into every block that has none yet; return how many were stamped."""
    nb = read_notebook(notebook)
    english = {c.id: c.source for c in prose_cells(nb)}
    path = translation_path(notebook, folder)
    text = read_text(path)
    count = 0

    def fill(m: re.Match) -> str:
        nonlocal count
        if m.group(1) == "title" or m.group(3) or m.group(2) not in english:
            return m.group(0)
        count += 1
        return f"<!-- cell {m.group(2)} en_sha={en_sha(english[m.group(2)])} -->"

    new = _BLOCK.sub(fill, text)
    if count:
        _write_atomic(path, new)
    return count


def _write_atomic(path: Path, text: str) -> None:
    """``text`` onto ``path`` through a temporary file and a rename; a link is followed, so the file it
    names is stamped and the link stays (``_files.write_atomic``)."""
    from .._files import write_text_atomic

    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise ValueError(str(exc) if str(path) in str(exc) else f"{path}: cannot write ({exc.strerror or exc})") \
            from None


# ---------------------------------------------------------------- building the Chinese notebook


def glossary_terms(path: str | os.PathLike = GLOSSARY) -> list[tuple[str, str]]:
    """(Chinese, English) of every glossary term the edition annotates, longest Chinese first."""
    terms = json.loads(Path(path).read_text(encoding="utf-8"))["terms"]
    pairs = [(t["zh"], t["en"]) for t in terms if t.get("annotate", True)]
    return sorted(pairs, key=lambda p: -len(p[0]))


def refused_forms(path: str | os.PathLike = GLOSSARY) -> dict[str, str]:
    """Every form the Chinese edition never writes (the glossary's ``refuse``), mapped to the article's form."""
    terms = json.loads(Path(path).read_text(encoding="utf-8"))["terms"]
    return {form: t["zh"] for t in terms for form in t.get("refuse", ())}


def term_problems(text: str, refused: dict[str, str]) -> list[str]:
    """What in a Chinese text is not the article's term: one line per refused form used (code spans included).

    Code is not exempt: a Chinese word in a code span or a link is prose the reader reads all the same.
    """
    return [f"writes {form!r} {text.count(form)} time(s); the article writes {article!r}"
            for form, article in refused.items() if form in text]


def annotate_terms(texts: Sequence[str], terms: Sequence[tuple[str, str]]) -> list[str]:
    """Mark the first use of each term across ``texts`` (a notebook's prose, in order) with its English.

    A use inside code, a link target, an HTML tag or a heading does not count, nor does one
    inside a longer term (``上下文`` in ``上下文窗口``); a use right next to a full-width
    parenthesis is taken only when the text has no other (nested brackets read badly). A use
    already followed by its English in full-width parentheses is left as it is.
    """
    out = list(texts)
    for zh, en in terms:
        longer = [t for t, _ in terms if len(t) > len(zh) and zh in t]
        for k, text in enumerate(out):
            at = _first_use(text, zh, en, longer)
            if at is None:
                continue
            end = at + len(zh)
            if not text.startswith(f"（{en}）", end):
                out[k] = f"{text[:end]}（{en}）{text[end:]}"
            break
    return out


def _first_use(text: str, term: str, english: str, longer: Sequence[str]) -> int | None:
    blocked = [m.span() for m in _PROTECTED.finditer(text)]
    for t in longer:
        blocked += [m.span() for m in re.finditer(re.escape(t), text)]
    fallback = None
    for m in re.finditer(re.escape(term), text):
        if any(a <= m.start() < b or a < m.end() <= b for a, b in blocked):
            continue
        if text.startswith(f"（{english}）", m.end()):
            return m.start()  # already bilingual here
        if text[m.end():m.end() + 1] in ("（", "）"):
            fallback = m.start() if fallback is None else fallback
            continue
        return m.start()
    return fallback


def _anchor(heading: str) -> str:
    from .map import anchor

    return anchor(heading)


def _keep_anchors(english: str, zh: str) -> str:
    """Give the k-th Chinese heading the link target of the k-th English heading (same count required)."""
    en_heads = [m.group(2) for m in _HEADING.finditer(_FENCE.sub("", english))]
    zh_heads = list(_HEADING.finditer(zh))
    if len(en_heads) != len(zh_heads):
        return zh
    for m, target in reversed(list(zip(zh_heads, en_heads, strict=True))):
        zh = f"{zh[:m.end()]} <a id=\"{html.escape(_anchor(target))}\"></a>{zh[m.end():]}"
    return zh


def zh_header(cmap: Any, file: str, titles: dict[str, str]) -> str:
    """The Chinese first cell: title, the article sections taught here, what to read first."""
    entry = cmap.entry(file)
    lines = [f"# {entry.number} · {titles.get(file) or entry.title}", ""]
    sections = cmap.sections_of(file)
    if sections:
        lines.append("**本笔记本讲授的文章章节：** " + " · ".join(
            f"§{s.n} {s.zh}（*{s.en}*）([↓](#{_anchor(s.heading)}))" for s in sections))
    elif file != cmap.notebooks[0].file:
        lines.append("**本笔记本讲授的文章章节：** 无。这个笔记本走到了文章之外。")
    prereq = [cmap.by_number(n) for n in entry.prerequisites]
    first = "**先读：** " + ("、".join(_zh_link(p, titles) for p in prereq) if prereq else "无，从这里开始")
    lines += ["", f"{first} · [课程地图]({cmap.notebooks[0].file})"]
    return "\n".join(lines)


def zh_footer(cmap: Any, file: str, titles: dict[str, str]) -> str:
    before, after = cmap.neighbours(file)
    parts = [f"← {_zh_link(before, titles)}" if before else "←（课程开始）",
             f"[课程地图]({cmap.notebooks[0].file})",
             f"{_zh_link(after, titles)} →" if after else "（课程结束）→"]
    return "---\n\n" + " · ".join(parts)


def _zh_link(entry: Any, titles: dict[str, str]) -> str:
    return f"[{entry.number} · {titles.get(entry.file) or entry.title}]({entry.file})"


def zh_titles(folder: str | os.PathLike = ZH_DIR) -> dict[str, str]:
    """Each notebook's Chinese title, by notebook file name."""
    return {p.stem + ".ipynb": read_translation(p).title for p in sorted(Path(folder).glob("*.md"))}


def zh_notebook(nb: Any, name: str, translation: Translation | None, cmap: Any, titles: dict[str, str],
                terms: Sequence[tuple[str, str]]) -> tuple[Any, list[str]]:
    """The Chinese edition of notebook ``nb`` (named ``name``), and the ids of cells left in English.

    Code cells are shared with ``nb`` unchanged; a Markdown cell without any translation stays
    English with a one-line note, so the page still reads through.
    """
    out = copy.copy(nb)
    out.metadata = copy.deepcopy(nb.metadata)
    out.metadata.setdefault("nanohermes", {})["language"] = "zh"
    cells, untranslated, prose = [], [], []
    entries = translation.cells if translation else {}
    for cell in nb.cells:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell.cell_type != "markdown":
            cells.append(cell)
            continue
        new = copy.deepcopy(cell)
        if HEADER_TAG in tags:
            new.source = zh_header(cmap, name, titles)
        elif FOOTER_TAG in tags:
            new.source = zh_footer(cmap, name, titles)
        elif cell.id in entries and entries[cell.id].zh.strip():
            new.source = _keep_anchors(cell.source, entries[cell.id].zh)
            prose.append(len(cells))
        else:
            untranslated.append(cell.id)
            new.source = "*（本段尚无中文译文，以下为英文原文。）*\n\n" + cell.source
        cells.append(new)
    annotated = annotate_terms([cells[k].source for k in prose], terms)
    for k, text in zip(prose, annotated, strict=True):
        cells[k].source = text
    out.cells = cells
    return out, untranslated


def main(argv: Sequence[str] | None = None) -> int:
    missing = missing_checkout("python -m nanohermes_nb.course.translations")
    if missing is not None:  # installed from a wheel: there is no repository to work on
        print(f"error: {missing}", file=sys.stderr)
        return 2
    from .build import notebook_paths

    parser = argparse.ArgumentParser(prog="python -m nanohermes_nb.course.translations",
                                     description="List prose cells whose Chinese translation is missing or stale.")
    parser.add_argument("notebooks", nargs="*", help="notebooks to check (default: all of notebooks/)")
    parser.add_argument("--stamp", action="store_true", help="write the English hash into new (unstamped) blocks")
    parser.add_argument("--show", action="store_true", help="print the English source of each missing/stale cell")
    parser.add_argument("--zh-dir", default=str(ZH_DIR), help="the folder of translation files")
    args = parser.parse_args(argv)
    folder = Path(args.zh_dir)
    paths = [Path(p) for p in args.notebooks] or notebook_paths()
    found, total = [], 0
    for path in paths:
        try:
            if args.stamp and translation_path(path, folder).exists():
                n = stamp(path, folder)
                if n:
                    print(f"{translation_path(path, folder)}: stamped {n} new block(s)")
            found += issues(path, folder)
            total += len(prose_cells(read_notebook(path)))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    for issue in found:
        print(issue)
        if args.show and issue.english:
            print("    " + issue.english.replace("\n", "\n    "))
    print(f"{total - sum(i.kind in ('missing', 'stale', 'unstamped') for i in found)} of {total} prose cells "
          f"translated and current in {len(paths)} notebooks")
    return 1 if found else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
