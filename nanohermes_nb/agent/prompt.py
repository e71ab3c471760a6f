"""Layer 3 of the budget: the system message, rebuilt from configuration, never trusted.

``system_content`` assembles messages[0] in SPEC section 6 order: the built-in
prompt (identity, rules, workspace, permission mode, persona), the AGENTS.md chain
(cut at ``max_project_docs`` bytes), NANOHERMES.md, and the skills listing. The
memory block is not part of it: ``memory.inject`` appends it per turn at the very
end, so everything before it stays a stable, cacheable prefix. ``prefix_reuse``
measures that prefix between two requests.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..context.budgets import DEFAULT_BUDGETS, Budgets
from ..context.clamp import cut_utf8
from ..context.sizing import request_bytes, shared_prefix_bytes
from .files import read_regular
from .skills import listing, load_skills

__all__ = [
    "MODES",
    "DOC_NAMES",
    "PROJECT_CONTEXT_FILE",
    "PROJECT_CONTEXT_HEADER",
    "PROJECT_DOCS_HEADER",
    "DOCS_TRUNCATED_NOTE",
    "CONTEXT_TRUNCATED_NOTE",
    "SystemConfig",
    "system_prompt",
    "project_doc_paths",
    "project_docs",
    "project_context",
    "system_content",
    "refresh_system",
    "timestamp_line",
    "PrefixReport",
    "prefix_reuse",
]

ELLIPSIS = "\u2026"
DOC_NAMES = ("AGENTS.md",)
PROJECT_CONTEXT_FILE = "NANOHERMES.md"
PROJECT_CONTEXT_HEADER = "\n\n=== Project context (NANOHERMES.md) ===\n"
PROJECT_DOCS_HEADER = "\n\n=== Project guidance (AGENTS.md) ===\n"
DOCS_TRUNCATED_NOTE = f"\n{ELLIPSIS} project guidance truncated"
CONTEXT_TRUNCATED_NOTE = f"\n{ELLIPSIS} project context truncated"

# One line per permission mode: what the model may do in this session.
MODES: Mapping[str, str] = {
    "goal": "Permission mode: goal. Work toward the user's goal on your own: read, edit "
            "files and run commands as needed, then report.",
    "debug": "Permission mode: debug. Find the cause before fixing anything: gather evidence "
             "with reads and commands, then make the smallest change that proves the fix.",
    "plan": "Permission mode: plan. Read and think only: do not edit files or run commands "
            "that change anything; answer with a step-by-step plan.",
}

_PROMPT = """\
You are NanoHermes, a small coding agent that works inside one project folder.
Workspace: {workspace}

Rules:
1. Stay inside the workspace; give every tool path relative to it.
2. Look before you change: read and search the relevant code before editing it.
3. Ask tools for little: use offset/limit, grep and glob rather than reading whole trees.
4. A tool result may be cut; a closing line starting with \u2026 says what was left out. \
Never treat a cut result as complete.
5. After a change, run the project's checks and report failures as they are.
6. Keep replies short: what you did, which files changed, what is left.

