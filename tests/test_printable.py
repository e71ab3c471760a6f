"""``printable``: the one escape for text bound for a terminal, one class of character at a time."""

from __future__ import annotations

import io

import pytest

from nanohermes_nb.engine.sweep import Progress
from nanohermes_nb.transcripts.base import printable
from nanohermes_nb.views import tables

C0 = [chr(c) for c in range(0x20)]  # NUL .. US: ESC, BEL, BS, CR, LF and TAB among them
DEL = ["\x7f"]
C1 = [chr(c) for c in range(0x80, 0xA0)]  # 0x9b is an 8-bit CSI
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]  # LRE RLE PDF LRO RLO, LRI RLI FSI PDI
MARKS = ["\u061c", "\u200e", "\u200f", "\u2028", "\u2029"]  # ALM, LRM, RLM, line and paragraph separators
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udcff", "\udfff"]  # lone halves (e.g. from surrogateescape)


@pytest.mark.parametrize("chars, form", [(C0, "\\x{:02x}"), (DEL, "\\x{:02x}"), (C1, "\\x{:02x}"),
                                         (BIDI, "\\u{:04x}"), (MARKS, "\\u{:04x}"), (SURROGATES, "\\u{:04x}")],
                         ids=["C0", "DEL", "C1", "bidi", "marks", "surrogates"])
def test_every_character_of_each_class_is_shown_as_its_escape(chars, form):
    for char in chars:
        shown = printable(f"a{char}b")
        assert shown == "a" + form.format(ord(char)) + "b", repr(char)
        assert shown.isascii() and shown.isprintable()  # nothing left for a terminal to act on
        shown.encode("ascii")  # and nothing an encoder can fail on


def test_ordinary_text_is_unchanged():
    text = "café 上下文 Привет 🙂 ~!@#$%^&*()_+{}|:\"<>? \\x1b (already an escape) \u00a0\u00ad\u200b"
    assert printable(text) == text


def test_a_real_attack_is_one_harmless_line():
    trojan = "ok\x1b]0;pwned\x07\x1b[2J\r\nrm -rf /\u202e\u2066txt.exe\u2069\x9b1m\ud83d"
    shown = printable(trojan)
    assert shown == ("ok\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x0arm -rf /\\u202e\\u2066txt.exe\\u2069\\x9b1m\\ud83d")
    assert "\n" not in shown and shown.isprintable()


def test_any_object_is_printed_through_str():
    assert printable(42) == "42" and printable(None) == "None" and printable(["\x1b"]) == "['\\x1b']"


def test_the_tables_use_the_same_escape():
    assert tables.printable is printable
    lines, _ = tables.text_table([{"name": "evil\x1b[31m\u202e", "n": 1}], ["name", "n"], width=None)
    assert "evil\\x1b[31m\\u202e" in "\n".join(lines) and not any("\x1b" in line for line in lines)


def test_the_sweeps_progress_line_escapes_the_file_name():
    stream = io.StringIO()
    bar = Progress(2, enabled=True, stream=stream)
    bar.step("bad\x1b[2J\x07\u202ename.json")
    written = stream.getvalue()
    assert "bad\\x1b[2J\\x07\\u202ename.json" in written
    assert written.startswith("\r") and not any(c in written for c in "\x1b\x07\u202e")
