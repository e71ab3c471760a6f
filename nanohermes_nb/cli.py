"""``nanohermes-nb``: the ledger, the history check, one compaction, and sweeps, from a shell.

Any unreadable or malformed input exits 2 with one line naming the file and where
it broke; never a traceback. Text output is made for a terminal: tables fit
``WIDTH`` (100) columns with a one-line legend, counts are spelled with the right
plural, and a character the terminal cannot encode is printed as an escape
instead of failing. ``--json`` (and ``--wide``, ``--csv``) give everything.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["main", "write_json_atomic", "text_table", "plural", "WIDTH"]

EXIT_OK, EXIT_PROBLEMS, EXIT_BAD_INPUT = 0, 1, 2
WIDTH = 100  # columns of the default text output


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like bad input
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _int_list(text: str) -> list[int]:
    try:
        values = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected non-negative integers, got {text!r}")
    return values


def _positive(text: str) -> int:
    value = _nonneg(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _nonneg(text: str) -> int:
    values = _int_list(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"expected one integer, got {text!r}")
    return values[0]


def write_json_atomic(path: str | os.PathLike, data: Any) -> None:
    """Write JSON to a temporary file beside ``path`` and rename it: never half-written."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------- text for a terminal


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 event``, ``2 events``, ``1,500 requests``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def _cell(value: Any) -> str:
    """A table cell: integers with thousands separators, blanks for missing values and False."""
    if value is None or value is False:
        return ""
    if value is True:
        return "yes"
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        value = value.item()
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:,.4g}"
    text = str(value)
    return "" if text in ("<NA>", "nan", "NaT") else text


def _numeric(cells: Sequence[str]) -> bool:
    return all(not c or c.replace(",", "").replace(".", "").replace("-", "").replace("%", "").isdigit()
               for c in cells)


def text_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *, headers: Mapping[str, str] | None = None,
               width: int | None = WIDTH, shrink: str | None = None) -> tuple[list[str], list[str]]:
    """Rows as fixed-width text lines, and the columns left out to fit ``width``.

    Columns are taken in order while they fit; ``shrink`` names a text column that is
    cut (with an ellipsis, down to 12 characters) before any column is left out.
    Numbers are right-aligned, text left-aligned, one space between columns.
    """
    headers = dict(headers or {})
    cells = {c: [_cell(r.get(c)) for r in rows] for c in columns}
    widths = {c: max([len(headers.get(c, c))] + [len(x) for x in cells[c]]) for c in columns}
    shown = list(columns)
    if width is not None:
        def total(cols):
            return sum(widths[c] for c in cols) + max(len(cols) - 1, 0)

        if shrink in widths and total(shown) > width:
            widths[shrink] = max(12, len(headers.get(shrink, shrink)), widths[shrink] - (total(shown) - width))
        while len(shown) > 1 and total(shown) > width:
            shown.pop()
    right = {c: _numeric(cells[c]) for c in shown}

    def fit(text: str, c: str) -> str:
        if len(text) > widths[c]:
            text = text[: widths[c] - 1] + "\u2026"
        return text.rjust(widths[c]) if right[c] else text.ljust(widths[c])

    lines = [" ".join(fit(headers.get(c, c), c) for c in shown).rstrip()]
    lines += [" ".join(fit(cells[c][i], c) for c in shown).rstrip() for i in range(len(rows))]
    return lines, [c for c in columns if c not in shown]


def _comment(text: str, width: int = WIDTH) -> list[str]:
    """``# text`` wrapped to ``width`` columns."""
    return ["# " + line for line in textwrap.wrap(text, width - 2, break_on_hyphens=False)] or ["#"]


def _say(lines: Iterable[str]) -> None:
    for line in lines:
        print(line)


