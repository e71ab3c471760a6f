"""Load recorded agent transcripts, whatever agent wrote them, as OpenAI chat messages.

The replay (SPEC section 5) measures every message exactly as given, so a file that is
already a list of OpenAI chat-completions messages is only validated, never rewritten:
same dicts, same key order. Other shapes real agents leave behind are converted to that
form: JSONL, legacy OpenAI ``function_call``, Anthropic content blocks, mini-swe-agent
``.traj.json``, SWE-agent ``.traj``, OpenHands V1 SDK events and LangChain/LangGraph
dumps. The format is detected from the content, never from the file name.

A malformed file raises ``TranscriptError``: one line naming the file and where it broke
(``line 7``, ``byte 12``, ``message 3: tool_calls[0]``). Message and event indices are
0-based list indices, as ``check_history`` reports them; lines are 1-based. Problems of
the history itself (orphan tool results, unanswered calls, reused ids) are not this
module's business: real logs have them, and ``check_history`` reports them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Union

__all__ = [
    "Transcript",
    "TranscriptError",
    "load_transcript",
    "load_transcripts",
    "iter_transcript_paths",
    "FORMATS",
    "OPENAI_ROLES",
    "TRANSCRIPT_SUFFIXES",
]

PathLike = Union[str, "os.PathLike[str]"]
Message = dict[str, Any]
Locate = Callable[[int], str]

FORMATS = (
    "openai",
    "openai-object",
    "jsonl",
    "legacy-functions",
    "anthropic",
    "mini-swe-agent",
    "swe-agent",
    "openhands-v1",
    "langchain",
)
OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
TRANSCRIPT_SUFFIXES = (".json", ".jsonl", ".traj")
SKIPPED_NAMES = frozenset({"manifest.json"})

# Every place where several text parts become one string joins them with a newline,
# as the OpenHands SDK's string serializer does.
TEXT_JOINER = "\n"

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "image"})
_LC_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system",
             "developer": "developer", "chat": "", "remove": ""}
_LC_CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool",
               "SystemMessage": "system", "ChatMessage": "chat", "RemoveMessage": "remove"}
_LC_DROPPED_PARTS = frozenset({"tool_use", "thinking", "redacted_thinking", "reasoning"})
_OPENHANDS_MESSAGE_ROLES = frozenset({"user", "assistant", "system"})


class TranscriptError(ValueError):
    """A transcript file that cannot be read or is not a valid transcript.

    ``str()`` is one line: ``"<path>: <where>: <reason>"`` (``where`` is empty for
    problems of the whole file, such as an empty file).
    """

    def __init__(self, path: str, where: str, reason: str) -> None:
        self.path = str(path)
        self.where = _one_line(where)
        self.reason = _one_line(reason)
        super().__init__(self.path, self.where, self.reason)

    def __str__(self) -> str:
        parts = [_one_line(self.path)] + ([self.where] if self.where else []) + [self.reason]
        return ": ".join(parts)


class Transcript(list):
    """A list of OpenAI-form message dicts, with the file it came from and its format."""

    def __init__(self, messages: Iterable[Message] = (), path: str = "", format: str = "openai") -> None:
        super().__init__(messages)
        self.path = path
        self.format = format


class _Bad(Exception):
    """Internal: a problem at a place; ``load_transcript`` adds the file name."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(where, reason)
        self.where = where
        self.reason = reason


# ---------------------------------------------------------------- public entry points


def load_transcript(path: PathLike) -> Transcript:
    """Read one transcript file, detect its format, return it as OpenAI messages."""
    shown = os.fspath(path)
    try:
        data, lines = _load_data(Path(shown))
        fmt, messages = _convert(data, lines)
    except _Bad as bad:
        # Built here, raised below: an error raised inside this block would keep the
        # internal exception, its frames and the file's bytes alive as its context.
        error = TranscriptError(shown, bad.where, bad.reason)
    else:
        return Transcript(messages, path=shown, format=fmt)
    raise error


def iter_transcript_paths(folder_or_paths: PathLike | Iterable[PathLike]) -> Iterator[Path]:
    """Transcript files: a folder's ``*.json``/``*.jsonl``/``*.traj`` (sorted, no
    ``manifest.json``, not recursive), or the given files in the given order."""
    sources = [folder_or_paths] if isinstance(folder_or_paths, (str, os.PathLike)) else folder_or_paths
    for source in sources:
        p = Path(source)
        if p.is_dir():
            yield from sorted(c for c in p.iterdir() if c.is_file() and _is_transcript_name(c.name))
        else:
            yield p


