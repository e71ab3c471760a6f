"""Wrong implementations for notebook 06 (exercise 6.4, read_file's window of lines)."""

from . import WrongImplementation as W

WRONG = [
    W("6.4", "a final newline opens one more (empty) line", replace=(("lines.pop()", "pass"),)),
    W("6.4", "keeps the \\r of a CRLF line ending", replace=((r'ln[:-1] if ln.endswith("\r") else ln', "ln"),)),
    W("6.4", "the limit is not capped at read_max_lines", replace=(("min(limit, B.read_max_lines)", "limit"),)),
    W(
        "6.4",
        "'>=' for '>': an offset on the last line counts as past the end",
        replace=(("if first > len(lines):", "if first >= len(lines):"),),
    ),
    W(
        "6.4",
        "the note counts from the first line, not from the offset",
        replace=(("rest = len(lines) - (first - 1 + len(window))", "rest = len(lines) - len(window)"),),
    ),
]
