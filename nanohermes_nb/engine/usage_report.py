"""The reports people expect from their agents' logs: tokens and dollars per day, project, model and session.

ccusage's reports, read from the same logs, and more: every request an agent log reports (sub-agents'
included, attributed to the session that started them) becomes one ``UsageRow`` with its tokens split
the way a bill splits them (uncached input, cache writes for five minutes and for an hour, cache reads,
output and the reasoning part of it) and, where the model has a price (``prices.price_for_model``),
the dollars of each part. ``usage_rows`` reads a folder (or files) once; ``summarize`` groups the rows
by ``day``, ``project``, ``model``, ``session`` or ``agent``; ``money_parts`` says where the money went;
``tool_outputs`` which tool results filled the window. A model nothing prices is "unpriced" in every
group that holds it: its tokens are counted, its dollars are not, and the group says so (never $0).

Days are UTC days of the request's time (``unknown`` when the log has none). The project is the
working folder the log names (Claude Code's ``cwd``, Codex's ``session_meta.cwd``), its last part; else
the log's folder.

Nothing is counted twice. A file passed twice, or two files with the same bytes (a backup beside the
original), is read once, and ``ReportInput.notes`` says which copy was left out. A forked session (a
Codex sub-agent spawned with the parent's history, ``Transcript.fork``) opens on a copy of its parent's
records: its copied requests carry no usage (the parent's file bills them), so the bill counts only the
fork's own requests; and its copied tool results are the parent's, so ``tool_outputs`` counts only the
fork's own. The copied history is still the fork's context, so a context plot of the fork shows it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..transcripts.session import Session, SessionLike
from .pricing import PARTS

__all__ = ["UsageRow", "ReportInput", "usage_rows", "rows_of", "summarize", "money_parts", "tool_outputs",
           "GROUPS", "TOKEN_COLUMNS", "context_series", "distinct_files"]

GROUPS = ("day", "project", "model", "session", "agent")
TOKEN_COLUMNS = ("input", "cache_write_5m", "cache_write_1h", "cache_read", "output", "reasoning")
_CWD = re.compile(rb'"cwd"\s*:\s*"((?:[^"\\]|\\.){1,400})"')


@dataclass(frozen=True)
class UsageRow:
    """One API request a log reports: where, when, which model, its tokens and (where priced) dollars."""

    session: str
    agent: str
    project: str
    day: str
    time: float | None
    model: str
    sub_agent: bool
    tokens: tuple[int, int, int, int, int, int]  # TOKEN_COLUMNS
    dollars: tuple[float, ...] | None  # PARTS, None when the model is unpriced
    price: str = ""  # the name of the price used ("" when unpriced)


@dataclass
class ReportInput:
    """What ``usage_rows`` read: the rows, the sessions, and one line per file left out."""

    rows: list[UsageRow] = field(default_factory=list)
    sessions: list[Any] = field(default_factory=list)  # the transcripts, for plots and tool outputs
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was counted once or apart, and why


def _day(time: float | None) -> str:
    return datetime.fromtimestamp(time, timezone.utc).strftime("%Y-%m-%d") if time is not None else "unknown"


def project_of(path: str | os.PathLike) -> str:
    """The last part of the working folder a log names in its first 64 KB, else its folder's name."""
    from ..transcripts.agentlogs.discovery import read_head

    head = read_head(Path(path)) or b""
    match = _CWD.search(head)
    if match:
        try:
            cwd = json.loads(b'"' + match.group(1) + b'"')
        except ValueError:
            cwd = ""
        name = re.split(r"[\\/]", cwd.rstrip("/\\"))[-1] if isinstance(cwd, str) else ""
        if name:
            return name
    return Path(path).parent.name or "unknown"


def rows_of(transcript: SessionLike, project: str = "") -> list[UsageRow]:
    """The ``UsageRow`` of every request of a transcript with usage, its sub-agents' after its own."""
    from .prices import price_for_model

    log = Session.of(transcript)
    session = log.path
    agent = log.agent
    project = project or (project_of(session) if session else "unknown")
    out = []
    threads = [(log, False)] + [(s, True) for s in log.sidechains]
    for thread, sub in threads:
        for q in thread.requests:
            u = q.usage
            if u is None:
                continue
            hour = min(u.cache_write_1h_tokens, u.cache_write_tokens)
            reasoning = min(u.reasoning_tokens, u.completion_tokens)
            tokens = (u.prompt_tokens - u.cached_tokens - u.cache_write_tokens, u.cache_write_tokens - hour, hour,
                      u.cached_tokens, u.completion_tokens - reasoning, reasoning)
            p = price_for_model(q.model)
            dollars = None if p is None else tuple(p.parts(u.prompt_tokens, u.cached_tokens, u.completion_tokens,
                                                           u.cache_write_tokens, hour, reasoning).values())
            out.append(UsageRow(session, agent, project, _day(q.time), q.time, q.model or "?", sub, tokens,
                                dollars, "" if p is None else p.name))
    return out


