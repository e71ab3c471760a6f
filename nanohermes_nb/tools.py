"""Layer 1 and 2 of the budget: tools that cap their own output, behind one door.

Every tool here stops, skips or cuts where it produces output (SPEC section 2), and
leaves a visible note when it did. ``Tools.dispatch`` is the single door an agent
uses: it turns every bad call into an error text and passes every result through
``clamp(max_output)``, so no tool can flood the context even if its own cap fails.
``Tools.run`` returns the same text before ``clamp`` so a notebook can show both.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import weakref
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable, Mapping

import httpx
import re2

from .budgets import DEFAULT_BUDGETS, Budgets
from .clamp import clamp, utf8_boundary
from .processes import Job
from .transport import AddressRefused, ConnectFailed, RedirectRefused, TransportError, TransportTimeout, fetch

__all__ = [
    "Tools",
    "ToolError",
    "ToolSpec",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "tool_specs",
    "html_to_text",
    "DEFAULT_COMMAND_TIMEOUT",
    "DEFAULT_WEB_TIMEOUT",
]

ELLIPSIS = "\u2026"
ARROW = "\u2192"
DEFAULT_COMMAND_TIMEOUT = 120.0  # seconds, run_command `timeout` default
DEFAULT_WEB_TIMEOUT = 30.0  # seconds, the whole of one web_fetch (connect, redirects, body)
_BINARY_SNIFF = 8192  # a NUL byte in this many leading bytes marks a file binary
_SKIP_DIRS = frozenset({".git"})


class ToolError(Exception):
    """A bad tool call: shown to the model as ``error: <message>``, never raised by dispatch."""


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about one tool: name, description, JSON-schema parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def as_openai(self) -> dict[str, Any]:
        """The ``tools`` entry of an OpenAI-compatible chat request."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": json.loads(json.dumps(self.parameters)),
            },
        }


def _schema(props: dict[str, dict[str, Any]], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False}


def tool_specs(budgets: Budgets = DEFAULT_BUDGETS) -> tuple[ToolSpec, ...]:
    """The seven tool specs, their descriptions quoting the caps of ``budgets``."""
    b = budgets
    return (
        ToolSpec("read_file",
                 f"Read a text file of the workspace as numbered lines `N{ARROW}text`. "
                 f"Files over {b.max_file_bytes} bytes are refused. At most "
                 f"{b.read_max_lines} lines per call; use offset/limit for the rest.",
                 _schema({"path": {"type": "string", "description": "path relative to the workspace"},
                          "offset": {"type": "integer", "minimum": 1,
                                     "description": "first line to show, 1-based (default 1)"},
                          "limit": {"type": "integer", "minimum": 1,
                                    "description": f"lines to show (default {b.read_max_lines})"}},
                         ["path"])),
        ToolSpec("grep",
                 "Search file contents with a regular expression (RE2 syntax, like Rust's regex: "
                 "no backreferences or look-around); rows are "
                 f"`path:line: text`. Skips .git, binary files and files over "
                 f"{b.grep_max_file_bytes} bytes; stops after {b.grep_max_matches} matches.",
                 _schema({"pattern": {"type": "string", "description": "regular expression (RE2 syntax)"},
                          "path": {"type": "string",
                                   "description": "file or folder to search, relative (default: workspace)"}},
                         ["pattern"])),
        ToolSpec("glob",
                 "List workspace files matching a glob pattern (`*`, `?`, `[..]`, `**` for any "
                 f"depth), sorted; at most {b.glob_max_paths} paths.",
                 _schema({"pattern": {"type": "string", "description": "e.g. `**/*.py`"}},
                         ["pattern"])),
        ToolSpec("run_command",
                 "Run a shell command in the workspace and wait for it. Returns the exit code, "
                 f"stdout and stderr (each cut to {b.command_capture_bytes} bytes).",
                 _schema({"command": {"type": "string"},
                          "timeout": {"type": "number", "exclusiveMinimum": 0,
                                      "description": f"seconds (default {DEFAULT_COMMAND_TIMEOUT:g})"}},
                         ["command"])),
        ToolSpec("start_task",
                 "Start a long-running shell command in the background; returns a task id. "
                 f"Its first {b.task_capture_bytes} bytes of output are kept.",
                 _schema({"command": {"type": "string"}}, ["command"])),
        ToolSpec("task_output",
                 "Status (running / exited) and output so far of a background task.",
                 _schema({"id": {"type": "string", "description": "id returned by start_task"}},
                         ["id"])),
        ToolSpec("web_fetch",
                 "Fetch an http(s) URL; HTML becomes readable text. The body is read up to "
                 f"{b.web_max_response_bytes} bytes and the text cut to max_chars.",
                 _schema({"url": {"type": "string"},
                          "max_chars": {"type": "integer", "minimum": 1,
                                        "description": f"default {b.web_max_chars}"}},
                         ["url"])),
    )