def load_transcripts(folder_or_paths: PathLike | Iterable[PathLike]) -> list[Transcript]:
    """Load every transcript of a folder (sorted by name) or of a list of paths."""
    return [load_transcript(p) for p in iter_transcript_paths(folder_or_paths)]


def _is_transcript_name(name: str) -> bool:
    return name.endswith(TRANSCRIPT_SUFFIXES) and name not in SKIPPED_NAMES and not name.startswith(".")


# ---------------------------------------------------------------- bytes -> JSON


def _load_data(path: Path) -> tuple[Any, list[int] | None]:
    """Parse the file; for JSONL also the 1-based line number of each item.

    Memory: the bytes are read once. A top-level array is decoded one element at a
    time and JSONL one line at a time, so a big file costs its bytes plus its parsed
    objects; only other shapes (and files with an error, to report it exactly) are
    decoded whole, the bytes being dropped as soon as the text exists.
    """
    raw = _read_bytes(path)
    _check_start(raw)
    first = raw[_skip_ws(raw, 0)]
    if first == ord("["):
        items = _parse_array_stream(raw)
        if items is not None:
            return items, None
    elif first == ord("{") and _is_jsonl(raw):
        return _parse_jsonl(raw)
    text = _decode(raw)
    del raw
    return _parse(text), None


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise _Bad("", "is a directory, not a transcript file") from None
    except FileNotFoundError:
        raise _Bad("", "cannot read (no such file)") from None
    except OSError as e:
        raise _Bad("", f"cannot read ({e.strerror or e})") from None


def _check_start(raw: bytes) -> None:
    """An empty file, or one that starts with a byte-order mark, is reported as such."""
    if not raw or raw.isspace():
        raise _Bad("", "empty file")
    if raw.startswith(b"\xef\xbb\xbf"):
        raise _Bad("", "starts with a UTF-8 byte-order mark; save without BOM")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise _Bad("", "starts with a UTF-16 byte-order mark; save as UTF-8")


def _decode(raw: bytes, offset: int = 0) -> str:
    """UTF-8 text; a bad byte is reported by its offset in the file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Bad(f"byte {offset + e.start}", f"not valid UTF-8 (0x{raw[e.start]:02x})") from None


def _parse(text: str) -> Any:
    """One JSON document; an error is reported by line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise _Bad(f"line {e.lineno}", f"invalid JSON ({e.msg}, column {e.colno})") from None
    except RecursionError:
        raise _Bad("", "invalid JSON (nested too deeply)") from None


