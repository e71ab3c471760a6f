"""``sweep``: replay files or folders under a grid of budgets and policies, as a table or a file.

``--out FILE`` (``--csv FILE`` is the same option) streams every row to a ``.csv`` or ``.parquet``
file, written atomically onto a new name or a regular file that is none of the inputs; ``--jobs``
is bounded (``parser.max_jobs``).
"""

from __future__ import annotations

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
    settings_named,
    summarizer_named,
    table_width,
)

SWEEP_COLUMNS = ("transcript", "policy", "budget", "keep_recent", "requests", "peak_request", "compactions",
                 "cumulative_input", "saving_share")
SWEEP_HEADERS = {"keep_recent": "keep", "peak_request": "peak", "compactions": "events",
                 "cumulative_input": "cumulative", "saving_share": "saving"}


def _sweep_rows(frame) -> list[dict]:
    from ..engine.modelbook import label_band
    from ..engine.whatif import round_to_band

    rows = records(frame)
    for row in rows:
        share = row.get("saving_share")
        row["saving_share"] = "" if share is None else f"{share:.0%}"
        band = label_band(row.get("pricing"))
        if band is not None:  # an agent log's dollars, from the cost model: no finer than its band (issue 33)
            cost = round_to_band(row.get("cost_usd"), band)
            row["cost_usd"] = "unpriced" if cost is None else f"{cost:g}"
    return rows


def _sweep_inputs(paths: Sequence[str]) -> None:
    """Every path given to ``sweep`` must be a file, or a folder holding transcript files."""
    from ..engine.grid import folder_paths

    for path in paths:
        p = Path(path)
        if not p.exists():
            raise UsageError(f"{path}: no such file or folder")
        if p.is_dir() and next(iter(folder_paths(p)), None) is None:
            raise UsageError(f"{path}: no transcript files (*.json, *.jsonl, *.traj) in this folder")


def _checked_policies(args) -> list | None:
    """The ``--policies`` named (the parser checked each name; None: the ``Settings`` policy);
    ``--keep-recent`` must apply to one of them."""
    from ..engine.settings import Settings
    from ..policies import accepts_option

    policies = list(args.policies) if args.policies else None
    chosen = policies if policies is not None else [Settings().policy]
    if args.keep_recent and not any(accepts_option(p, "keep_recent") for p in chosen):
        names = ", ".join(p if isinstance(p, str) else p.name for p in chosen)
        raise UsageError(f"option 'keep_recent' does not apply to any chosen policy ({names})")
    return policies


def _check_outputs(args) -> None:
    """``--out`` ends in .csv or .parquet and may be written (none of the inputs), found out before any work."""
    if not args.out:
        return
    output_path("--out", args.out, [p for p in args.paths if not Path(p).is_dir()])
    if Path(args.out).suffix.lower() not in (".csv", ".parquet"):
        raise UsageError(f"--out {args.out}: must end in .csv or .parquet")
    if args.json:
        raise UsageError("--json prints the rows and --out writes them: give one of the two")


def _run_sweep(args, settings, options: dict):
    """The sweep, in ``--jobs`` worker processes (its progress bar, on stderr, escapes the file names)."""
    from ..engine.sweep import sweep

    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs) as pool:
            return sweep(args.paths, settings, executor=pool, workers=args.jobs, **options)
    return sweep(args.paths, settings, **options)


def sweep_command(args) -> int:
    """Sweep, then print the summary table (``--json``: every column; ``--out``: rows streamed to a file)."""
    policies = _checked_policies(args)
    _sweep_inputs(args.paths)
    _check_outputs(args)
    progress = not args.no_progress  # the bar goes to stderr, the table to stdout
    settings = settings_named("sweep", summarizer=summarizer_named(args.summarizer), unit=args.unit,
                              retention=args.retention)
    options = dict(budgets=args.budgets, keep_recent=args.keep_recent, policies=policies, progress=progress,
                   strict=args.strict, out=args.out, pricing=pricing_named(args.pricing))
    result = _run_sweep(args, settings, options)
    skipped = result.skipped if args.out else result.attrs["skipped"]
    for s in skipped:
        err(f"nanohermes-nb: skipped {s.transcript}: {s.reason}")
    code = EXIT_PROBLEMS if skipped else EXIT_OK
    width = table_width(args)
    if args.out:
        say(comment(f"{plural(result.rows, 'row')} from {plural(result.transcripts, 'transcript')} written to "
                    f"{args.out}" + (f"; {plural(len(skipped), 'file')} skipped" if skipped else ""), width))
        return code
    if args.json:
        print_json(records(result))
        return code
    say(_sweep_table(args, result, width, settings.unit))
    return code


def _sweep_table(args, frame, width: int | None, unit: str) -> list[str]:
    """The summary table with its legend above and the count (and what is not shown) below."""
    shown = list(frame.columns) if args.wide else list(SWEEP_COLUMNS + (("cost_usd",) if args.pricing else ()))
    lines, hidden = text_table(_sweep_rows(frame), shown, headers=SWEEP_HEADERS, shrink="transcript", width=width)
    more = len(frame.columns) - len(shown) + len(hidden)
    legend = comment(f"peak: largest request sent; events: compactions; cumulative: all requests summed; "
                     f"{unit}", width)
    where = "--wide, --out FILE or --json for them"
    tail = f"; {plural(more, 'more column')} ({where})" if more else ""
    return legend + lines + comment(f"{plural(len(frame), 'row')}{tail}", width) + _priced_by(frame, width)


def _priced_by(frame, width: int | None) -> list[str]:
    """Which model priced the dollars (issue 33): the cost model for agent logs, the cost book for the rest."""
    if "pricing" not in frame.columns:
        return []
    from ..engine.modelbook import describe_pricing

    return comment("dollars: " + describe_pricing(list(frame["pricing"])), width)