def _plain(value: Any) -> Any:
    """A JSON-ready value: numpy scalars unwrapped, NaN and NA as null."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return None if str(value) in ("<NA>", "NaT") else str(value)


def _records(frame) -> list[dict]:
    """JSON-ready rows of a DataFrame, or of a list of row dicts (what the ledger gives without pandas)."""
    rows = frame if isinstance(frame, list) else frame.to_dict(orient="records")
    return [{str(k): _plain(v) for k, v in row.items()} for row in rows]


def _print_json(data: Any) -> None:
    """JSON on stdout, as UTF-8 text when the stream can carry it, else with ``\\uXXXX`` escapes.

    A lone surrogate (``"\\ud800"`` in a log) or a non-UTF-8 terminal then still gets
    valid JSON that reads back to the same strings.
    """
    data = _plain(data)
    text = json.dumps(data, ensure_ascii=False)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(data, ensure_ascii=True)
    print(text)


def _tolerant_streams() -> None:
    """Never fail on a character the terminal cannot encode: print it as a backslash escape."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a detached or exotic stream
                pass


def _summarizer(name: str):
    from .context.summarizers import ExtractiveSummarizer, PlaceholderSummarizer

    if name == "extractive":
        return ExtractiveSummarizer()
    if name == "placeholder":
        return PlaceholderSummarizer()
    from .agent.models import ENV_BASE_URL, OpenAICompatibleSummarizer  # httpx: only when an LLM is asked for
    from .agent.transport import TransportError
    from .context.summarizers import SummarizerError

    try:
        llm = OpenAICompatibleSummarizer.from_env()
    except (SummarizerError, TransportError, ValueError) as exc:  # a bad key or URL: one line, the key never shown
        raise _Usage(f"--summarizer llm: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if llm is None:
        raise _Usage(f"--summarizer llm needs {ENV_BASE_URL} to be set")
    return llm


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--budget", type=_nonneg, default=120_000, help="session budget (default 120000)")
    p.add_argument("--keep-recent", type=_nonneg, help="messages kept after compaction (NanoHermes; default 10)")
    p.add_argument("--summarizer", choices=("extractive", "llm", "placeholder"), default="extractive",
                   help="extractive (offline, default), llm (NANOHERMES_LLM_* env), placeholder")
    p.add_argument("--summary-role", choices=("system", "user"), help="role of the summary message (default system)")
    p.add_argument("--cut", choices=("forward", "backward"), help="move the cut forward (default) or backward")
    p.add_argument("--excerpt-tool-calls", action="store_true", default=None,
                   help="put name(arguments) in the excerpt")


class _Usage(Exception):
    """Options that do not go together (one line, exit 2)."""


def _policy(name: str, options: dict):
    """The configured policy, or a one-line error naming the option it does not have."""
    from .policies import resolve_policy

    try:
        return resolve_policy(name, **options)
    except (TypeError, ValueError) as exc:
        raise _Usage(str(exc)) from None


def _options(args) -> dict:
    """The policy options given on the command line (None: not given, the policy's own default)."""
    return {"keep_recent": args.keep_recent, "summary_role": args.summary_role, "cut": args.cut,
            "excerpt_tool_calls": args.excerpt_tool_calls}


def build_parser() -> argparse.ArgumentParser:
    from .context.history import PROFILES
    from .context.sizing import UNITS
    from .policies import POLICIES

    parser = _Parser(prog="nanohermes-nb", description="Replay, check and compact agent transcripts.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("ledger", help="replay a transcript and print one row per model request")
    p.add_argument("file")
    _common(p)
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--policy", choices=sorted(POLICIES), default="nanohermes")
    p.add_argument("--by-turn", action="store_true", help="print the per-turn table instead")
    p.add_argument("--wide", action="store_true", help=f"every column, however wide (default: fit {WIDTH} columns)")
    p.add_argument("--json", action="store_true", help="every column as a JSON list of rows")
    p.add_argument("--pricing", metavar="NAME", help="add tokens and dollars under a preset of data/pricing.csv")

    p = sub.add_parser("check", help="exit 0 if the history is legal, 1 with one line per problem")
    p.add_argument("file")
    p.add_argument("--profile", choices=PROFILES, default="openai")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("compact", help="compact a transcript once, as one context")
    p.add_argument("file")
    _common(p)
    p.add_argument("--force", action="store_true", help="compact even under the budget (/compact)")
    p.add_argument("-o", "--output", help="write the compacted message list here (JSON)")
    p.add_argument("--show", action="store_true", help="print the before/after table")
    p.add_argument("--verify", action="store_true",
                   help="run the article's checklist; exit 1 when a check fails")
    p.add_argument("--profile", choices=PROFILES, default=None,
                   help="the provider whose history rules --verify applies (default: every one)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("sweep", help="replay files or folders under many settings")
    p.add_argument("paths", nargs="+")
    p.add_argument("--budgets", type=_int_list, default=[120_000])
    p.add_argument("--keep-recent", type=_int_list, help="values for the policies that keep recent messages")
    p.add_argument("--policies", default="nanohermes", help="comma-separated policy names")
    p.add_argument("--jobs", type=_positive, default=1, help="worker processes (one transcript each at a time)")
    p.add_argument("--out", help="stream every row to this .csv or .parquet file (for very large sweeps)")
    p.add_argument("--strict", action="store_true", help="stop at the first file that cannot be loaded")
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--summarizer", choices=("extractive", "llm", "placeholder"), default="extractive")
    p.add_argument("--retention", action=argparse.BooleanOptionalAction, default=True,
                   help="the retention score at each event (on by default, as in every replay)")
    p.add_argument("--csv", help="write the full table (every column) to this CSV file")
    p.add_argument("--json", action="store_true", help="print the full table as JSON instead of the summary")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--pricing", metavar="NAME", help="add tokens and dollars under a preset of data/pricing.csv")

    p = sub.add_parser("run", help="run the agent loop on a task against an OpenAI-compatible endpoint",
                       description="Run NanoHermes's agent loop on TASK in --workspace, printing one line per "
                                   "model request, and write the session to -o. The model's shell commands run "
                                   "in the workspace with your rights (docs/safety.md). The endpoint comes from "
                                   "NANOHERMES_LLM_BASE_URL, NANOHERMES_LLM_API_KEY and NANOHERMES_LLM_MODEL.")
    p.add_argument("task")
    p.add_argument("--workspace", required=True, help="the folder the agent works in")
    p.add_argument("-o", "--output", required=True, help="write the session here (JSON, written even on error)")
    p.add_argument("--budget", type=_nonneg, default=120_000, help="session budget (default 120000)")
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--policy", choices=sorted(POLICIES), default="nanohermes")
    p.add_argument("--keep-recent", type=_nonneg, help="messages kept after compaction (NanoHermes; default 10)")
    p.add_argument("--summary-role", choices=("system", "user"), help="role of the summary message (default system)")
    p.add_argument("--cut", choices=("forward", "backward"), help="move the cut forward (default) or backward")
    p.add_argument("--excerpt-tool-calls", action="store_true", default=None,
                   help="put name(arguments) in the excerpt")
    p.add_argument("--summarizer", choices=("model", "extractive", "placeholder"), default="model",
                   help="model (one more request to the same model, the default), extractive (offline), "
                        "placeholder")
    p.add_argument("--max-requests", type=_positive, default=50, help="stop after this many requests (default 50)")
    p.add_argument("--model", help="model name (default: NANOHERMES_LLM_MODEL, else gpt-4o-mini)")
    p.add_argument("--base-url", help="endpoint base URL (default: NANOHERMES_LLM_BASE_URL); the key is only "
                                      "read from NANOHERMES_LLM_API_KEY")
    p.add_argument("--timeout", type=_positive, default=120, help="seconds per model request (default 120)")
    return parser


def _pricing(name: str | None):
    """The preset named on the command line (None: no pricing); an unknown name is a one-line usage error."""
    if name is None:
        return None
    from .engine.pricing import PricingError, get_pricing

    try:
        return get_pricing(name)
    except PricingError as exc:
        raise _Usage(str(exc)) from None


def _load(path: str):
    from .transcripts import load_transcript

    return load_transcript(path)


# ---------------------------------------------------------------- ledger

# The default ledger table: the SPEC columns a reader needs, in this order (--wide: all).
LEDGER_COLUMNS = ("request", "turn", "messages", "size", "size_before", "event", "dropped", "size_after",
                  "cumulative_input")
BY_TURN_COLUMNS = ("turn", "requests", "messages", "largest_sent", "check_saw", "action", "compacted",
                   "size_after")


def _by_turn(ledger):
    """The per-turn table, with the two sizes side by side and named for what they are.

    ``largest_sent`` is the largest request sent in the turn (what "peak" counts);
    ``check_saw`` (``size`` in ``Ledger.by_turn``) is the largest context the
    compaction check measured, reply and tool results included, which may exceed
    the budget just before a compaction.
    """
    frame = ledger.by_turn()
    sent = ledger.requests.groupby("turn")["size"].max()
    frame.insert(frame.columns.get_loc("size"), "largest_sent", [int(sent[t]) for t in frame["turn"]])
    return frame.rename(columns={"size": "check_saw"})


def _totals_lines(ledger) -> list[str]:
    t = ledger.totals
    unit = ledger.unit
    first = (f"{plural(t.requests, 'request')}, peak request {t.peak_request:,} {unit} (request "
             f"{t.peak_request_number}); {plural(t.compactions, 'event')} ({ledger.policy}), "
             f"{plural(t.summarizer_calls, 'summarizer call')}")
    second = (f"cumulative input {t.cumulative_input:,} {unit} vs {t.cumulative_input_no_compaction:,} without "
              f"compaction (saving {t.saving_share:.0%})")
    bad = {p: n for p, n in t.problems.items() if n}
    if bad:
        second += "; history rejected by " + ", ".join(f"{p} ({plural(n, 'problem')} at worst)" for p, n in bad.items())
    elif t.problems:
        second += "; history legal for " + ", ".join(t.problems)
    texts = [first, second]
    if t.cost_usd is not None:
        texts.append(f"{t.pricing}: {t.cost_usd:.4f} USD ({t.summarizer_cost_usd:.4f} for the summarizer) vs "
                     f"{t.cost_usd_no_compaction:.4f} without compaction; cache-hit rate {t.cache_hit_rate:.0%} "
                     f"({t.cache_hit_rate_no_compaction:.0%} without)")
    return [line for text in texts for line in _comment(text)]


def _cmd_ledger(args) -> int:
    from .engine.ledger import replay

    messages = _load(args.file)
    policy = _policy(args.policy, _options(args))
    pricing = _pricing(args.pricing)
    ledger = replay(messages, budget=args.budget, summarizer=_summarizer(args.summarizer), unit=args.unit,
                    policy=policy, pricing=pricing)
    if args.by_turn:
        frame = _by_turn(ledger)
        records, names = _records(frame), [str(c) for c in frame.columns]
    else:  # the plain rows: no pandas on the default path
        records, names = _records(ledger.records()), list(ledger.rows)
    if args.json:
        _print_json(records)
        return EXIT_OK
    unit = ledger.unit
    width = None if args.wide else WIDTH
    columns = names if args.wide else list(BY_TURN_COLUMNS if args.by_turn else LEDGER_COLUMNS)
    if pricing is not None and not args.wide and not args.by_turn:
        columns += ["cached_tokens", "cost_usd"]
    lines, hidden = text_table(records, columns, width=width, shrink="action")
    more = len(names) - len(columns) + len(hidden)
    if args.by_turn:
        legend = f"largest_sent: largest request sent; check_saw: largest context the compaction check saw; {unit}"
    else:
        legend = f"size: context sent; size_before: what the compaction check saw; {unit}"
    if more:
        legend += f"; --wide shows {plural(more, 'more column')}"
    for note in ledger.notes:
        _say(_comment(note))
    _say(_comment(legend, width or WIDTH))
    _say(lines)
    _say(_totals_lines(ledger))
    _say(_comment(ledger.caveat))
    return EXIT_OK


# ---------------------------------------------------------------- check


def _cmd_check(args) -> int:
    from .context.history import check_history

    problems = check_history(_load(args.file), args.profile)
    if args.json:
        _print_json([{"index": p.index, "code": p.code, "reason": p.reason} for p in problems])
    else:
        for p in problems:
            print(f"{args.file}: {p}")
    return EXIT_PROBLEMS if problems else EXIT_OK


# ---------------------------------------------------------------- compact


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
    from .context.metrics import verify_compaction

    legality, others = [], []
    for k, profile in enumerate(profiles):
        for c in verify_compaction(result, profile=profile):
            row = {"check": c.check, "ok": bool(c.result), "expectation": c.expectation, "detail": c.detail}
            if c.check == "history legality":
                legality.append({**row, "check": f"{c.check} ({profile})", "profile": profile})
            elif not k:  # the other checks do not depend on the profile
                others.append(row)
    return legality + others


def _cmd_compact(args) -> int:
    from .context.compaction import compact
    from .context.history import PROFILES
    from .engine.ledger import prepare
    from .views.report import compaction_rows
    from .views.report import text_table as message_table

    messages, notes = prepare(_load(args.file))  # the same empty system message as the ledger
    given = {k: v for k, v in _options(args).items() if v is not None}  # compact's own defaults otherwise
    result = compact(messages, budget=args.budget, summarizer=_summarizer(args.summarizer), force=args.force,
                     **given)
    checks = verify_all(result, [args.profile] if args.profile else list(PROFILES)) if args.verify else []
    failed = [c for c in checks if not c["ok"]]
    if args.output:
        write_json_atomic(args.output, result.messages)
    if args.json:
        out = {
            "compacted": result.compacted, "cut": result.cut, "naive_cut": result.naive_cut,
            "dropped": result.dropped_count, "note": result.note, "failure": result.failure,
            "size_before": result.size_before, "size_after": result.size_after,
            "reason": result.reason, "messages": len(result.messages), "notes": notes,
        }
        if args.verify:
            out["checks"] = checks
        _print_json(out)
    else:
        for note in notes:
            _say(_comment(note))
        print(_describe(result))
        if args.show:
            print(message_table(compaction_rows(result)))
        if args.verify:
            for c in checks:
                print(f"{'ok  ' if c['ok'] else 'FAIL'} {c['check']}: {c['expectation']}"
                      + (f" ({c['detail']})" if c["detail"] else ""))
            if not result.compacted:
                _say(_comment("nothing to verify: the history was not compacted (--force compacts under the "
                              "budget too)"))
            else:
                _say(_comment(f"{len(checks) - len(failed)} of {plural(len(checks), 'check')} passed"))
        if args.output:
            print(f"wrote {plural(len(result.messages), 'message')} to {args.output}")
    return EXIT_PROBLEMS if failed else EXIT_OK


# ---------------------------------------------------------------- sweep

SWEEP_COLUMNS = ("transcript", "policy", "budget", "keep_recent", "requests", "peak_request", "compactions",
                 "cumulative_input", "saving_share")
SWEEP_HEADERS = {"keep_recent": "keep", "peak_request": "peak", "compactions": "events",
                 "cumulative_input": "cumulative", "saving_share": "saving"}


def _sweep_rows(frame) -> list[dict]:
    rows = _records(frame)
    for row in rows:
        share = row.get("saving_share")
        row["saving_share"] = "" if share is None else f"{share:.0%}"
    return rows


def _cmd_sweep(args) -> int:
    from .engine.sweep import sweep
    from .policies import POLICIES, accepts_option

    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        print(f"nanohermes-nb: error: unknown policy {unknown[0]!r}; known: {', '.join(sorted(POLICIES))}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.keep_recent and not any(accepts_option(p, "keep_recent") for p in policies):
        raise _Usage(f"option 'keep_recent' does not apply to any chosen policy ({', '.join(policies)})")
    progress = not args.no_progress  # the bar goes to stderr, the table to stdout
    options = dict(budgets=args.budgets, keep_recent=args.keep_recent, policies=policies,
                   summarizer=_summarizer(args.summarizer), unit=args.unit, retention=args.retention,
                   progress=progress, strict=args.strict, out=args.out, pricing=_pricing(args.pricing))
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs) as pool:
            result = sweep(args.paths, executor=pool, workers=args.jobs, **options)
    else:
        result = sweep(args.paths, **options)
    skipped = result.skipped if args.out else result.attrs["skipped"]
    for s in skipped:
        print(f"nanohermes-nb: skipped {s.transcript}: {s.reason}", file=sys.stderr)
    code = EXIT_PROBLEMS if skipped else EXIT_OK
    if args.out:
        _say(_comment(f"{plural(result.rows, 'row')} from {plural(result.transcripts, 'transcript')} written to "
                      f"{args.out}" + (f"; {plural(len(skipped), 'file')} skipped" if skipped else "")))
        return code
    frame = result
    if args.csv:
        tmp = Path(args.csv).with_name(f".{Path(args.csv).name}.tmp")
        frame.to_csv(tmp, index=False)
        os.replace(tmp, args.csv)
    if args.json:
        _print_json(_records(frame))
        return code
    shown = SWEEP_COLUMNS + (("cost_usd",) if args.pricing else ())
    lines, hidden = text_table(_sweep_rows(frame), shown, headers=SWEEP_HEADERS, shrink="transcript")
    more = len(frame.columns) - len(shown) + len(hidden)
    unit = args.unit
    _say(_comment(f"peak: largest request sent; events: compactions; cumulative: all requests summed; {unit}"))
    _say(lines)
    where = f"written to {args.csv}" if args.csv else "--csv FILE or --json for them"
    _say(_comment(f"{plural(len(frame), 'row')}; {plural(more, 'more column')} ({where})"))
    return code


# ---------------------------------------------------------------- run


def _run_model(args):
    """The endpoint from --base-url / --model or the NANOHERMES_LLM_* variables; the key only from the environment."""
    from .agent.models import (
        DEFAULT_MODEL,
        ENV_API_KEY,
        ENV_BASE_URL,
        ENV_MODEL,
        OpenAICompatibleModel,
    )
    from .agent.transport import TransportError

    base_url = (args.base_url or os.environ.get(ENV_BASE_URL, "")).strip()
    if not base_url:
        raise _Usage(f"run needs an endpoint: set {ENV_BASE_URL} (and {ENV_API_KEY}, {ENV_MODEL}) or pass --base-url")
    name = (args.model or os.environ.get(ENV_MODEL, "")).strip() or DEFAULT_MODEL
    try:
        return OpenAICompatibleModel(base_url, os.environ.get(ENV_API_KEY) or None, name, timeout=args.timeout)
    except (ValueError, TransportError) as exc:
        raise _Usage(str(exc)) from None


def _cmd_run(args) -> int:
    from .agent.loop import Agent

    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise _Usage(f"--workspace {args.workspace}: not a folder")
    folder = Path(args.output).parent
    if not folder.is_dir():  # found out now, not after a long run
        raise _Usage(f"-o {args.output}: no folder {folder}")
    model = _run_model(args)
    policy = _policy(args.policy, _options(args))
    summarizer = None if args.summarizer == "model" else _summarizer(args.summarizer)
    with Agent(workspace, model, budget=args.budget, policy=policy, summarizer=summarizer, unit=args.unit) as agent:
        _say(_comment(f"agent: {model!r}; workspace {agent.workspace}; budget {args.budget:,} {args.unit}, policy "
                      f"{agent.policy.label}. Its shell commands run in the workspace with your rights "
                      "(docs/safety.md)."))
        result = agent.run(args.task, max_requests=args.max_requests,
                           on_request=lambda step: print(step.line(), flush=True))
    write_json_atomic(args.output, result.to_json())
    _say(_totals_lines(result.ledger))
    print(f"wrote {plural(len(result.messages), 'message')} to {args.output}")
    if result.error:
        print(f"nanohermes-nb: run stopped: {result.error}", file=sys.stderr)
        return 130 if result.error.startswith("interrupted") else EXIT_PROBLEMS
    return EXIT_OK


# Each command is one function of the parsed arguments returning the exit code.
_COMMANDS = {"ledger": _cmd_ledger, "check": _cmd_check, "compact": _cmd_compact, "sweep": _cmd_sweep,
             "run": _cmd_run}


def main(argv: Sequence[str] | None = None) -> int:
    from .transcripts import TranscriptError

    _tolerant_streams()
    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except TranscriptError as exc:
        print(f"nanohermes-nb: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except _Usage as exc:
        print(f"nanohermes-nb: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        name = getattr(exc, "filename", None) or ""
        print(f"nanohermes-nb: error: {name}{': ' if name else ''}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("nanohermes-nb: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
