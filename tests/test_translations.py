"""The Chinese edition: every prose cell translated and current, code cells identical, terms bilingual.

Translations live in ``notebooks/zh/NN_name.md``, one block per English Markdown cell, keyed by
the cell's nbformat id and the hash of its English source (``nanohermes_nb.course.translations``). When
a test here fails for a notebook, ``python -m nanohermes_nb.course.translations --show NOTEBOOK`` prints
the English of every missing or stale cell.
"""

from __future__ import annotations

import functools
import json
import re

import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.course import translations as T
from nanohermes_nb.course.build import notebook_paths
from nanohermes_nb.course.map import anchor, course_map

NOTEBOOKS = notebook_paths(ROOT / "notebooks")
NAMES = [p.name for p in NOTEBOOKS]
CMAP = course_map()
CJK = re.compile(r"[\u3400-\u9fff]")
CODE_SPAN = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


@functools.cache
def zh_edition(path):
    nb = nbformat.read(path, as_version=4)
    tr_path = T.translation_path(path)
    tr = T.read_translation(tr_path) if tr_path.exists() else None
    return nb, *T.zh_notebook(nb, path.name, tr, CMAP, T.zh_titles(), T.glossary_terms())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_every_prose_cell_has_a_current_translation(path):
    found = T.issues(path)
    assert not found, (f"{len(found)} translation issue(s); run `python -m nanohermes_nb.course.translations --show "
                       f"notebooks/{path.name}`:\n" + "\n".join(map(str, found[:10])))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_the_code_cells_of_the_two_editions_are_the_same(path):
    en, zh, untranslated = zh_edition(path)
    assert untranslated == []
    assert [c.cell_type for c in en.cells] == [c.cell_type for c in zh.cells]
    for a, b in zip(en.cells, zh.cells, strict=True):
        assert a.get("id") == b.get("id")
        if a.cell_type == "code":
            assert a == b, f"{path.name}: code cell {a.get('id')} differs between the editions"
        else:
            assert a.metadata == b.metadata


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_the_translation_is_chinese_and_keeps_every_link_and_code_span(path):
    nb = nbformat.read(path, as_version=4)
    tr = T.read_translation(T.translation_path(path))
    assert CJK.search(tr.title), f"{path.name}: no Chinese title"
    for cell in T.prose_cells(nb):
        zh = tr.cells[cell.id].zh
        assert len(CJK.findall(zh)) >= 2, f"{path.name}: cell {cell.id} has no Chinese prose"
        missing = set(CODE_SPAN.findall(cell.source)) - set(CODE_SPAN.findall(zh))
        assert not missing, f"{path.name}: cell {cell.id} lost code {sorted(missing)}"
        assert set(LINK.findall(cell.source)) == set(LINK.findall(zh)), f"{path.name}: cell {cell.id}: links differ"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_glossary_terms_are_bilingual_on_first_use(path):
    _, zh, _ = zh_edition(path)
    prose = "\n".join(c.source for c in T.prose_cells(zh))
    plain = T._PROTECTED.sub("", prose)
    for term, english in T.glossary_terms():
        if term in plain and not any(term in longer and longer in plain for longer, _ in T.glossary_terms()
                                     if longer != term):
            assert f"{term}（{english}）" in prose, f"{path.name}: {term} is used, never as {term}（{english}）"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_the_chinese_headings_keep_the_english_link_targets(path):
    en, zh, _ = zh_edition(path)
    zh_text = "\n".join(c.source for c in zh.cells if c.cell_type == "markdown")
    for cell in T.prose_cells(en):
        for m in re.finditer(r"^#{1,6} (.+)$", T._FENCE.sub("", cell.source), re.M):
            target = anchor(m.group(1))
            assert f'<a id="{T.html.escape(target)}"></a>' in zh_text, f"{path.name}: #{target} lost in Chinese"


def test_there_is_one_glossary():
    data = json.loads((ROOT / "data" / "course_map.json").read_text(encoding="utf-8"))
    assert "glossary" not in data, "the glossary lives in data/glossary.json only"
    terms = json.loads((ROOT / "data" / "glossary.json").read_text(encoding="utf-8"))["terms"]
    assert list(CMAP.glossary) == terms
    assert len({t["zh"] for t in terms}) == len(terms)


def test_every_translation_file_belongs_to_a_notebook():
    files = {p.stem for p in T.ZH_DIR.glob("*.md")}
    assert files <= {p.stem for p in NOTEBOOKS}, files - {p.stem for p in NOTEBOOKS}


# ---------------------------------------------------------------- the mechanism, on small notebooks