TOOL_SPECS: tuple[ToolSpec, ...] = tool_specs(DEFAULT_BUDGETS)
TOOL_NAMES: tuple[str, ...] = tuple(s.name for s in TOOL_SPECS)
_SPEC_BY_NAME = {s.name: s for s in TOOL_SPECS}


def _check_args(name: str, args: Any) -> dict[str, Any]:
    """The call's arguments as a dict, checked against the tool's schema."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as e:
            raise ToolError(f"{name}: arguments are not valid JSON ({e.msg} at column {e.colno})") from None
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ToolError(f"{name}: arguments must be an object, got {type(args).__name__}")
    schema = _SPEC_BY_NAME[name].parameters
    props = schema["properties"]
    unknown = sorted(k for k in args if k not in props)
    if unknown:
        raise ToolError(f"{name}: unknown argument {unknown[0]!r} (expected {', '.join(props)})")
    for key in schema["required"]:
        if key not in args or args[key] is None:
            raise ToolError(f"{name}: missing required argument {key!r}")
    out: dict[str, Any] = {}
    for key, value in args.items():
        if value is None:
            continue
        kind = props[key]["type"]
        if kind == "string" and not isinstance(value, str):
            if key == "id" and isinstance(value, int) and not isinstance(value, bool):
                value = str(value)
            else:
                raise ToolError(f"{name}: argument {key!r} must be a string, got {type(value).__name__}")
        if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            raise ToolError(f"{name}: argument {key!r} must be an integer, got {value!r}")
        if kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ToolError(f"{name}: argument {key!r} must be a number, got {value!r}")
        out[key] = value
    return out


# --------------------------------------------------------------------------- helpers


def _note(text: str, note: str) -> str:
    """``note`` on its own line after ``text``."""
    return f"{text}\n{note}" if text else note


def _decode(data: bytes) -> str:
    """Text of any encoding without crashing: UTF-16 by BOM, else UTF-8 with replacement."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", "replace")


def _split_lines(text: str) -> list[str]:
    """Lines as an editor counts them: a final newline does not open a new line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # RE2 would print each refused pattern on stderr
_RE2_LIMITS = "RE2 runs in linear time, like Rust's regex: no backreferences, no look-around"


def _re2_compile(pattern: str, what: str) -> Any:
    """A compiled RE2 pattern, or a ``ToolError`` that says why RE2 cannot take it."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise ToolError(f"invalid {what} {pattern!r}: {detail} ({_RE2_LIMITS})") from None
    except (TypeError, UnicodeError) as exc:
        raise ToolError(f"invalid {what} {pattern!r}: {exc}") from None


def _glob_regex(pattern: str) -> Any:
    """A glob over ``/``-separated relative paths: ``*`` ``?`` ``[..]`` within a part, ``**`` across.

    Compiled with RE2: a pattern such as ``*a*a*a*a*b`` over a long name costs linear time.
    """
    out, i, n = [], 0, len(pattern)
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
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
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
    return _re2_compile("(?s)" + "".join(out) + r"\z", "glob pattern")


