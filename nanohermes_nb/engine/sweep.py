"""Sweep budgets, keep_recent and policies over many transcripts: on one core, many, or a cluster.

A sweep is sharded by transcript. Each transcript is loaded once (in the worker,
when a path is given), cut into requests once, and every message measured once;
all the settings of that transcript then replay against those prefix sums, and
the loop visits only the requests where a policy acts; settings whose budget
the transcript never exceeds share one replay. Rows come back in the
order the transcripts were given, whatever the executor, and can stream to a
CSV or Parquet file so that a sweep over thousands of transcripts never holds
all rows or all transcripts in memory.

Any ``concurrent.futures.Executor`` works (``ProcessPoolExecutor`` for every
core, a Dask ``client.get_executor()`` for a cluster); what travels to a worker
is a path and the settings, never a message list that could be read there.

The parts live beside this module: ``grid`` (the transcripts, the grid of settings,
the rows of one transcript), ``running`` (executors, order, progress), ``sinks``
(rows to a DataFrame or a file) and ``compare`` (``compare_policies``, the sweep
summed per policy); every name of ``__all__`` still imports from here.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..policies import Policy
from .frames import frame as text_frame
from .grid import SWEEP_COLUMNS, Job, Skipped, grid_of, pricings_of, sources_of, sweep_columns
from .pricing import Pricing
from .running import Progress, default_window, results
from .settings import Settings, check_settings
from .sinks import Sink, SweepReport

# compare_policies loads from compare.py on first use (the __getattr__ at the end)
__all__ = ["sweep", "SWEEP_COLUMNS", "Progress", "SweepReport", "Skipped", "sweep_columns"]


def sweep(transcripts: Any, settings: Settings | None = None, *, budgets: Sequence[int] | None = None,
          policies: Sequence[str | type[Policy] | Policy] | None = None, keep_recent: Sequence[int] | None = None,
          pricing: str | Pricing | Sequence[str | Pricing] | None = None, progress: bool | None = False,
          executor: Any = None, workers: int | None = None, out: str | os.PathLike | None = None,
          strict: bool = False, window: int | None = None, summarizers: Mapping[str, Any] | None = None,
          **changes: Any):
    """One row per transcript x policy x budget (x keep_recent) with the replay totals.

    ``transcripts``: files, folders, message lists, ``(name, messages)`` pairs or
    a mapping; also ``RecordedSession`` objects (their measured sizes and tokens
    are reused in process; an executor gets their messages).
    The grid is over one base ``settings`` (default ``Settings()``; keyword
    ``changes`` are its fields, e.g. ``unit="o200k"``): ``budgets`` (default: the
    base budget), ``policies`` (default: the base policy; configure a policy's
    options on its instance) and ``keep_recent``, which varies the policies that
    have that option (others get one row per budget, ``keep_recent`` empty;
    ``TypeError`` when no chosen policy has it).
    ``pricing`` (a preset name or a ``Pricing``, or a list of them: one row per
    pricing, named in the ``pricing`` column) adds the cost columns (``cost_usd``,
    ``cost_usd_no_compaction``, ``cache_hit_rate``, tokens), so the cheapest
    setting can be asked in dollars; ``needed_later=True`` adds the needed-later
    retention beside ``retention``; ``probes=True`` the probe survival per category (issue 36:
    ``probe_items``, ``probe_survival``, ``probe_kept`` ... ``probe_file``, ``probe_file_items`` ...).
    ``executor``: any ``concurrent.futures.Executor`` (rows identical to the
    in-process sweep) with ``workers`` its number of workers (default: the CPU
    count); ``window`` caps the transcripts submitted and not yet yielded
    (default 16 per worker: a result is a few rows, so the cap is about idle
    workers, not memory).
    ``out``: a ``.csv`` or ``.parquet`` file the rows stream to (written
    atomically); a ``SweepReport`` is returned instead of a DataFrame. A file that
    cannot be loaded is skipped and listed (``frame.attrs["skipped"]`` or
    ``report.skipped``); ``strict=True`` raises at the first instead.
    ``summarizers`` (issue 27): a mapping name -> summarizer; the sweep runs once
    per summarizer and its rows start with a ``summarizer`` column naming it (e.g.
    ``{"extractive": ExtractiveSummarizer(), "smollm2": CachedSummarizer.smollm2()}``).
    """
    if summarizers is not None:
        if out is not None:
            raise ValueError("sweep(summarizers=...) returns a frame; stream one summarizer at a time with out=")
        return per_summarizer(lambda s: sweep(
            transcripts, settings, budgets=budgets, policies=policies, keep_recent=keep_recent, pricing=pricing,
            progress=progress, executor=executor, workers=workers, strict=strict, window=window,
            **{**changes, "summarizer": s}), summarizers)
    base = Settings.of(settings, "sweep", **changes)
    sources = sources_of(transcripts)
    job = _job(base, policies, budgets, keep_recent, pricing)
    columns = sweep_columns(job.base.profiles, job.base.tokens, job.base.prefix_reuse, bool(job.pricings),
                            job.base.needed_later, job.base.probes)
    sink = Sink(out, columns, [s.path for s in sources if s.path is not None])
    bar = Progress(len(sources), "sweep", progress)
    skipped = _fill(sink, results(sources, job, executor, window or default_window(workers)), bar, strict)
    if out is not None:
        return SweepReport(str(out), sink.count, len(sources) - len(skipped), skipped)
    return _frame(sink.rows, columns, job.base.needed_later, skipped)


def _job(base: Settings, policies: Sequence[Any] | None, budgets: Sequence[int] | None,
         keep_recent: Sequence[int] | None, pricing: Any) -> Job:
    """The grid over the base settings, checked, with its pricings (the base's own, unless ``pricing`` is given)."""
    chosen = list(policies) if policies is not None else [base.policy]
    budget_list = list(budgets) if budgets is not None else [base.budget]
    grid = grid_of(chosen, budget_list, keep_recent)
    check_settings(base.unit, base.tokens, base.profiles, budget_list)
    pricings = pricings_of(pricing if pricing is not None else base.pricing)
    return Job(grid, dataclasses.replace(base, pricing=None), pricings)


def _fill(sink: Sink, transcripts: Any, bar: Progress, strict: bool) -> list[Skipped]:
    """Each transcript's rows into ``sink`` as they come; the ones that could not be loaded (``strict``: raised).

    The sink is closed either way: a file is renamed into place only when every transcript came back.
    """
    skipped: list[Skipped] = []
    ok = False
    try:
        for name, result in transcripts:
            if isinstance(result, Skipped):
                if strict:
                    from ..transcripts import TranscriptError

                    raise TranscriptError(result.transcript, "", result.reason)
                skipped.append(result)
            else:
                sink.add(result)
            bar.step(name)
        ok = True
    finally:
        sink.close(ok)
    return skipped


def _frame(rows: list[dict], columns: list[str], needed_later: bool, skipped: list[Skipped]):
    """The rows as a DataFrame typed as they read back from a file, the skipped transcripts in its attrs."""
    frame = text_frame(rows, columns)
    frame["keep_recent"] = frame["keep_recent"].astype("Int64")
    frame["retention"] = frame["retention"].astype("float64")  # None (no event) reads as NaN, as in a file
    if needed_later:
        frame["needed_later"] = frame["needed_later"].astype("float64")
    for c in columns:  # issue 36: a share is None when there was no probe; NaN, as read back from a file
        if c.startswith("probe_") and not c.endswith("_items"):
            frame[c] = frame[c].astype("float64")
    frame.attrs["skipped"] = skipped
    return frame


def per_summarizer(run: Any, summarizers: Mapping[str, Any]) -> Any:
    """``run(summarizer)`` for each named summarizer, the frames stacked under a first ``summarizer`` column.

    Issue 27's real summaries beside the extractive ones, with the least change to the sweep: each
    summarizer is one ordinary run over the same settings.
    """
    import pandas as pd

    if not isinstance(summarizers, Mapping) or not summarizers:
        raise TypeError("summarizers must be a non-empty mapping of name -> summarizer")
    frames = []
    skipped: list = []
    for name, summarizer in summarizers.items():
        frame = run(summarizer)
        skipped += frame.attrs.get("skipped", [])
        frame.insert(0, "summarizer", str(name))
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({**frames[0].attrs, "skipped": skipped})
    return out
