"""What every transcript format shares: the error, the result type and the type checks.

A loader reports a problem by raising ``Bad(where, reason)``; ``load_transcript``
turns it into a ``TranscriptError`` that adds the file name. The checks here are
the chat-completions API's own rules for the fields a replay or a provider reads
(role, content and its parts, tool calls and their ids, names and ``arguments``),
so a history the loader accepts is one a provider would accept field by field.
History-level problems (orphan results, unanswered calls) stay ``check_history``'s job.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from .._deprecated import renamed

__all__ = [
    "Transcript",
    "AgentRequest",
    "ReportedUsage",
    "ToolCompaction",
    "Fork",
    "AGENTS",
    "TranscriptError",
    "OPENAI_ROLES",
    "TEXT_JOINER",
]

PathLike = Union[str, "os.PathLike[str]"]
Message = dict[str, Any]
Locate = Callable[[int], str]

OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

# Every place where several text parts become one string joins them with a newline,
# as the OpenHands SDK's string serializer does.
TEXT_JOINER = "\n"

# Characters a terminal acts on, or that change what the rest of a line looks like, instead of being shown:
# every C0 control (ESC, BEL, CR, LF, TAB...), DEL, every C1 control (0x9b is an 8-bit CSI), the line and
# paragraph separators, the bidi marks, embeddings, overrides and isolates that reorder what follows
# ("Trojan Source", CVE-2021-42574), and lone surrogates (no terminal encoding can carry one).
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                          r"\ud800-\udfff]")


class TranscriptError(ValueError):
    """A transcript file that cannot be read or is not a valid transcript.

    ``str()`` is one printable line: ``"<path>: <where>: <reason>"`` (``where`` is
    empty for problems of the whole file, such as an empty file). Control
    characters and lone surrogates (a file name that is not UTF-8) are shown as
    escapes, so printing the message never fails and never moves the cursor.
    ``path`` keeps the name exactly as given.
    """

    def __init__(self, path: str, where: str, reason: str) -> None:
        self.path = str(path)
        self.where = one_line(where)
        self.reason = one_line(reason)
        super().__init__(self.path, self.where, self.reason)

    def __str__(self) -> str:
        parts = [one_line(self.path)] + ([self.where] if self.where else []) + [self.reason]
        return printable(": ".join(parts))


# The coding agents whose own session logs ``load_transcript`` reads (``Transcript.agent``).
AGENTS = ("claude_code", "codex_cli", "gemini_cli", "copilot_cli", "any_agent", "aider")


@dataclass(frozen=True)
class ReportedUsage:
    """What the provider billed for one request, as the agent's log reports it.

    Normalised to the chat-completions meaning: ``prompt_tokens`` is every input token of
    the request, cached ones included (Anthropic: input + cache creation + cache read;
    OpenAI/Codex: ``input_tokens``, which already holds ``cached_input_tokens``);
    ``cached_tokens`` the ones read from the cache; ``cache_write_tokens`` the ones written
    to it (Anthropic's cache creation; 0 where the provider does not bill writes apart);
    ``completion_tokens`` every output token, reasoning included; ``reasoning_tokens`` the
    reasoning part of them where the log says; ``cache_write_1h_tokens`` the part of the cache writes made
    with a one-hour time-to-live (Claude Code's ``cache_creation.ephemeral_1h_input_tokens``), billed at
    a higher price than five-minute writes.

    ``raw`` keeps the provider's own numeric fields as the log holds them, so totals can be
    checked against other tools token for token: for Claude Code the LAST record of the
    response (whose ``output_tokens`` is the final count) and ``raw_first`` the FIRST record
    (ccusage 18 keeps that one, whose ``output_tokens`` is often a streaming placeholder);
    for Codex the de-duplicated ``last_token_usage``; ``raw_first`` equals ``raw`` elsewhere.
    Claude Code's normalised input side (prompt, cached, cache write) is read from the first
    record, its ``completion_tokens`` from the last.
    """

    prompt_tokens: int
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    raw: Mapping[str, int] = field(default_factory=dict)
    raw_first: Mapping[str, int] = field(default_factory=dict)
    cache_write_1h_tokens: int = 0  # the part of cache_write_tokens written for one hour (Anthropic's 1h TTL)


@dataclass(frozen=True)
class AgentRequest:
    """One API request the agent made: one assistant message of the transcript.

    ``message`` is that assistant message's index in the transcript; ``id`` the provider's
    response id where the log has one (Claude Code ``message.id``), else a stable id made
    from the place in the file; ``time`` epoch seconds (None when the log has no time);
    ``model`` as the log names it; ``usage`` None when the log reports none for it (Codex:
    a turn aborted, or the log ending, before the token count was written; Copilot CLI).
    Every assistant message of an agent log's transcript has exactly one request.
    """

    message: int
    id: str
    time: float | None = None
    model: str = ""
    usage: ReportedUsage | None = None


@dataclass(frozen=True)
class ToolCompaction:
    """One compaction the agent itself made, read from its log (not simulated).

    ``message`` is the transcript index where it happened: the first message recorded
    after it (``len(transcript)`` when it was the last thing logged). ``trigger`` is
    ``"auto"`` or ``"manual"`` when the log says, ``"restart"`` where the agent started again on an
    empty context (a new Aider run: nothing kept, no summary), else ``""``. ``pre_tokens`` /
    ``post_tokens`` are the context sizes the log reports around it, None where it reports
    none (Claude Code: ``compactMetadata.preTokens``; Codex: the context of the last request
    before it and the ``total_tokens`` of the token count written right after it).
    ``summary`` is the summary text; ``continuation`` the messages the agent went on from
    (Codex: ``replacement_history`` converted; Claude Code: the compact-summary user message).
    """

    message: int
    time: float | None = None
    trigger: str = ""
    pre_tokens: int | None = None
    post_tokens: int | None = None
    summary: str = ""
    continuation: tuple[Message, ...] = ()


@dataclass(frozen=True)
class Fork:
    """A session that opens on a copy of another session's history (a Codex sub-agent spawned with
    ``fork_context``: codex-rs ``agent/control.rs`` hands the parent's rollout items to the new thread as
    ``InitialHistory::Forked``, and the new rollout file persists them before its own turns).

    ``parent`` is the session the history was copied from (``session_meta.forked_from_id``);
    ``messages`` the index of the first message of the fork's own part (the ones before are the parent's,
    and they are in the fork's context all the same); ``copied`` the parent's requests as the copy holds
    them, with their usage. In ``Transcript.requests`` these have usage None: the parent's file bills
    them, the fork made none of them. They are kept here so that totals can still be checked against a
    tool that counts every line of the file.
    """

    parent: str
    messages: int = 0
    copied: tuple[AgentRequest, ...] = ()

    @property
    def n_requests(self) -> int:
        """How many of the transcript's requests are the parent's, copied."""
        return len(self.copied)

    @property
    def requests(self) -> int:
        """Deprecated since 0.3.0: ``n_requests`` (``Transcript.requests`` are the requests themselves)."""
        return renamed(self, "requests", "n_requests")


class Transcript(list):
    """A list of OpenAI-form message dicts, with the file it came from and its format.

    Read from a coding agent's own session log (``agent`` set), it also carries what the
    log says beyond the messages; for other formats these stay empty:

    - ``requests``: one ``AgentRequest`` per API request (one per assistant message).
    - ``compactions``: the agent's own compactions (``ToolCompaction``).
    - ``skipped``: one-line notes of what was left unread and where (a truncated last
      line, an unknown record type, a record of another agent's format).
    - ``sidechains``: sub-agent threads (Claude Code ``isSidechain``), each a Transcript,
      kept apart from the main thread rather than interleaved.
    - ``fork``: for a session that opens on a copy of its parent's history, where its own part begins
      (``Fork``); None otherwise.

    How a session with compactions is represented: the messages are the full recorded
    trajectory, everything the agent sent and received in order, with the agent's
    compaction summaries NOT mixed in as ordinary messages. They are in ``compactions``
    (with the index where each happened). So a replay under any policy, NanoHermes's rule
    included, replays the raw trajectory, and the agent's own compactions can be shown
    beside it as events read from the log.
    """

    def __init__(self, messages: Iterable[Message] = (), path: str = "", format: str = "openai", *,
                 agent: str = "", requests: Iterable[AgentRequest] = (),
                 compactions: Iterable[ToolCompaction] = (), skipped: Iterable[str] = (),
                 sidechains: Iterable[Transcript] = (), fork: Fork | None = None) -> None:
        super().__init__(messages)
        self.path = path
        self.format = format
        self.agent = agent
        self.requests: tuple[AgentRequest, ...] = tuple(requests)
        self.compactions: tuple[ToolCompaction, ...] = tuple(compactions)
        self.skipped: tuple[str, ...] = tuple(skipped)
        self.sidechains: tuple[Transcript, ...] = tuple(sidechains)
        self.fork = fork


class Bad(Exception):
    """Internal: a problem at a place; ``load_transcript`` adds the file name."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(where, reason)
        self.where = where
        self.reason = reason


# ---------------------------------------------------------------- words for error messages


def kind(value: Any) -> str:
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


def short(value: Any, limit: int = 60) -> str:
    """``repr`` of a value, cut so that an error message stays short (even for a 1 GB string)."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    elif isinstance(value, (list, dict)):
        return f"<{kind(value)}>"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text: str) -> str:
    """Line breaks folded to spaces: an error message is always one line."""
    return " ".join(str(text).splitlines())


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``text`` safe for a terminal: each character of ``_UNPRINTABLE`` as a visible escape.

    ``\\x1b`` for a control character (line breaks and tabs too: the result is one line),
    ``\\u202e`` for a bidi override, ``\\udcff`` for a lone surrogate; everything else is
    unchanged. Data (file names, message text, call ids, tool names, error reasons) passes
    through this at every terminal boundary (the CLI's tables and lines, a sweep's progress
    bar, ``TranscriptError``), so a transcript cannot ring the bell, recolour the terminal,
    move the cursor or reorder a line, and the result can always be encoded.
    """
    return _UNPRINTABLE.sub(_escape, str(text))


# ---------------------------------------------------------------- field checks


def is_text(value: Any) -> bool:
    """A non-empty string (ids, names)."""
    return isinstance(value, str) and value != ""


def need_text(value: Any, at: str, name: str, missing: str = "") -> str:
    """``value`` as a non-empty string; else say what is wrong with it.

    Missing (or null) is reported as ``missing`` (default ``"missing <name>"``), any
    other type as ``"<name> must be a string (got number)"``, the empty string as
    ``"<name> is empty"``: a number is not reported as missing.
    """
    if value is None:
        raise Bad(at, missing or f"missing {name}")
    if not isinstance(value, str):
        raise Bad(at, f"{name} must be a string (got {kind(value)})")
    if not value:
        raise Bad(at, f"{name} is empty")
    return value


def need_object(value: Any, at: str, name: str, missing: str = "") -> dict:
    """``value`` when it is a JSON object; ``missing`` when it is absent, the type otherwise."""
    if value is None:
        raise Bad(at, missing or f"missing {name}")
    if not isinstance(value, dict):
        raise Bad(at, f"{name} must be an object (got {kind(value)})")
    return value


def check_role(m: Any, where: str, allowed: frozenset[str]) -> str:
    """The message's role, which must be one of ``allowed``."""
    if not isinstance(m, dict):
        raise Bad(where, f"not an object (got {kind(m)})")
    if "role" not in m:
        raise Bad(where, "missing 'role'")
    role = m["role"]
    if not isinstance(role, str):
        raise Bad(where, f"'role' must be a string (got {kind(role)})")
    if role not in allowed:
        raise Bad(where, f"unknown role {short(role)} (allowed: {', '.join(sorted(allowed))})")
    return role


def check_openai(m: Message, where: str, *, tool_id: bool = True) -> None:
    """Content, tool_calls, name and reasoning types, and a tool message's ``tool_call_id``."""
    if "content" in m:
        check_content(m["content"], where)
    if m.get("tool_calls") is not None:
        check_tool_calls(m["tool_calls"], where)
    for key in ("name", "reasoning_content", "refusal"):
        if m.get(key) is not None and not isinstance(m[key], str):
            raise Bad(where, f"{key!r} must be a string (got {kind(m[key])})")
    if tool_id and m["role"] == "tool":
        check_tool_call_id(m.get("tool_call_id"), where)
    elif m.get("tool_call_id") is not None and not isinstance(m["tool_call_id"], str):
        raise Bad(where, f"'tool_call_id' must be a string (got {kind(m['tool_call_id'])})")


def check_content(content: Any, where: str) -> None:
    """A string, null, or a list of part objects whose known fields have their types."""
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise Bad(where, f"content must be a string, null or a list of parts (got {kind(content)})")
    for k, part in enumerate(content):
        check_part(part, f"{where}: content[{k}]")


def check_part(part: Any, at: str) -> None:
    """One content part: an object; a ``type`` is a string; a text part's ``text`` a string."""
    if not isinstance(part, dict):
        raise Bad(at, f"part is not an object (got {kind(part)})")
    part_type = part.get("type")
    if part_type is not None and not isinstance(part_type, str):
        raise Bad(at, f"'type' must be a string (got {kind(part_type)})")
    if (part_type == "text" or (part_type is None and "text" in part)) and not isinstance(part.get("text"), str):
        raise Bad(at, f"text part's 'text' must be a string (got {kind(part.get('text'))})")


def check_tool_calls(calls: Any, where: str) -> None:
    """OpenAI ``tool_calls``: objects with a string ``id``, a ``function`` with a string
    ``name`` and, when present, string ``arguments`` (the API sends arguments as text)."""
    if not isinstance(calls, list):
        raise Bad(where, f"tool_calls must be a list (got {kind(calls)})")
    for j, call in enumerate(calls):
        at = f"{where}: tool_calls[{j}]"
        if not isinstance(call, dict):
            raise Bad(at, f"not an object (got {kind(call)})")
        need_text(call.get("id"), at, "'id'")
        if call.get("type") is not None and not isinstance(call["type"], str):
            raise Bad(at, f"'type' must be a string (got {kind(call['type'])})")
        function = need_object(call.get("function"), at, "'function'")
        need_text(function.get("name"), at, "function 'name'")
        arguments = function.get("arguments")
        if "arguments" in function and not isinstance(arguments, str):
            raise Bad(at, f"function 'arguments' must be a string of JSON (got {kind(arguments)})")


def check_tool_call_id(value: Any, where: str) -> None:
    need_text(value, where, "'tool_call_id'", missing="tool message without 'tool_call_id'")


def tool_call(call_id: str, name: str, arguments: Any, at: str) -> Message:
    """One tool call in OpenAI form; arguments given as an object become JSON text.

    Formats that store arguments as an object (legacy ``function_call`` dumps, OpenHands,
    Anthropic ``input``, LangChain ``args``) are converted; any other type is refused.
    """
    if arguments is None:
        arguments = "{}"
    elif isinstance(arguments, dict):
        arguments = json.dumps(arguments, ensure_ascii=False)
    elif not isinstance(arguments, str):
        raise Bad(at, f"'arguments' must be a string of JSON or an object (got {kind(arguments)})")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def normalise_tool_calls(calls: Any, where: str) -> list[Message]:
    """``{"id","type":"function","function":{"name","arguments"}}`` for each call, extras dropped."""
    check_tool_calls(calls, where)
    return [tool_call(c["id"], c["function"]["name"], c["function"].get("arguments"), f"{where}: tool_calls[{j}]")
            for j, c in enumerate(calls)]


def block_text(block: Any, at: str) -> str:
    """The ``text`` string of a text block (Anthropic, LangChain)."""
    if not isinstance(block, dict) or not isinstance(block.get("text"), str):
        got = kind(block.get("text")) if isinstance(block, dict) else kind(block)
        raise Bad(at, f"text block without a 'text' string (got {got})")
    return block["text"]


def parts_content(parts: list[Message]) -> Any:
    """Text-only parts become one string (None when there are none); otherwise the parts."""
    if all(p.get("type") == "text" and isinstance(p.get("text"), str) for p in parts):
        return TEXT_JOINER.join(p["text"] for p in parts) if parts else None
    return parts


def indexed(word: str) -> Locate:
    """Names item i as ``"<word> i"`` (0-based, like ``check_history``)."""
    return lambda i: f"{word} {i}"


def by_line(numbers: list[int]) -> Locate:
    """Names JSONL item i by its 1-based line number."""
    return lambda i: f"line {numbers[i]}"