class _TextOfHTML(HTMLParser):
    """Readable text of an HTML page: scripts and styles dropped, blocks on their own lines."""

    SKIP = frozenset({"script", "style", "noscript", "template", "svg"})
    BLOCK = frozenset({
        "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "td", "th", "title", "tr", "ul",
    })
    _KEEP = "\ue000"  # stands for a space inside <pre> until whitespace is collapsed

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip += 1
            return
        if tag == "pre":
            self.pre += 1
        if tag in self.BLOCK:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")
        elif tag in ("td", "th"):
            self.parts.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip = max(self.skip - 1, 0)
            return
        if tag == "pre":
            self.pre = max(self.pre - 1, 0)
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.pre:
            self.parts.append(data.replace(" ", self._KEEP).replace("\t", self._KEEP * 4))
        else:
            self.parts.append(re.sub(r"\s+", " ", data))

    def text(self) -> str:
        out: list[str] = []
        for line in "".join(self.parts).split("\n"):
            line = re.sub(r"[^\S\n]+", " ", line).strip().replace(self._KEEP, " ").rstrip()
            if line or (out and out[-1]):
                out.append(line)
        return "\n".join(out).strip("\n")


def html_to_text(html: str) -> str:
    """Readable text of an HTML document (a real parser, not regular expressions)."""
    parser = _TextOfHTML()
    parser.feed(html)
    parser.close()
    return parser.text()


_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript",
               "application/x-javascript", "application/ld+json", "application/rss+xml",
               "application/atom+xml", "application/x-sh", "application/toml", "application/yaml")


# --------------------------------------------------------------------------- tasks


@dataclass
class _Task:
    id: str
    command: str
    job: Job
    started: float = field(default_factory=time.monotonic)

    @property
    def proc(self) -> Any:
        return self.job.proc

    @property
    def drain(self) -> Any:
        return self.job.out

    def status(self) -> str:
        return self.job.status()


def _watch(job: Job) -> None:
    """A background task's shell has exited: end what it left running."""
    job.wait_exit(None)
    job.end()


def _end_jobs(jobs: list[Job]) -> None:
    """Kill every job still running (called by ``close``, and when a ``Tools`` is collected)."""
    for job in jobs:
        job.end()
        job.join(2.0)


# --------------------------------------------------------------------------- tools


