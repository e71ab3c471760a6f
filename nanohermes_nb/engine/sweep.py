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
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import sys
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..context.history import PROFILES
from ..policies import Policy, accepts_option, resolve_policy
from ..transcripts.base import printable
from .columns import dtype_of, total_columns
from .frames import frame as text_frame
from .ledger import Replay, Totals
from .pricing import Pricing, get_pricing
from .recorded import Context, RecordedSession
from .settings import Settings, check_settings

__all__ = ["sweep", "compare_policies", "SWEEP_COLUMNS", "Progress", "SweepReport", "Skipped", "sweep_columns"]

SWEEP_COLUMNS = ("transcript", "policy", "options", "budget", "keep_recent", "unit", "messages")


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
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s {printable(what[:40]):<40}")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


@dataclass(frozen=True)
class Skipped:
    """A transcript the sweep could not load, and why (one line)."""

    transcript: str
    reason: str


@dataclass(frozen=True)
class SweepReport:
    """What a sweep streamed to a file: where, how many rows, and what was skipped."""

    path: str
    rows: int
    transcripts: int
    skipped: list = field(default_factory=list)


@dataclass(frozen=True)
class _Source:
    name: str
    path: str | None = None
    messages: Any = None


@dataclass(frozen=True)
class _Setting:
    policy: Policy
    budget: int
    keep_recent: int | None


@dataclass(frozen=True)
class _Job:
    """Everything a worker needs for one transcript (picklable): the grid over one base ``Settings``."""

    grid: tuple  # of _Setting
    base: Settings
    pricings: tuple = ()  # one row per setting and pricing (none: no cost columns)


def _sources(transcripts: Any) -> list[_Source]:
    """Paths, folders, message lists, (name, messages) pairs or a name -> messages mapping."""
    from ..transcripts import iter_transcript_paths
    from ..transcripts.base import Transcript

    if isinstance(transcripts, (str, os.PathLike)):
        transcripts = [transcripts]
    if isinstance(transcripts, Mapping):
        return [_Source(str(k), messages=v if isinstance(v, RecordedSession) else list(v))
                for k, v in transcripts.items()]
    out: list[_Source] = []
    for k, item in enumerate(transcripts):
        if isinstance(item, (str, os.PathLike)):
            p = Path(item)
            paths = iter_transcript_paths(p) if p.is_dir() else [p]
            out.extend(_Source(Path(x).name, path=str(x)) for x in paths)
        elif isinstance(item, RecordedSession):
            out.append(_Source(f"transcript {k}", messages=item))
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            out.append(_Source(item[0], messages=item[1]))
        else:
            name = item.path if isinstance(item, Transcript) else None
            out.append(_Source(Path(name).name if name else f"transcript {k}", messages=item))
    return out


def _grid(policies: Sequence[Any], budgets: Sequence[int], keep_recent: Sequence[int] | None) -> tuple:
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
                settings.append(_Setting(pol, budget, pol.option("keep_recent")))
    return tuple(settings)


def sweep_columns(profiles: Sequence[str] = PROFILES, tokens: Sequence[str] = (), prefix_reuse: bool = True,
                  pricing: bool = False, needed_later: bool = False) -> list:
    """The columns of a sweep's rows, in order (fixed before any row exists, for streaming)."""
    totals = total_columns(profiles, tokens, prefix_reuse, needed_later, pricing)
    return list(SWEEP_COLUMNS) + [c.name for c in totals]


def _load(source: _Source) -> list:
    if source.path is None:
        return source.messages
    from ..transcripts import load_transcript

    return load_transcript(source.path)


