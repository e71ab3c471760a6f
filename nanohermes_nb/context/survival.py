"""Survival of probes: is what a probe asks still answerable from the compacted context? (issue 36)

A compacted context is read in three parts (``Compacted``): the messages carried over as they
were (or copied verbatim), the summary messages a compaction wrote, and what the agent put back
after compacting (Claude Code re-attaches the files it read last and its instructions files;
Codex's replacement history starts again with AGENTS.md). Each probe gets one status, the first
that holds:

- ``kept``: every evidence string is present verbatim in a carried-over message;
- ``re-injected``: every evidence string is present in the re-injected material, or, for a
  file, the agent re-attached that file (its current state answers the question);
- ``summarized``: the summary holds every evidence string verbatim, or all of the probe's key
  terms (case-insensitive; a word longer than six letters matches on its first six, so
  ``validation`` and ``validate`` meet);
- ``lost``: none of these.

Survival is kept + re-injected + summarized. What it cannot tell: a string present is not one
understood (a kept fingerprint line does not prove the agent will use it), and a summary may
paraphrase (a file it calls "the config" is lost here) or name the key terms by chance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .messages import call_arguments, calls_of, text_of
from .probes import CATEGORIES, Probe

__all__ = ["STATUSES", "SURVIVED", "Fate", "Compacted", "survival", "message_text", "has_terms", "tally",
           "ledger_rows", "LEDGER_COLUMNS"]

STATUSES = ("kept", "re-injected", "summarized", "lost")
SURVIVED = frozenset(STATUSES[:3])
LEDGER_COLUMNS = ("category", "key", "question", "answer", "status", "count", "source", "index")


@dataclass(frozen=True)
class Fate:
    """One probe and what became of it."""

    probe: Probe
    status: str

    @property
    def survived(self) -> bool:
        return self.status in SURVIVED


def _values(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, list):
        for v in value:
            yield from _values(v)


def message_text(message: Mapping[str, Any]) -> str:
    """What a model reads of a message: its text, then each call's argument values (JSON decoded)."""
    parts = [text_of(message)]
    for call in calls_of(message):
        raw = call_arguments(call)
        try:
            parts.extend(_values(json.loads(raw)) if raw.lstrip().startswith("{") else [raw])
        except (ValueError, RecursionError):
            parts.append(raw)
    return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Compacted:
    """A compacted context as survival reads it: carried-over text, summary text, re-injected text and files."""

    kept: str
    summary: str = ""
    reinjected: str = ""
    files: frozenset = frozenset()  # file names (basenames) the agent re-attached

    @classmethod
    def of(cls, messages: Sequence[Mapping[str, Any]], is_summary: Callable[[Mapping[str, Any]], bool], *,
           reinjected: Sequence[Mapping[str, Any]] = (), files: Iterable[str] = (),
           text: Callable[[Mapping[str, Any]], str] = message_text) -> Compacted:
        """Split ``messages`` into summaries and carried-over ones; ``reinjected`` messages and ``files`` apart."""
        kept: list[str] = []
        summary: list[str] = []
        for m in messages:
            (summary if is_summary(m) else kept).append(text(m))
        return cls("\n".join(kept), "\n".join(summary), "\n".join(text(m) for m in reinjected),
                   frozenset(_base(f) for f in files))


def _base(path: str) -> str:
    return re.split(r"[\\/]", path.rstrip("\\/"))[-1].lower()


def _stem(term: str) -> str:
    term = term.lower()
    return term[:6] if term.isalpha() and len(term) > 6 else term


def has_terms(terms: Sequence[str], lowered: str) -> bool:
    """Whether ``lowered`` (a lower-cased text) names every term (words of over six letters by their first six)."""
    return bool(terms) and all(_stem(t) in lowered for t in terms)


def _fate(probe: Probe, ctx: Compacted, summary_lower: str) -> str:
    if all(e in ctx.kept for e in probe.evidence):
        return "kept"
    if ctx.reinjected and all(e in ctx.reinjected for e in probe.evidence):
        return "re-injected"
    if probe.category == "file" and _base(probe.key) in ctx.files:
        return "re-injected"
    if summary_lower and (all(e in ctx.summary for e in probe.evidence) or has_terms(probe.terms, summary_lower)):
        return "summarized"
    return "lost"


def survival(probes: Iterable[Probe], compacted: Compacted) -> list[Fate]:
    """Each probe's status in the compacted context (see the module docstring), in the probes' order."""
    lowered = compacted.summary.lower()
    return [Fate(p, _fate(p, compacted, lowered)) for p in probes]


def tally(fates: Iterable[Fate]) -> dict[str, Any]:
    """Counts: ``items`` and ``survived`` per category, and per status over all probes."""
    out: dict[str, Any] = {"items": 0, **{s: 0 for s in STATUSES},
                           "by_category": {c: {"items": 0, "survived": 0} for c in CATEGORIES}}
    for f in fates:
        out["items"] += 1
        out[f.status] += 1
        cat = out["by_category"][f.probe.category]
        cat["items"] += 1
        cat["survived"] += int(f.survived)
    return out


def ledger_rows(fates: Iterable[Fate]) -> list[dict[str, Any]]:
    """The survival ledger: one row per probe (``LEDGER_COLUMNS``)."""
    return [{"category": f.probe.category, "key": f.probe.key, "question": f.probe.question,
             "answer": f.probe.answer, "status": f.status, "count": f.probe.count, "source": f.probe.source,
             "index": f.probe.index} for f in fates]
