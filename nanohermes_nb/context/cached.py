"""Summaries a real model made, kept in a file and replayed offline.

A real model's summaries take minutes to make (SmolLM2 on two cores: about 200
prompt tokens a second, and a real transcript's excerpt is tens of thousands of
tokens), and they need the model. ``nanohermes_nb/resources/summaries/smollm2.json`` keeps them with
what made them, so that the course and the retention tables show a real model's
summaries beside the extractive ones, fast, offline, without the model::

    {"model": ..., "server": ..., "prompt": <the summary prompt>, "settings": {...},
     "summaries": {<sha256 of the excerpt>: {"summary": ..., "calls": 3, "prompt_tokens": ...,
                                              "completion_tokens": ..., "seconds": ..., "rounds": 2}}}

``CachedSummarizer(path)`` (``CachedSummarizer.smollm2()``: the project's file; ``path=None``:
in memory, as ``OpenAICompatibleSummarizer.recorded()`` gives) answers an excerpt from the file (by its SHA-256), and
reports what the summary cost when it was made (``last_cost``), so a ledger built
from the cache counts the same summarizer requests and tokens as the live one. An
excerpt the file does not hold is a ``SummarizerError`` (the compaction then inserts
the placeholder) and is counted in ``misses``. With ``fallback`` (a live summarizer),
a miss is asked there and kept; ``save()`` writes the file atomically.

The file is read only when it is a regular file (a FIFO or ``/dev/zero`` is refused in one line,
without blocking or reading), and every entry is checked when it is loaded: a ``calls`` that is
not a whole number is a ``ValueError`` naming the file and the entry, not a crash at its first
hit. ``save()`` holds a lock on the file's folder, reads what is on disk, merges it with what this
cache holds, and writes the union: two processes autosaving to one file keep every summary both
made (before: the last writer's).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from .._files import NotRegularFile, locked, read_regular, write_atomic
from ..resources import resource_path
from .chunked import SummaryCost, summary_cost
from .summarizers import SummarizerError

__all__ = ["CachedSummarizer", "excerpt_key", "SUMMARIES_DIR"]

SUMMARIES_DIR = resource_path("summaries")


def excerpt_key(excerpt: str) -> str:
    """The SHA-256 of the excerpt's UTF-8 bytes (a lone surrogate from a log is escaped first)."""
    return hashlib.sha256(excerpt.encode("utf-8", "surrogatepass")).hexdigest()


_COUNTS = ("calls", "prompt_tokens", "completion_tokens", "rounds")  # whole numbers >= 0 when present