def _sweep_one(source: _Source, job: _Job) -> tuple[str, list | Skipped]:
    """The rows of one transcript under every setting (runs in a worker; loads the file there)."""
    from ..transcripts import TranscriptError

    try:
        messages = _load(source)
    except (TranscriptError, OSError) as exc:
        return source.name, Skipped(source.name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    session = messages if isinstance(messages, RecordedSession) else RecordedSession.of(messages)
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
            label = s.policy.label
            row = {"transcript": source.name, "policy": s.policy.name,
                   "options": label[len(s.policy.name) + 1:-1] if label != s.policy.name else "",
                   "budget": s.budget, "keep_recent": s.keep_recent, "unit": base.unit,
                   "messages": len(session.messages)}
            row.update(totals.as_dict(prefix_reuse=base.prefix_reuse))
            rows.append(row)
    return source.name, rows


def _weight(src: _Source) -> int:
    """How long a transcript will take, roughly: its size on disk (or its length in messages)."""
    if src.path is None:
        return len(src.messages) if src.messages is not None else 0
    try:
        return os.stat(src.path).st_size
    except OSError:  # a path only the workers can see
        return 0


def _results(sources: list[_Source], job: _Job, executor: Any, window: int) -> Iterator[tuple[str, list | Skipped]]:
    """Each transcript's rows in the given order; at most ``window`` transcripts in flight.

    The first ``window`` transcripts are submitted largest first, so the longest one does not start last
    and leave the other workers idle at the end; rows are still yielded in the order given.
    """
    if executor is None:
        for src in sources:
            yield _sweep_one(src, job)
        return
    # a measured session does not travel (its meters hold functions): the worker measures the messages again
    it = (_Source(src.name, messages=src.messages.messages) if isinstance(src.messages, RecordedSession) else src
          for src in sources)
    first = list(itertools.islice(it, window))
    futures: dict[int, Any] = {}
    for k in sorted(range(len(first)), key=lambda k: -_weight(first[k])):
        futures[k] = executor.submit(_sweep_one, first[k], job)
    pending: deque = deque(futures[k] for k in range(len(first)))
    while pending:
        done = pending.popleft().result()
        nxt = next(it, None)
        if nxt is not None:
            pending.append(executor.submit(_sweep_one, nxt, job))
        yield done


class _Sink:
    """Where rows go: a list (a DataFrame at the end) or a CSV / Parquet file written as they come."""

    def __init__(self, out: str | os.PathLike | None, columns: list[str]) -> None:
        self.columns, self.count = columns, 0
        self.rows: list[dict] = []
        self.path = None if out is None else Path(out)
        self._writer: Any = None  # a csv.DictWriter or a pyarrow ParquetWriter, opened with the first rows
        if self.path is not None:
            suffix = self.path.suffix.lower()
            if suffix not in (".csv", ".parquet"):
                raise ValueError(f"out must end in .csv or .parquet, got {self.path.name!r}")
            self.tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
            self.kind = suffix[1:]

    def add(self, rows: list[dict]) -> None:
        self.count += len(rows)
        if self.path is None:
            self.rows.extend(rows)
        elif rows:
            self._write(rows)

    def _write(self, rows: list[dict]) -> None:
        if self.kind == "csv":
            import csv

            new = self._writer is None
            if new:
                self._file = self.tmp.open("w", newline="", encoding="utf-8")
                self._writer = csv.DictWriter(self._file, fieldnames=self.columns, extrasaction="ignore")
                self._writer.writeheader()
            self._writer.writerows(rows)
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(rows, schema=_arrow_schema(self.columns))
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.tmp, table.schema)
        self._writer.write_table(table)

    def close(self, ok: bool) -> None:
        if self.path is None:
            return
        if self._writer is None and ok:  # no rows at all: still a valid, empty file
            if self.kind == "csv":
                self.tmp.write_text(",".join(self.columns) + "\n", encoding="utf-8")
            else:
                import pyarrow.parquet as pq

                pq.write_table(_arrow_schema(self.columns).empty_table(), self.tmp)
        elif self._writer is not None:
            (self._file if self.kind == "csv" else self._writer).close()
        if ok:
            os.replace(self.tmp, self.path)
        else:
            self.tmp.unlink(missing_ok=True)


def _arrow_schema(columns: list[str]):
    import pyarrow as pa

    types = {"str": pa.string(), "float": pa.float64(), "int": pa.int64(), "bool": pa.bool_()}
    text = {"transcript", "policy", "options", "unit"}  # the sweep's own columns that are text
    return pa.schema([(c, pa.string() if c in text else types[dtype_of(c)]) for c in columns])


def _pricings(pricing: Any) -> tuple:
    """No pricing, one (a preset name or a ``Pricing``) or several, as a tuple of ``Pricing``."""
    if pricing is None:
        return ()
    if isinstance(pricing, (str, Pricing)):
        return (get_pricing(pricing),)
    return tuple(get_pricing(p) for p in pricing)