def _notebook(tmp_path, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    path = tmp_path / "00_course_map.ipynb"
    nbformat.write(nb, path)
    return path


def _md(source, cell_id):
    cell = nbformat.v4.new_markdown_cell(source)
    cell["id"] = cell_id
    return cell


def test_a_changed_english_cell_makes_its_translation_stale(tmp_path):
    path = _notebook(tmp_path, [_md("## Intro\n\nOne sentence.", "a1"), nbformat.v4.new_code_cell("x = 1"),
                                _md("Two.", "b2")])
    zh = tmp_path / "zh"
    zh.mkdir()
    (zh / "00_course_map.md").write_text("<!-- title -->\n地图\n\n<!-- cell a1 -->\n## 引言\n\n一句话。\n\n"
                                         "<!-- cell gone -->\n多余。\n", encoding="utf-8")
    kinds = {(i.cell_id, i.kind) for i in T.issues(path, zh)}
    assert kinds == {("a1", "unstamped"), ("b2", "missing"), ("gone", "orphan")}
    assert T.stamp(path, zh) == 1 and T.stamp(path, zh) == 0  # only blocks without a hash, and only once
    assert {(i.cell_id, i.kind) for i in T.issues(path, zh)} == {("b2", "missing"), ("gone", "orphan")}
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = "## Intro\n\nOne sentence, changed."
    nbformat.write(nb, path)
    stale = [i for i in T.issues(path, zh) if i.kind == "stale"]
    assert [i.cell_id for i in stale] == ["a1"] and "changed" in stale[0].english
    assert T.stamp(path, zh) == 0  # a stale hash is never overwritten by the tool


def test_a_malformed_translation_file_names_file_and_line(tmp_path):
    bad = tmp_path / "x.md"
    bad.write_text("stray text\n<!-- cell a -->\n甲\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.md:1:"):
        T.read_translation(bad)
    bad.write_text("<!-- title -->\n标题\n<!-- cell a -->\n甲\n<!-- cell a -->\n乙\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.md:5: cell a is translated twice"):
        T.read_translation(bad)


def test_the_chinese_notebook_swaps_prose_only_and_says_what_is_untranslated(tmp_path):
    code = nbformat.v4.new_code_cell("print('上下文')")
    code.outputs = [nbformat.v4.new_output("stream", text="上下文\n")]
    nb = nbformat.v4.new_notebook()
    nb.cells = [_md("# Title", "h"), code, _md("## The cut\n\nText.", "c"), _md("Left alone.", "d")]
    entry = T.Entry(T.en_sha(nb.cells[2].source), "## 切点\n\n压缩和切点。")
    tr = T.Translation(tmp_path / "t.md", "标题", {"c": entry})
    zh, untranslated = T.zh_notebook(nb, "00_course_map.ipynb", tr, CMAP, {}, [("切点", "cut"), ("压缩", "compaction")])
    assert zh.cells[1] is nb.cells[1]  # the very same code cell, outputs included
    assert zh.cells[2].source == '## 切点 <a id="The-cut"></a>\n\n压缩（compaction）和切点（cut）。'
    assert untranslated == ["h", "d"] and "英文原文" in zh.cells[3].source and "Left alone." in zh.cells[3].source
    assert nb.cells[2].source == "## The cut\n\nText."  # the English notebook is not touched


def test_annotation_skips_code_headings_links_and_longer_terms():
    terms = [("上下文窗口", "context window"), ("上下文", "context")]
    text = "## 上下文\n`上下文` [上下文窗口](x.ipynb) 上下文窗口很大，上下文很多。"
    out = T.annotate_terms([text, "上下文。"], terms)
    assert out[0] == ("## 上下文\n`上下文` [上下文窗口（context window）](x.ipynb) "
                      "上下文窗口很大，上下文（context）很多。")
    assert out[1] == "上下文。"  # first use only


def test_the_header_and_footer_come_from_the_course_map_in_chinese():
    titles = T.zh_titles()
    second = CMAP.notebooks[1]
    header = T.zh_header(CMAP, second.file, titles)
    assert header.startswith(f"# {second.number} · {titles[second.file]}")
    assert "[课程地图](00_course_map.ipynb)" in header
    footer = T.zh_footer(CMAP, second.file, titles)
    assert f"({CMAP.notebooks[0].file})" in footer and f"({CMAP.notebooks[2].file})" in footer


def test_the_command_reports_and_fails_on_a_missing_translation(tmp_path, capsys):
    assert T.main([str(p) for p in NOTEBOOKS[:2]]) == 0
    assert "translated and current" in capsys.readouterr().out
    path = _notebook(tmp_path, [_md("New prose.", "n1")])
    assert T.main([str(path), "--show", "--zh-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "cell n1: missing" in out and "New prose." in out


# ---------------------------------------------------------------- the article's own Chinese


REFUSED = T.refused_forms()
ARTICLE = sorted((ROOT.parent / "shared" / "seed").glob("*.txt"))


def test_the_glossary_gives_each_term_as_the_article_writes_it():
    terms = json.loads((ROOT / "data" / "glossary.json").read_text(encoding="utf-8"))["terms"]
    assert {"智能体": "Agent", "词元": "token", "提示语": "说明", "孤儿": "孤立工具结果"}.items() <= REFUSED.items()
    assert "省略说明" in {t["zh"] for t in terms}, "the clamp's note is the article's 省略说明"
    assert all(t.get("source") in ("article", "course") for t in terms)
    if not ARTICLE:
        pytest.skip("the article is not beside this checkout (CI has it in ../shared/seed)")
    text = ARTICLE[0].read_text(encoding="utf-8")
    for t in terms:
        assert (t["zh"] in text) == (t["source"] == "article"), f"{t['zh']}: source {t['source']!r}"
        assert not [f for f in t.get("refuse", ()) if f in text], f"{t['zh']}: a refused form is the article's own"


@pytest.mark.parametrize("path", sorted(T.ZH_DIR.glob("*.md")), ids=lambda p: p.name)
def test_every_chinese_cell_writes_the_articles_terms(path):
    """No block of a translation (title included) uses a form the glossary refuses for one of the article's terms."""
    tr = T.read_translation(path)
    problems = [f"{path.name} {where}: {line}" for where, text in [("title", tr.title), *((f"cell {k}", e.zh)
                for k, e in tr.cells.items())] for line in T.term_problems(text, REFUSED)]
    assert not problems, "\n".join(problems)


def test_the_chinese_the_course_generates_writes_the_articles_terms():
    """The Chinese written by code (home page, headers and footers, folded solutions, figure labels) too."""
    sources = [*(ROOT / "nanohermes_nb" / "course").rglob("*.py"), *(ROOT / "nanohermes_nb" / "views").glob("*.py")]
    problems = [f"{p.relative_to(ROOT)}: {line}" for p in sources for line in
                T.term_problems(p.read_text(encoding="utf-8"), REFUSED)]
    assert not problems, "\n".join(problems)
