"""Finding the agents' session logs on this machine, read-only.

The usual places: Claude Code ``~/.claude/projects`` (``$CLAUDE_CONFIG_DIR/projects``
when set; it may list several folders, comma-separated), Codex CLI ``~/.codex/sessions``
(``$CODEX_HOME/sessions``), Gemini CLI ``~/.gemini/tmp`` and Copilot CLI
``~/.copilot/session-state``. Folders are searched recursively (Codex files its
rollouts under ``YYYY/MM/DD``); a file counts when its content says it is an agent log,
whatever its name. Aider keeps its chat history in the project (``.aider.chat.history.md``),
so a folder searched yields those too: any ``.md`` file, hidden or not, that opens with
Aider's header. Nothing is written anywhere: files are only opened for reading, and
no cache or index is left next to a user's logs.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..base import TranscriptError
from .aider import is_aider_history
from .claude_code import is_claude_code
from .codex import is_codex
from .copilot import is_copilot
from .gemini import is_gemini
from .records import Notes, iter_records

__all__ = ["SessionInfo", "find_sessions", "default_roots", "iter_agent_log_paths", "looks_like_agent_log", "read_head",
           "session_files", "HOME_FOLDERS"]

_HEAD = 1 << 16  # bytes read to tell an agent log from other files
_SUFFIXES = (".jsonl", ".json")
_MARKDOWN = ".md"  # Aider's chat history, told by its first line (often the hidden .aider.chat.history.md)


@dataclass(frozen=True)
class SessionInfo:
    """One session found: which agent, its model(s), size, requests and time span."""

    agent: str
    model: str
    size: int
    requests: int
    messages: int
    compactions: int
    start: float | None
    end: float | None
    path: str
    skipped: tuple[str, ...] = ()
    sub_agents: int = 0  # Claude Code sub-agents attributed to this session (subagents.attach)
    sub_agent_requests: int = 0
    usage: str = "reported"  # reported, zeros (every count 0: no usage) or none (no request reports usage)


def default_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """The folders where the agents keep their sessions (those that exist)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    claude = [Path(p.strip()) / "projects" for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    codex = Path(env["CODEX_HOME"]) / "sessions" if env.get("CODEX_HOME") else home / ".codex" / "sessions"
    roots = (claude or [home / ".claude" / "projects"]) + [codex, home / ".gemini" / "tmp",
                                                              home / ".copilot" / "session-state"]
    return [r for r in roots if r.is_dir()]


def read_head(path: Path, limit: int = _HEAD) -> bytes | None:
    """The first ``limit`` bytes of a regular file; None for anything else (a FIFO, a device, a socket, a
    folder, a file that cannot be read). Opened non-blocking and checked again once open, so a named pipe
    called ``*.jsonl`` is looked at, never waited on."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since the stat
            return None
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def looks_like_agent_log(path: Path) -> bool:
    """True when the first records of the file are an agent's (JSONL logs and Gemini chats)."""
    head = read_head(path)
    if not head:
        return False
    if is_aider_history(head):
        return True
    if head.lstrip().startswith(b"{") and (b'"projectHash"' in head and b'"messages"' in head
                                           or b'"spans"' in head and b'"gen_ai.' in head):
        return True  # a Gemini chat document, an any-agent trace (both checked in full when read)
    for k, record in enumerate(iter_records(head, Notes())):
        data = record.data
        if is_claude_code(data) or is_codex(data) or is_gemini(data) or is_copilot(data):
            return True
        if k >= 5:
            break
    return False


def iter_agent_log_paths(folder: Path) -> Iterator[Path]:
    """Agent logs anywhere under ``folder`` (sorted; hidden folders and symlinked folders skipped)."""
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            candidate = name.endswith(_SUFFIXES) and not name.startswith(".") or name.endswith(_MARKDOWN)
            if candidate and looks_like_agent_log(path):
                yield path


# inside a folder that is a (backed-up) home: where each agent keeps its sessions
HOME_FOLDERS = (".claude/projects", ".codex/sessions", ".codex/archived_sessions", ".gemini/tmp",
                ".copilot/session-state")


def session_files(roots: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The agent logs of ``roots``: a file as given; a folder searched recursively (hidden folders skipped),
    and its agents' hidden folders too when it holds them (``DIR/.claude/projects``, ``DIR/.codex/sessions``,
    ... : a backed-up home). Each file once, in the order found."""
    seen: set[Path] = set()
    out = []
    for root in (Path(r) for r in roots):
        if root.is_file():
            found: Iterable[Path] = [root]
        elif root.is_dir():
            homes = [root / h for h in HOME_FOLDERS if (root / h).is_dir()]
            found = [p for folder in (root, *homes) for p in iter_agent_log_paths(folder)]
        else:
            found = []
        for path in found:
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                out.append(path)
    return out


def find_sessions(roots: Iterable[str | os.PathLike[str]] | None = None) -> list[SessionInfo]:
    """Every agent session under ``roots`` (default: ``default_roots()``), oldest first; a Claude Code
    sub-agent's own file is counted with the session that started it (``subagents.attach``)."""
    from ..loader import load_transcript
    from .subagents import attach

    loaded = []
    for path in session_files(default_roots() if roots is None else roots):
        try:
            t = load_transcript(path)
        except TranscriptError:
            continue
        if t.agent:
            loaded.append(t)
    found = [_info(t, Path(str(t.path))) for t in attach(loaded)]
    return sorted(found, key=lambda s: (s.start is None, s.start or 0.0, s.path))


def _info(t, path: Path) -> SessionInfo:
    models: dict[str, int] = {}
    for q in t.requests:
        if q.model:
            models[q.model] = models.get(q.model, 0) + 1
    times = [q.time for q in t.requests if q.time is not None]
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return SessionInfo(agent=t.agent, model=", ".join(sorted(models, key=lambda m: -models[m])), size=size,
                       requests=len(t.requests), messages=len(t),
                       compactions=sum(c.trigger != "restart" for c in t.compactions),  # Aider's new runs are none
                       start=min(times) if times else None, end=max(times) if times else None,
                       path=str(path), skipped=t.skipped, sub_agents=len(t.sidechains),
                       sub_agent_requests=sum(len(s.requests) for s in t.sidechains),
                       usage=_usage_state(t))


def _usage_state(t) -> str:
    """``reported`` when some request has usage with a token in it; ``zeros`` when every reported usage is
    all zeros (the log says nothing about its cost); ``none`` when no request reports any."""
    usages = [q.usage for q in t.requests if q.usage is not None]
    if not usages:
        return "none"
    if all(u.prompt_tokens == 0 and u.completion_tokens == 0 for u in usages):
        return "zeros"
    return "reported"
