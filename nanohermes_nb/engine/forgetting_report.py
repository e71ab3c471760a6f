"""Real compactions, what the agent did after them, and what each policy predicts it forgot (issue 36).

``study(sources)`` reads every agent log among ``sources`` once: its own compactions with their
probes and survival (``own_compactions``), what the agent did in the next tool calls
(``forgetting.aftermath``), and, for each policy, its context at the same place when the session
is replayed at the agent's own trigger (``whatif.default_budget``, o200k tokens): the file
probes a policy's context no longer answers are its prediction of what would be re-read.

``compactions_table`` is one row per real compaction; ``prediction_table`` asks, for the agent's
own compaction and for each policy, how often a file whose probe was lost was re-read, beside
how often one that survived was: the counts, the two rates with Wilson 95% intervals, and a
bootstrap interval (over compactions, seeded) of their difference. Nothing here is fitted, so
nothing is in-sample; the figures are as uncertain as so few compactions make them.

Forks: a sub-agent forked from a session repeats its parent's compaction (the same place, the
same probes); such a repeat is kept in the table (``duplicate_of``) and left out of the rates.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context.compaction import is_summary_message
from ..context.survival import Compacted, survival
from ..policies.base import summary_prefixes
from ..transcripts.session import Session
from .forgetting import WINDOW, Aftermath, aftermaths, same_path, session_scale
from .own_compactions import OwnCompaction, own_compactions

__all__ = ["Case", "study", "compactions_table", "prediction_table", "wilson", "COMPACTION_COLUMNS"]

COMPACTION_COLUMNS = ("transcript", "agent", "compaction", "at", "trigger", "probes", "survival", "file_probes",
                      "file_probes_lost", "reread_files", "lost_probes_reread", "reread_tokens", "reread_usd",
                      "carried_usd", "reruns", "returns", "window_calls", "duplicate_of", "note")


@dataclass(frozen=True)
class Case:
    """One real compaction: the agent's own ledger, what followed, each policy's file statuses at that place."""

    own: OwnCompaction
    after: Aftermath
    policy_files: dict = field(default_factory=dict)  # policy -> {file probe key: status}
    duplicate_of: str = ""

    def reread(self, key: str) -> bool:
        return any(same_path(key, r.path) for r in self.after.rereads)

    @property
    def file_fates(self) -> list:
        return [f for f in self.own.fates if f.probe.category == "file"]


def _policy_statuses(log: Session, session: Any, ledgers: dict, own: OwnCompaction) -> dict:
    """For each policy's ledger: the status of each of ``own``'s file probes in its context after ``own.at``."""
    from bisect import bisect_left

    shift = len(session.messages) - len(log.messages)
    replies = [i - shift for i in session.reply]
    request = bisect_left(replies, own.at) + 1
    probes = [f.probe for f in own.fates if f.probe.category == "file"]
    prefixes = summary_prefixes()
    out: dict[str, dict[str, str]] = {}
    for name, ledger in ledgers.items():
        if request > len(ledger.bases) or not probes:
            out[name] = {}
            continue
        ctx = Compacted.of(ledger.context(request), lambda m: is_summary_message(m, prefixes))
        out[name] = {f.probe.key: f.status for f in survival(probes, ctx)}
    return out


def _ledgers(log: Session, session: Any, policies: Sequence[str], budget: int | None) -> dict:
    from .ledger import replay
    from .whatif import SessionModel, default_budget

    if budget is None:
        try:
            budget = default_budget(SessionModel(log))
        except (ValueError, ZeroDivisionError, KeyError):
            budget = 100_000
    return {name: replay(session, policy=name, budget=budget, unit="o200k", profiles=(), retention=False,
                         prefix_reuse=False) for name in policies}


def _cases_of(name: str, path: Any, log: Session, policies: Sequence[str], window: int,
              budget: int | None) -> list[Case]:
    from .recorded import RecordedSession

    owns = own_compactions(log, name, path)
    if not owns:
        return []
    scale, _ = session_scale(log)
    afters = aftermaths(log, window=window, scale=scale)
    session = RecordedSession.of(log)
    ledgers = _ledgers(log, session, policies, budget) if policies else {}
    return [Case(o, a, _policy_statuses(log, session, ledgers, o)) for o, a in zip(owns, afters, strict=True)]


def study(sources: Iterable[Any], policies: Sequence[str] | None = None, *, window: int = WINDOW,
          budget: int | None = None, progress: Any = None) -> list[Case]:
    """Every real compaction of the agent logs among ``sources`` (paths, folders, transcripts), studied.

    ``policies`` default to every registered one; ``[]`` skips the replays. A file that is not an
    agent log, cannot be read, or records no compaction gives no case (never an error).
    """
    from ..policies import POLICIES
    from .grid import sources_of
    from .toolrows import agent_log

    chosen = list(POLICIES) if policies is None else list(policies)
    cases: list[Case] = []
    for src in sources_of(list(sources)):
        log = agent_log(src.path if src.path is not None else src.messages)
        if log is not None and log.compactions:
            cases += _cases_of(src.name, src.path, log, chosen, window, budget)
            if progress is not None:
                progress(src.name)
    return _mark_duplicates(cases)


def _mark_duplicates(cases: list[Case]) -> list[Case]:
    from dataclasses import replace

    seen: dict[tuple, str] = {}
    out = []
    for c in cases:
        key = (c.own.agent, c.own.at, c.own.pre_tokens, tuple(f.probe.key for f in c.own.fates))
        first = seen.setdefault(key, f"{c.own.transcript}#{c.own.number}") if c.own.fates else None
        dup = first if first is not None and first != f"{c.own.transcript}#{c.own.number}" else ""
        out.append(replace(c, duplicate_of=dup) if dup else c)
    return out


def compactions_table(cases: Sequence[Case]) -> Any:
    """One row per real compaction (``COMPACTION_COLUMNS``)."""
    from .frames import frame

    rows = []
    for c in cases:
        counts = c.own.counts
        files = c.file_fates
        lost = [f for f in files if not f.survived]
        rows.append({
            "transcript": c.own.transcript, "agent": c.own.agent, "compaction": c.own.number, "at": c.own.at,
            "trigger": c.own.trigger, "probes": counts["items"],
            "survival": round(1 - counts["lost"] / counts["items"], 4) if counts["items"] else None,
            "file_probes": len(files), "file_probes_lost": len(lost), "reread_files": len(c.after.reread_files),
            "lost_probes_reread": sum(c.reread(f.probe.key) for f in lost), "reread_tokens": c.after.reread_tokens,
            "reread_usd": round(c.after.reread_usd, 4), "carried_usd": round(c.after.carried_usd, 4),
            "reruns": len(c.after.reruns), "returns": len(c.after.returns), "window_calls": c.after.calls,
            "duplicate_of": c.duplicate_of, "note": "; ".join(x for x in (c.own.note, *c.after.notes) if x)})
    return frame(rows, list(COMPACTION_COLUMNS))


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float | None, float | None]:
    """The Wilson score interval of a proportion ``k / n`` (None, None when ``n`` is 0)."""
    if n <= 0:
        return None, None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


# what counts as "gone" for a file probe: nothing left at all, or no verbatim content left (a summary may name it)
GONE = {"lost": frozenset({"lost"}), "not verbatim": frozenset({"lost", "summarized"})}


def _units(cases: Sequence[Case], predictor: str, gone: frozenset) -> list[list[tuple[bool, bool]]]:
    """Per compaction: (gone?, re-read?) for each of its file probes, under ``predictor``."""
    out = []
    for c in cases:
        if c.duplicate_of:
            continue
        if predictor == "own":
            statuses = {f.probe.key: f.status for f in c.file_fates}
        else:
            statuses = c.policy_files.get(predictor, {})
        pairs = [(status in gone, c.reread(k)) for k, status in statuses.items()]
        if pairs:
            out.append(pairs)
    return out


def _difference(units: list[list[tuple[bool, bool]]]) -> float | None:
    pairs = [p for u in units for p in u]
    lost = [r for lost_, r in pairs if lost_]
    kept = [r for lost_, r in pairs if not lost_]
    if not lost or not kept:
        return None
    return sum(lost) / len(lost) - sum(kept) / len(kept)


def _bootstrap(units: list[list[tuple[bool, bool]]], rounds: int = 2_000, seed: int = 36) -> tuple:
    """A 95% percentile interval of the rate difference, resampling whole compactions."""
    rng = random.Random(seed)
    diffs = []
    for _ in range(rounds):
        d = _difference([units[rng.randrange(len(units))] for _ in units]) if units else None
        if d is not None:
            diffs.append(d)
    if len(diffs) < rounds // 2:
        return None, None
    diffs.sort()
    return diffs[int(0.025 * len(diffs))], diffs[int(0.975 * len(diffs)) - 1]


def prediction_table(cases: Sequence[Case], predictors: Sequence[str] | None = None) -> Any:
    """How well "its file probe is gone" predicts "the file was re-read", per predictor (own, then policies).

    Two readings of gone (``GONE``): ``lost`` (nothing left) and ``not verbatim`` (no content left,
    though a summary may name the file). Rows: each predictor under each reading.
    """
    from .frames import frame

    names = ["own"] + sorted({p for c in cases for p in c.policy_files}) if predictors is None else list(predictors)
    rows = []
    for name, (label, gone) in ((n, g) for n in names for g in GONE.items()):
        units = _units(cases, name, gone)
        pairs = [p for u in units for p in u]
        ll = sum(1 for lost, r in pairs if lost and r)
        ln = sum(1 for lost, r in pairs if lost and not r)
        sl = sum(1 for lost, r in pairs if not lost and r)
        sn = sum(1 for lost, r in pairs if not lost and not r)
        lo1, hi1 = wilson(ll, ll + ln)
        lo2, hi2 = wilson(sl, sl + sn)
        blo, bhi = _bootstrap(units)
        rows.append({"predictor": name, "gone": label, "compactions": len(units), "files": len(pairs),
                     "lost_reread": ll, "lost_not": ln, "survived_reread": sl, "survived_not": sn,
                     "reread_if_lost": round(ll / (ll + ln), 4) if ll + ln else None,
                     "lost_ci": (_r(lo1), _r(hi1)),
                     "reread_if_survived": round(sl / (sl + sn), 4) if sl + sn else None,
                     "survived_ci": (_r(lo2), _r(hi2)),
                     "difference": _r(_difference(units)), "difference_ci": (_r(blo), _r(bhi))})
    return frame(rows)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
