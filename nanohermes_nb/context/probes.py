"""Probes: the questions a compacted part of a session could be asked, derived from the session itself.

Factory's evaluation of context compression compresses the early part of real sessions and asks
recall, artifact, continuation and decision questions of what is left. Here the questions come
from the session, deterministically and with no model (issue 36). For a stretch of messages (the
part a compaction removed) each probe asks one thing the stretch answered:

- ``file``: what happened last to a file (read, written, edited, deleted), with a fingerprint of
  the state it was left in (the longest line of what was read or written, capped);
- ``command``: a command that ran, and how it ended (``failed`` when its output reports a
  non-zero exit or an error);
- ``error``: an error line a tool reported (``TypeError: ...``, ``error: ...``, ``FAILED``, ...);
- ``instruction``: a constraint or instruction of the user (an imperative sentence of a user turn)
  or of the project's instructions file (AGENTS.md, CLAUDE.md) as the log holds it;
- ``decision``: a decision the assistant stated (``I'll use X instead``, ``the root cause is``);
- ``task``: the open task, the last user request not yet answered at the compaction point.

Each probe carries ``evidence`` (verbatim strings that answer it) and ``terms`` (its key terms:
a summary that names them all answers it, ``survival``). Tool output is read only up to
``OUTPUT_CAP`` bytes, as the tools cap it (``Budgets.max_output``); a binary output (NUL bytes)
gives a file probe on its path alone. ``ProbeIndex`` reads a transcript once (each message's
facts, every position's open request), so a replay asks it at every event for the cost of the
removed messages only.

Limits: these are lexical proxies. The file reads and writes recognised are those of the tools
in ``READ_TOOLS`` / ``WRITE_TOOLS`` / ``EDIT_TOOLS`` and of the shell commands in ``READERS``;
an instruction is a sentence of the imperative or constraint form, not everything a user meant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .budgets import DEFAULT_BUDGETS
from .compaction import is_summary_message
from .messages import call_arguments, call_name, calls_of, pair_tool_results, role_of, text_of
from .shell import SHELL_TOOLS, call_args, shell_command, shell_files, shell_tokens

__all__ = ["CATEGORIES", "OUTPUT_CAP", "Probe", "ProbeIndex", "derive_probes", "message_probes", "shell_files",
           "key_terms", "call_args", "is_instructions_doc", "is_request", "fingerprint", "shell_command", "READ_TOOLS",
           "WRITE_TOOLS", "EDIT_TOOLS", "SHELL_TOOLS"]

CATEGORIES = ("file", "command", "error", "instruction", "decision", "task")
OUTPUT_CAP = DEFAULT_BUDGETS.max_output  # bytes of one tool output read, as the tools cap it
EVIDENCE_CHARS = 160  # a verbatim piece is at most this long
MIN_FINGERPRINT = 12  # a shorter longest line is not distinctive enough to stand for a file's content

# tool name -> the argument naming the file (Claude Code, Codex, DeerFlow, OpenHands, SWE-agent, NanoHermes)
READ_TOOLS = {"Read": "file_path", "read_file": "path", "open": "path", "view": "path", "NotebookRead": "notebook_path"}
WRITE_TOOLS = {"Write": "file_path", "write_file": "path", "create": "filename", "create_file": "path"}
EDIT_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path", "edit_file": "path",
              "str_replace": "path", "str_replace_based_edit_tool": "path"}
_EDITOR_READS, _EDITOR_WRITES = frozenset({"view"}), frozenset({"create"})  # str_replace_editor commands

_EXIT = re.compile(r"(?:exit code|exited with code|exit status|returncode)[:=]?\s*(-?\d+)", re.I)
# an error as a tool reports it (a name followed by a colon or the line's end, not an identifier in code)
_ERROR_LINE = re.compile(
    r"Traceback \(most recent|(?:^|(?<=\s))[A-Za-z_][\w.]*(?:Error|Exception)(?::|[ \t]*$)|"
    r"\berror(?:\[\w+\]| TS\d+)?:|\bERROR\b|\bFAILED\b|\bFAIL[:\s]|\bfatal:|\bpanic:|command not found|"
    r"No such file or directory|Permission denied|<tool_use_error>|\bExit code [1-9]|exited with code [1-9]", re.M)
_LINE_NUMBER = re.compile(r"^\s*\d+[→\t]")
_SEP = re.compile(r"[\\/]")
_STEPS = re.compile(r"&&|;|\n")
_NUMBERISH = re.compile(r"[\d,.:;p'\"]+")
_SHELLY_PIPE = re.compile(r"[<>$*{}()`|]")
_BULLET = re.compile(r"^(?:[-*•]|\d+[.)]|#+)\s+")
_STATUS_ONLY = re.compile(r"^\s*(?:Process exited with code|Exit code)\s*-?\d+\s*$")  # told by the command probe
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|$)", re.S)
_ERROR_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception)|[A-Z]{1,4}\d{3,5}|E[A-Z]{3,12})\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_./\\-]*[A-Za-z0-9_]")
_IMPERATIVE = frozenset(
    "add always avoid build call change check clean commit create delete do don't dont document edit ensure "
    "explain find fix follow generate give handle implement improve include install keep let's list look make "
    "merge move never open pin prefer push put read refactor remove rename replace report restore return review "
    "revert run save send set show skip sort split start stop test try turn update upgrade use verify wait write"
    .split())
_LEADERS = frozenset("please also and then now just pls so ok okay but first next finally".split())
_CONSTRAINT = re.compile(r"\b(must|never|always|do not|don't|make sure|should(?:n't| not)?|avoid|only)\b", re.I)
_DECISION = re.compile(
    r"\b(I(?:'ll| will| decided| chose|'m going to)|we(?:'ll| will| should)|let's|decid\w*|instead of|going with|"
    r"the (?:fix|root cause|cause|problem|issue|plan|approach) (?:is|was))\b", re.I)
_NARRATION = re.compile(r"^(?:let me|now let me|i'll (?:now )?(?:read|look|check|run|see|start|search|examine|"
                        r"inspect|verify|explore|take a look|open|find|view))\b", re.I)
_INJECTED = ("<environment_context>", "<system-reminder>", "<permissions instructions>", "<turn_aborted>",
             "<user_instructions>", "<command-", "<local-command-", "Caveat:", "[Request interrupted")
_DOC = re.compile(r"^# AGENTS\.md instructions|<INSTRUCTIONS>|Contents of \S*(?:CLAUDE|AGENTS)\.md|<user_instructions>")
_STOP = frozenset(
    "the a an and or but if then else this that these those there here with without from into onto for of to in on "
    "at by as is are was were be been being it its it's we you your our they them their he she i me my do does did "
    "done not no yes can could would should will shall may might must have has had just also very more most some "
    "any all each every other such than so too only same own again about over under after before while when what "
    "which who whom whose why how where need needs want wants make sure please use using used file files code "
    "let's let now one two new like get got see".split())


@dataclass(frozen=True)
class Probe:
    """One question about the compacted part and how to tell it is still answerable.

    ``key`` is what it is about (a path, a command, an error line, a sentence); ``evidence``
    the verbatim strings that answer it (all must be present); ``terms`` its key terms (a
    summary naming them all answers it); ``index`` the position of its last evidence in the
    history it was derived from; ``count`` how many times the history met it.
    """

    category: str
    key: str
    question: str
    answer: str
    evidence: tuple[str, ...]
    terms: tuple[str, ...]
    index: int
    source: str = ""
    count: int = 1


def _clip(text: str, n: int = EVIDENCE_CHARS) -> str:
    """A probe's key or answer: the text on one line, whitespace collapsed, capped (for reading, not matching)."""
    return " ".join(text.split())[:n]


