"""The course tools on hostile files (issue 34): one line naming the file, never a crash or a hang.

The translation tool crashed or hung on a GBK translation file (the error did not name it), a folder, a
FIFO, a missing notebook, a notebook that is a JSON list, and an nbformat 4.4 notebook without cell
ids; 200,000 blocks were not done in 30 s (the line counting was quadratic); ``--stamp`` on a symlinked
file replaced the link and left the real file unstamped. The git clean filter crashed on JSON that is not
a notebook, on malformed cells, on 100,000-deep nesting, and on a Latin-1 byte when stdin is strict
UTF-8: a clean filter passes through, byte for byte, what it does not understand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest

from nanohermes_nb.course import translations as T
from nanohermes_nb.course.strip import cleaned

pytestmark = pytest.mark.timeout(30)


def _notebook(folder, cells, name="00_course_map.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    path = folder / name
    nbformat.write(nb, path)
    return path


def _md(source, cell_id):
    cell = nbformat.v4.new_markdown_cell(source)
    cell["id"] = cell_id
    return cell


@pytest.fixture
def course(tmp_path):
    path = _notebook(tmp_path, [_md("# Title", "t1"), _md("Prose.", "p1")])
    (tmp_path / "zh").mkdir()
    return path, tmp_path / "zh"


def _fails_in_one_line(capsys, argv, *fragments) -> None:
    assert T.main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_a_gbk_translation_file_is_named_with_its_line(course, capsys):
    path, zh = course
    (zh / "00_course_map.md").write_bytes("<!-- title -->\n课程地图\n".encode("gbk"))
    _fails_in_one_line(capsys, [path, "--zh-dir", zh], "00_course_map.md:2: not UTF-8", "save the file as UTF-8")


@pytest.mark.parametrize("make, fragment", [(os.mkdir, "is a folder"), (os.mkfifo, "is a named pipe (FIFO)")])
def test_a_translation_that_is_a_folder_or_a_fifo_is_refused_at_once(course, capsys, make, fragment):
    path, zh = course
    make(zh / "00_course_map.md")
    _fails_in_one_line(capsys, [path, "--zh-dir", zh], "00_course_map.md", fragment)
    _fails_in_one_line(capsys, [path, "--zh-dir", zh, "--stamp"], "00_course_map.md", fragment)


def test_notebooks_that_cannot_be_read_are_named(course, capsys):
    path, zh = course
    folder = path.parent
    _fails_in_one_line(capsys, [folder / "missing.ipynb", "--zh-dir", zh], "missing.ipynb: no such file")
    (folder / "list.ipynb").write_text("[1, 2]")
    _fails_in_one_line(capsys, [folder / "list.ipynb", "--zh-dir", zh], "list.ipynb: not a Jupyter notebook")
    old = json.loads(path.read_text())
    old["nbformat_minor"] = 4
    for cell in old["cells"]:
        del cell["id"]
    (folder / "old.ipynb").write_text(json.dumps(old))
    _fails_in_one_line(capsys, [folder / "old.ipynb", "--zh-dir", zh], "old.ipynb: cell 0 has no id (nbformat 4.4)")


@pytest.mark.slow  # about 2 s of parsing twice; quadratic before (the line of each marker counted from the start)
def test_200000_blocks_are_read_and_their_lines_counted_right(tmp_path):
    lines = ["<!-- title -->", "标题", ""]
    for k in range(200_000):
        lines += [f"<!-- cell c{k} -->", f"译文 {k}", ""]
    lines += ["<!-- cell c7 -->", "again"]  # a duplicate at the very end, on the line it is on
    path = tmp_path / "big.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"big\.md:{len(lines) - 1}: cell c7 is translated twice"):
        T.read_translation(path)
    path.write_text("\n".join(lines[:-2]), encoding="utf-8")
    assert len(T.read_translation(path).cells) == 200_000


def test_stamp_through_a_link_stamps_the_file_and_keeps_the_link(course):
    path, zh = course
    real = zh.parent / "real.md"
    real.write_text("<!-- title -->\n标题\n\n<!-- cell p1 -->\n散文。\n", encoding="utf-8")
    (zh / "00_course_map.md").symlink_to(real)
    assert T.stamp(path, zh) == 1
    assert (zh / "00_course_map.md").is_symlink()
    assert f"<!-- cell p1 en_sha={T.en_sha('Prose.')} -->" in real.read_text(encoding="utf-8")


# ---------------------------------------------------------------- the git clean filter


def _deep(depth: int) -> bytes:
    return b'{"nbformat": 4, "cells": [], "metadata": {"x": ' + b"[" * depth + b"]" * depth + b"}}"


@pytest.mark.parametrize("raw", [
    b"[1, 2]", b'"a string"', b"null", b"not json at all",
    b'{"nbformat": 4, "cells": [1, "two"], "metadata": {}}',
    b'{"nbformat": 4, "cells": [{"cell_type": "code", "metadata": []}], "metadata": {}}',
    b'{"nbformat": 4, "cells": {"not": "a list"}, "metadata": {}}',
    b'{"nbformat": 4, "cells": [], "metadata": "text"}',
    b'{"nbformat": 3, "worksheets": []}',
    _deep(100_000),
    b'{"nbformat": 4, "cells": [], "metadata": {"author": "Jos\xe9"}}',  # Latin-1, not UTF-8
], ids=["list", "string", "null", "text", "cells-not-objects", "cell-metadata-list", "cells-object",
        "metadata-text", "nbformat-3", "deep", "latin-1"])
def test_the_clean_filter_passes_through_what_it_does_not_understand(raw):
    assert cleaned(raw) == raw


@pytest.mark.slow  # three interpreters
def test_the_clean_filter_process_never_fails_even_with_strict_utf8_stdin():
    raw = b'{"nbformat": 4, "cells": [], "metadata": {"author": "Jos\xe9"}}'
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "LC_ALL": "C.UTF-8"}
    for data in (raw, _deep(100_000), b"[1]"):
        done = subprocess.run([sys.executable, "-m", "nanohermes_nb.course.strip"], input=data, capture_output=True,
                              env=env, timeout=60)
        assert done.returncode == 0 and done.stdout == data, done.stderr[-500:]


def test_the_line_of_a_marker_is_counted_from_the_one_before(tmp_path):
    lines = ["<!-- title -->", "标题", ""]
    for k in range(2_000):
        lines += [f"<!-- cell c{k} -->", f"译文 {k}", "", "第二行", ""]
    lines += ["<!-- cell c1999 -->", "again"]
    path = tmp_path / "blocks.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"blocks\.md:{len(lines) - 1}: cell c1999 is translated twice"):
        T.read_translation(path)