def usage_rows(paths: Iterable[str | os.PathLike] | str | os.PathLike, keep_sessions: bool = False) -> ReportInput:
    """Every agent log under ``paths`` (folders searched as ``sessions`` searches them), read once.

    A Claude Code sub-agent's own file (``<session>/subagents/agent-*.jsonl``) is attributed to the
    session that started it (``subagents.attach``), not listed as a session of its own. A file that
    cannot be read is one line in ``skipped``.
    """
    from ..transcripts import TranscriptError, load_transcript
    from ..transcripts.agentlogs.discovery import session_files
    from ..transcripts.agentlogs.subagents import attach

    found = ReportInput()
    roots = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files, found.notes = distinct_files(session_files(roots))
    found.notes[:0] = _given_twice(roots)
    loaded = []
    for path in files:
        try:
            t = load_transcript(path)
        except TranscriptError as exc:
            found.skipped.append(str(exc))
            continue
        if t.agent:
            loaded.append(t)
    forks = []
    for t in attach(loaded):
        found.rows.extend(rows_of(t))
        if t.fork is not None:
            forks.append(t.fork)
        if keep_sessions:
            found.sessions.append(t)
    if forks:
        found.notes.append(_fork_note(forks))
    return found


def _fork_note(forks: list[Any]) -> str:
    copied = sum(f.n_requests for f in forks)
    parents = len({f.parent for f in forks})
    whose = "one parent's history" if parents == 1 else f"the histories of {parents} parents"
    return (f"{len(forks)} forked session{'s' if len(forks) != 1 else ''} (sub-agents that open on a copy of "
            f"{whose}): the {copied:,} copied requests are the parents', billed in their files and counted "
            "there only")


def _sha256(path: Path) -> str | None:
    """The file's SHA-256, read in 1 MB blocks; None when it cannot be read."""
    import hashlib

    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _given_twice(roots: Sequence[str | os.PathLike]) -> list[str]:
    """One note per file named more than once among ``roots`` (it is read once)."""
    counts: dict[Path, int] = {}
    for r in roots:
        try:
            if Path(r).is_file():
                key = Path(r).resolve()
                counts[key] = counts.get(key, 0) + 1
        except (OSError, ValueError):
            continue
    return [f"{p}: given {n} times, counted once" for p, n in counts.items() if n > 1]


def distinct_files(paths: Sequence[Path]) -> tuple[list[Path], list[str]]:
    """The files with the bytes of no earlier one, and one note per file left out as a copy.

    Only files of equal size are compared (by SHA-256, read in blocks), so a folder of distinct logs is
    not read twice. A file that cannot be read is kept: ``load_transcript`` says why, in one line.
    """
    by_size: dict[int, list[Path]] = {}
    for p in paths:
        try:
            by_size.setdefault(os.stat(p).st_size, []).append(p)
        except OSError:
            continue
    seen: dict[tuple[int, str], Path] = {}
    copies: dict[Path, Path] = {}
    for size, group in by_size.items():
        if len(group) < 2:
            continue
        for p in group:
            digest = _sha256(p)
            if digest is None:
                continue
            first = seen.setdefault((size, digest), p)
            if first is not p:
                copies[p] = first
    notes = [f"{p}: the same bytes as {first}, counted once" for p, first in copies.items()]
    return [p for p in paths if p not in copies], notes


def _sums(rows: Sequence[UsageRow]) -> dict[str, Any]:
    tokens = [sum(r.tokens[k] for r in rows) for k in range(len(TOKEN_COLUMNS))]
    priced = [r for r in rows if r.dollars is not None]
    unpriced = sorted({r.model for r in rows if r.dollars is None})
    cost = sum(sum(r.dollars) for r in priced if r.dollars is not None)
    return {"requests": len(rows), "sub_agent_requests": sum(r.sub_agent for r in rows),
            **dict(zip(TOKEN_COLUMNS, tokens, strict=True)), "total_tokens": sum(tokens),
            "cost_usd": cost if priced else None, "unpriced": ", ".join(unpriced)}