_WS = re.compile(rb"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_FIRST_WINDOW = 1 << 12


def _skip_ws(raw: bytes, pos: int) -> int:
    return _WS.match(raw, pos).end()


def _parse_array_stream(raw: bytes) -> list[Any] | None:
    """The elements of a top-level JSON array, decoded one at a time from the bytes.

    Returns None on anything unexpected; the caller then parses the whole text, which
    either succeeds or reports the error exactly as ``json.loads`` words it.
    """
    n = len(raw)
    pos = _skip_ws(raw, _skip_ws(raw, 0) + 1)
    items: list[Any] = []
    window = _FIRST_WINDOW
    if pos < n and raw[pos] == ord("]"):
        return items if _skip_ws(raw, pos + 1) == n else None
    while pos < n:
        element = _decode_element(raw, pos, window)
        if element is None:
            return None
        items.append(element[0])
        window = max(_FIRST_WINDOW, 2 * (element[1] - pos))
        pos = _skip_ws(raw, element[1])
        if pos < n and raw[pos] == ord(","):
            pos = _skip_ws(raw, pos + 1)
        elif pos < n and raw[pos] == ord("]"):
            return items if _skip_ws(raw, pos + 1) == n else None
        else:
            return None
    return None


def _decode_element(raw: bytes, pos: int, size: int) -> tuple[Any, int] | None:
    """(value, byte end) of the JSON value starting at ``pos``, read through a window of
    ``size`` bytes that grows until the value fits; None when it does not parse or is
    not UTF-8."""
    while True:
        end = min(pos + size, len(raw))
        while end < len(raw) and (raw[end] & 0xC0) == 0x80:  # not inside a character
            end -= 1
        try:
            window = raw[pos:end].decode("utf-8")
            value, used = _DECODER.raw_decode(window)
        except json.JSONDecodeError:
            used = -1  # not complete within the window (or not valid at all)
        except (UnicodeDecodeError, RecursionError):
            return None
        if used < 0 or (end < len(raw) and _number_may_go_on(value, window, used)):
            if end >= len(raw):
                return None
            size *= 4
            continue
        consumed = used if window.isascii() else len(window[:used].encode("utf-8"))
        return value, pos + consumed


def _number_may_go_on(value: Any, window: str, used: int) -> bool:
    """A number cut by the window's edge parses as a shorter number ("12" of "12.5")."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return used == len(window) or window[used] in "0123456789.eE+-"


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
            json.loads(raw[start:end].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return False
        return True
    return False


def _parse_jsonl(raw: bytes) -> tuple[list[Any], list[int]]:
    """One object per non-blank line; a bad line is reported by its number."""
    items: list[Any] = []
    numbers: list[int] = []
    for number, start, end in _iter_lines(raw):
        line = raw[start:end]
        if not line or line.isspace():
            continue
        try:
            item = json.loads(_decode(line, start))
        except json.JSONDecodeError as e:
            raise _Bad(f"line {number}", f"invalid JSON ({e.msg}, column {e.colno})") from None
        except RecursionError:
            raise _Bad(f"line {number}", "invalid JSON (nested too deeply)") from None
        if not isinstance(item, dict):
            raise _Bad(f"line {number}", f"not an object (got {_kind(item)})")
        items.append(item)
        numbers.append(number)
    return items, numbers


# ---------------------------------------------------------------- format detection


def _convert(data: Any, lines: list[int] | None) -> tuple[str, list[Message]]:
    """(format, OpenAI messages) for parsed JSON of any supported shape."""
    if lines is not None:
        return _from_items(data, _by_line(lines), _by_line(lines), "jsonl")
    if isinstance(data, list):
        return _from_items(data, _indexed("message"), _indexed("event"), "openai")
    if isinstance(data, dict):
        return _from_object(data)
    raise _Bad("", _not_a_transcript(data))


def _indexed(word: str) -> Locate:
    """Names item i as ``"<word> i"`` (0-based, like ``check_history``)."""
    return lambda i: f"{word} {i}"


def _by_line(numbers: list[int]) -> Locate:
    """Names JSONL item i by its 1-based line number."""
    return lambda i: f"line {numbers[i]}"


def _not_a_transcript(data: Any) -> str:
    what = _kind(data)
    if isinstance(data, dict):
        keys = ", ".join(repr(k) for k in list(data)[:6])
        what = f"object with keys {keys}" if keys else "empty object"
    return ("not a transcript: expected a list of messages or an object with 'messages', "
            f"'history', 'events' or 'values' (got {what})")


def _from_object(data: dict) -> tuple[str, list[Message]]:
    """Dispatch a top-level JSON object on the keys that name its format."""
    if "role" in data:
        return _from_items([data], _indexed("message"), _indexed("event"), "jsonl")
    if "history" in data and "messages" not in data:
        return "swe-agent", _from_swe_agent(_list_field(data, "history"))
    if "messages" in data:
        messages = _list_field(data, "messages")
        if _is_mini_swe_agent(data):
            return "mini-swe-agent", _from_mini_swe_agent(messages)
        if messages and isinstance(messages[0], dict) and _is_langchain(messages[0]):
            return "langchain", _from_langchain(messages, _indexed("message"))
        if data.get("system") is not None:
            system = _anthropic_system(data["system"])
            _, converted = _openai_items(messages, _indexed("message"), "anthropic")
            return "anthropic", [system, *converted]
        return _openai_items(messages, _indexed("message"), "openai-object")
    if "events" in data:
        events = _list_field(data, "events")
        return "openhands-v1", _from_openhands(events, _indexed("event"))
    values = data.get("values")
    if isinstance(values, dict) and "messages" in values:
        messages = _list_field(values, "messages", "'values.messages'")
        return "langchain", _from_langchain(messages, _indexed("message"))
    raise _Bad("", _not_a_transcript(data))


def _list_field(data: dict, key: str, label: str = "") -> list:
    value = data[key]
    if not isinstance(value, list):
        raise _Bad("", f"{label or repr(key)} is not a list (got {_kind(value)})")
    return value


def _from_items(items: list, locate: Locate, locate_event: Locate, plain: str) -> tuple[str, list[Message]]:
    """A list of messages or events: OpenHands, LangChain or OpenAI-like, by its first item.

    ``locate`` names an item in errors (``message 3`` or ``line 4``), ``locate_event``
    names it when the items are events; ``plain`` is the format of unconverted messages.
    """
    if not items:
        raise _Bad("", "no messages (empty list)")
    first = items[0]
    if not isinstance(first, dict):
        raise _Bad(locate(0), f"not an object (got {_kind(first)})")
    if "role" not in first and "kind" in first:
        return "openhands-v1", _from_openhands(items, locate_event)
    if _is_langchain(first):
        return "langchain", _from_langchain(items, locate)
    return _openai_items(items, locate, plain)


# ---------------------------------------------------------------- OpenAI form (+ legacy, Anthropic)


def _openai_items(items: list, locate: Locate, plain: str) -> tuple[str, list[Message]]:
    """Validate OpenAI messages, keeping them as given; convert legacy and Anthropic ones."""
    if not items:
        raise _Bad("", "no messages (empty list)")
    out: list[Message] = []
    pending: list[tuple[str, str]] = []  # legacy calls not answered yet: (id, name)
    legacy = anthropic = False
    for i, m in enumerate(items):
        where = locate(i)
        role = _check_role(m, where, OPENAI_ROLES)
        if role == "assistant" and m.get("function_call") is not None:
            out.append(_legacy_call(m, i, where, pending))
            legacy = True
        elif role == "function":
            out.append(_legacy_result(m, i, where, pending))
            legacy = True
        elif _has_anthropic_blocks(m):
            out.extend(_anthropic_message(m, role, where))
            anthropic = True
        else:
            _check_openai(m, where)
            out.append(m)
    fmt = "anthropic" if anthropic else "legacy-functions" if legacy else plain
    return fmt, out


def _check_role(m: Any, where: str, allowed: frozenset[str]) -> str:
    if not isinstance(m, dict):
        raise _Bad(where, f"not an object (got {_kind(m)})")
    if "role" not in m:
        raise _Bad(where, "missing 'role'")
    role = m["role"]
    if not isinstance(role, str):
        raise _Bad(where, f"'role' must be a string (got {_kind(role)})")
    if role not in allowed:
        raise _Bad(where, f"unknown role {_short(role)} (allowed: {', '.join(sorted(allowed))})")
    return role


def _check_openai(m: Message, where: str, *, tool_id: bool = True) -> None:
    """Content type, tool_calls shape, and a tool message's ``tool_call_id``."""
    if "content" in m:
        _check_content(m["content"], where)
    if m.get("tool_calls") is not None:
        _check_tool_calls(m["tool_calls"], where)
    if tool_id and m["role"] == "tool":
        _check_tool_call_id(m.get("tool_call_id"), where)


def _check_content(content: Any, where: str) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _Bad(where, f"content must be a string, null or a list of parts (got {_kind(content)})")
    for k, part in enumerate(content):
        if not isinstance(part, dict):
            raise _Bad(f"{where}: content[{k}]", f"part is not an object (got {_kind(part)})")


def _check_tool_calls(calls: Any, where: str) -> None:
    if not isinstance(calls, list):
        raise _Bad(where, f"tool_calls must be a list (got {_kind(calls)})")
    for j, call in enumerate(calls):
        at = f"{where}: tool_calls[{j}]"
        if not isinstance(call, dict):
            raise _Bad(at, f"not an object (got {_kind(call)})")
        if not _text(call.get("id")):
            raise _Bad(at, "missing 'id'")
        function = call.get("function")
        if not isinstance(function, dict):
            raise _Bad(at, "missing 'function'")
        if not _text(function.get("name")):
            raise _Bad(at, "missing function 'name'")


def _check_tool_call_id(value: Any, where: str) -> None:
    if value is None:
        raise _Bad(where, "tool message without 'tool_call_id'")
    if not _text(value):
        raise _Bad(where, f"'tool_call_id' must be a non-empty string (got {_kind(value)})")


def _tool_call(call_id: str, name: str, arguments: Any) -> Message:
    """One tool call in OpenAI form; non-string arguments become JSON text."""
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _normalise_tool_calls(calls: Any, where: str) -> list[Message]:
    """``{"id","type":"function","function":{"name","arguments"}}`` for each call, extras dropped."""
    _check_tool_calls(calls, where)
    return [_tool_call(c["id"], c["function"]["name"], c["function"].get("arguments")) for c in calls]


def _legacy_call(m: Message, index: int, where: str, pending: list[tuple[str, str]]) -> Message:
    """An assistant ``function_call`` as one tool call with the stable id ``call_<index>``."""
    call = m["function_call"]
    if not isinstance(call, dict):
        raise _Bad(where, f"function_call must be an object (got {_kind(call)})")
    name = call.get("name")
    if not _text(name):
        raise _Bad(f"{where}: function_call", "missing 'name'")
    _check_openai(m, where)
    out: Message = {"role": "assistant", "content": m.get("content")}
    out.update((k, v) for k, v in m.items() if k not in ("role", "content", "function_call", "tool_calls"))
    call_id = f"call_{index}"
    out["tool_calls"] = [*(m.get("tool_calls") or []), _tool_call(call_id, name, call.get("arguments"))]
    pending.append((call_id, name))
    return out


def _legacy_result(m: Message, index: int, where: str, pending: list[tuple[str, str]]) -> Message:
    """A ``function`` message as the tool message answering the earliest pending call of
    the same name (else the earliest pending call; an orphan gets ``call_<index>``)."""
    name = m.get("name")
    if not _text(name):
        raise _Bad(where, "function message without 'name'")
    _check_openai(m, where)
    match = next((k for k, (_, n) in enumerate(pending) if n == name), 0 if pending else None)
    call_id = pending.pop(match)[0] if match is not None else f"call_{index}"
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": m.get("content")}


def _has_anthropic_blocks(m: Message) -> bool:
    content = m.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS for b in content)


