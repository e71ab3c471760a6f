"""``nanohermes-nb``: the ledger, the history check, one compaction, and sweeps, from a shell.

One rule for every subcommand: a missing or unreadable path, a malformed file or
a bad option value exits 2 with one line naming the file or the option; never a
traceback. Text output is made for a terminal: tables fit ``COLUMNS`` (default
100) with a one-line legend (``--wide``: every column), counts are spelled with
the right plural, every piece of data passes through ``views.tables.printable``
(a transcript cannot send ESC or BEL to the terminal), and a character the
terminal cannot encode is printed as an escape instead of failing. ``--json``
(and ``--wide``, ``--csv``) give everything.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .views.tables import DEFAULT_WIDTH, printable, terminal_width, text_table

__all__ = ["main", "write_json_atomic", "text_table", "plural", "WIDTH"]

EXIT_OK, EXIT_PROBLEMS, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BUG = 70  # EX_SOFTWARE: an exception nobody expected (one line; NANOHERMES_DEBUG=1 shows the traceback)
WIDTH = DEFAULT_WIDTH  # columns of the default text output when COLUMNS does not say


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like bad input
        self.exit(EXIT_BAD_INPUT, printable(f"{self.prog}: error: {message}") + "\n")


# ---------------------------------------------------------------- option values

_AMOUNT = re.compile(r"(\d+(?:_\d+)*(?:\.\d+)?)([kKmM]?)")
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


def _amount(text: str) -> int | None:
    """``120000``, ``120_000``, ``120k``, ``1.5M`` as an integer; None when it is not one."""
    m = _AMOUNT.fullmatch(text.strip())
    if m is None:
        return None
    number, scale = m.group(1).replace("_", ""), _SCALE[m.group(2).lower()]
    if "." in number:
        value = float(number) * scale
        return int(value) if value.is_integer() else None
    return int(number) * scale


def _size(text: str) -> int:
    """One size (a budget): a whole number, ``k`` (thousand) and ``M`` (million) accepted."""
    value = _amount(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"takes one whole number such as 120000, 120k or 1.5M, got {text!r}")
    return value


def _sizes(text: str) -> list[int]:
    """Comma-separated sizes (``--budgets 40k,80k,120000``)."""
    parts = [x for x in text.split(",") if x.strip()]
    values = [_amount(x) for x in parts]
    if not values or None in values:
        raise argparse.ArgumentTypeError(f"takes comma-separated whole numbers such as 40000,80k,1.5M, got {text!r}")
    return values  # type: ignore[return-value]


def _count(text: str) -> int:
    """One whole number >= 0 (a message count)."""
    if not re.fullmatch(r"\d+(?:_\d+)*", text.strip()):
        raise argparse.ArgumentTypeError(f"takes one whole number (0 or more), got {text!r}")
    return int(text.strip().replace("_", ""))


def _counts(text: str) -> list[int]:
    """Comma-separated whole numbers >= 0 (``--keep-recent 4,10`` in a sweep)."""
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if not parts or not all(re.fullmatch(r"\d+(?:_\d+)*", x) for x in parts):
        raise argparse.ArgumentTypeError(f"takes comma-separated whole numbers such as 4,10, got {text!r}")
    return [int(x.replace("_", "")) for x in parts]


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"takes one whole number of 1 or more, got {text!r}")
    return value


# ---------------------------------------------------------------- files


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


def _comment(text: str, width: int | None = None) -> list[str]:
    """``# text`` wrapped to ``width`` columns (default: ``COLUMNS``, else 100)."""
    width = width or terminal_width()
    return ["# " + line for line in textwrap.wrap(text, width - 2, break_on_hyphens=False)] or ["#"]


def _width(args) -> int | None:
    """The width a table fits: None with ``--wide``, else ``COLUMNS`` (default 100)."""
    return None if getattr(args, "wide", False) else terminal_width()


_WIDE_HELP = "every column, however wide (default: fit COLUMNS, else 100 columns)"


def _say(lines: Iterable[str]) -> None:
    """Lines for the terminal, each through ``printable``: data never sends a control character."""
    for line in lines:
        print(printable(line))


def _err(text: str) -> None:
    """One line on stderr, through ``printable``."""
    print(printable(text), file=sys.stderr)


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
    text = json.dumps(data, ensure_ascii=False).translate(_JSON_ESCAPES)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(data, ensure_ascii=True)
    print(text)