def _piece(text: str, n: int = EVIDENCE_CHARS) -> str:
    """Evidence: the first non-empty line of ``text``, stripped and capped (a verbatim substring of it)."""
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")[:n]


def _visible(output: str) -> str:
    """A tool output capped as the tools cap it, without the reminders an agent appends (Claude Code's)."""
    output = output[:OUTPUT_CAP]
    return _REMINDER.sub("", output) if "<system-reminder>" in output else output


def fingerprint(text: str) -> str:
    """The longest line of ``text`` (stripped, capped): a verbatim piece that stands for the whole."""
    best = max((ln.strip() for ln in _visible(text).splitlines()), key=len, default="")
    best = _LINE_NUMBER.sub("", best).strip()  # Read's "  12→" line numbers are not the file's text
    return best[:EVIDENCE_CHARS] if len(best) >= MIN_FINGERPRINT else ""


def _basename(path: str) -> str:
    return _SEP.split(path.rstrip("\\/"))[-1] or path


def key_terms(text: str, n: int = 3) -> tuple[str, ...]:
    """Up to ``n`` key terms of a text: error names and paths' file names first, then its longest words."""
    text = text[:2_000]
    names = [m.group(1) for m in _ERROR_NAME.finditer(text)]
    words = []
    for w in _WORD.findall(text):
        w = w.strip(".-/\\")
        if ("/" in w or "\\" in w) and "." in w:
            names.append(_basename(w))
        elif w.lower() not in _STOP and len(w) >= 4 and not w.isdigit():
            words.append(w)
    ranked = list(dict.fromkeys(names)) + sorted(dict.fromkeys(words), key=lambda w: -len(w))
    return tuple(dict.fromkeys(ranked))[:n]


