"""``sweep``: replay files or folders under a grid of budgets and policies, as a table or a file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..views.tables import text_table
from .common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    UsageError,
    comment,
    err,
    output_path,
    plural,
    pricing_named,
    print_json,
    records,
    say,
    summarizer_named,
    table_width,
)

SWEEP_COLUMNS = ("transcript", "policy", "budget", "keep_recent", "requests", "peak_request", "compactions",
                 "cumulative_input", "saving_share")
SWEEP_HEADERS = {"keep_recent": "keep", "peak_request": "peak", "compactions": "events",
                 "cumulative_input": "cumulative", "saving_share": "saving"}


def _sweep_rows(frame) -> list[dict]:
    rows = records(frame)
    for row in rows:
        share = row.get("saving_share")
        row["saving_share"] = "" if share is None else f"{share:.0%}"
    return rows


def _sweep_inputs(paths: Sequence[str]) -> None:
    """Every path given to ``sweep`` must be a file, or a folder holding transcript files."""
    from ..transcripts import iter_transcript_paths

    for path in paths:
        p = Path(path)
        if not p.exists():
            raise UsageError(f"{path}: no such file or folder")
        if p.is_dir() and next(iter(iter_transcript_paths(p)), None) is None:
            raise UsageError(f"{path}: no transcript files (*.json, *.jsonl, *.traj) in this folder")


def _write_csv_atomic(frame, path: str) -> None:
    """The table to ``path`` through a temporary file of its own, then one rename.

    Two sweeps given the same ``--csv`` each write their own temporary file, so
    ``path`` ends up holding exactly one whole table (the last to finish), never
    a mix, a half-written file or an error for the other.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            frame.to_csv(f, index=False)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _checked_policies(args) -> list[str]:
    """The ``--policies`` named, every one known; ``--keep-recent`` must apply to one of them."""
    from ..policies import POLICIES, accepts_option

    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown or not policies:
        raise UsageError(f"--policies: unknown policy {unknown[0] if unknown else args.policies!r}; known: "
                         f"{', '.join(sorted(POLICIES))}")
    if args.keep_recent and not any(accepts_option(p, "keep_recent") for p in policies):
        raise UsageError(f"option 'keep_recent' does not apply to any chosen policy ({', '.join(policies)})")
    return policies


def _check_outputs(args) -> None:
    """``--csv`` and ``--out`` can be written (``--out``: .csv or .parquet), found out before any work."""
    for option, path in (("--csv", args.csv), ("--out", args.out)):
        if path:
            output_path(option, path)
    if args.out and Path(args.out).suffix.lower() not in (".csv", ".parquet"):
        raise UsageError(f"--out {args.out}: must end in .csv or .parquet")


def _run_sweep(args, options: dict):
    """The sweep, in ``--jobs`` worker processes (its progress bar, on stderr, escapes the file names)."""
    from ..engine.sweep import sweep

    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs) as pool:
            return sweep(args.paths, executor=pool, workers=args.jobs, **options)
    return sweep(args.paths, **options)


def sweep_command(args) -> int:
    """Sweep, then print the summary table (``--json``: every column; ``--out``: rows streamed to a file)."""
    policies = _checked_policies(args)
    _sweep_inputs(args.paths)
    _check_outputs(args)
    progress = not args.no_progress  # the bar goes to stderr, the table to stdout
    options = dict(budgets=args.budgets, keep_recent=args.keep_recent, policies=policies,
                   summarizer=summarizer_named(args.summarizer), unit=args.unit, retention=args.retention,
                   progress=progress, strict=args.strict, out=args.out, pricing=pricing_named(args.pricing))
    result = _run_sweep(args, options)
    skipped = result.skipped if args.out else result.attrs["skipped"]
    for s in skipped:
        err(f"nanohermes-nb: skipped {s.transcript}: {s.reason}")
    code = EXIT_PROBLEMS if skipped else EXIT_OK
    width = table_width(args)
    if args.out:
        say(comment(f"{plural(result.rows, 'row')} from {plural(result.transcripts, 'transcript')} written to "
                    f"{args.out}" + (f"; {plural(len(skipped), 'file')} skipped" if skipped else ""), width))
        return code
    if args.csv:
        _write_csv_atomic(result, args.csv)
    if args.json:
        print_json(records(result))
        return code
    say(_sweep_table(args, result, width))
    return code


def _sweep_table(args, frame, width: int | None) -> list[str]:
    """The summary table with its legend above and the count (and what is not shown) below."""
    shown = list(frame.columns) if args.wide else list(SWEEP_COLUMNS + (("cost_usd",) if args.pricing else ()))
    lines, hidden = text_table(_sweep_rows(frame), shown, headers=SWEEP_HEADERS, shrink="transcript", width=width)
    more = len(frame.columns) - len(shown) + len(hidden)
    legend = comment(f"peak: largest request sent; events: compactions; cumulative: all requests summed; "
                     f"{args.unit}", width)
    where = f"written to {args.csv}" if args.csv else "--wide, --csv FILE or --json for them"
    tail = f"; {plural(more, 'more column')} ({where})" if more else ""
    return legend + lines + comment(f"{plural(len(frame), 'row')}{tail}", width)