def _entry_problem(entry: Any) -> str | None:
    """What is wrong with one entry of the file, in words; None when it can be replayed."""
    if not isinstance(entry, dict) or not isinstance(entry.get("summary"), str):
        return "has no 'summary' text"
    for name in _COUNTS:
        value = entry.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"'{name}' must be a whole number >= 0, got {json.dumps(value)[:40]}"
    seconds = entry.get("seconds", 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        return f"'seconds' must be a number >= 0, got {json.dumps(seconds)[:40]}"
    if not isinstance(entry.get("estimated", False), bool):
        return f"'estimated' must be true or false, got {json.dumps(entry['estimated'])[:40]}"
    return None


def read_summaries(path: Path) -> dict[str, Any]:
    """The parsed file (its ``summaries`` checked entry by entry); ``ValueError`` naming the file and the entry."""
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except NotRegularFile as exc:  # a FIFO, /dev/zero: refused without blocking or reading
        raise ValueError(str(exc)) from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not a summaries file ({str(exc).splitlines()[0][:200]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("summaries"), dict):
        raise ValueError(f"{path}: not a summaries file (no 'summaries' object)")
    for key, entry in data["summaries"].items():
        problem = _entry_problem(entry)
        if problem is not None:
            raise ValueError(f"{path}: summaries[{key[:80]!r}] {problem}")
    return data


def _cost(entry: Mapping[str, Any]) -> SummaryCost:
    return SummaryCost(int(entry.get("calls", 1)), int(entry.get("prompt_tokens", 0)),
                       int(entry.get("completion_tokens", 0)), float(entry.get("seconds", 0.0)),
                       int(entry.get("rounds", 1)), bool(entry.get("estimated", False)))


class CachedSummarizer:
    """A summarizer that replays summaries from a file (see the module docstring)."""

    def __init__(self, path: str | os.PathLike | None = None, *, fallback: Any = None,
                 meta: Mapping[str, Any] | None = None, autosave: str | os.PathLike | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.fallback = fallback
        # where every new summary is saved at once (``local_summaries make``: an hour's run loses nothing)
        self.autosave = Path(autosave) if autosave is not None else None
        self.meta: dict[str, Any] = dict(meta or {})
        self.entries: dict[str, dict] = {}
        if self.path is not None and self.path.exists():
            self._load()
        elif self.path is not None and fallback is None:
            raise FileNotFoundError(f"{self.path}: no such summaries file")
        self.hits = self.misses = 0
        self.last_cost: SummaryCost | None = None

    @classmethod
    def smollm2(cls) -> CachedSummarizer:
        """SmolLM2-135M-Instruct's summaries of the vendored transcripts (``resources/summaries/smollm2.json``)."""
        return cls(SUMMARIES_DIR / "smollm2.json")

    @property
    def name(self) -> str:
        return self.path.name if self.path is not None else "in memory"

    def _load(self) -> None:
        assert self.path is not None
        data = read_summaries(self.path)
        self.entries = dict(data["summaries"])
        self.meta = {**{k: v for k, v in data.items() if k != "summaries"}, **self.meta}

    def __repr__(self) -> str:
        model = self.meta.get("model", "?")
        return f"CachedSummarizer({self.name}, model={model!r}, {len(self.entries)} summaries)"

    def __len__(self) -> int:
        return len(self.entries)

    def __bool__(self) -> bool:  # an empty cache is still a summarizer (``summarizer or default`` must keep it)
        return True

    def __contains__(self, excerpt: object) -> bool:
        return isinstance(excerpt, str) and excerpt_key(excerpt) in self.entries

    def __call__(self, excerpt: str) -> str:
        self.last_cost = None
        key = excerpt_key(excerpt)
        entry = self.entries.get(key)
        if entry is not None:
            self.hits += 1
            self.last_cost = _cost(entry)
            return entry["summary"]
        self.misses += 1
        if self.fallback is None:
            raise SummarizerError(f"no cached summary for this excerpt (sha256 {key[:12]}) in {self.name}")
        summary = self.fallback(excerpt)  # a failure propagates: nothing is kept
        cost = summary_cost(self.fallback)
        if not isinstance(summary, str) or not summary.strip():
            raise SummarizerError("the fallback summarizer returned no summary")
        self.entries[key] = {"summary": summary, **(cost.as_dict() if cost is not None else {"calls": 1})}
        self.last_cost = cost
        if self.autosave is not None:
            self.save(self.autosave)
        return summary

    def record(self, excerpt: str, summary: str, cost: SummaryCost | None = None) -> None:
        """Keep one summary (what a live summarizer made) under its excerpt's key."""
        self.entries[excerpt_key(excerpt)] = {"summary": summary,
                                              **(cost.as_dict() if cost is not None else {"calls": 1})}

    def save(self, path: str | os.PathLike | None = None) -> Path:
        """Write the file (meta, then the summaries sorted by key) atomically, merged with what is on disk.

        Under a lock on its folder: the file is read again, its summaries this cache does not
        hold are added to it (this cache's win for the same excerpt), and the union is written.
        """
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("an in-memory cache needs a path to be saved")
        target.parent.mkdir(parents=True, exist_ok=True)
        with locked(target):
            if os.path.lexists(target):
                on_disk = read_summaries(target)
                self.entries = {**on_disk["summaries"], **self.entries}
                self.meta = {**{k: v for k, v in on_disk.items() if k != "summaries"}, **self.meta}
            data = {**self.meta, "summaries": dict(sorted(self.entries.items()))}

            def dump(f: IO[bytes]) -> None:
                try:
                    f.write((json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
                except UnicodeEncodeError:  # a lone surrogate from a log: \uXXXX escapes read back the same
                    f.write((json.dumps(data, indent=1) + "\n").encode("ascii"))

            return write_atomic(target, dump)
