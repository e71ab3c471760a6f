"""From a file name to parsed JSON: only a regular file of UTF-8 JSON (or JSONL) gets through.

The rules are serde_json's, the parser NanoHermes reads its sessions with: UTF-8 only,
no byte-order mark, no ``NaN`` / ``Infinity``, no number outside the range of a
64-bit float, and no nesting 128 levels deep. Python's ``json`` accepts the first
three and crashes or overflows on the others, so they are refused here with the
place they occur; a lone surrogate written as ``\\ud800`` is loaded (sizes count it
as 3 bytes), as a replay must measure what the file holds.

A FIFO, a device, a socket or a directory is refused before it is opened for
reading, so a loader never blocks on a pipe that nobody writes to.

Memory: the bytes are read once. A top-level array is decoded one element at a time
and JSONL one line at a time, so a big file costs its bytes plus its parsed objects;
only other shapes (and files with an error, to report it exactly) are decoded whole.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from .base import Bad, kind

__all__ = ["load_data", "parse_array_stream", "MAX_DEPTH", "FIRST_WINDOW"]

MAX_DEPTH = 128  # serde_json's recursion limit: 127 nested arrays/objects parse, 128 do not
FIRST_WINDOW = 1 << 20  # bytes decoded at once by the array reader
_DEEP = f"nested {MAX_DEPTH} levels deep (serde_json, which NanoHermes reads sessions with, stops at {MAX_DEPTH})"
_WS = re.compile(rb"[ \t\n\r]*")
_WS_TEXT = re.compile(r"[ \t\n\r]*")
# ``[ \t\n\r]*`` matches everywhere (perhaps nothing): these ``match`` never return None
_SKIP_WS = cast(Callable[[bytes, int], "re.Match[bytes]"], _WS.match)
_SKIP_WS_TEXT = cast(Callable[[str, int], "re.Match[str]"], _WS_TEXT.match)
_BOMS = (  # longest first: a UTF-32 LE mark starts with the UTF-16 LE one
    (b"\x00\x00\xfe\xff", "UTF-32", "big-endian"),
    (b"\xff\xfe\x00\x00", "UTF-32", "little-endian"),
    (b"\xfe\xff", "UTF-16", "big-endian"),
    (b"\xff\xfe", "UTF-16", "little-endian"),
)
_NOT_REGULAR = (
    (stat.S_ISDIR, "is a directory, not a transcript file"),
    (stat.S_ISFIFO, "is a named pipe (FIFO), not a regular file; refused without reading"),
    (stat.S_ISCHR, "is a character device, not a regular file; refused without reading"),
    (stat.S_ISBLK, "is a block device, not a regular file; refused without reading"),
    (stat.S_ISSOCK, "is a socket, not a regular file; refused without reading"),
)


# ---------------------------------------------------------------- strict JSON


class Rejected:
    """Stands in the parsed data for a number JSON (or serde_json) does not allow."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rejected) and other.reason == self.reason

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Rejected({self.reason!r})"


class StrictDecoder(json.JSONDecoder):
    """``json.JSONDecoder`` that marks NaN/Infinity and out-of-range numbers instead of
    accepting them (or raising without a position); ``load_data`` then names their place."""

    scan_once: Callable[[str, int], tuple[Any, int]]  # set by ``json.JSONDecoder`` (its C scanner)

    def __init__(self) -> None:
        super().__init__(parse_constant=self._constant, parse_int=self._int, parse_float=self._float)
        self.rejected = False

    def _mark(self, reason: str) -> Rejected:
        self.rejected = True
        return Rejected(reason)

    def _constant(self, name: str) -> Rejected:
        return self._mark(f"{name} is not valid JSON (serde_json refuses it too)")

    def _int(self, digits: str) -> Any:
        count = len(digits.lstrip("-"))
        if count > 309:  # past 1.8e308 serde_json fails with "number out of range"
            return self._mark(f"number out of range (an integer of {count} digits)")
        return int(digits)

    def _float(self, text: str) -> Any:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            return self._mark(f"number out of range ({text[:40]})")
        return value


