"""What the file tools share: text decoded from bytes, lines split, RE2 patterns and globs matched.

``grep`` compiles its pattern with RE2 (linear time: a pattern from the model cannot
hang the agent) and ``glob`` turns ``**`` patterns into one RE2 expression.
"""

from __future__ import annotations

import os
from typing import Any

import re2

from .specs import ToolError

__all__ = ["ELLIPSIS", "with_note", "decode", "split_lines", "re2_compile", "shown", "glob_regex", "is_folder"]

ELLIPSIS = "\u2026"


# --------------------------------------------------------------------------- helpers


def with_note(text: str, note: str) -> str:
    """``note`` on its own line after ``text``."""
    return f"{text}\n{note}" if text else note


def decode(data: bytes) -> str:
    """Text of any encoding without crashing: UTF-16 by BOM, else UTF-8 with replacement."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", "replace")


def split_lines(text: str) -> list[str]:
    """Lines as an editor counts them: a final newline does not open a new line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # RE2 would print each refused pattern on stderr
# grep and glob only ask whether a line matches: without capture groups RE2 never tracks
# them (a 20 KB pattern of nested groups took 1.5 GB and 14 s per few lines with them)
_RE2_OPTIONS.never_capture = True
_SHOWN_CHARS = 200  # of a pattern or path quoted back in an error
_RE2_LIMITS = "RE2 runs in linear time, like Rust's regex: no backreferences, no look-around"


def re2_compile(pattern: str, what: str) -> Any:
    """A compiled RE2 pattern, or a ``ToolError`` that says why RE2 cannot take it."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise ToolError(f"invalid {what} {shown(pattern)}: {detail} ({_RE2_LIMITS})") from None
    except (TypeError, UnicodeError) as exc:
        raise ToolError(f"invalid {what} {shown(pattern)}: {exc}") from None


def shown(text: str) -> str:
    """``text`` quoted for an error message, its first ``_SHOWN_CHARS`` characters only."""
    if len(text) <= _SHOWN_CHARS:
        return repr(text)
    return f"{text[:_SHOWN_CHARS]!r}{ELLIPSIS} ({len(text)} characters)"


def glob_regex(pattern: str) -> Any:
    """A glob over ``/``-separated relative paths: ``*`` ``?`` ``[..]`` within a part, ``**`` across.

    Compiled with RE2: a pattern such as ``*a*a*a*a*b`` over a long name costs linear time.
    """
    out, i, n = [], 0, len(pattern)
    last_close = pattern.rfind("]")  # a [ after it opens no class: no search for its ] (20,000 [ were quadratic)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            j = pattern.find("]", j) if j <= last_close else -1
            if j < 0:
                out.append(re2.escape(c))
                i += 1
                continue
            body = pattern[i + 1:j]
            neg = body[:1] in ("!", "^")
            body = body[1:] if neg else body
            body = body.replace("\\", "\\\\")
            out.append(f"[{'^' if neg else ''}{body}]")
            i = j + 1
        else:
            out.append(re2.escape(c))
            i += 1
    return re2_compile("(?s)" + "".join(out) + r"\z", "glob pattern")


def is_folder(entry: os.DirEntry[str]) -> bool:
    """A directory, or a link to one (as ``os.walk`` counts them: listed, not entered)."""
    try:
        return entry.is_dir()
    except OSError:
        return False

