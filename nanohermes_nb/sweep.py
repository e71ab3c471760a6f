"""Sweep budgets, keep_recent and policies over many transcripts, cheaply.

Each message is serialized once per sweep, not once per request: the meters are
shared by every setting of a transcript and the replay keeps running sizes. The
totals of every row equal ``replay`` with the same settings.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .history import PROFILES
from .ledger import _start
from .policies import Policy
from .summarizers import Summarizer

__all__ = ["sweep", "compare_policies", "SWEEP_COLUMNS", "Progress"]

SWEEP_COLUMNS = ("transcript", "policy", "budget", "keep_recent", "unit", "messages")


class Progress:
    """A one-line progress bar on stderr (only when asked, or when stderr is a terminal)."""

    def __init__(self, total: int, label: str = "sweep", enabled: bool | None = None, stream=None) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.start = time.perf_counter()

    def step(self, what: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = time.perf_counter() - self.start
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s {what[:40]:<40}")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def _named(transcripts: Any) -> list[tuple[str, list]]:
    """(name, messages) pairs from paths, a folder, message lists, or a name -> messages dict."""
    if isinstance(transcripts, (str, os.PathLike)):
        transcripts = [transcripts]
    if isinstance(transcripts, Mapping):
        return [(str(k), list(v)) for k, v in transcripts.items()]
    out: list[tuple[str, list]] = []
    for k, item in enumerate(transcripts):
        if isinstance(item, (str, os.PathLike)):
            from .transcripts import load_transcript, load_transcripts

            p = Path(item)
            loaded = load_transcripts(p) if p.is_dir() else [load_transcript(p)]
            out.extend((Path(t.path).name, t) for t in loaded)
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            out.append((item[0], list(item[1])))
        else:
            name = getattr(item, "path", None)
            out.append((Path(name).name if name else f"transcript {k}", list(item)))
    return out


def sweep(
    transcripts: Any,
    *,
    budgets: Sequence[int] = (120_000,),
    keep_recent: Sequence[int] = (10,),
    summarizer: Summarizer | None = None,
    policies: Sequence["str | Policy"] = ("nanohermes",),
    unit: str = "bytes",
    tokens: Iterable[str] = (),
    profiles: Sequence[str] = PROFILES,
    retention: bool = False,
    progress: bool | None = False,
    summary_role: str = "system",
    excerpt_tool_calls: bool = False,
    cut: str = "forward",
):
    """One row per transcript x policy x budget x keep_recent with the replay totals.

    ``keep_recent`` varies the NanoHermes policy only; other policies keep their
    own constants and get one row per budget (``keep_recent`` left empty).
    ``retention`` (off by default: it reads every removed message) adds the
    retention score.
    """
    import pandas as pd

    named = _named(transcripts)
    tokens = tuple(tokens)
    rows = []
    bar = Progress(len(named), "sweep", progress)
    for name, messages in named:
        meters: dict = {}
        for pol in policies:
            pol_name = pol if isinstance(pol, str) else pol.name
            keeps = list(keep_recent) if pol_name == "nanohermes" and isinstance(pol, str) else [None]
            for budget in budgets:
                for keep in keeps:
                    run, notes, prepared, policy = _start(
                        messages, budget=budget, keep_recent=keep if keep is not None else 10,
                        summarizer=summarizer, unit=unit, policy=pol, tokens=tokens, profiles=profiles,
                        with_retention=retention, summary_role=summary_role,
                        excerpt_tool_calls=excerpt_tool_calls, cut=cut, meters=meters, rows=False)
                    totals = run.run()
                    row = {"transcript": name, "policy": policy.name, "budget": budget,
                           "keep_recent": keep, "unit": unit, "messages": len(prepared)}
                    row.update(totals.as_dict())
                    rows.append(row)
        bar.step(name)
    frame = pd.DataFrame(rows)
    if "keep_recent" in frame:
        frame["keep_recent"] = frame["keep_recent"].astype("Int64")
    return frame


def compare_policies(
    transcripts: Any,
    *,
    policies: Sequence["str | Policy"] | None = None,
    budget: int = 120_000,
    unit: str = "bytes",
    summarizer: Summarizer | None = None,
    tokens: Iterable[str] = (),
    progress: bool | None = False,
):
    """One row per policy: what it costs, what a cache could reuse, what it breaks, what it keeps.

    Every policy is triggered by the same ``budget`` in ``unit``; totals are summed
    over the transcripts (peaks are the maximum), the prefix reuse share is
    weighted by request bytes, problems count the transcripts × profiles where any
    request carried a problem, and retention is the mean over transcripts that
    had an event.
    """
    from .policies import POLICIES

    chosen = list(policies) if policies is not None else list(POLICIES)
    frame = sweep(transcripts, budgets=[budget], keep_recent=[10], summarizer=summarizer, policies=chosen,
                  unit=unit, tokens=tokens, retention=True, progress=progress)
    rows = []
    for name, g in frame.groupby("policy", sort=False):
        row = {
            "policy": name,
            "transcripts": len(g),
            "peak_request": int(g["peak_request"].max()),
            "events": int(g["compactions"].sum()),
            "ineffective_events": int(g["ineffective_compactions"].sum()),
            "summarizer_calls": int(g["summarizer_calls"].sum()),
            "cumulative_input": int(g["cumulative_input"].sum()),
            "saving_share": round(1 - g["cumulative_input"].sum() / g["cumulative_input_no_compaction"].sum(), 4),
            "prefix_reuse_share": round(g["prefix_reuse"].sum() / g["request_bytes"].sum(), 4),
        }
        for col in [c for c in g.columns if c.startswith("problems_")]:
            row[f"logs_with_{col}"] = int((g[col] > 0).sum())
        for col in [c for c in g.columns if c.startswith("cumulative_") and c not in
                    ("cumulative_input", "cumulative_input_no_compaction")]:
            row[col] = int(g[col].sum())
        scored = g["retention"].dropna()
        row["retention"] = round(float(scored.mean()), 4) if len(scored) else None
        rows.append(row)
    import pandas as pd

    out = pd.DataFrame(rows).set_index("policy")
    out.attrs.update(budget=budget, unit=unit)
    return out
