"""Course v2: the article's 28 sections mapped to notebook headings, navigation, exercises with solutions."""

import html

import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.course.map import (
    EXERCISE_TAG,
    FOOTER_TAG,
    HEADER_TAG,
    SOLUTION_TAG,
    course_map,
    exercises,
    headings,
    update_navigation,
)

CMAP = course_map()
FILES = [e.file for e in CMAP.notebooks]
ARTICLE = ROOT.parent / "shared" / "seed"


def test_the_map_has_all_28_sections_of_the_article_in_order():
    assert [s.n for s in CMAP.sections] == list(range(1, 29))
    assert len({s.zh for s in CMAP.sections}) == 28 and all(s.en and s.heading for s in CMAP.sections)


def test_section_titles_are_verbatim_when_the_article_is_here():
    texts = sorted(ARTICLE.glob("*.txt")) if ARTICLE.is_dir() else []
    if not texts:
        pytest.skip("the article is not beside this checkout (CI has it in ../shared/seed)")
    lines = {ln.strip() for ln in texts[0].read_text(encoding="utf-8").splitlines()}
    missing = [s.zh for s in CMAP.sections if s.zh not in lines]
    assert not missing, missing


@pytest.mark.parametrize("section", CMAP.sections, ids=[f"§{s.n}" for s in CMAP.sections])
def test_each_section_points_at_an_existing_heading(section):
    path = ROOT / "notebooks" / section.notebook
    assert path.exists(), section.notebook
    assert section.heading in headings(path), f"§{section.n}: no heading {section.heading!r} in {section.notebook}"


def test_the_glossary_names_the_article_terms():
    terms = {g["zh"] for g in CMAP.glossary}
    assert {"上下文", "压缩", "切点", "摘要", "降级", "记忆块"} <= terms
    assert all(g["en"] and g["code"] for g in CMAP.glossary)


def test_every_notebook_opens_with_its_sections_and_ends_with_links():
    assert update_navigation(ROOT / "notebooks", CMAP, write=False) == [], \
        "run: python -m nanohermes_nb.course.map"
    for file in FILES:
        nb = nbformat.read(ROOT / "notebooks" / file, as_version=4)
        first, last = nb.cells[0], nb.cells[-1]
        assert HEADER_TAG in first.metadata.get("tags", []) and first.source.startswith(f"# {file[:2]} · ")
        assert FOOTER_TAG in last.metadata.get("tags", [])
        for s in CMAP.sections_of(file):
            assert s.zh in first.source


@pytest.mark.parametrize("file", FILES[1:])
def test_every_notebook_has_two_exercises_each_with_a_solution(file):
    path = ROOT / "notebooks" / file
    asked, solved = exercises(path)
    assert len(asked) >= 2, f"{file}: {len(asked)} exercise cell(s)"
    assert asked == solved, f"{file}: exercises {asked} vs solutions {solved}"
    assert all(a.startswith(f"{int(file[:2])}.") for a in asked), asked
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if SOLUTION_TAG in tags:
            # a solution need not assert: the build runs its exercise's check on it (course.exercises.prove)
            assert cell.cell_type == "code" and (cell.source.startswith("# Solution") or "assert " in cell.source), file
            assert cell.metadata.get("jupyter", {}).get("source_hidden"), "solutions are folded"
        if EXERCISE_TAG in tags:
            assert cell.cell_type == "markdown"


def test_the_home_page_links_every_notebook_and_maps_every_section(built_course):
    out, _ = built_course
    page = (out / "index.html").read_text(encoding="utf-8")
    for file in FILES:
        assert f"href='{file[:-6]}.html'" in page or f'href="{file[:-6]}.html"' in page, file
    for s in CMAP.sections:
        assert s.zh in page and html.escape(s.en) in page


_LINK = __import__("re").compile(r"\]\(((?:\d\d_[\w-]+\.ipynb)?)(#[^)\s]*)?\)")


def _targets():
    """Every heading anchor of every notebook, as JupyterLab and the site write it (map.anchor)."""
    from nanohermes_nb.course.map import anchor

    return {p.name: {anchor(h) for h in headings(p)} for p in sorted((ROOT / "notebooks").glob("*.ipynb"))}


def _prose():
    """(where, Markdown) of every notebook's prose cell and every Chinese translation block."""
    from nanohermes_nb.course.translations import read_translation

    for p in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(p, as_version=4).cells:
            if cell.cell_type == "markdown":
                yield p.name, f"{p.name} cell {cell.get('id')}", cell.source
    for p in sorted((ROOT / "notebooks" / "zh").glob("*.md")):
        for cell_id, entry in read_translation(p).cells.items():
            yield p.stem + ".ipynb", f"zh/{p.name} cell {cell_id}", entry.zh


def test_every_link_between_notebooks_lands_on_a_notebook_and_a_heading():
    """A link to NN_x.ipynb#Heading-text (or #Heading-text on the same page) needs that notebook and heading.

    Written as JupyterLab writes anchors (the heading's text with spaces as dashes; markup left out), it
    works in JupyterLab and on the site, where every heading gets that id; a Chinese heading gets the id
    of the English one it translates, so the same links work in the Chinese edition.
    """
    import urllib.parse

    targets, broken = _targets(), []
    for own, where, text in _prose():
        for m in _LINK.finditer(text):
            page, fragment = m.group(1) or own, m.group(2)
            if page not in targets:
                broken.append(f"{where}: {m.group(0)[1:]} (no notebook {page})")
            elif fragment and urllib.parse.unquote(fragment[1:]) not in targets[page]:
                broken.append(f"{where}: {m.group(0)[1:]} (no heading with that anchor in {page})")
    assert not broken, "links that land nowhere:\n" + "\n".join(broken)


def test_every_source_a_notebook_builds_on_is_linked_in_both_editions():
    """data/sources.json lists the papers and essays a notebook uses; each link is in its prose and its Chinese."""
    import json

    from nanohermes_nb.course.translations import read_translation, translation_path

    sources = json.loads((ROOT / "data" / "sources.json").read_text(encoding="utf-8"))["notebooks"]
    missing = []
    for name, links in sources.items():
        path = ROOT / "notebooks" / name
        assert path.exists(), f"data/sources.json names {name}, which is not a notebook"
        english = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
        chinese = "\n".join(e.zh for e in read_translation(translation_path(path)).cells.values())
        missing += [f"{name}: {link} not in the {edition}" for link in links
                    for edition, text in (("English prose", english), ("Chinese", chinese)) if f"]({link})" not in text]
    assert not missing, "\n".join(missing)
