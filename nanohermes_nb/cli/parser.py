"""The command line's grammar: one function per subcommand, and the option values it accepts.

Sizes take ``120000``, ``120_000``, ``120k`` or ``1.5M``; a bad value is one line
naming the option, exit 2 (``_Parser.error``), like every other bad input.
"""

from __future__ import annotations

import argparse
import re

from ..transcripts.base import printable
from .common import EXIT_BAD_INPUT


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line and exit 2."""

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
    """One whole number >= 1 (workers, requests, seconds)."""
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"takes one whole number of 1 or more, got {text!r}")
    return value

_WIDE_HELP = "every column, however wide (default: fit COLUMNS, else 100 columns)"


_SUMMARIZERS = ("extractive", "llm", "placeholder")


def _policy_options(p: argparse.ArgumentParser, *, summarizers: tuple[str, ...] = _SUMMARIZERS,
                    summarizer_help: str = "extractive (offline, default), llm (NANOHERMES_LLM_* env), "
                                           "placeholder") -> None:
    """The budget and the options of one policy (``ledger``, ``compact``, ``run``)."""
    p.add_argument("--budget", type=_size, default=120_000, help="session budget (default 120000; 60k, 1.5M too)")
    p.add_argument("--keep-recent", type=_count, help="messages kept after compaction (NanoHermes; default 10)")
    p.add_argument("--summarizer", choices=summarizers, default=summarizers[0], help=summarizer_help)
    p.add_argument("--summary-role", choices=("system", "user"), help="role of the summary message (default system)")
    p.add_argument("--cut", choices=("forward", "backward"), help="move the cut forward (default) or backward")
    p.add_argument("--excerpt-tool-calls", action="store_true", default=None,
                   help="put name(arguments) in the excerpt")


def _add_ledger(sub) -> None:
    from ..context.sizing import UNITS
    from ..policies import POLICIES

    p = sub.add_parser("ledger", help="replay a transcript and print one row per model request")
    p.add_argument("file")
    _policy_options(p)
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--policy", choices=sorted(POLICIES), default="nanohermes")
    p.add_argument("--by-turn", action="store_true", help="print the per-turn table instead")
    p.add_argument("--wide", action="store_true", help=_WIDE_HELP)
    p.add_argument("--json", action="store_true", help="every column as a JSON list of rows")
    p.add_argument("--pricing", metavar="NAME", help="add tokens and dollars under a preset of data/pricing.csv")


def _add_check(sub) -> None:
    from ..context.history import PROFILES

    p = sub.add_parser("check", help="exit 0 if the history is legal, 1 with one line per problem")
    p.add_argument("file")
    p.add_argument("--profile", choices=PROFILES, default="openai")
    p.add_argument("--json", action="store_true")


def _add_compact(sub) -> None:
    from ..context.history import PROFILES

    p = sub.add_parser("compact", help="compact a transcript once, as one context")
    p.add_argument("file")
    _policy_options(p)
    p.add_argument("--force", action="store_true", help="compact even under the budget (/compact)")
    p.add_argument("-o", "--output", help="write the compacted message list here (JSON)")
    p.add_argument("--show", action="store_true", help="print the before/after table")
    p.add_argument("--wide", action="store_true", help=f"with --show: {_WIDE_HELP}")
    p.add_argument("--verify", action="store_true",
                   help="run the article's checklist; exit 1 when a check fails")
    p.add_argument("--profile", choices=PROFILES, default=None,
                   help="the provider whose history rules --verify applies (default: every one)")
    p.add_argument("--json", action="store_true")


def _add_sweep(sub) -> None:
    from ..context.sizing import UNITS

    p = sub.add_parser("sweep", help="replay files or folders under many settings")
    p.add_argument("paths", nargs="+")
    p.add_argument("--budgets", type=_sizes, default=[120_000], help="comma-separated budgets (default 120000)")
    p.add_argument("--keep-recent", type=_counts, help="values for the policies that keep recent messages")
    p.add_argument("--policies", default="nanohermes", help="comma-separated policy names")
    p.add_argument("--jobs", type=_positive, default=1, help="worker processes (one transcript each at a time)")
    p.add_argument("--out", help="stream every row to this .csv or .parquet file (for very large sweeps)")
    p.add_argument("--strict", action="store_true", help="stop at the first file that cannot be loaded")
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--summarizer", choices=_SUMMARIZERS, default="extractive")
    p.add_argument("--retention", action=argparse.BooleanOptionalAction, default=True,
                   help="the retention score at each event (on by default, as in every replay)")
    p.add_argument("--csv", help="write the full table (every column) to this CSV file")
    p.add_argument("--json", action="store_true", help="print the full table as JSON instead of the summary")
    p.add_argument("--wide", action="store_true", help=_WIDE_HELP)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--pricing", metavar="NAME", help="add tokens and dollars under a preset of data/pricing.csv")


def _add_sessions(sub) -> None:
    p = sub.add_parser("sessions", help="list the coding agents' session logs on this machine (read-only)")
    p.add_argument("roots", nargs="*", help="folders or files to search (default: the agents' usual folders)")
    p.add_argument("--json", action="store_true", help="every field as a JSON list of rows")


def _add_run(sub) -> None:
    from ..context.sizing import UNITS
    from ..policies import POLICIES

    p = sub.add_parser("run", help="run the agent loop on a task against an OpenAI-compatible endpoint",
                       description="Run NanoHermes's agent loop on TASK in --workspace, printing one line per "
                                   "model request, and write the session to -o. The model's shell commands run "
                                   "in the workspace with your rights (docs/safety.md). The endpoint comes from "
                                   "NANOHERMES_LLM_BASE_URL, NANOHERMES_LLM_API_KEY and NANOHERMES_LLM_MODEL.")
    p.add_argument("task")
    p.add_argument("--workspace", required=True, help="the folder the agent works in")
    p.add_argument("-o", "--output", required=True, help="write the session here (JSON, written even on error)")
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--policy", choices=sorted(POLICIES), default="nanohermes")
    _policy_options(p, summarizers=("model", "extractive", "placeholder"),
                    summarizer_help="model (one more request to the same model, the default), extractive "
                                    "(offline), placeholder")
    p.add_argument("--max-requests", type=_positive, default=50, help="stop after this many requests (default 50)")
    p.add_argument("--model", help="model name (default: NANOHERMES_LLM_MODEL, else gpt-4o-mini)")
    p.add_argument("--base-url", help="endpoint base URL (default: NANOHERMES_LLM_BASE_URL); the key is only "
                                      "read from NANOHERMES_LLM_API_KEY")
    p.add_argument("--timeout", type=_positive, default=120, help="seconds per model request (default 120)")


def build_parser() -> argparse.ArgumentParser:
    """``nanohermes-nb`` and its subcommands, in the order ``--help`` lists them."""
    parser = _Parser(prog="nanohermes-nb", description="Replay, check and compact agent transcripts.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (_add_ledger, _add_check, _add_compact, _add_sweep, _add_sessions, _add_run):
        add(sub)
    return parser
