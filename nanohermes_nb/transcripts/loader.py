"""The entry points: read a file, detect its format from the content, convert it.

A coding agent's own session log (Claude Code, Codex CLI, Gemini CLI, Copilot CLI,
any-agent) is recognised first, from its first records, and read leniently by
``agentlogs`` (what is sound is kept, the rest noted in ``Transcript.skipped``).
Everything else goes through the strict readers below.

Detection looks only at the parsed JSON, never at the file name: a list (or JSONL)
whose first item has a ``kind`` and no ``role`` is OpenHands events, one whose first
item is a LangChain message is LangChain, anything else OpenAI messages (legacy and
Anthropic messages inside are converted); an object is dispatched on the keys that
name its format (``history``, ``messages`` with mini-swe-agent's markers or an
Anthropic ``system``, ``events``, LangGraph's ``values.messages``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .agentlogs import AGENT_FORMATS, iter_agent_log_paths, read_agent_document, read_agent_log
from .anthropic import anthropic_system
from .base import (
    Bad,
    Message,
    PathLike,
    Transcript,
    TranscriptError,
    by_line,
    indexed,
    kind,
)
from .langchain import from_langchain, is_langchain
from .openai import openai_items
from .openhands import from_openhands
from .reading import check_start, load_data, read_regular_file
from .swe_agent import from_mini_swe_agent, from_swe_agent, is_mini_swe_agent

__all__ = ["load_transcript", "load_transcripts", "iter_transcript_paths", "FORMATS", "TRANSCRIPT_SUFFIXES"]

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
) + AGENT_FORMATS  # coding agents' own logs (agentlogs)
TRANSCRIPT_SUFFIXES = (".json", ".jsonl", ".traj")
SKIPPED_NAMES = frozenset({"manifest.json"})


def load_transcript(path: PathLike) -> Transcript:
    """Read one transcript file, detect its format, return it as OpenAI messages.

    Raises ``TranscriptError`` (one line: file, place, reason) for anything that is
    not a readable, valid transcript: never another exception, never a hang.
    """
    shown = os.fspath(path)
    try:
        raw = read_regular_file(Path(shown))
        agent_log = read_agent_log(raw, shown)  # before check_start: a log's sound part is read past damage
        if agent_log is not None:  # (a tail of NUL bytes a crash left is noted, not fatal)
            return agent_log
        check_start(raw)
        data, lines = load_data(Path(shown), raw)
        del raw
        agent_log = read_agent_document(data, shown) if lines is None else None
        if agent_log is not None:
            return agent_log
        fmt, messages = _convert(data, lines)
    except Bad as bad:
        # Built here, raised below: an error raised inside this block would keep the
        # internal exception, its frames and the file's bytes alive as its context.
        error = TranscriptError(shown, bad.where, bad.reason)
    except RecursionError:
        error = TranscriptError(shown, "", "nested too deeply to convert")
    else:
        return Transcript(messages, path=shown, format=fmt)
    raise error


def iter_transcript_paths(folder_or_paths: PathLike | Iterable[PathLike]) -> Iterator[Path]:
    """Transcript files: a folder's ``*.json``/``*.jsonl``/``*.traj`` (sorted, no
    ``manifest.json``), then the coding-agent logs in its subfolders, found recursively
    by their content (``~/.codex/sessions/YYYY/MM/DD/``; see ``agentlogs.discovery``);
    or the given files in the given order."""
    sources = [folder_or_paths] if isinstance(folder_or_paths, (str, os.PathLike)) else folder_or_paths
    for source in sources:
        p = Path(source)
        if p.is_dir():
            yield from sorted(c for c in p.iterdir() if c.is_file() and _is_transcript_name(c.name))
            for sub in sorted(c for c in p.iterdir() if c.is_dir() and not c.name.startswith(".")):
                yield from iter_agent_log_paths(sub)
        else:
            yield p


def load_transcripts(folder_or_paths: PathLike | Iterable[PathLike]) -> list[Transcript]:
    """Load every transcript of a folder (sorted by name) or of a list of paths."""
    return [load_transcript(p) for p in iter_transcript_paths(folder_or_paths)]


def _is_transcript_name(name: str) -> bool:
    return name.endswith(TRANSCRIPT_SUFFIXES) and name not in SKIPPED_NAMES and not name.startswith(".")


# ---------------------------------------------------------------- format detection


def _convert(data: Any, lines: list[int] | None) -> tuple[str, list[Message]]:
    """(format, OpenAI messages) for parsed JSON of any supported shape."""
    if lines is not None:
        return _from_items(data, by_line(lines), by_line(lines), "jsonl")
    if isinstance(data, list):
        return _from_items(data, indexed("message"), indexed("event"), "openai")
    if isinstance(data, dict):
        return _from_object(data)
    raise Bad("", _not_a_transcript(data))


def _not_a_transcript(data: Any) -> str:
    what = kind(data)
    if isinstance(data, dict):
        keys = ", ".join(repr(k[:40]) for k in list(data)[:6])
        what = f"object with keys {keys}" if keys else "empty object"
    return ("not a transcript: expected a list of messages or an object with 'messages', "
            f"'history', 'events' or 'values' (got {what})")


def _from_object(data: dict) -> tuple[str, list[Message]]:
    """Dispatch a top-level JSON object on the keys that name its format."""
    if "role" in data:
        return _from_items([data], indexed("message"), indexed("event"), "jsonl")
    if "history" in data and "messages" not in data:
        return "swe-agent", from_swe_agent(_list_field(data, "history"))
    if "messages" in data:
        return _from_messages_object(data, _list_field(data, "messages"))
    if "events" in data:
        return "openhands-v1", from_openhands(_list_field(data, "events"), indexed("event"))
    values = data.get("values")
    if isinstance(values, dict) and "messages" in values:
        messages = _list_field(values, "messages", "'values.messages'")
        return "langchain", from_langchain(messages, indexed("message"))
    raise Bad("", _not_a_transcript(data))


def _from_messages_object(data: dict, messages: list) -> tuple[str, list[Message]]:
    """``{"messages": [...]}``: mini-swe-agent, LangChain, Anthropic (with ``system``) or OpenAI."""
    if is_mini_swe_agent(data):
        return "mini-swe-agent", from_mini_swe_agent(messages)
    if messages and isinstance(messages[0], dict) and is_langchain(messages[0]):
        return "langchain", from_langchain(messages, indexed("message"))
    if data.get("system") is not None:
        system = anthropic_system(data["system"])
        _, converted = openai_items(messages, indexed("message"), "anthropic")
        return "anthropic", [system, *converted]
    return openai_items(messages, indexed("message"), "openai-object")


def _list_field(data: dict, key: str, label: str = "") -> list:
    value = data[key]
    if not isinstance(value, list):
        raise Bad("", f"{label or repr(key)} is not a list (got {kind(value)})")
    return value


def _from_items(items: list, locate: Any, locate_event: Any, plain: str) -> tuple[str, list[Message]]:
    """A list of messages or events: OpenHands, LangChain or OpenAI-like, by its first item.

    ``locate`` names an item in errors (``message 3`` or ``line 4``), ``locate_event``
    names it when the items are events; ``plain`` is the format of unconverted messages.
    """
    if not items:
        raise Bad("", "no messages (empty list)")
    first = items[0]
    if not isinstance(first, dict):
        raise Bad(locate(0), f"not an object (got {kind(first)})")
    if "role" not in first and "kind" in first:
        return "openhands-v1", from_openhands(items, locate_event)
    if is_langchain(first):
        return "langchain", from_langchain(items, locate)
    return openai_items(items, locate, plain)