def _is_binary(text: str) -> bool:
    head = text[:4_096]
    return "\x00" in head or head.count("\ufffd") > len(head) // 10 > 0


def is_instructions_doc(message: Mapping[str, Any]) -> bool:
    """A user-role message carrying AGENTS.md / CLAUDE.md instructions (Codex's, Claude Code's framing)."""
    return role_of(message) == "user" and bool(_DOC.search(text_of(message)[:2_000]))


def is_request(message: Mapping[str, Any]) -> bool:
    """A real user request: a user message with text, not a summary, an instructions file or injected context."""
    if role_of(message) != "user" or is_summary_message(message) or is_instructions_doc(message):
        return False
    text = text_of(message).lstrip()
    return bool(text) and not text.startswith(_INJECTED) and not text.startswith("Old environment output: (")


# --- what one message says --------------------------------------------------------------------------------------


def _probe(category: str, key: str, answer: str, evidence: Iterable[str], terms: Iterable[str], index: int,
           source: str) -> Probe:
    ev = tuple(e for e in evidence if e) or (key,)
    questions = {"file": f"What is the last known state of {key}?", "command": f"Did `{key}` run, and how did it end?",
                 "error": "Which error was reported?", "instruction": "What did the user or the project instruct?",
                 "decision": "What did the assistant decide?", "task": "What is the open task?"}
    return Probe(category, key, questions[category], answer, ev, tuple(t for t in terms if t), index, source)


def _file(path: Any, state: str, text: str, index: int, source: str) -> Probe | None:
    if not isinstance(path, str) or not path.strip():
        return None
    path = path.strip().removeprefix("./")
    binary = _is_binary(text)
    mark = fingerprint(text) if text and not binary else ""
    return _probe("file", path, state + (" (binary)" if binary else ""), (mark or path,), (_basename(path),),
                  index, source)


def _edit_text(args: Mapping[str, Any]) -> str:
    for name in ("new_string", "new_str", "new_source", "content", "file_text", "text"):
        if isinstance(args.get(name), str):
            return args[name]
    edits = args.get("edits")
    if isinstance(edits, list):
        return "\n".join(e.get("new_string", "") for e in edits if isinstance(e, Mapping))
    return ""


def _patch_files(patch: str, index: int, source: str) -> list[Probe]:
    """``apply_patch``: one file probe per ``*** Add/Update/Delete File:`` header, fingerprinted by its + lines."""
    out: list[Probe] = []
    states = {"Add": "written", "Update": "edited", "Delete": "deleted"}
    for m in re.finditer(r"^\*\*\* (Add|Update|Delete) File: (.+)$", patch, re.M):
        body = patch[m.end():].split("\n*** ", 1)[0]
        added = "\n".join(ln[1:] for ln in body.splitlines() if ln.startswith("+"))
        probe = _file(m.group(2), states[m.group(1)], added, index, source)
        if probe is not None:
            out.append(probe)
    return out


def _call_probes(call: Any, index: int) -> list[Probe]:
    """What an assistant's call says by itself: the files it writes or edits (reads are told by their result)."""
    name, args = call_name(call), call_args(call)
    if name == "apply_patch":
        raw = call_arguments(call)
        return _patch_files(args.get("input", raw) if isinstance(args.get("input"), str) else raw, index, name)
    command = args.get("command") if name == "str_replace_editor" else None
    if name in WRITE_TOOLS or command in _EDITOR_WRITES:
        probe = _file(args.get(WRITE_TOOLS.get(name, "path")), "written", _edit_text(args), index, name)
    elif name in EDIT_TOOLS or command in ("str_replace", "insert"):
        probe = _file(args.get(EDIT_TOOLS.get(name, "path")), "edited", _edit_text(args), index, name)
    else:
        text = shell_command(call)
        return [p for w in (shell_files(text)[1] if text else []) if (p := _file(w, "written", "", index, name))]
    return [probe] if probe is not None else []