def _anthropic_system(system: Any) -> Message:
    """The Messages API's top-level ``system`` (string or text blocks) as messages[0]."""
    if isinstance(system, str):
        return {"role": "system", "content": system}
    if isinstance(system, list):
        _check_content(system, "system")
        return {"role": "system", "content": TEXT_JOINER.join(_block_text(b, f"system: content[{k}]")
                                                               for k, b in enumerate(system))}
    raise _Bad("system", f"must be a string or a list of text blocks (got {_kind(system)})")


def _anthropic_message(m: Message, role: str, where: str) -> list[Message]:
    """One Anthropic message: tool results first (one tool message each), then the rest."""
    _check_content(m["content"], where)
    parts: list[Message] = []
    calls: list[Message] = []
    results: list[Message] = []
    for k, block in enumerate(m["content"]):
        at = f"{where}: content[{k}]"
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": _block_text(block, at)})
        elif kind == "tool_use":
            if role != "assistant":
                raise _Bad(at, f"tool_use block in a {role} message")
            calls.append(_anthropic_call(block, at))
        elif kind == "tool_result":
            if role != "user":
                raise _Bad(at, f"tool_result block in a {role} message")
            results.append(_anthropic_result(block, at))
        elif kind == "image":
            parts.append(_image_part(block, at))
        elif kind in ("thinking", "redacted_thinking"):
            continue
        else:
            parts.append(block)
    if role == "assistant":
        out: Message = {"role": "assistant", "content": _parts_content(parts)}
        if calls:
            out["tool_calls"] = calls
        return [out]
    if parts or not results:
        results.append({"role": role, "content": _parts_content(parts) if parts else ""})
    return results


