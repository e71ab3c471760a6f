"""What a sweep runs: its transcripts, its grid of settings, and the rows of one transcript.

A sweep is sharded by transcript: a ``Job`` (the grid over one base ``Settings``, and
the pricings) travels to a worker with one ``Source`` (a path, never a message list
that could be read there), and ``sweep_one`` loads it, measures it once and replays
every setting of the grid against it. ``sweep_columns`` names the rows' columns
before any row exists, so that rows can stream to a file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..context.history import PROFILES
from ..policies import Policy, PolicyError, accepts_option, resolve_policy
from ..transcripts.session import Session, SessionLike
from .columns import total_columns
from .ledger import Replay
from .pricing import Pricing, get_pricing
from .recorded import Context, RecordedSession
from .settings import Settings
from .totals import Totals

__all__ = ["SWEEP_COLUMNS", "Skipped", "Source", "Setting", "Job", "sources_of", "folder_paths", "grid_of",
           "pricings_of", "sweep_columns", "sweep_one"]

SWEEP_COLUMNS = ("transcript", "policy", "options", "budget", "keep_recent", "unit", "messages")


@dataclass(frozen=True)
class Skipped:
    """A transcript the sweep could not load, and why (one line)."""

    transcript: str
    reason: str


@dataclass(frozen=True)
class Source:
    """One transcript of a sweep: its name, and its path (read in the worker) or its messages."""

    name: str
    path: str | None = None
    messages: RecordedSession | SessionLike | None = None


@dataclass(frozen=True)
class Setting:
    """One point of the grid: a configured policy and a budget (``keep_recent`` read off the policy)."""

    policy: Policy
    budget: int
    keep_recent: int | None


@dataclass(frozen=True)
class Job:
    """Everything a worker needs for one transcript (picklable): the grid over one base ``Settings``."""

    grid: tuple  # of Setting
    base: Settings
    pricings: tuple = ()  # one row per setting and pricing (none: no cost columns)


def folder_paths(folder: Path) -> list[Path]:
    """The transcript files of a folder (``iter_transcript_paths``), and beside them, in name order, what has a
    transcript's name but is no regular file (a FIFO, a device, a socket): those are listed so that the sweep
    names them as skipped (the loader refuses them without opening them), instead of passing over them."""
    from ..transcripts import SKIPPED_NAMES, TRANSCRIPT_SUFFIXES, iter_transcript_paths

    special = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        name = entry.name
        if (name.endswith(TRANSCRIPT_SUFFIXES) and name not in SKIPPED_NAMES and not name.startswith(".")
                and not entry.is_dir() and not entry.is_file()):
            special.append(Path(entry.path))
    found = list(iter_transcript_paths(folder))
    return sorted(special + [p for p in found if p.parent == folder], key=lambda p: p.name) + \
        [p for p in found if p.parent != folder]


def sources_of(transcripts: Any) -> list[Source]:
    """Paths, folders, message lists, ``Transcript``s, ``Session``s, (name, messages) pairs or a name -> messages
    mapping."""
    if isinstance(transcripts, (str, os.PathLike)):
        transcripts = [transcripts]
    if isinstance(transcripts, Mapping):
        return [Source(str(k), messages=v if isinstance(v, (RecordedSession, Session)) else list(v))
                for k, v in transcripts.items()]
    out: list[Source] = []
    for k, item in enumerate(transcripts):
        if isinstance(item, (str, os.PathLike)):
            p = Path(item)
            paths = folder_paths(p) if p.is_dir() else [p]
            out.extend(Source(Path(x).name, path=str(x)) for x in paths)
        elif isinstance(item, RecordedSession):
            out.append(Source(f"transcript {k}", messages=item))
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            out.append(Source(item[0], messages=item[1]))
        else:
            log = Session.of(item)
            out.append(Source(log.name or f"transcript {k}", messages=log))
    return out


def grid_of(policies: Sequence[Any], budgets: Sequence[int], keep_recent: Sequence[int] | None) -> tuple:
    """Every (policy, budget[, keep_recent]) setting; ``keep_recent`` when no chosen policy has it is a TypeError."""
    if keep_recent is not None and not any(accepts_option(p, "keep_recent") for p in policies):
        names = ", ".join(p if isinstance(p, str) else p.name for p in policies)
        raise TypeError(f"option 'keep_recent' does not apply to any chosen policy ({names})")
    settings = []
    for spec in policies:
        keeps = list(keep_recent) if keep_recent is not None and accepts_option(spec, "keep_recent") else None
        variants = [resolve_policy(spec, keep_recent=k) for k in keeps] if keeps else [resolve_policy(spec)]
        for budget in budgets:
            for pol in variants:
                settings.append(Setting(pol, budget, pol.option("keep_recent")))
    return tuple(settings)


def pricings_of(pricing: Any) -> tuple:
    """No pricing, one (a preset name or a ``Pricing``) or several, as a tuple of ``Pricing``."""
    if pricing is None:
        return ()
    if isinstance(pricing, (str, Pricing)):
        return (get_pricing(pricing),)
    return tuple(get_pricing(p) for p in pricing)


def sweep_columns(profiles: Sequence[str] = PROFILES, tokens: Sequence[str] = (), prefix_reuse: bool = True,
                  pricing: bool = False, needed_later: bool = False, probes: bool = False) -> list:
    """The columns of a sweep's rows, in order (fixed before any row exists, for streaming)."""
    totals = total_columns(profiles, tokens, prefix_reuse, needed_later, pricing, probes)
    return list(SWEEP_COLUMNS) + [c.name for c in totals]