class Tools:
    """The seven capped tools of one workspace, behind ``dispatch``.

    Use as a context manager (or call ``close``) so background tasks are killed.
    Per-tool methods raise ``ToolError`` on bad input and return the unclamped
    text; ``run`` turns errors into text; ``dispatch`` also clamps.

    ``run_command`` and ``start_task`` run any shell command with the caller's
    rights: they are no sandbox (``docs/safety.md``). Whatever a command leaves
    running is killed when it returns (``run_command``) or exits (a task), and
    ``close`` ends every task. ``web_timeout`` is the total time of one fetch;
    ``refuse_private_addresses=True`` makes ``web_fetch`` refuse hosts that resolve
    to loopback, private or link-local addresses, redirects included (off by
    default, as in the original).
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        budgets: Budgets = DEFAULT_BUDGETS,
        *,
        command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
        web_timeout: float = DEFAULT_WEB_TIMEOUT,
        refuse_private_addresses: bool = False,
    ) -> None:
        if not isinstance(budgets, Budgets):
            raise TypeError(f"budgets must be a Budgets, got {type(budgets).__name__}")
        root = Path(workspace).expanduser()
        if not root.is_dir():
            raise ValueError(f"workspace {str(workspace)!r} is not a directory")
        self.workspace = Path(os.path.abspath(root))
        self.root = self.workspace.resolve()
        self.budgets = budgets
        self.command_timeout = float(command_timeout)
        self.web_timeout = float(web_timeout)
        self.refuse_private_addresses = bool(refuse_private_addresses)
        self.tasks: dict[str, _Task] = {}
        self._jobs: list[Job] = []  # every background job started, for close() and the finalizer
        self._finalizer = weakref.finalize(self, _end_jobs, self._jobs)
        self._next_task = 1
        self._methods: dict[str, Callable[..., str]] = {
            "read_file": self.read_file,
            "grep": self.grep,
            "glob": self.glob,
            "run_command": self.run_command,
            "start_task": self.start_task,
            "task_output": self.task_output,
            "web_fetch": self.web_fetch,
        }

    # ---- the door

    def run(self, name: str, args: Any = None) -> str:
        """The tool's result before ``clamp``; a bad call becomes ``error: ...`` text."""
        if not isinstance(name, str) or name not in self._methods:
            return f"error: unknown tool {name!r} (available: {', '.join(TOOL_NAMES)})"
        try:
            return self._methods[name](**_check_args(name, args))
        except ToolError as e:
            return f"error: {e}"
        except Exception as e:  # the door never raises: a crash is reported to the model
            return f"error: {name} failed: {type(e).__name__}: {e}"

    def dispatch(self, name: str, args: Any = None) -> str:
        """Run a tool and cap its result at ``max_output`` bytes (the one door an agent uses)."""
        return clamp(self.run(name, args), self.budgets.max_output)

    def close(self) -> None:
        """End every process a background task started (its whole group and its descendants)."""
        _end_jobs(self._jobs)

    def __enter__(self) -> "Tools":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- paths

    def _resolve(self, raw: str, *, what: str = "path") -> Path:
        """The real path of a workspace-relative ``raw``, refused if it leaves the workspace."""
        if not raw.strip():
            raise ToolError(f"{what} is empty")
        if "\x00" in raw:
            raise ToolError(f"{what} {raw!r} contains a NUL byte")
        if os.path.isabs(raw) or raw.startswith("~"):
            raise ToolError(f"{what} {raw!r} is absolute; use a path relative to the workspace")
        real = (self.root / raw).resolve()
        if not real.is_relative_to(self.root):
            raise ToolError(f"{what} {raw!r} leaves the workspace")
        return real

    def _inside(self, path: Path) -> bool:
        try:
            return path.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):
            return False

    def _walk(self, start: Path) -> list[tuple[str, Path]]:
        """Files under ``start`` as (relative path, path), sorted by relative path.

        .git is skipped, linked folders are not entered, and links leading out of
        the workspace are dropped.
        """
        if start.is_file():
            return [(self._rel(start), start)]
        found: list[tuple[str, Path]] = []
        for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
            for name in filenames:
                path = Path(dirpath) / name
                if path.is_symlink() and not self._inside(path):
                    continue
                found.append((self._rel(path), path))
        found.sort()
        return found

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    # ---- read_file

    def read_file(self, path: str, offset: int | None = None, limit: int | None = None) -> str:
        """Numbered lines of one file, ``limit`` at a time; files over ``max_file_bytes`` refused."""
        b = self.budgets
        real = self._resolve(path)
        if not real.exists():
            raise ToolError(f"{path} does not exist")
        if not real.is_file():
            raise ToolError(f"{path} is not a file")
        size = real.stat().st_size
        if size > b.max_file_bytes:
            return (f"{path} is {size} bytes (> {b.max_file_bytes}); "
                    "read it in chunks with offset/limit")
        first = 1 if offset is None else offset
        count = b.read_max_lines if limit is None else min(limit, b.read_max_lines)
        if first < 1:
            raise ToolError(f"offset must be >= 1 (lines are numbered from 1), got {first}")
        if count < 1:
            raise ToolError(f"limit must be >= 1, got {limit}")
        lines = _split_lines(_decode(real.read_bytes()))
        total = len(lines)
        if total == 0:
            return f"({path} is empty)"
        if first > total:
            return f"(offset {first} is past the end of {path}: {total} lines)"
        window = lines[first - 1:first - 1 + count]
        body = "\n".join(f"{first + i}{ARROW}{line}" for i, line in enumerate(window))
        rest = total - (first - 1 + len(window))
        if rest > 0:
            body = _note(body, f"{ELLIPSIS} {rest} more lines (total {total})")
        return body

    # ---- grep

    def grep(self, pattern: str, path: str | None = None) -> str:
        """``path:line: text`` rows for a regex; big, binary and .git files skipped.

        The pattern is RE2 syntax, searched in linear time like the original's Rust
        ``regex`` crate, so no pattern can hang it; RE2 refuses the same constructs
        (backreferences, look-around). Its ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are
        ASCII-only (use ``\\pL``, ``\\p{Han}`` … for other scripts).
        """
        b = self.budgets
        rx = _re2_compile(pattern, "regular expression")
        start = self._resolve(path) if path is not None else self.root
        if not start.exists():
            raise ToolError(f"{path} does not exist")
        rows: list[str] = []
        for rel, file in self._walk(start):
            try:
                if not file.is_file() or file.stat().st_size > b.grep_max_file_bytes:
                    continue
                data = file.read_bytes()
            except OSError:
                continue
            if b"\x00" in data[:_BINARY_SNIFF]:
                continue
            for number, line in enumerate(_split_lines(_decode(data)), start=1):
                if not rx.search(line):
                    continue
                if len(rows) == b.grep_max_matches:
                    return _note("\n".join(rows), f"{ELLIPSIS} stopped after {b.grep_max_matches} matches")
                if len(line) > b.grep_max_line_chars:
                    line = line[:b.grep_max_line_chars] + ELLIPSIS
                rows.append(f"{rel}:{number}: {line}")
        return "\n".join(rows) if rows else f"no matches for {pattern!r}"

    # ---- glob

    def glob(self, pattern: str) -> str:
        """Sorted workspace files matching a glob; stops at ``glob_max_paths``."""
        b = self.budgets
        if not pattern.strip():
            raise ToolError("pattern is empty")
        if os.path.isabs(pattern) or pattern.startswith("~"):
            raise ToolError(f"pattern {pattern!r} is absolute; use one relative to the workspace")
        if ".." in pattern.replace("\\", "/").split("/"):
            raise ToolError(f"pattern {pattern!r} leaves the workspace")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        rx = _glob_regex(pattern)
        found: list[str] = []
        for rel, _ in self._walk(self.root):
            if not rx.match(rel):
                continue
            if len(found) == b.glob_max_paths:
                return _note("\n".join(found), f"{ELLIPSIS} capped at {b.glob_max_paths} files")
            found.append(rel)
        return "\n".join(found) if found else f"no files match {pattern!r}"

    # ---- run_command

    def run_command(self, command: str, timeout: float | None = None) -> str:
        """Run a shell command; exit code, then stdout, then ``[stderr]``, each capped.

        When the call returns nothing the command started is still running: its
        process group and every descendant carrying its mark are killed, and a line
        after the exit code says how many background processes that ended.
        """
        b = self.budgets
        if not command.strip():
            raise ToolError("command is empty")
        limit = self.command_timeout if timeout is None else float(timeout)
        if not limit > 0:
            raise ToolError(f"timeout must be > 0 seconds, got {timeout}")
        job = Job(command, self.root, b.command_capture_bytes, b.command_capture_bytes)
        exited = False
        try:
            exited = job.wait_exit(limit)
        finally:
            left_running = job.end()  # always: nothing outlives the call, whatever happened
        complete = job.join(2.0)
        return "\n".join(_command_parts(job, exited, left_running, complete, limit))

    # ---- background tasks

    def start_task(self, command: str) -> str:
        """Start a background command (stdout and stderr merged); returns its id.

        When its shell exits, whatever it left running is killed; ``close`` ends it
        and everything it started.
        """
        if not command.strip():
            raise ToolError("command is empty")
        job = Job(command, self.root, self.budgets.task_capture_bytes, None)
        self._jobs.append(job)
        threading.Thread(target=_watch, args=(job,), daemon=True).start()
        task_id = f"t{self._next_task}"
        self._next_task += 1
        self.tasks[task_id] = _Task(task_id, command, job)
        return f"started task {task_id} (pid {job.proc.pid}); read it with task_output {{\"id\": \"{task_id}\"}}"

    def task_output(self, id: str) -> str:
        """A background task's status line, then its kept output so far."""
        task = self.tasks.get(id.strip())
        if task is None:
            known = ", ".join(self.tasks) or "none started"
            raise ToolError(f"no task {id!r} (tasks: {known})")
        status = task.status()
        if status != "running":
            task.job.join(2.0)  # let the drain reach EOF for the final count
        text, cut = task.drain.snapshot()
        body = f"task {task.id}: {status}"
        if text:
            body += "\n" + text.rstrip("\n")
        if cut:
            body += f"\n{ELLIPSIS} output truncated ({cut} bytes not shown)"
        return body

    # ---- web_fetch

    def web_fetch(self, url: str, max_chars: int | None = None) -> str:
        """Readable text of an http(s) URL; body read up to the cap, text cut to ``max_chars``.

        One fetch takes at most ``web_timeout`` seconds in all; the body is decoded
        (gzip, deflate) while streaming and read only up to ``web_max_response_bytes``
        decoded bytes; at most 5 redirects, to http(s) only.
        """
        b = self.budgets
        chars = b.web_max_chars if max_chars is None else max_chars
        if chars < 1:
            raise ToolError(f"max_chars must be >= 1, got {max_chars}")
        _check_url(url)
        cap = b.web_max_response_bytes
        reply = self._fetch(url, cap)
        data = reply.body[:utf8_boundary(reply.body, cap)] if reply.truncated else reply.body
        text = _web_text(data, reply.content_type, reply.charset)
        if len(text) > chars:
            text = _note(text[:chars], f"{ELLIPSIS} {len(text) - chars} chars omitted")
        if reply.truncated:
            text = _note(text, f"[response truncated at {cap} bytes]")
        if reply.status >= 400:
            head = f"error: HTTP {reply.status} {reply.reason} for {url}"
            text = _note(head, text) if text else head
        return text

    def _fetch(self, url: str, cap: int) -> Any:
        try:
            return fetch("GET", url, headers={"User-Agent": "nanohermes_nb"}, timeout=self.web_timeout,
                         max_bytes=cap, refuse_private_addresses=self.refuse_private_addresses)
        except TransportTimeout:
            raise ToolError(f"timed out fetching {url} (after {self.web_timeout:g}s)") from None
        except ConnectFailed as e:
            raise ToolError(f"could not connect to {url}: {e.reason.removeprefix('connection failed: ')}") from None
        except AddressRefused as e:
            raise ToolError(f"refused to fetch {url}: {e}") from None
        except RedirectRefused as e:
            raise ToolError(f"fetching {url}: {e}") from None
        except TransportError as e:
            raise ToolError(f"fetching {url} failed: {e}") from None