# ---------------------------------------------------------------- the file


def load_data(path: Path, raw: bytes | None = None) -> tuple[Any, list[int] | None]:
    """Parse the file (or its ``raw`` bytes, already read); for JSONL also the 1-based line number of each item."""
    if raw is None:
        raw = read_regular_file(path)
    check_start(raw)
    decoder = StrictDecoder()
    first = raw[_skip_ws(raw, 0)]
    data: Any = None
    lines: list[int] | None = None
    if first == ord("["):
        data = parse_array_stream(raw, decoder)
    elif first == ord("{") and _is_jsonl(raw):
        data, lines = _parse_jsonl(raw, decoder)
    if data is None:
        text = _decode(raw)
        del raw
        data = _parse(text, decoder)
    check_tree(data, lines, decoder.rejected)
    return data, lines


def read_regular_file(path: Path) -> bytes:
    """The bytes of a regular file; anything else is refused without blocking."""
    try:
        info = os.stat(path)
        _check_regular(info.st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise Bad("", "cannot read (no such file)") from None
    except ValueError:
        raise Bad("", "cannot read (the name contains a NUL character)") from None
    except OSError as e:
        raise Bad("", f"cannot read ({e.strerror or e})") from None
    try:
        _check_regular(os.fstat(fd).st_mode)  # it may have been replaced since the stat
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as e:
        raise Bad("", f"cannot read ({e.strerror or e})") from None
    finally:
        os.close(fd)


def _check_regular(mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    for test, reason in _NOT_REGULAR:
        if test(mode):
            raise Bad("", reason)
    raise Bad("", "is not a regular file; refused without reading")


def check_start(raw: bytes) -> None:
    """An empty file, a byte-order mark, UTF-16/32 text and binary data, each said plainly."""
    if not raw or raw.isspace():
        raise Bad("", "empty file")
    if raw.startswith(b"\xef\xbb\xbf"):
        raise Bad("", "starts with a UTF-8 byte-order mark; save without BOM")
    for mark, encoding, order in _BOMS:
        if raw.startswith(mark):
            raise Bad("", f"starts with a {encoding} byte-order mark ({order}); save as UTF-8")
    guessed = _utf16_or_32(raw[:4])
    if guessed:
        raise Bad("", f"looks like {guessed} text without a byte-order mark; save as UTF-8")
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise Bad(f"byte {nul}", "a NUL byte: binary data, not JSON text")


def _utf16_or_32(head: bytes) -> str:
    """RFC 4627's test: JSON starts with ASCII, so the zero bytes give the encoding away."""
    if len(head) < 4:
        return ""
    zeros = tuple(b == 0 for b in head)
    names: dict[tuple[bool, ...], str] = {
        (True, True, True, False): "UTF-32 (big-endian)",
        (False, True, True, True): "UTF-32 (little-endian)",
        (True, False, True, False): "UTF-16 (big-endian)",
        (False, True, False, True): "UTF-16 (little-endian)",
    }
    return names.get(zeros, "")


def _decode(raw: bytes, offset: int = 0) -> str:
    """UTF-8 text; a bad byte is reported by its offset in the file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Bad(f"byte {offset + e.start}", f"not valid UTF-8 (0x{raw[e.start]:02x})") from None


def _parse(text: str, decoder: StrictDecoder, where: str = "") -> Any:
    """One JSON document; an error is reported by line and column."""
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as e:
        raise Bad(where or f"line {e.lineno}", f"invalid JSON ({e.msg}, column {e.colno})") from None
    except RecursionError:
        raise Bad(where or _deep_line(text), _DEEP) from None


def _deep_line(text: str) -> str:
    """``line N`` where the nesting reaches ``MAX_DEPTH`` (strings skipped)."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        token = m.group()
        if token in "[{":
            depth += 1
            if depth >= MAX_DEPTH:
                return f"line {text.count(chr(10), 0, m.start()) + 1}"
        elif token in "]}":
            depth -= 1
    return ""


def _skip_ws(raw: bytes, pos: int) -> int:
    return _SKIP_WS(raw, pos).end()


# ---------------------------------------------------------------- a top-level array, element by element


def parse_array_stream(raw: bytes, decoder: StrictDecoder | None = None) -> list[Any] | None:
    """The elements of a top-level JSON array, decoded chunk by chunk from the bytes.

    A chunk of ``FIRST_WINDOW`` bytes (grown while one element does not fit) is decoded
    once and its elements parsed in place, so memory stays at the parsed objects plus
    one chunk. Returns None on anything unexpected; the caller then parses the whole
    text, which either succeeds or reports the error exactly as ``json.loads`` words it.
    """
    decoder = decoder or StrictDecoder()
    n = len(raw)
    pos = _skip_ws(raw, _skip_ws(raw, 0) + 1)  # the byte where the first element starts
    items: list[Any] = []
    if pos < n and raw[pos] == ord("]"):
        return items if _skip_ws(raw, pos + 1) == n else None
    size, need_value = FIRST_WINDOW, True
    while pos < n:
        end = _char_boundary(raw, min(pos + size, n))
        try:
            text = raw[pos:end].decode("utf-8")
        except UnicodeDecodeError:
            return None
        state = _parse_chunk(text, items, need_value, end >= n, decoder)
        if state is None:
            return None
        i, need_value, closed = state
        if closed:
            return items if _skip_ws(raw, pos + _utf8_len(text, i) + 1) == n else None
        if end >= n:
            return None
        consumed = _utf8_len(text, i)
        size = size * 4 if consumed == 0 else size  # one element larger than the chunk: grow
        pos += consumed
    return None


def _parse_chunk(text: str, items: list, need_value: bool, last: bool,
                 decoder: StrictDecoder) -> tuple[int, bool, bool] | None:
    """Parse elements and separators of one chunk into ``items``.

    Returns (index where parsing stopped, whether a value comes next, whether the
    closing ``]`` was reached at that index), or None when the text is not an array.
    """
    size, skip, scan, add = len(text), _SKIP_WS_TEXT, decoder.scan_once, items.append
    i = 0
    while True:
        i = skip(text, i).end()
        if i >= size:
            return i, need_value, False
        if not need_value:
            if text[i] == "]":
                return i, False, True
            if text[i] != ",":
                return None
            i, need_value = skip(text, i + 1).end(), True
            if i >= size:
                return i, True, False
        try:
            value, j = scan(text, i)  # raw_decode without its Python wrapper
        except (json.JSONDecodeError, StopIteration):
            return (i, True, False) if not last else None  # cut by the chunk's end, or invalid
        except RecursionError:
            return None
        if j > size - 3 and not last and _number_may_go_on(value, text, j):
            return i, True, False
        add(value)
        i, need_value = j, False


def _char_boundary(raw: bytes, end: int) -> int:
    """``end`` moved back so that it does not fall inside a UTF-8 character."""
    while end < len(raw) and (raw[end] & 0xC0) == 0x80:
        end -= 1
    return end


def _utf8_len(text: str, i: int) -> int:
    """Bytes of ``text[:i]`` in UTF-8 (a lone surrogate counts as 3, as the file held it)."""
    return i if text.isascii() else len(text[:i].encode("utf-8", "surrogatepass"))


def _number_may_go_on(value: Any, window: str, used: int) -> bool:
    """A number cut by the window's edge parses as a shorter number ("12" of "12.5")."""
    if not isinstance(value, (int, float, Rejected)) or isinstance(value, bool):
        return False
    return used == len(window) or window[used] in "0123456789.eE+-"


# ---------------------------------------------------------------- JSONL


def _iter_lines(raw: bytes) -> Iterator[tuple[int, int, int]]:
    """(1-based number, start, end) of each line, without splitting the whole file."""
    start, number = 0, 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        if end < 0:
            end = len(raw)
        number += 1
        yield number, start, end
        start = end + 1


def _is_jsonl(raw: bytes) -> bool:
    """True when the first non-blank line is a complete JSON value and more follows."""
    for _, start, end in _iter_lines(raw):
        if _skip_ws(raw, start) >= end:
            continue
        if _skip_ws(raw, end) >= len(raw):
            return False  # a one-line document: parsed once, as a whole
        try:
            StrictDecoder().decode(raw[start:end].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return False
        return True
    return False


def _parse_jsonl(raw: bytes, decoder: StrictDecoder) -> tuple[list[Any], list[int]]:
    """One object per non-blank line; a bad line is reported by its number."""
    items: list[Any] = []
    numbers: list[int] = []
    for number, start, end in _iter_lines(raw):
        line = raw[start:end]
        if not line or line.isspace():
            continue
        item = _parse(_decode(line, start), decoder, f"line {number}")
        if not isinstance(item, dict):
            raise Bad(f"line {number}", f"not an object (got {kind(item)})")
        items.append(item)
        numbers.append(number)
    return items, numbers


# ---------------------------------------------------------------- what the parser let through


def check_tree(data: Any, lines: list[int] | None, rejected: bool) -> None:
    """Refuse nesting ``MAX_DEPTH`` deep and the numbers the decoder marked, by their place."""
    if lines is not None:
        for number, item in zip(lines, data, strict=False):
            found = first_problem(item, rejected)
            if found:
                raise Bad(_where(f"line {number}", found[0]), found[1])
        return
    found = first_problem(data, rejected)
    if not found:
        return
    path, reason = found
    if isinstance(data, list) and path:
        word = "event" if _looks_like_events(data) else "message"
        raise Bad(_where(f"{word} {path[0]}", path[1:]), reason)
    raise Bad(_where("", path), reason)


def _looks_like_events(data: list) -> bool:
    first = data[0] if data else None
    return isinstance(first, dict) and "role" not in first and "kind" in first


def has_problem(value: Any, rejected: bool) -> bool:
    """True when a container sits ``MAX_DEPTH`` deep or a marked number is inside: one
    quick pass over the containers (scalars are only looked at when numbers were marked)."""
    if type(value) is not dict and type(value) is not list:
        return type(value) is Rejected
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth >= MAX_DEPTH:
            return True
        for child in (node.values() if type(node) is dict else node):
            kind_ = type(child)
            if kind_ is dict or kind_ is list:
                push((child, depth + 1))
            elif rejected and kind_ is Rejected:
                return True
    return False


def first_problem(value: Any, rejected: bool) -> tuple[list, str] | None:
    """(path, reason) of the first too-deep container or rejected number, in document order.

    Iterative (a deep document cannot overflow the stack); the ordered search with
    parent links runs only when the quick pass found something.
    """
    if not has_problem(value, rejected):
        return None
    if not isinstance(value, (dict, list)):
        return [], value.reason
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]
    while stack:
        node, depth, link = stack.pop()
        if depth >= MAX_DEPTH:
            return _path(link), _DEEP
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        children = []
        for key, child in pairs:
            if isinstance(child, (dict, list)):
                children.append((child, depth + 1, (link, key)))
            elif rejected and isinstance(child, Rejected):
                return _path((link, key)), child.reason
        stack.extend(reversed(children))
    return None


def _path(link: Any) -> list:
    out = []
    while link is not None:
        link, key = link
        out.append(key)
    return out[::-1]


def _where(head: str, path: list) -> str:
    """``message 3: tool_calls[0].function.arguments``, cut to stay short."""
    text = ""
    for key in path:
        if isinstance(key, int):
            text += f"[{key}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", key):
            text += f".{key}" if text else key
        else:
            text += f"[{json.dumps(key[:40])}]"
        if len(text) > 80:
            text = text[:80] + "\u2026"
            break
    return f"{head}: {text}" if head and text else head or text