def _anthropic_call(block: Message, at: str) -> Message:
    if not _text(block.get("id")):
        raise _Bad(at, "tool_use without 'id'")
    if not _text(block.get("name")):
        raise _Bad(at, "tool_use without 'name'")
    arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
    return _tool_call(block["id"], block["name"], arguments)


def _anthropic_result(block: Message, at: str) -> Message:
    if not _text(block.get("tool_use_id")):
        raise _Bad(at, "tool_result without 'tool_use_id'")
    content = block.get("content")
    if content is None:
        text: Any = ""
    elif isinstance(content, str):
        text = content
    elif isinstance(content, list):
        _check_content(content, at)
        parts = [_result_part(b, f"{at}: content[{k}]") for k, b in enumerate(content)]
        text = _parts_content(parts) if parts else ""
    else:
        raise _Bad(at, f"tool_result content must be a string or a list of blocks (got {_kind(content)})")
    return {"role": "tool", "tool_call_id": block["tool_use_id"], "content": text}


def _result_part(block: Message, at: str) -> Message:
    """A block inside a tool_result: text and images converted, other kinds kept."""
    if block.get("type") == "text":
        return {"type": "text", "text": _block_text(block, at)}
    if block.get("type") == "image":
        return _image_part(block, at)
    return block


def _block_text(block: Any, at: str) -> str:
    if not isinstance(block, dict) or not isinstance(block.get("text"), str):
        raise _Bad(at, "text block without a 'text' string")
    return block["text"]


