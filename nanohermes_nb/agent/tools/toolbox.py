"""Layer 1 and 2 of the budget: tools that cap their own output, behind one door.

Every tool here stops, skips or cuts where it produces output (SPEC section 2), and
leaves a visible note when it did. ``Tools.dispatch`` is the single door an agent
uses: it turns every bad call into an error text and passes every result through
``clamp(max_output)``, so no tool can flood the context even if its own cap fails.
``Tools.run`` returns the same text before ``clamp`` so a notebook can show both.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...context.budgets import DEFAULT_BUDGETS, Budgets
from ...context.clamp import clamp, utf8_boundary
from ..transport import (
    AddressRefused,
    ConnectFailed,
    RedirectRefused,
    TransportError,
    TransportTimeout,
    fetch,
)
from .matching import ELLIPSIS, decode, glob_regex, is_folder, re2_compile, shown, split_lines, with_note
from .processes import Job
from .specs import (
    ARROW,
    DEFAULT_COMMAND_TIMEOUT,
    TOOL_NAMES,
    TOOL_SPECS,
    ToolError,
    ToolSpec,
    tool_specs,
)
from .specs import check_args as _check_args
from .web import ParseDeadline, WebError, check_url, html_to_text, web_text

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

DEFAULT_WEB_TIMEOUT = 30.0  # seconds, the whole of one web_fetch (connect, redirects, body)
_BINARY_SNIFF = 8192  # a NUL byte in this many leading bytes marks a file binary
_SKIP_DIRS = frozenset({".git"})
try:
    _PATH_MAX = os.pathconf("/", "PC_PATH_MAX")
except (OSError, ValueError, AttributeError):
    _PATH_MAX = 4096



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
    default, as in the original). ``clock`` (``time.monotonic``) is what the fetch's
    deadline is read on: a test's fake clock.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        budgets: Budgets = DEFAULT_BUDGETS,
        *,
        command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
        web_timeout: float = DEFAULT_WEB_TIMEOUT,
        refuse_private_addresses: bool = False,
        clock: Callable[[], float] = time.monotonic,
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
        self.clock = clock
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

    def __enter__(self) -> Tools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- paths

    def _resolve(self, raw: str, *, what: str = "path") -> Path:
        """The real path of a workspace-relative ``raw``, refused if it leaves the workspace."""
        if not raw.strip():
            raise ToolError(f"{what} is empty")
        if "\x00" in raw:
            raise ToolError(f"{what} {shown(raw)} contains a NUL byte")
        if os.path.isabs(raw) or raw.startswith("~"):
            raise ToolError(f"{what} {shown(raw)} is absolute; use a path relative to the workspace")
        joined = os.path.join(self.root, raw)
        if len(os.fsencode(joined)) > _PATH_MAX:  # resolving 300,000 parts took 10 s, then ENAMETOOLONG
            raise ToolError(f"{what} {shown(raw)} is longer than this system's paths can be ({_PATH_MAX} bytes)")
        try:
            real = Path(joined).resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a loop of links (Python 3.11)
            reason = getattr(exc, "strerror", None) or exc
            raise ToolError(f"{what} {shown(raw)} cannot be resolved ({reason})") from None
        if not real.is_relative_to(self.root):
            raise ToolError(f"{what} {shown(raw)} leaves the workspace")
        return real

    def _inside(self, path: Path) -> bool:
        try:
            return path.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):
            return False

    def _walk(self, start: Path) -> list[tuple[str, Path]]:
        """Files under ``start`` as (relative path, path), sorted by relative path.

        .git is skipped, linked folders are not entered, and links leading out of
        the workspace are dropped. The walk keeps its own stack (``os.walk`` recurses
        in Python 3.11: one folder 1,100 levels deep raised ``RecursionError``) and
        skips a folder it cannot list.
        """
        if start.is_file():
            return [(self._rel(start), start)]
        found: list[tuple[str, Path]] = []
        stack = [str(start)]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as entries:
                    listed = list(entries)
            except OSError:
                continue
            for entry in listed:
                if is_folder(entry):
                    if entry.name not in _SKIP_DIRS and not entry.is_symlink():
                        stack.append(entry.path)
                    continue
                path = Path(entry.path)
                if entry.is_symlink() and not self._inside(path):
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
        lines = split_lines(decode(real.read_bytes()))
        total = len(lines)
        if total == 0:
            return f"({path} is empty)"
        if first > total:
            return f"(offset {first} is past the end of {path}: {total} lines)"
        window = lines[first - 1:first - 1 + count]
        body = "\n".join(f"{first + i}{ARROW}{line}" for i, line in enumerate(window))
        rest = total - (first - 1 + len(window))
        if rest > 0:
            body = with_note(body, f"{ELLIPSIS} {rest} more lines (total {total})")
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
        rx = re2_compile(pattern, "regular expression")
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
            for number, line in enumerate(split_lines(decode(data)), start=1):
                if not rx.search(line):
                    continue
                if len(rows) == b.grep_max_matches:
                    return with_note("\n".join(rows), f"{ELLIPSIS} stopped after {b.grep_max_matches} matches")
                if len(line) > b.grep_max_line_chars:
                    line = line[:b.grep_max_line_chars] + ELLIPSIS
                rows.append(f"{rel}:{number}: {line}")
        return "\n".join(rows) if rows else f"no matches for {shown(pattern)}"

    # ---- glob

    def glob(self, pattern: str) -> str:
        """Sorted workspace files matching a glob; stops at ``glob_max_paths``."""
        b = self.budgets
        if not pattern.strip():
            raise ToolError("pattern is empty")
        if os.path.isabs(pattern) or pattern.startswith("~"):
            raise ToolError(f"pattern {shown(pattern)} is absolute; use one relative to the workspace")
        if ".." in pattern.replace("\\", "/").split("/"):
            raise ToolError(f"pattern {shown(pattern)} leaves the workspace")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        rx = glob_regex(pattern)
        found: list[str] = []
        for rel, _ in self._walk(self.root):
            if not rx.match(rel):
                continue
            if len(found) == b.glob_max_paths:
                return with_note("\n".join(found), f"{ELLIPSIS} capped at {b.glob_max_paths} files")
            found.append(rel)
        return "\n".join(found) if found else f"no files match {shown(pattern)}"

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

        One fetch takes at most ``web_timeout`` seconds in all, turning the page into
        text included; the body is decoded
        (gzip, deflate) while streaming and read only up to ``web_max_response_bytes``
        decoded bytes; at most 5 redirects, to http(s) only.
        """
        b = self.budgets
        chars = b.web_max_chars if max_chars is None else max_chars
        if chars < 1:
            raise ToolError(f"max_chars must be >= 1, got {max_chars}")
        try:
            check_url(url)
        except WebError as e:
            raise ToolError(str(e)) from None
        cap = b.web_max_response_bytes
        deadline = self.clock() + self.web_timeout  # one for the request and the text alike
        reply = self._fetch(url, cap)
        data = reply.body[:utf8_boundary(reply.body, cap)] if reply.truncated else reply.body
        try:
            text = web_text(data, reply.content_type, reply.charset, deadline, self.clock)
        except ParseDeadline:
            raise ToolError(f"timed out fetching {url} (after {self.web_timeout:g}s, "
                            "while turning the page into text)") from None
        if len(text) > chars:
            text = with_note(text[:chars], f"{ELLIPSIS} {len(text) - chars} chars omitted")
        if reply.truncated:
            text = with_note(text, f"[response truncated at {cap} bytes]")
        if reply.status >= 400:
            head = f"error: HTTP {reply.status} {reply.reason} for {url}"
            text = with_note(head, text) if text else head
        return text

    def _fetch(self, url: str, cap: int) -> Any:
        try:
            return fetch("GET", url, headers={"User-Agent": "nanohermes_nb"}, timeout=self.web_timeout,
                         max_bytes=cap, refuse_private_addresses=self.refuse_private_addresses, clock=self.clock)
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