def _load(source: Source) -> RecordedSession | SessionLike:
    if source.path is None:
        assert source.messages is not None  # a Source has a path or messages
        return source.messages
    from ..transcripts import load_transcript

    return load_transcript(source.path)


def sweep_one(source: Source, job: Job) -> tuple[str, list | Skipped]:
    """The rows of one transcript under every setting (runs in a worker; loads the file there)."""
    from ..transcripts import TranscriptError

    try:
        messages = _load(source)
    except (TranscriptError, OSError) as exc:
        return source.name, Skipped(source.name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    session = messages if isinstance(messages, RecordedSession) else RecordedSession.of(messages)
    try:
        return source.name, _rows(source, session, job)
    except PolicyError as exc:  # a policy that cannot work on this history: the transcript is skipped, named
        return source.name, Skipped(source.name, str(exc))


def _rows(source: Source, session: RecordedSession, job: Job) -> list[dict]:
    """Every setting's row for one transcript."""
    rows: list[dict] = []
    # a setting whose trigger never fires replays the transcript untouched: its totals are the same
    # whatever the policy and the budget, so they are counted once per pricing
    untouched: dict[int, Totals] = {}
    base = job.base
    for s in job.grid:
        quiet = session.first_over_budget(Context(), 0, base.unit, s.budget) is None
        for k, price in enumerate(job.pricings or (None,)):  # the session's sizes and tokens serve every pricing
            totals = untouched.get(k) if quiet else None
            if totals is None:
                chosen = dataclasses.replace(base, policy=s.policy, budget=s.budget, pricing=price)
                totals = Replay(session, chosen).totals()
                if quiet:
                    untouched[k] = totals
            rows.append(_row(source, session, s, base, totals))
    return rows


def _row(source: Source, session: RecordedSession, s: Setting, base: Settings, totals: Totals) -> dict:
    """One row: which transcript and setting, then the replay's totals."""
    label = s.policy.label
    row = {"transcript": source.name, "policy": s.policy.name,
           "options": label[len(s.policy.name) + 1:-1] if label != s.policy.name else "",
           "budget": s.budget, "keep_recent": s.keep_recent, "unit": base.unit,
           "messages": len(session.messages)}
    row.update(totals.as_dict(prefix_reuse=base.prefix_reuse))
    return row