def summarize(rows: Sequence[UsageRow], by: str) -> list[dict[str, Any]]:
    """One dict per group (``GROUPS``), in order (days and names ascending; sessions by their first request):
    requests, sub-agent requests, tokens per kind, total tokens, dollars (None when nothing in the group is
    priced) and the unpriced models of the group."""
    if by not in GROUPS:
        raise ValueError(f"unknown grouping {by!r}; use one of {', '.join(GROUPS)}")
    groups: dict[str, list[UsageRow]] = {}
    for r in rows:
        groups.setdefault(str(getattr(r, by)), []).append(r)
    if by == "session":
        order = sorted(groups, key=lambda g: (min((r.time for r in groups[g] if r.time is not None),
                                                  default=float("inf")), g))
    else:
        order = sorted(groups)
    out = []
    for key in order:
        row = {by: key, **_sums(groups[key])}
        if by == "session":
            first = groups[key][0]
            row = {by: key, "agent": first.agent, "project": first.project,
                   "models": ", ".join(sorted({r.model for r in groups[key]})), **_sums(groups[key])}
        out.append(row)
    return out


def money_parts(rows: Sequence[UsageRow]) -> list[dict[str, Any]]:
    """Where the money went: for each part (``PARTS``), its tokens, dollars and share of the priced dollars."""
    priced = [r for r in rows if r.dollars is not None]
    total = sum(sum(r.dollars) for r in priced if r.dollars is not None)
    out = []
    for k, part in enumerate(PARTS):
        dollars = sum(r.dollars[k] for r in priced if r.dollars is not None)
        out.append({"part": part, "tokens": sum(r.tokens[k] for r in rows),
                    "priced_tokens": sum(r.tokens[k] for r in priced), "cost_usd": dollars,
                    "share": dollars / total if total else None})
    return out


def tool_outputs(transcripts: Iterable[SessionLike], unit: str = "tokens_approx") -> list[dict[str, Any]]:
    """Which tool outputs filled the window: per tool name, the results, their size in ``unit``, the share
    of all tool output and the largest one (sub-agents' tool results counted with their session's)."""
    from ..context.sizing import measure_each

    found: dict[str, list[int]] = {}
    for t in transcripts:
        log = Session.of(t)
        for thread in [log, *log.sidechains]:
            names = {c["id"]: c["function"]["name"] for m in thread.messages if m.get("role") == "assistant"
                     for c in m.get("tool_calls") or () if isinstance(c, dict) and "function" in c}
            fork = thread.fork  # a fork's copied results are its parent's: counted there
            own = thread.messages[fork.messages:] if fork is not None else thread.messages
            results = [m for m in own if m.get("role") == "tool"]
            for m, size in zip(results, measure_each(results, unit), strict=True):
                found.setdefault(names.get(m.get("tool_call_id"), "?"), []).append(size)
    total = sum(sum(v) for v in found.values())
    rows = [{"tool": name, "results": len(sizes), unit: sum(sizes), "share": sum(sizes) / total if total else 0.0,
             "largest": max(sizes)} for name, sizes in found.items()]
    return sorted(rows, key=lambda r: -r[unit])


def context_series(transcript: SessionLike, unit: str = "tokens_approx") -> dict[str, list]:
    """Per request of a log's main thread: its index, the context the transcript shows before it (in ``unit``:
    since the agent's last compaction, its summary included), and the prompt tokens the bill reports; plus
    the request numbers right after each of the agent's own compactions, and each one's trigger (``auto``,
    ``manual``, ``restart`` for Aider's new run, or ``""``)."""
    from ..context.sizing import measure_each

    log = Session.of(transcript)
    sizes = measure_each(list(log.messages), unit)
    comps = sorted(log.compactions, key=lambda c: c.message)
    starts = [0] + [c.message for c in comps]
    summaries = [0] + [sum(measure_each(list(c.continuation), unit)) if c.continuation else 0 for c in comps]
    prefix = [0]
    for s in sizes:
        prefix.append(prefix[-1] + s)
    shown, billed, after, triggers = [], [], [], []
    k = 0
    for j, q in enumerate(log.requests):
        while k + 1 < len(starts) and starts[k + 1] <= q.message:
            k += 1
            after.append(j + 1)
            triggers.append(comps[k - 1].trigger)
        shown.append(summaries[k] + prefix[q.message] - prefix[min(starts[k], q.message)])
        billed.append(q.usage.prompt_tokens if q.usage is not None else None)
    return {"request": list(range(1, len(shown) + 1)), "context": shown, "prompt_tokens": billed,
            "compactions": after, "triggers": triggers}