# json.dumps escapes C0 controls but not DEL, C1 (0x9b is an 8-bit CSI) or bidi overrides: \uXXXX, still valid JSON
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in [0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                            *range(0x2066, 0x206A)]}


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
    p.add_argument("--budget", type=_size, default=120_000, help="session budget (default 120000; 60k, 1.5M too)")
    p.add_argument("--keep-recent", type=_count, help="messages kept after compaction (NanoHermes; default 10)")
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
    p.add_argument("--wide", action="store_true", help=_WIDE_HELP)
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
    p.add_argument("--wide", action="store_true", help=f"with --show: {_WIDE_HELP}")
    p.add_argument("--verify", action="store_true",
                   help="run the article's checklist; exit 1 when a check fails")
    p.add_argument("--profile", choices=PROFILES, default=None,
                   help="the provider whose history rules --verify applies (default: every one)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("sweep", help="replay files or folders under many settings")
    p.add_argument("paths", nargs="+")
    p.add_argument("--budgets", type=_sizes, default=[120_000], help="comma-separated budgets (default 120000)")
    p.add_argument("--keep-recent", type=_counts, help="values for the policies that keep recent messages")
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
    p.add_argument("--wide", action="store_true", help=_WIDE_HELP)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--pricing", metavar="NAME", help="add tokens and dollars under a preset of data/pricing.csv")

    p = sub.add_parser("sessions", help="list the coding agents' session logs on this machine (read-only)")
    p.add_argument("roots", nargs="*", help="folders or files to search (default: the agents' usual folders)")
    p.add_argument("--json", action="store_true", help="every field as a JSON list of rows")

    p = sub.add_parser("run", help="run the agent loop on a task against an OpenAI-compatible endpoint",
                       description="Run NanoHermes's agent loop on TASK in --workspace, printing one line per "
                                   "model request, and write the session to -o. The model's shell commands run "
                                   "in the workspace with your rights (docs/safety.md). The endpoint comes from "
                                   "NANOHERMES_LLM_BASE_URL, NANOHERMES_LLM_API_KEY and NANOHERMES_LLM_MODEL.")
    p.add_argument("task")
    p.add_argument("--workspace", required=True, help="the folder the agent works in")
    p.add_argument("-o", "--output", required=True, help="write the session here (JSON, written even on error)")
    p.add_argument("--budget", type=_size, default=120_000, help="session budget (default 120000; 60k, 1.5M too)")
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--policy", choices=sorted(POLICIES), default="nanohermes")
    p.add_argument("--keep-recent", type=_count, help="messages kept after compaction (NanoHermes; default 10)")
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
    from .transcripts.base import one_line, printable

    transcript = load_transcript(path)
    if getattr(transcript, "skipped", ()):  # an agent log read in part: say what was left out, in one line
        print(printable(one_line(f"nanohermes-nb: {path}: skipped: {'; '.join(transcript.skipped)}")),
              file=sys.stderr)
    return transcript


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
    width = _width(args)
    columns = names if args.wide else list(BY_TURN_COLUMNS if args.by_turn else LEDGER_COLUMNS)
    if pricing is not None and not args.wide and not args.by_turn:
        columns += ["cached_tokens", "cost_usd"]
    if "usage_cost_usd" in names and not args.wide and not args.by_turn:  # issue 24: the log's bill
        columns += ["usage_prompt_tokens", "usage_cached_tokens", "usage_cost_usd"]
    lines, hidden = text_table(records, columns, width=width, shrink="action")
    more = len(names) - len(columns) + len(hidden)
    if args.by_turn:
        legend = f"largest_sent: largest request sent; check_saw: largest context the compaction check saw; {unit}"
    else:
        legend = f"size: context sent; size_before: what the compaction check saw; {unit}"
    if more:
        legend += f"; --wide shows {plural(more, 'more column')}"
    for note in ledger.notes:
        _say(_comment(note, width))
    _say(_comment(legend, width))
    _say(lines)
    _say(_totals_lines(ledger))
    if "usage_cost_usd" in ledger.rows:  # issue 24: the reported totals beside the estimate
        from .engine.bill import bill_lines

        _say([line for text in bill_lines(messages) for line in _comment(text)])
    _say(_comment(ledger.caveat))
    return EXIT_OK


# ---------------------------------------------------------------- check


def _cmd_check(args) -> int:
    from .context.history import check_history

    problems = check_history(_load(args.file), args.profile)
    if args.json:
        _print_json([{"index": p.index, "code": p.code, "reason": p.reason} for p in problems])
    else:
        _say(f"{args.file}: {p}" for p in problems)
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
    from .views.report import compaction_rows
    from .views.tables import COMPACTION_COLUMNS

    lines, hidden = text_table(compaction_rows(result), COMPACTION_COLUMNS, width=width,
                               shrink=("calls", "answers", "preview"), rule=True, missing="\u2013")
    if hidden:
        lines += _comment(f"--wide shows {plural(len(hidden), 'more column')} ({', '.join(hidden)}) and whole "
                          "previews", width)
    return lines


def _cmd_compact(args) -> int:
    from .context.compaction import compact
    from .context.history import PROFILES
    from .engine.ledger import prepare

    if args.output:
        _output_path("-o", args.output)
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
        return EXIT_PROBLEMS if failed else EXIT_OK
    width = _width(args)
    for note in notes:
        _say(_comment(note, width))
    _say([_describe(result)])
    if args.show:
        _say(_compaction_lines(result, width))
    if args.verify:
        _say(_verify_line(c) for c in checks)
        for line in _verify_footer(result, checks):
            _say(_comment(line, width))
    if args.output:
        _say([f"wrote {plural(len(result.messages), 'message')} to {args.output}"])
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


class _Escaping:
    """A text stream that keeps the ``\\r`` and ``\\n`` a progress bar draws with, and escapes every other
    control character (the bar prints file names, and a file name may hold ESC)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        lines = text.split("\n")
        return self.stream.write("\n".join("\r".join(printable(part) for part in line.split("\r")) for line in lines))

    def __getattr__(self, name: str) -> Any:  # isatty, flush, encoding: the real stream's
        return getattr(self.stream, name)


def _output_path(option: str, path: str) -> None:
    """An output file's folder must exist and the path must not be a folder: found out before any work."""
    target = Path(path)
    if target.is_dir():
        raise _Usage(f"{option} {path}: is a folder, not a file")
    if not target.parent.is_dir():
        raise _Usage(f"{option} {path}: no folder {target.parent}")


def _sweep_inputs(paths: Sequence[str]) -> None:
    """Every path given to ``sweep`` must be a file, or a folder holding transcript files."""
    from .transcripts import iter_transcript_paths

    for path in paths:
        p = Path(path)
        if not p.exists():
            raise _Usage(f"{path}: no such file or folder")
        if p.is_dir() and next(iter(iter_transcript_paths(p)), None) is None:
            raise _Usage(f"{path}: no transcript files (*.json, *.jsonl, *.traj) in this folder")


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


def _cmd_sweep(args) -> int:
    from .engine.sweep import sweep
    from .policies import POLICIES, accepts_option

    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown or not policies:
        raise _Usage(f"--policies: unknown policy {unknown[0] if unknown else args.policies!r}; known: "
                     f"{', '.join(sorted(POLICIES))}")
    if args.keep_recent and not any(accepts_option(p, "keep_recent") for p in policies):
        raise _Usage(f"option 'keep_recent' does not apply to any chosen policy ({', '.join(policies)})")
    _sweep_inputs(args.paths)
    for option, path in (("--csv", args.csv), ("--out", args.out)):
        if path:
            _output_path(option, path)
    if args.out and Path(args.out).suffix.lower() not in (".csv", ".parquet"):
        raise _Usage(f"--out {args.out}: must end in .csv or .parquet")
    progress = not args.no_progress  # the bar goes to stderr, the table to stdout
    options = dict(budgets=args.budgets, keep_recent=args.keep_recent, policies=policies,
                   summarizer=_summarizer(args.summarizer), unit=args.unit, retention=args.retention,
                   progress=progress, strict=args.strict, out=args.out, pricing=_pricing(args.pricing))
    with contextlib.redirect_stderr(_Escaping(sys.stderr)):  # the progress bar names each file
        if args.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(args.jobs) as pool:
                result = sweep(args.paths, executor=pool, workers=args.jobs, **options)
        else:
            result = sweep(args.paths, **options)
    skipped = result.skipped if args.out else result.attrs["skipped"]
    for s in skipped:
        _err(f"nanohermes-nb: skipped {s.transcript}: {s.reason}")
    code = EXIT_PROBLEMS if skipped else EXIT_OK
    width = _width(args)
    if args.out:
        _say(_comment(f"{plural(result.rows, 'row')} from {plural(result.transcripts, 'transcript')} written to "
                      f"{args.out}" + (f"; {plural(len(skipped), 'file')} skipped" if skipped else ""), width))
        return code
    frame = result
    if args.csv:
        _write_csv_atomic(frame, args.csv)
    if args.json:
        _print_json(_records(frame))
        return code
    shown = list(frame.columns) if args.wide else list(SWEEP_COLUMNS + (("cost_usd",) if args.pricing else ()))
    lines, hidden = text_table(_sweep_rows(frame), shown, headers=SWEEP_HEADERS, shrink="transcript", width=width)
    more = len(frame.columns) - len(shown) + len(hidden)
    unit = args.unit
    _say(_comment(f"peak: largest request sent; events: compactions; cumulative: all requests summed; {unit}", width))
    _say(lines)
    where = f"written to {args.csv}" if args.csv else "--wide, --csv FILE or --json for them"
    tail = f"; {plural(more, 'more column')} ({where})" if more else ""
    _say(_comment(f"{plural(len(frame), 'row')}{tail}", width))
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


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """SIGINT and SIGTERM wait until the block is done; the list names those that came.

    Used while the session file is written: a Ctrl-C that lands just as the
    temporary file appears no longer deletes it half-way (the finished session
    was lost). A second signal during the block still stops the program at once.
    """
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def hold(signum: int, frame: Any) -> None:
        if caught:  # asked twice: stop now
            raise KeyboardInterrupt
        caught.append(signum)

    previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield caught
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _cmd_run(args) -> int:
    from .agent.loop import Agent

    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise _Usage(f"--workspace {args.workspace}: not a folder")
    _output_path("-o", args.output)  # found out now, not after a long run
    model = _run_model(args)
    policy = _policy(args.policy, _options(args))
    summarizer = None if args.summarizer == "model" else _summarizer(args.summarizer)
    agent = Agent(workspace, model, budget=args.budget, policy=policy, summarizer=summarizer, unit=args.unit)
    result = None
    try:
        _say(_comment(f"agent: {model!r}; workspace {agent.workspace}; budget {args.budget:,} {args.unit}, policy "
                      f"{agent.policy.label}. Its shell commands run in the workspace with your rights "
                      "(docs/safety.md)."))
        result = agent.run(args.task, max_requests=args.max_requests,
                           on_request=lambda step: print(printable(step.line()), flush=True))
    except Exception as exc:  # a tool's or a model class's bug: the session so far is still written
        result = agent.result(f"stopped by an unexpected {type(exc).__name__}: {exc}")
    finally:  # whatever happened, the session is written, and a signal now cannot cut the write short
        with _signals_held() as caught:
            if result is None:
                result = agent.result("interrupted (KeyboardInterrupt); the session so far is kept")
            agent.close()
            write_json_atomic(args.output, result.to_json())
    if caught:
        _say([f"wrote {plural(len(result.messages), 'message')} to {args.output}"])
        _err(f"nanohermes-nb: interrupted; the session so far is in {args.output}")
        return EXIT_INTERRUPTED if caught[0] == signal.SIGINT else 128 + caught[0]
    _say(_totals_lines(result.ledger))
    _say([f"wrote {plural(len(result.messages), 'message')} to {args.output}"])
    if result.error:
        _err(f"nanohermes-nb: run stopped: {result.error}")
        return EXIT_INTERRUPTED if result.error.startswith("interrupted") else EXIT_PROBLEMS
    return EXIT_OK


def _cmd_sessions(args) -> int:
    """One row per agent session found: agent, model, size, requests, time span, path."""
    import dataclasses
    import datetime

    from .transcripts.agentlogs import find_sessions

    rows = [dataclasses.asdict(s) for s in find_sessions(args.roots or None)]
    if args.json:
        _print_json(rows)
        return EXIT_OK

    def when(t):
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M") if t else ""

    table = [{"agent": r["agent"], "model": r["model"], "size": f"{r['size'] / 1e6:.1f} MB",
              "requests": r["requests"], "compactions": r["compactions"], "start (UTC)": when(r["start"]),
              "hours": "" if r["start"] is None else f"{(r['end'] - r['start']) / 3600:.1f}", "path": r["path"]}
             for r in rows]
    lines, _ = text_table(table, list(table[0]) if table else ["agent"], width=None)
    _say(_comment(f"{plural(len(rows), 'session')} found" + ("" if args.roots else " in the usual folders")))
    _say(lines)
    return EXIT_OK


# Each command is one function of the parsed arguments returning the exit code.
_COMMANDS = {"ledger": _cmd_ledger, "check": _cmd_check, "compact": _cmd_compact, "sweep": _cmd_sweep,
             "run": _cmd_run, "sessions": _cmd_sessions}


def main(argv: Sequence[str] | None = None) -> int:
    from .transcripts import TranscriptError

    _tolerant_streams()
    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except (TranscriptError, _Usage) as exc:
        _err(f"nanohermes-nb: error: {exc}")
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        name = getattr(exc, "filename", None) or ""
        _err(f"nanohermes-nb: error: {name}{': ' if name else ''}{exc.strerror or exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _err("nanohermes-nb: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line, not a traceback (NANOHERMES_DEBUG=1 shows it)
        if os.environ.get("NANOHERMES_DEBUG"):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        _err(f"nanohermes-nb: internal error: {type(exc).__name__}{': ' if first else ''}{first:.300} "
             "(NANOHERMES_DEBUG=1 shows the traceback)")
        return EXIT_BUG


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