def _outcome(output: str) -> tuple[bool, str]:
    """Whether a command's output reports a failure, and the answer: ``exit N``, ``failed`` or ``ok``."""
    code = _EXIT.search(output[:OUTPUT_CAP])
    if code is not None:
        return code.group(1) != "0", f"exit {code.group(1)}"
    failed = output.lstrip().startswith(("<tool_use_error>", "Error", "error:")) or "command not found" in output
    return failed, "failed" if failed else "ok"


def _command_terms(command: str) -> tuple[str, ...]:
    main = [s.strip() for s in _STEPS.split(command) if s.strip() and not s.strip().startswith("cd ")]
    words = [t for t in shell_tokens(main[0] if main else command) if "=" not in t and not t.startswith("-")
             and len(t) >= 2 and not _NUMBERISH.fullmatch(t) and not _SHELLY_PIPE.search(t)]
    return tuple(_basename(w) if ("/" in w or "\\" in w) else w for w in words[:2])


def _result_probes(call: Any, output: str, index: int) -> list[Probe]:
    """What a tool result says with its call: files read, the command's outcome, the errors it reports."""
    name, args = call_name(call), call_args(call)
    output = _visible(output)
    out: list[Probe] = []
    reads: list[Any] = []
    if name in READ_TOOLS:
        reads = [args.get(READ_TOOLS[name])]
    elif name == "str_replace_editor" and args.get("command") in _EDITOR_READS:
        reads = [args.get("path")]
    command = shell_command(call)
    if command is not None:
        reads = list(shell_files(command)[0])
        failed, answer = _outcome(output)
        key = _clip(command)
        mark = fingerprint(output) if not _is_binary(output) else ""
        out.append(_probe("command", key, answer + (" (failed)" if failed and answer.startswith("exit") else ""),
                          (_piece(command), mark or _piece(output)), _command_terms(command), index, name))
    out += [p for r in reads if (p := _file(r, "read", output, index, name)) is not None]
    if not reads and not _is_binary(output):  # a file's text is not an error report, whatever it names
        out += _errors(output, index, name)
    return out


def _errors(output: str, index: int, source: str, limit: int = 3) -> list[Probe]:
    """The first ``limit`` lines of ``output`` that report an error (one pass of the pattern over the text)."""
    found: list[Probe] = []
    seen: set[int] = set()
    for m in _ERROR_LINE.finditer(output):
        if len(found) >= limit:
            break
        start = output.rfind("\n", 0, m.start()) + 1
        end = output.find("\n", m.start())
        line = output[start:end if end >= 0 else len(output)].rstrip("\r")
        if start in seen or len(line.strip()) < 6 or _STATUS_ONLY.match(line):
            continue
        seen.add(start)
        key = _clip(line)
        names = tuple(dict.fromkeys(n.group(1) for n in _ERROR_NAME.finditer(line)))
        found.append(_probe("error", key, key, (_piece(line),), names[:2] or key_terms(line), index, source))
    return found


def _imperative(sentence: str) -> bool:
    """An instruction or constraint: an imperative verb first (after "please", "also" ...) or a "must"/"never" form."""
    if sentence.endswith("?") or not 12 <= len(sentence) <= 400:
        return False
    words = [w.strip(",:;!.`*\"'").lower() for w in sentence.split()[:6]]
    while words and words[0] in _LEADERS:
        words = words[1:]
    return bool(words) and (words[0] in _IMPERATIVE or bool(_CONSTRAINT.search(sentence)))


def _sentences(text: str) -> list[str]:
    out = []
    for s in _SENTENCE.split(text[:OUTPUT_CAP]):
        s = _BULLET.sub("", s.strip()).strip()
        if s and not s.startswith(("```", "<", "|")):
            out.append(s)
    return out


def _instructions(message: Mapping[str, Any], index: int, doc: bool) -> list[Probe]:
    text = text_of(message)
    source = ("CLAUDE.md" if "CLAUDE.md" in text[:2_000] else "AGENTS.md") if doc else "user"
    limit = 20 if doc else 8
    found = [s for s in _sentences(text) if _imperative(s)][:limit]
    return [_probe("instruction", _clip(s), _clip(s), (_piece(s),), key_terms(s), index, source) for s in found]


def _decisions(message: Mapping[str, Any], index: int, limit: int = 3) -> list[Probe]:
    found = []
    for s in _sentences(text_of(message)):
        if 20 <= len(s) <= 400 and not s.endswith("?") and _DECISION.search(s) and not _NARRATION.search(s):
            found.append(_probe("decision", _clip(s), _clip(s), (_piece(s),), key_terms(s), index, "assistant"))
        if len(found) >= limit:
            break
    return found


