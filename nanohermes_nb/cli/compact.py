"""``compact``: one compaction of a transcript, its before/after table and the article's checklist."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..views.tables import text_table
from .common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    comment,
    given,
    load,
    output_path,
    plural,
    policy_options,
    print_json,
    say,
    summarizer_named,
    table_width,
    write_json_atomic,
)


def _describe(result) -> str:
    """What the compaction did, in one line, with the right plurals."""
    if not result.compacted:
        return f"no compaction: {result.reason}"
    how = "placeholder" if result.failure or not (result.note or "").startswith("[Earlier conversation summary]") \
        else "summary"
    text = (f"compacted: dropped {plural(result.dropped_count, 'message')} (1..{result.cut - 1}), cut at "
            f"{result.cut} (naive {result.naive_cut}), {how} inserted; {result.size_before:,} -> "
            f"{result.size_after:,}")
    if result.failure:
        text += f"; summarizer failed: {result.failure}"
    return text


def verify_all(result, profiles: Sequence[str]) -> list[dict]:
    """The article's checklist with the history-legality check run for each profile."""
    from ..context.metrics import verify_compaction

    legality, others = [], []
    for k, profile in enumerate(profiles):
        for c in verify_compaction(result, profile=profile):
            row = {"check": c.check, "ok": bool(c.result), "expectation": c.expectation, "detail": c.detail}
            if c.check == "history legality":
                legality.append({**row, "check": f"{c.check} ({profile})", "profile": profile})
            elif not k:  # the other checks do not depend on the profile
                others.append(row)
    return legality + others


def _verify_line(check: dict) -> str:
    """One checklist line that reads true: what holds when ok, what was found (and what was wanted) when not."""
    if check["ok"]:
        return f"ok   {check['check']}: {check['expectation']}" + (f" ({check['detail']})" if check["detail"] else "")
    return f"FAIL {check['check']}: {check['detail'] or 'not so'} (wanted: {check['expectation']})"


def _verify_footer(result, checks: list[dict]) -> list[str]:
    """The count, and why the exit code is 1 when it is."""
    failed = [c for c in checks if not c["ok"]]
    if not result.compacted:
        return ["nothing to verify: the history was not compacted, so exit 1 (--force compacts under the budget "
                "too)"]
    if not failed:
        return [f"{plural(len(checks), 'check')} passed"]
    lines = [f"{len(checks) - len(failed)} of {plural(len(checks), 'check')} passed; exit 1 for "
             + ", ".join(c["check"] for c in failed)]
    late = [c["profile"] for c in failed if c.get("profile") and "message 1: a system message after the start"
            in c["detail"]]
    if late:
        lines.append(f"the summary is a system message (the article's default), which {' and '.join(late)} "
                     "refuse after the start: --summary-role user puts it in a user message, --profile openai "
                     "checks OpenAI's rules only")
    return lines


def _compaction_lines(result, width: int | None) -> list[str]:
    """The before/after table (every input message and the summary), fitted to ``width``."""
    from ..context.display import compaction_rows
    from ..views.tables import COMPACTION_COLUMNS

    lines, hidden = text_table(compaction_rows(result), COMPACTION_COLUMNS, width=width,
                               shrink=("calls", "answers", "preview"), rule=True, missing="\u2013")
    if hidden:
        lines += comment(f"--wide shows {plural(len(hidden), 'more column')} ({', '.join(hidden)}) and whole "
                         "previews", width)
    return lines


def compact_command(args) -> int:
    from ..context.compaction import compact
    from ..context.history import PROFILES
    from ..engine.ledger import prepare

    if args.output:  # never the input itself (-o X, -o ./X, a link to X), a device node or a FIFO
        output_path("-o", args.output, [args.file])
    messages, notes = prepare(load(args.file))  # the same empty system message as the ledger
    options = given(**policy_options(args), budget=args.budget, summarizer=summarizer_named(args.summarizer))
    result = compact(messages, force=args.force, **options)  # compact's own defaults for what is not given
    checks = verify_all(result, [args.profile] if args.profile else list(PROFILES)) if args.verify else []
    failed = [c for c in checks if not c["ok"]]
    if args.output:
        write_json_atomic(args.output, result.messages, [args.file])
    if args.json:
        out: dict[str, Any] = {
            "compacted": result.compacted, "cut": result.cut, "naive_cut": result.naive_cut,
            "dropped": result.dropped_count, "note": result.note, "failure": result.failure,
            "size_before": result.size_before, "size_after": result.size_after,
            "reason": result.reason, "messages": len(result.messages), "notes": notes,
        }
        if args.verify:
            out["checks"] = checks
        print_json(out)
        return EXIT_PROBLEMS if failed else EXIT_OK
    width = table_width(args)
    for note in notes:
        say(comment(note, width))
    say([_describe(result)])
    if args.show:
        say(_compaction_lines(result, width))
    if args.verify:
        say(_verify_line(c) for c in checks)
        for line in _verify_footer(result, checks):
            say(comment(line, width))
    if args.output:
        say([f"wrote {plural(len(result.messages), 'message')} to {args.output}"])
    return EXIT_PROBLEMS if failed else EXIT_OK

