"""Finding the agents' session logs on this machine, read-only.

The usual places: Claude Code ``~/.claude/projects`` (``$CLAUDE_CONFIG_DIR/projects``
when set; it may list several folders, comma-separated), Codex CLI ``~/.codex/sessions``
(``$CODEX_HOME/sessions``), Gemini CLI ``~/.gemini/tmp`` and Copilot CLI
``~/.copilot/session-state``. Folders are searched recursively (Codex files its
rollouts under ``YYYY/MM/DD``); a file counts when its content says it is an agent log,
whatever its name. Nothing is written anywhere: files are only opened for reading, and
no cache or index is left next to a user's logs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..base import TranscriptError
from .claude_code import is_claude_code
from .codex import is_codex
from .copilot import is_copilot
from .gemini import is_gemini
from .records import Notes, iter_records

__all__ = ["SessionInfo", "find_sessions", "default_roots", "iter_agent_log_paths", "looks_like_agent_log"]

_HEAD = 1 << 16  # bytes read to tell an agent log from other files
_SUFFIXES = (".jsonl", ".json")


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


def default_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """The folders where the agents keep their sessions (those that exist)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    claude = [Path(p.strip()) / "projects" for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    codex = Path(env["CODEX_HOME"]) / "sessions" if env.get("CODEX_HOME") else home / ".codex" / "sessions"
    roots = (claude or [home / ".claude" / "projects"]) + [codex, home / ".gemini" / "tmp",
                                                              home / ".copilot" / "session-state"]
    return [r for r in roots if r.is_dir()]


def looks_like_agent_log(path: Path) -> bool:
    """True when the first records of the file are an agent's (JSONL logs and Gemini chats)."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD)
    except OSError:
        return False
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
            if name.endswith(_SUFFIXES) and not name.startswith(".") and looks_like_agent_log(path):
                yield path


def find_sessions(roots: Iterable[str | os.PathLike[str]] | None = None) -> list[SessionInfo]:
    """Every agent session under ``roots`` (default: ``default_roots()``), oldest first."""
    from ..loader import load_transcript

    found = []
    for root in (default_roots() if roots is None else [Path(r) for r in roots]):
        paths = [root] if root.is_file() else iter_agent_log_paths(root) if root.is_dir() else []
        for path in paths:
            try:
                t = load_transcript(path)
            except TranscriptError:
                continue
            if t.agent:
                found.append(_info(t, path))
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
                       requests=len(t.requests), messages=len(t), compactions=len(t.compactions),
                       start=min(times) if times else None, end=max(times) if times else None,
                       path=str(path), skipped=t.skipped)