def message_probes(history: Sequence[Mapping[str, Any]], i: int, pairs: Mapping[int, tuple[int, int]],
                   prefixes: Sequence[str] = ()) -> list[Probe]:
    """The probes message ``history[i]`` answers by itself (a tool result with the call ``pairs`` gives it)."""
    m = history[i]
    role = role_of(m)
    if role == "assistant":
        out = _decisions(m, i) if text_of(m) else []
        for call in calls_of(m):
            out += _call_probes(call, i)
        return out
    if role == "tool" and i in pairs:
        owner, pos = pairs[i]
        return _result_probes(calls_of(history[owner])[pos], text_of(m), i)
    if role == "user" and not is_summary_message(m, prefixes):
        if is_instructions_doc(m):
            return _instructions(m, i, doc=True)
        if is_request(m):
            return _instructions(m, i, doc=False)
    return []


def _merge(found: Iterable[Probe]) -> list[Probe]:
    """One probe per (category, key): the last state, counting how often it came up; in category order."""
    merged: dict[tuple[str, str], Probe] = {}
    for p in found:
        old = merged.get((p.category, p.key))
        merged[(p.category, p.key)] = p if old is None else replace(p, count=old.count + p.count)
    order = {c: k for k, c in enumerate(CATEGORIES)}
    return sorted(merged.values(), key=lambda p: (order[p.category], p.index))


class ProbeIndex:
    """One transcript read once for probes: each message's own probes, and the open request at every position.

    ``probes(removed, position)`` are the probes of the messages a compaction removed (the
    transcript's own objects; a message a policy wrote answers nothing), merged, plus the open
    task when the request still open at ``position`` is among them.
    """

    def __init__(self, transcript: Sequence[Mapping[str, Any]], prefixes: Sequence[str] = ()) -> None:
        self.transcript = transcript
        pairs = pair_tool_results(transcript)
        self._own: dict[int, tuple[Mapping[str, Any], tuple[Probe, ...]]] = {}
        open_at: list[int] = [-1]
        request = -1
        for i, m in enumerate(transcript):
            found = message_probes(transcript, i, pairs, prefixes)
            if found:
                self._own[id(m)] = (m, tuple(found))
            if is_request(m) and not is_summary_message(m, prefixes):
                request = i
            elif role_of(m) == "assistant" and text_of(m).strip() and not calls_of(m):
                request = -1  # answered: the turn ended with a reply
            open_at.append(request)
        self._open = open_at  # open_at[p]: the request still open before position p (-1: none)
        self._tasks: dict[int, Probe] = {}

    def of(self, message: Mapping[str, Any]) -> tuple[Probe, ...]:
        hit = self._own.get(id(message))
        return hit[1] if hit is not None and hit[0] is message else ()

    def open_request(self, position: int) -> int | None:
        """The index of the user request not yet answered before ``position`` (None: every request answered)."""
        k = self._open[max(0, min(position, len(self._open) - 1))]
        return k if k >= 0 else None

    def task(self, position: int) -> Probe | None:
        """The open task at ``position`` as a probe (made once per request)."""
        k = self.open_request(position)
        if k is None:
            return None
        if k not in self._tasks:
            self._tasks[k] = self._task(k)
        return self._tasks[k]

    def _task(self, k: int) -> Probe:
        text = text_of(self.transcript[k])
        return _probe("task", _clip(_piece(text)), _clip(text), (_piece(text),), key_terms(text, 4), k, "user")

    def probes(self, removed: Iterable[Mapping[str, Any]], position: int) -> list[Probe]:
        """The probes of ``removed`` (a compaction at transcript ``position``), the open task among them."""
        removed = list(removed)
        found = [p for m in removed for p in self.of(m)]
        task = self.task(position)
        if task is not None and any(m is self.transcript[task.index] for m in removed):
            found.append(task)
        return _merge(found)


def derive_probes(history: Sequence[Mapping[str, Any]], start: int = 0, stop: int | None = None,
                  prefixes: Sequence[str] = ()) -> list[Probe]:
    """The probes of ``history[start:stop]`` compacted at ``stop`` (default: the end), with ``history`` for context."""
    stop = len(history) if stop is None else stop
    return ProbeIndex(history, prefixes).probes(history[start:stop], stop)