def sweep(
    transcripts: Any,
    settings: Settings | None = None,
    *,
    budgets: Sequence[int] | None = None,
    policies: Sequence[str | type[Policy] | Policy] | None = None,
    keep_recent: Sequence[int] | None = None,
    pricing: str | Pricing | Sequence[str | Pricing] | None = None,
    progress: bool | None = False,
    executor: Any = None,
    workers: int | None = None,
    out: str | os.PathLike | None = None,
    strict: bool = False,
    window: int | None = None,
    summarizers: Mapping[str, Any] | None = None,
    **changes: Any,
):
    """One row per transcript x policy x budget (x keep_recent) with the replay totals.

    ``summarizers`` (issue 27): a mapping name -> summarizer; the sweep runs once
    per summarizer and its rows start with a ``summarizer`` column naming it (e.g.
    ``{"extractive": ExtractiveSummarizer(), "smollm2": CachedSummarizer.smollm2()}``).

    ``transcripts``: files, folders, message lists, ``(name, messages)`` pairs or
    a mapping. The grid is over one base ``settings`` (default ``Settings()``;
    keyword ``changes`` are its fields, e.g. ``unit="o200k"``): ``budgets``
    (default: the base budget), ``policies`` (default: the base policy; configure
    a policy's options on its instance) and ``keep_recent``, which varies the
    policies that have that option (others get one row per budget,
    ``keep_recent`` empty; ``TypeError`` when no chosen policy has it).
    ``executor``: any ``concurrent.futures.Executor`` (rows identical to the
    in-process sweep) with ``workers`` its number of workers (default: the CPU
    count); ``window`` caps the transcripts submitted and not yet yielded
    (default 16 per worker: a result is a few rows, so the cap is about idle
    workers, not memory).
    ``out``: a ``.csv`` or ``.parquet`` file the rows stream to (written
    atomically); a ``SweepReport`` is returned instead of a DataFrame. A file that
    cannot be loaded is skipped and listed (``frame.attrs["skipped"]`` or
    ``report.skipped``); ``strict=True`` raises at the first instead.
    ``transcripts`` may also hold ``RecordedSession`` objects (their measured
    sizes and tokens are reused in process; an executor gets their messages).
    ``pricing`` (a preset name or a ``Pricing``, or a list of them: one row per
    pricing, named in the ``pricing`` column) adds the cost columns (``cost_usd``,
    ``cost_usd_no_compaction``, ``cache_hit_rate``, tokens), so the cheapest
    setting can be asked in dollars; ``needed_later=True`` adds the needed-later
    retention beside ``retention``.
    """
    if summarizers is not None:
        if out is not None:
            raise ValueError("sweep(summarizers=...) returns a frame; stream one summarizer at a time with out=")
        return _per_summarizer(lambda s: sweep(
            transcripts, settings, budgets=budgets, policies=policies, keep_recent=keep_recent, pricing=pricing,
            progress=progress, executor=executor, workers=workers, strict=strict, window=window,
            **{**changes, "summarizer": s}), summarizers)
    base = Settings.of(settings, "sweep", **changes)
    sources = _sources(transcripts)
    chosen = list(policies) if policies is not None else [base.policy]
    budget_list = list(budgets) if budgets is not None else [base.budget]
    grid = _grid(chosen, budget_list, keep_recent)
    check_settings(base.unit, base.tokens, base.profiles, budget_list)
    pricings = _pricings(pricing) if pricing is not None else _pricings(base.pricing)
    base = dataclasses.replace(base, pricing=None)
    job = _Job(grid, base, pricings)
    columns = sweep_columns(base.profiles, base.tokens, base.prefix_reuse, bool(pricings), base.needed_later)
    sink = _Sink(out, columns)
    skipped: list[Skipped] = []
    bar = Progress(len(sources), "sweep", progress)
    window = window or max(2, 16 * (workers or os.cpu_count() or 2))
    ok = False
    try:
        for name, result in _results(sources, job, executor, window):
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
    if out is not None:
        return SweepReport(str(out), sink.count, len(sources) - len(skipped), skipped)

    frame = text_frame(sink.rows, columns)
    frame["keep_recent"] = frame["keep_recent"].astype("Int64")
    frame["retention"] = frame["retention"].astype("float64")  # None (no event) reads as NaN, as in a file
    if base.needed_later:
        frame["needed_later"] = frame["needed_later"].astype("float64")
    frame.attrs["skipped"] = skipped
    return frame