def _check_url(url: str) -> None:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as e:
        raise ToolError(f"invalid URL {url!r}: {e}") from None
    if parsed.scheme not in ("http", "https"):
        raise ToolError(f"only http and https URLs can be fetched, not {parsed.scheme or 'no scheme'!r}")
    if not parsed.host:
        raise ToolError(f"invalid URL {url!r}: no host")


_BOM_CHARSETS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
                 (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def _web_text(data: bytes, ctype: str, charset: str | None) -> str:
    """The body as text for the model; binary bodies (also those binary once decoded,
    such as 20,000 NUL characters served as text/plain) become a one-line note."""
    if charset is None:
        charset = next((name for bom, name in _BOM_CHARSETS if data.startswith(bom)), None)
    try:
        raw = data.decode(charset or "utf-8", "replace")
    except LookupError:
        raw = data.decode("utf-8", "replace")
    binary = f"(binary content: {ctype or 'unknown type'}, {len(data)} bytes, not shown)"
    if "\x00" in raw:
        return binary
    head = raw.lstrip()[:200].lower()
    if ctype in _HTML_TYPES or (not ctype and head.startswith(("<!doctype html", "<html"))):
        return html_to_text(raw)
    if ctype.startswith(_TEXT_TYPES) or ctype.endswith(("+json", "+xml")) or not ctype:
        return raw
    return binary


def _command_parts(job: Job, exited: bool, left_running: int, complete: bool, limit: float) -> list[str]:
    """The lines of a ``run_command`` result: head, stdout, ``[stderr]``, stderr, notes."""
    if not exited:
        head = f"timed out after {limit:g}s; process group killed"
    else:
        code = job.proc.returncode
        head = f"exit code: {code}" + (f" (killed by signal {-code})" if code < 0 else "")
        if left_running:
            head += (f"\nbackground processes still running when the command ended were killed "
                     f"({left_running})")
    if not complete:
        head += "\noutput still held open by a process outside the command's reach; not waited for"
    stdout, out_cut = job.out.snapshot()
    stderr, err_cut = job.err.snapshot() if job.err is not None else ("", 0)
    parts = [head]
    if stdout:
        parts.append(stdout.rstrip("\n"))
    if out_cut:
        parts.append(f"{ELLIPSIS} stdout truncated ({out_cut} bytes not shown)")
    if stderr or err_cut:
        parts.append("[stderr]")
        if stderr:
            parts.append(stderr.rstrip("\n"))
        if err_cut:
            parts.append(f"{ELLIPSIS} stderr truncated ({err_cut} bytes not shown)")
    return parts