def _image_part(block: Message, at: str) -> Message:
    """An Anthropic image block as an OpenAI ``image_url`` part (base64 -> data URL)."""
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        url = f"data:{source.get('media_type', 'application/octet-stream')};base64,{source['data']}"
    elif isinstance(source, dict) and source.get("type") == "url" and isinstance(source.get("url"), str):
        url = source["url"]
    else:
        raise _Bad(at, "image block without a base64 or url 'source'")
    return {"type": "image_url", "image_url": {"url": url}}


def _parts_content(parts: list[Message]) -> Any:
    """Text-only parts become one string (None when there are none); otherwise the parts."""
    if all(p.get("type") == "text" and isinstance(p.get("text"), str) for p in parts):
        return TEXT_JOINER.join(p["text"] for p in parts) if parts else None
    return parts


# ---------------------------------------------------------------- mini-swe-agent, SWE-agent


def _is_mini_swe_agent(data: dict) -> bool:
    info = data.get("info")
    fmt = data.get("trajectory_format")
    return (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (
        isinstance(info, dict) and "mini_version" in info)


def _from_mini_swe_agent(messages: list) -> list[Message]:
    """Keep role, content, reasoning_content, tool_calls, tool_call_id, name; drop ``exit``."""
    out: list[Message] = []
    for i, m in enumerate(messages):
        where = f"message {i}"
        role = _check_role(m, where, OPENAI_ROLES | {"exit"})
        if role == "exit":
            continue
        _check_openai(m, where)
        msg: Message = {"role": role, "content": m.get("content")}
        if m.get("reasoning_content") is not None:
            msg["reasoning_content"] = m["reasoning_content"]
        if m.get("tool_calls"):
            msg["tool_calls"] = _normalise_tool_calls(m["tool_calls"], where)
        if "tool_call_id" in m:
            msg["tool_call_id"] = m["tool_call_id"]
        if m.get("name") is not None:
            msg["name"] = m["name"]
        out.append(msg)
    if not out:
        raise _Bad("", "no messages (empty list)")
    return out


def _from_swe_agent(history: list) -> list[Message]:
    """SWE-agent 1.x ``history``: ``tool_call_ids[0]`` answers; agent bookkeeping dropped."""
    out: list[Message] = []
    for i, m in enumerate(history):
        where = f"message {i}"
        role = _check_role(m, where, OPENAI_ROLES)
        _check_openai(m, where, tool_id=False)
        msg: Message = {"role": role, "content": m.get("content")}
        if m.get("tool_calls"):
            msg["tool_calls"] = _normalise_tool_calls(m["tool_calls"], where)
        if role == "tool":
            msg["tool_call_id"] = _swe_agent_call_id(m, where)
        out.append(msg)
    if not out:
        raise _Bad("", "no messages (empty history)")
    return out


def _swe_agent_call_id(m: Message, where: str) -> str:
    if m.get("tool_call_id") is not None:
        _check_tool_call_id(m["tool_call_id"], where)
        return m["tool_call_id"]
    ids = m.get("tool_call_ids")
    if isinstance(ids, list) and ids:
        _check_tool_call_id(ids[0], f"{where}: tool_call_ids[0]")
        return ids[0]
    raise _Bad(where, "tool message without 'tool_call_id' (or 'tool_call_ids')")


# ---------------------------------------------------------------- OpenHands V1 SDK events


def _from_openhands(events: list, locate: Locate) -> list[Message]:
    """Events to messages: consecutive ActionEvents of one LLM response form one
    assistant message; observations, errors and rejections become tool messages."""
    out: list[Message] = []
    group: Message | None = None
    group_id: Any = None
    thoughts: list[str] = []
    for i, event in enumerate(events):
        where = locate(i)
        if not isinstance(event, dict):
            raise _Bad(where, f"not an object (got {_kind(event)})")
        kind = event.get("kind")
        if not _text(kind):
            raise _Bad(where, "event without 'kind'")
        if kind == "ActionEvent":
            call = _openhands_call(event, where)
            response_id = event.get("llm_response_id")
            if group is None or response_id is None or response_id != group_id:
                group, group_id, thoughts = _openhands_assistant(event), response_id, []
                out.append(group)
            thoughts.extend(_openhands_texts(event.get("thought"), f"{where}: thought"))
            group["content"] = TEXT_JOINER.join(thoughts) if thoughts else None
            group["tool_calls"].append(call)
            continue
        message = _openhands_message(event, kind, where)
        if message is not None:
            group = None
            out.append(message)
    if not out:
        raise _Bad("", f"no messages (none of the {len(events)} events converts to a message)")
    return out


def _openhands_assistant(event: Message) -> Message:
    """The assistant message a batch of actions starts; reasoning comes from its first."""
    msg: Message = {"role": "assistant", "content": None}
    if event.get("reasoning_content") is not None:
        msg["reasoning_content"] = event["reasoning_content"]
    msg["tool_calls"] = []
    return msg


def _openhands_call(event: Message, where: str) -> Message:
    call = event.get("tool_call")
    if not isinstance(call, dict):
        raise _Bad(where, "ActionEvent without 'tool_call'")
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    call_id = call.get("id") or event.get("tool_call_id")
    name = function.get("name") or event.get("tool_name")
    if not _text(call_id):
        raise _Bad(f"{where}: tool_call", "missing 'id'")
    if not _text(name):
        raise _Bad(f"{where}: tool_call", "missing 'name'")
    return _tool_call(call_id, name, function.get("arguments"))


def _openhands_message(event: Message, kind: str, where: str) -> Message | None:
    """The message one non-action event contributes, or None for kinds the LLM never sees."""
    if kind == "SystemPromptEvent":
        prompt = event.get("system_prompt")
        text = prompt if isinstance(prompt, str) else _openhands_text(prompt, f"{where}: system_prompt")
        return {"role": "system", "content": text}
    if kind == "MessageEvent":
        llm = event.get("llm_message")
        if not isinstance(llm, dict):
            raise _Bad(where, "MessageEvent without 'llm_message'")
        role = _check_role(llm, f"{where}: llm_message", _OPENHANDS_MESSAGE_ROLES)
        texts = _openhands_texts(llm.get("content"), f"{where}: llm_message: content")
        texts += _openhands_texts(event.get("extended_content"), f"{where}: extended_content")
        msg: Message = {"role": role, "content": TEXT_JOINER.join(texts)}
        if llm.get("reasoning_content") is not None:
            msg["reasoning_content"] = llm["reasoning_content"]
        return msg
    if kind == "ObservationEvent":
        observation = event.get("observation")
        if not isinstance(observation, dict):
            raise _Bad(where, "ObservationEvent without 'observation'")
        return _openhands_tool(event, kind, where, _observation_text(observation))
    if kind == "AgentErrorEvent":
        error = event.get("error")
        if not isinstance(error, str):
            raise _Bad(where, "AgentErrorEvent without an 'error' string")
        return _openhands_tool(event, kind, where, error)
    if kind == "UserRejectObservation":
        reason = event.get("rejection_reason", "User rejected the action")
        return _openhands_tool(event, kind, where, f"Action rejected: {reason}")
    return None


def _openhands_tool(event: Message, kind: str, where: str, text: str) -> Message:
    call_id = event.get("tool_call_id")
    if not _text(call_id):
        raise _Bad(where, f"{kind} without 'tool_call_id'")
    msg: Message = {"role": "tool", "tool_call_id": call_id}
    if event.get("tool_name") is not None:
        msg["name"] = event["tool_name"]
    msg["content"] = text
    return msg


def _observation_text(observation: Message) -> str:
    """``output`` when it is text, else the joined ``content`` text items, else the
    observation as JSON (what the converted OpenHands counterparts carry)."""
    if isinstance(observation.get("output"), str):
        return observation["output"]
    if isinstance(observation.get("content"), list):
        return TEXT_JOINER.join(_openhands_texts(observation["content"], "observation: content"))
    return json.dumps(observation, ensure_ascii=False)


def _openhands_text(value: Any, at: str) -> str:
    return TEXT_JOINER.join(_openhands_texts(value, at))


def _openhands_texts(value: Any, at: str) -> list[str]:
    """The texts of a string, a TextContent dict or a list of them; images are skipped."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise _Bad(at, f"must be text or a list of content items (got {_kind(value)})")
    texts = []
    for k, item in enumerate(value):
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif not (isinstance(item, dict) and item.get("type") == "image"):
            raise _Bad(f"{at}[{k}]", "content item without a 'text' string")
    return texts


# ---------------------------------------------------------------- LangChain / LangGraph


def _lc_type(m: dict) -> str | None:
    """The LangChain message type (human, ai, tool, system, chat, remove), or None."""
    if "lc" in m and isinstance(m.get("kwargs"), dict):
        ident = m.get("id")
        name = ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else ""
        return _lc_class(name) or m["kwargs"].get("type")
    kind = m.get("type")
    if not isinstance(kind, str):
        return None
    return kind if kind in _LC_ROLES else _lc_class(kind)


def _lc_class(name: str) -> str | None:
    base = name[: -len("Chunk")] if name.endswith("Chunk") else name
    return _LC_CLASSES.get(base)


def _is_langchain(m: dict) -> bool:
    return "role" not in m and (("lc" in m and "kwargs" in m) or _lc_type(m) is not None)


def _from_langchain(items: list, locate: Locate) -> list[Message]:
    """human/ai/tool/system messages (plain or ``lc`` serialized) as OpenAI messages."""
    out: list[Message] = []
    for i, m in enumerate(items):
        where = locate(i)
        if not isinstance(m, dict):
            raise _Bad(where, f"not an object (got {_kind(m)})")
        kind = _lc_type(m)
        if kind not in _LC_ROLES:
            shown = m.get("type") if "lc" not in m else m.get("id")
            raise _Bad(where, f"unknown message type {_short(shown)} (expected human, ai, tool or system)")
        fields = m["kwargs"] if "lc" in m and isinstance(m.get("kwargs"), dict) else m
        message = _lc_message(kind, fields, where)
        if message is not None:
            out.append(message)
    if not out:
        raise _Bad("", "no messages (empty list)")
    return out


def _lc_message(kind: str, fields: dict, where: str) -> Message | None:
    if kind == "remove":
        return None
    role = _LC_ROLES[kind] or _lc_chat_role(fields, where)
    msg: Message = {"role": role, "content": _lc_content(fields.get("content"), where)}
    if role == "assistant":
        extra = fields.get("additional_kwargs") or {}
        if isinstance(extra, dict) and extra.get("reasoning_content") is not None:
            msg["reasoning_content"] = extra["reasoning_content"]
        calls = _lc_tool_calls(fields, extra if isinstance(extra, dict) else {}, where)
        if calls:
            msg["tool_calls"] = calls
    elif role == "tool":
        _check_tool_call_id(fields.get("tool_call_id"), where)
        msg["tool_call_id"] = fields["tool_call_id"]
        if fields.get("name") is not None:
            msg["name"] = fields["name"]
    return msg


def _lc_chat_role(fields: dict, where: str) -> str:
    role = fields.get("role")
    if not isinstance(role, str) or role not in OPENAI_ROLES - {"tool", "function"}:
        raise _Bad(where, f"chat message with unknown role {_short(role)}")
    return role


def _lc_tool_calls(fields: dict, extra: dict, where: str) -> list[Message]:
    """``tool_calls`` with ``args`` dicts; else the OpenAI ones in ``additional_kwargs``."""
    calls = fields.get("tool_calls")
    if not calls:
        legacy = extra.get("tool_calls")
        return _normalise_tool_calls(legacy, where) if legacy else []
    if not isinstance(calls, list):
        raise _Bad(where, f"tool_calls must be a list (got {_kind(calls)})")
    out = []
    for j, call in enumerate(calls):
        at = f"{where}: tool_calls[{j}]"
        if not isinstance(call, dict):
            raise _Bad(at, f"not an object (got {_kind(call)})")
        if not _text(call.get("id")):
            raise _Bad(at, "missing 'id'")
        if not _text(call.get("name")):
            raise _Bad(at, "missing 'name'")
        out.append(_tool_call(call["id"], call["name"], json.dumps(call.get("args", {}), ensure_ascii=False)))
    return out


def _lc_content(content: Any, where: str) -> Any:
    """A string as is; a list of text parts joined; other parts (images) kept as parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _Bad(where, f"content must be a string or a list of parts (got {_kind(content)})")
    parts: list[Message] = []
    for k, part in enumerate(content):
        if isinstance(part, str):
            parts.append({"type": "text", "text": part})
        elif not isinstance(part, dict):
            raise _Bad(f"{where}: content[{k}]", f"part is not an object (got {_kind(part)})")
        elif part.get("type") == "text":
            parts.append({"type": "text", "text": _block_text(part, f"{where}: content[{k}]")})
        elif part.get("type") not in _LC_DROPPED_PARTS:
            parts.append(part)
    return _parts_content(parts) if parts else ""


# ---------------------------------------------------------------- small helpers


def _text(value: Any) -> bool:
    """A non-empty string (ids, names)."""
    return isinstance(value, str) and value != ""


def _kind(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _short(value: Any, limit: int = 60) -> str:
    """``repr`` of a value, cut so that an error message stays short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(text: str) -> str:
    """Line breaks folded to spaces: an error message is always one line."""
    return " ".join(str(text).splitlines())