def compare_policies(
    transcripts: Any,
    settings: Settings | None = None,
    *,
    policies: Sequence[str | type[Policy] | Policy] | None = None,
    progress: bool | None = False,
    executor: Any = None,
    workers: int | None = None,
    summarizers: Mapping[str, Any] | None = None,
    **changes: Any,
):
    """One row per policy: what it costs, what a cache could reuse, what it breaks, what it keeps.

    ``summarizers`` (issue 27): a mapping name -> summarizer; one row per summarizer
    and policy, indexed by both (``frame.loc["smollm2"]``).

    Every policy is triggered by the same ``settings`` (default ``Settings()``;
    keyword ``changes`` are its fields); ``policies`` defaults to every policy in
    ``POLICIES``. Totals are summed over the transcripts (peaks are the maximum),
    the prefix reuse share is weighted by request bytes, problems count the
    transcripts x profiles where any request carried a problem, and retention is
    the mean over transcripts that had an event. With ``needed_later=True``, the
    needed-later retention pooled over every event (kept / needed identifiers);
    with ``pricing``, dollars with and without compaction (summed) and the
    cache-hit rate (weighted by tokens).

    Agent logs add a row per tool (``claude_code``, ``codex_cli``): its own compactions read from the
    log, with the tokens reported around them (``whatif.recorded_tool_rows``; ``attrs["tool_events"]``).
    """
    from ..policies import POLICIES

    if summarizers is not None:
        return _per_summarizer(lambda s: compare_policies(
            transcripts, settings, policies=policies, progress=progress, executor=executor, workers=workers,
            **{**changes, "summarizer": s}).reset_index(), summarizers).set_index(["summarizer", "policy"])
    base = Settings.of(settings, "compare_policies", **changes)
    chosen = list(policies) if policies is not None else list(POLICIES)
    frame = sweep(transcripts, base, policies=chosen, progress=progress, executor=executor, workers=workers)
    needed_later = base.needed_later
    pricing = base.pricing if isinstance(base.pricing, Pricing) else None  # Settings resolved it
    rows: list[dict] = []
    for label, g in frame.groupby(frame["policy"] + frame["options"].map(lambda o: f"({o})" if o else ""),
                                  sort=False):
        row = {
            "policy": label,
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
        if needed_later:
            items = g["needed_later_items"].sum()
            kept = (g["needed_later"].fillna(0) * g["needed_later_items"]).sum()
            row["needed_later"] = round(float(kept / items), 4) if items else None
            row["needed_later_items"] = int(items)
        if pricing is not None:
            row["cost_usd"] = float(g["cost_usd"].sum())
            row["cost_usd_no_compaction"] = float(g["cost_usd_no_compaction"].sum())
            row["summarizer_cost_usd"] = float(g["summarizer_cost_usd"].sum())
            row["cache_hit_rate"] = round(float(g["cached_tokens"].sum() / g["input_tokens"].sum()), 4) \
                if g["input_tokens"].sum() else 0.0
        rows.append(row)

    out = text_frame(rows).set_index("policy")
    from .whatif import TOOL_EVENT_COLUMNS, recorded_tool_rows, with_tool_rows

    tools, tool_events = recorded_tool_rows([(s.name, s.path or s.messages) for s in _sources(transcripts)],
                                            needed_later)
    out = with_tool_rows(out, tools)
    out.attrs.update(budget=base.budget, unit=base.unit, skipped=frame.attrs.get("skipped", []),
                     pricing=None if pricing is None else pricing.name,
                     # plain records, not a frame: pandas compares attrs when frames are stacked
                     tool_events=[{c: e.get(c) for c in TOOL_EVENT_COLUMNS} for e in tool_events])
    return out


def _per_summarizer(run: Any, summarizers: Mapping[str, Any]) -> Any:
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