{mode}"""


@dataclass(frozen=True)
class SystemConfig:
    """What the system message is built from; change it and ``refresh_system`` follows."""

    workspace: str | os.PathLike[str]
    mode: str = "goal"
    persona: str | None = None
    home: str | os.PathLike[str] | None = None  # overrides $HOME for the global AGENTS.md
    skills_dir: str | os.PathLike[str] | None = None
    budgets: Budgets = DEFAULT_BUDGETS


def _absolute(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(Path(path).expanduser()))


def system_prompt(workspace: str | os.PathLike[str], mode: str = "goal",
                  persona: str | None = None) -> str:
    """The built-in prompt: identity, six rules, the workspace, the mode line, the persona."""
    if mode not in MODES:
        raise ValueError(f"unknown permission mode {mode!r}; use one of {', '.join(MODES)}")
    text = _PROMPT.format(workspace=_absolute(workspace), mode=MODES[mode])
    if persona and persona.strip():
        text += "\n\nPersona:\n" + persona.strip()
    return text


def project_doc_paths(workspace: str | os.PathLike[str],
                      home: str | os.PathLike[str] | None = None) -> list[Path]:
    """Candidate AGENTS.md paths in reading order: global first, then root down to workspace."""
    candidates: list[Path] = []
    home_dir = home if home is not None else os.environ.get("HOME")
    if home_dir:
        candidates.append(Path(home_dir) / ".nanohermes" / "AGENTS.md")
    ws = _absolute(workspace)
    for directory in reversed([ws, *ws.parents]):
        candidates.extend(directory / name for name in DOC_NAMES)
    return candidates


def _identity(path: Path) -> Path:
    """The resolved path (links followed), or the raw path when resolving fails."""
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return path


def _read_doc(path: Path, limit: int) -> tuple[str, bool] | None:
    """A workspace text file, read as a regular file up to ``limit`` bytes: (text, went on).

    None when it is absent, unreadable or not a regular file (a named pipe would
    hang the read, ``/dev/zero`` never end): such a file is skipped like a missing one.
    """
    try:
        capped = read_regular(path, limit)
    except OSError:
        return None
    return capped.data.decode("utf-8", "replace"), capped.more


def project_docs(workspace: str | os.PathLike[str], home: str | os.PathLike[str] | None = None,
                 budgets: Budgets = DEFAULT_BUDGETS) -> str | None:
    """The AGENTS.md chain joined by blank lines and cut at ``max_project_docs`` bytes.

    Most specific last, so the workspace's own rules come after the general ones;
    a file reached twice (links) is read once; None when there is no such file.
    Only regular files are read, each at most ``max_project_docs + 1`` bytes, and
    reading stops once the chain is past the cut: what the cut drops is never read.
    """
    cap = budgets.max_project_docs
    parts: list[str] = []
    seen: set[Path] = set()
    used, went_on = 0, False
    for path in project_doc_paths(workspace, home):
        if used > cap:
            went_on = True
            break
        key = _identity(path)
        if key in seen:
            continue
        read = _read_doc(path, cap)
        if read is None:
            continue
        seen.add(key)
        text, more = read
        text = text.lstrip() if more else text.strip()  # a cut file's end is not its end
        went_on = went_on or more
        if text:
            parts.append(text)
            used += len(text.encode("utf-8", "surrogatepass")) + 2
    if not parts:
        return None
    joined = "\n\n".join(parts)
    kept, cut = cut_utf8(joined, cap)
    return kept + DOCS_TRUNCATED_NOTE if cut or went_on else joined


def project_context(workspace: str | os.PathLike[str], budgets: Budgets = DEFAULT_BUDGETS) -> str | None:
    """The workspace's NANOHERMES.md, trimmed; None when absent, blank or not a regular file.

    The article gives it no cap; to keep memory bounded whatever is on disk it is
    read up to ``max_file_bytes`` (the largest file ``read_file`` takes whole) and a
    longer one is cut there with ``CONTEXT_TRUNCATED_NOTE``.
    """
    read = _read_doc(_absolute(workspace) / PROJECT_CONTEXT_FILE, budgets.max_file_bytes)
    if read is None:
        return None
    text, more = read
    if more:
        kept, _ = cut_utf8(text.lstrip(), budgets.max_file_bytes)
        return kept + CONTEXT_TRUNCATED_NOTE
    return text.strip() or None


def timestamp_line(timestamp: str | _dt.datetime) -> str:
    """The time line that ``system_content(timestamp=...)`` puts first (a prefix-cache anti-pattern)."""
    value = timestamp.isoformat(timespec="seconds") if isinstance(timestamp, _dt.datetime) else str(timestamp)
    return f"Current time: {value}\n"


def system_content(config: SystemConfig, *, timestamp: str | _dt.datetime | None = None) -> str:
    """messages[0]'s text as SPEC section 6 orders it (no memory block: ``inject`` adds that).

    ``timestamp`` (off by default) puts a time line first, only to show what a
    changing first line costs the prompt cache.
    """
    text = system_prompt(config.workspace, config.mode, config.persona)
    docs = project_docs(config.workspace, config.home, config.budgets)
    if docs:
        text += PROJECT_DOCS_HEADER + docs
    context = project_context(config.workspace, config.budgets)
    if context:
        text += PROJECT_CONTEXT_HEADER + context + "\n"
    skills = load_skills(config.skills_dir)
    if skills:
        text += "\n" + listing(skills)
    if timestamp is not None:
        text = timestamp_line(timestamp) + text
    return text


def refresh_system(messages: Sequence[Mapping[str, Any]], config: SystemConfig, *,
                   timestamp: str | _dt.datetime | None = None) -> list[Mapping[str, Any]]:
    """A new list whose messages[0] is rebuilt from ``config``; the stored one is not trusted.

    A stored system message is replaced whole (its memory block too: ``inject``
    re-adds one per turn); if messages[0] is not a system message one is inserted.
    """
    fresh = {"role": "system", "content": system_content(config, timestamp=timestamp)}
    rest = list(messages)
    if rest and isinstance(rest[0], Mapping) and rest[0].get("role") == "system":
        rest = rest[1:]
    return [fresh, *rest]


@dataclass(frozen=True)
class PrefixReport:
    """How much of a request's serialized bytes a prefix cache could reuse from the previous one."""

    shared_bytes: int
    total_bytes: int  # of the current request's serialized messages array
    fraction: float  # shared_bytes / total_bytes

    @property
    def new_bytes(self) -> int:
        """Bytes the server must process afresh."""
        return self.total_bytes - self.shared_bytes


def prefix_reuse(previous_messages: Sequence[Mapping[str, Any]],
                 current_messages: Sequence[Mapping[str, Any]]) -> PrefixReport:
    """Leading bytes of ``current_messages`` identical to ``previous_messages``, and the total."""
    shared = shared_prefix_bytes(previous_messages, current_messages)
    total = request_bytes(current_messages)
    return PrefixReport(shared, total, shared / total if total else 0.0)
