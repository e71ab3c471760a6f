"""Context quality: measures for part five of the course (notebooks 21-26).

The article budgets the context by size. Size is not the only thing that goes wrong as a
context grows; these functions measure, on recorded sessions, what else does. Each is a
lexical proxy over the recorded messages (no model is asked), so each says what it counts:

- :func:`relevant_share` — of the context's bytes, the share in messages that name an
  identifier (``needed.identifiers``) the next action names. As a session grows this
  share falls: the model has more to read for the same step.
- :func:`dead_weight` — distraction: the share of the context's tool-result bytes whose
  identifiers the recorded future never mentions again.
- :func:`stale_reads` — clash: a file's text read into the context, then changed by a later
  command or edit, and never read again; the context holds a version the workspace no longer has.
- :func:`poisoned_lines` — poisoning: summary lines that report a failure although the last
  command of the span they summarise succeeded (exit code 0); the summary carries forward a
  state that was already false when it was written.
- :func:`unused_tools` — confusion: tools offered on every request and never called.
- :func:`trim_turns` — the OpenAI cookbook's ``TrimmingSession`` rule (keep the last N user
  turns), ported for comparison with the article's keep-N-messages rule.
- :func:`notes_block` — offloading: the few facts an agent writes to a notes file, re-read
  after compaction, under a fixed character budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .messages import call_arguments, call_name, calls_of, pair_tool_results, text_of, tool_call_of
from .needed import message_identifiers
from .sizing import message_size

__all__ = ["relevant_share", "dead_weight", "StaleRead", "stale_reads", "poisoned_lines", "last_exit_code",
           "unused_tools", "writes_file", "trim_turns", "notes_block", "isolate", "NOTES_CHAR_BUDGET"]

Message = Mapping[str, Any]
NOTES_CHAR_BUDGET = 2_400  # the same hard budget the article gives the memory block (§8)
_EXIT = re.compile(r"exit code: (-?\d+)")
_FAIL = re.compile(r"\bfail(s|ed|ing|ure)?\b", re.I)
_EDITS = ("write_file", "edit_file", "apply_patch")
_SHELLS = ("run_command", "shell", "bash")
# a shell command writes a file it names when it patches (a here-document script, write_text, open for
# writing, sed -i, tee) or redirects into it; running a program on a file is not writing it
_SHELL_WRITE = re.compile(r"write_text|write_bytes|open\([^)]*['\"][wa]|sed -i|\btee\b|<<")


_IDS: dict[int, tuple[Message, frozenset]] = {}


def _identifiers(message: Message) -> frozenset:
    """``message_identifiers``, remembered per message object (a step's context repeats every earlier message)."""
    hit = _IDS.get(id(message))
    if hit is not None and hit[0] is message:
        return hit[1]
    if len(_IDS) > 100_000:
        _IDS.clear()
    ids = message_identifiers(message)
    _IDS[id(message)] = (message, ids)
    return ids


def relevant_share(context: Sequence[Message], action: Message) -> float | None:
    """Share of the context's bytes after the system message in messages naming an identifier ``action`` names.

    None when the action names no identifier, or the context has nothing after its system message.
    """
    wanted = _identifiers(action)
    body = context[1:]
    total = sum(message_size(m) for m in body)
    if not wanted or not total:
        return None
    return sum(message_size(m) for m in body if _identifiers(m) & wanted) / total


def dead_weight(messages: Sequence[Message], position: int) -> float | None:
    """Share of the tool-result bytes in ``messages[:position]`` that the recorded future never refers to again.

    Each result weighs its bytes times the share of its identifiers that no message from ``position``
    on names (a result with no identifier counts whole). None when there is no tool result yet.
    """
    later: set = set()
    for m in messages[position:]:
        later |= message_identifiers(m)
    results = [m for m in messages[:position] if m.get("role") == "tool"]
    total = sum(message_size(m) for m in results)
    if not total:
        return None
    dead = 0.0
    for m in results:
        ids = message_identifiers(m)
        dead += message_size(m) * (1 - len(ids & later) / len(ids) if ids else 1.0)
    return dead / total


def writes_file(call: Any, path: str) -> bool:
    """Whether a call writes ``path``: an edit tool naming it, or a shell command that patches or redirects into it."""
    name, args = call_name(call), call_arguments(call)
    if path not in args:
        return False
    if name in _EDITS:
        return True
    redirected = re.search(r">\s*" + re.escape(path), args) is not None
    return name in _SHELLS and (bool(_SHELL_WRITE.search(args)) or redirected)


@dataclass(frozen=True)
class StaleRead:
    """A read of ``path`` at message ``read_at`` that a write at ``changed_at`` made out of date."""

    path: str
    read_at: int
    changed_at: int
    bytes: int


def _read_path(name: str, arguments: str) -> str | None:
    if name != "read_file":
        return None
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return None
    path = args.get("path") if isinstance(args, dict) else None
    return path if isinstance(path, str) and path else None


def stale_reads(context: Sequence[Message]) -> list[StaleRead]:
    """Reads whose file a later write-capable call names, with no later read of that file (in order of the read)."""
    pairs = pair_tool_results(context)
    last_read: dict[str, int] = {}
    stale: dict[str, StaleRead] = {}
    for i, m in enumerate(context):
        if m.get("role") == "tool" and i in pairs:
            path = _read_path(*tool_call_of(context, pairs, i))
            if path:
                last_read[path] = i
                stale.pop(path, None)
        for call in calls_of(m):
            for path, at in last_read.items():
                if path not in stale and writes_file(call, path):
                    stale[path] = StaleRead(path, at, i, message_size(context[at]))
    return sorted(stale.values(), key=lambda s: s.read_at)


def last_exit_code(messages: Iterable[Message]) -> int | None:
    """The exit code the last command result among ``messages`` reports (``exit code: N``), None if none does."""
    code = None
    for m in messages:
        if m.get("role") == "tool":
            found = _EXIT.findall(text_of(m))
            if found:
                code = int(found[0])
    return code


def poisoned_lines(summary: str, summarized: Sequence[Message]) -> list[str]:
    """Lines of ``summary`` that report a failure when the last command of ``summarized`` exited 0."""
    if last_exit_code(summarized) != 0:
        return []
    return [ln for ln in summary.splitlines() if _FAIL.search(ln)]


def unused_tools(messages: Sequence[Message], offered: Iterable[str]) -> list[str]:
    """The offered tool names that no message of the session calls, in the order offered."""
    used = {call_name(c) for m in messages for c in calls_of(m)}
    return [name for name in offered if name not in used]


def trim_turns(messages: Sequence[Message], max_turns: int) -> list[Message]:
    """Keep the system message and the last ``max_turns`` user turns (everything from the earliest kept user message).

    The rule of ``TrimmingSession._trim_to_last_turns`` in the OpenAI cookbook
    (openai/openai-cookbook, examples/agents_sdk/session_memory.ipynb, cell 95ed36a3): walk back,
    and at the ``max_turns``-th user message keep everything from there; with fewer user messages,
    keep everything. ``max_turns`` is at least 1 there; here too. The cookbook's session holds no
    system message (the SDK sends instructions apart); here ``messages[0]`` is kept as the article keeps it.
    """
    max_turns = max(1, int(max_turns))
    head = list(messages[:1]) if messages and messages[0].get("role") == "system" else []
    body = list(messages[len(head):])
    count, start = 0, 0
    for i in range(len(body) - 1, -1, -1):
        if body[i].get("role") == "user":
            count += 1
            if count == max_turns:
                start = i
                break
    return head + body[start:]


def notes_block(messages: Sequence[Message], limit: int = NOTES_CHAR_BUDGET) -> str:
    """The notes an agent keeps outside its context: goal, files it changed, the last command's exit code.

    One line each, in that order, cut to ``limit`` characters at a line boundary (whole lines only).
    Files changed are the paths of ``read_file`` calls that a later write-capable call names.
    """
    goal = next((text_of(m).strip().splitlines()[0] for m in messages
                 if m.get("role") == "user" and text_of(m).strip()), "")
    changed = list(dict.fromkeys(s.path for s in _changed(messages)))
    code = last_exit_code(messages)
    lines = [f"Goal: {goal}", f"Files changed: {', '.join(changed) if changed else 'none'}",
             f"Last command: {'none' if code is None else f'exit code {code}'}"]
    out: list[str] = []
    for line in lines:
        if len("\n".join([*out, line])) > limit:
            break
        out.append(line)
    return "\n".join(out)


def _changed(messages: Sequence[Message]) -> list[StaleRead]:
    """Every read a later write names (re-reads included), unlike stale_reads which keeps only the unresolved."""
    pairs = pair_tool_results(messages)
    read: dict[str, int] = {}
    out = []
    for i, m in enumerate(messages):
        if m.get("role") == "tool" and i in pairs:
            path = _read_path(*tool_call_of(messages, pairs, i))
            if path:
                read.setdefault(path, i)
        for call in calls_of(m):
            out += [StaleRead(p, at, i, 0) for p, at in read.items() if writes_file(call, p)]
    return out


def isolate(messages: Sequence[Message], start: int, end: int, report: str, name: str = "task") -> list[Message]:
    """``messages[start:end]`` handed to a sub-agent: one call to tool ``name`` and its one result, ``report``.

    The stretch must be whole tool round trips: ``messages[start]`` an assistant message with tool
    calls, ``messages[end - 1]`` a tool result and ``messages[end]`` (if any) not one. The parent's
    context then holds the call and the report instead of the stretch (Claude Code's ``Task`` tool
    does this: the sub-agent's own messages go to a separate sidechain transcript). ValueError otherwise.
    """
    if not (0 < start < end <= len(messages)) or not calls_of(messages[start]) \
            or messages[end - 1].get("role") != "tool" or (end < len(messages) and messages[end].get("role") == "tool"):
        raise ValueError(f"messages[{start}:{end}] is not a stretch of whole tool round trips")
    call = {"id": f"call_isolated_{start}", "type": "function",
            "function": {"name": name, "arguments": json.dumps({"messages": f"{start}-{end - 1}"})}}
    return [*messages[:start], {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": report}, *messages[end:]]
