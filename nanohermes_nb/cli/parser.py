"""The command line's grammar: one function per subcommand, and the option values it accepts.

Sizes take ``120000``, ``120_000``, ``120k`` or ``1.5M``; a bad value is one line
naming the option, exit 2 (``_Parser.error``), like every other bad input, with any
value longer than a line clipped (``common.clip_words``). Every argument has a help
text (``tests/test_cli_grammar.py`` walks the parser), and the choices of ``--policy``,
``--policies``, ``--summary-role``, ``--unit`` and ``--profile`` are the library's own
registries, so a policy registered in ``policies/__init__.py`` is offered at once.

An option that sets a replay's setting (``--budget``, ``--unit``, ``--policy``, ``--summarizer``,
``--budgets``, ``--policies``, ``--retention``) defaults to None, so that what is not given is
``Settings``'s own default (``Budgets`` for the numbers), written in one place; the help texts
show those defaults.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import NoReturn

from .. import __version__
from ..context.budgets import DEFAULT_BUDGETS
from ..context.sizing import DEFAULT_UNIT
from ..transcripts.base import printable
from .common import EXIT_BAD_INPUT, clip, clip_words
from .report import add_report_parser

MAX_JOBS_PER_CPU = 4  # sweep --jobs: more worker processes than this per CPU only add memory and switching


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (long values clipped) and exit 2."""

    def error(self, message: str) -> NoReturn:  # one line, exit 2, like bad input
        self.exit(EXIT_BAD_INPUT, printable(clip_words(f"{self.prog}: error: {message}")) + "\n")


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
        raise argparse.ArgumentTypeError(f"takes one whole number such as 120000, 120k or 1.5M, got {clip(repr(text))}")
    return value


def _sizes(text: str) -> list[int]:
    """Comma-separated sizes (``--budgets 40k,80k,120000``)."""
    parts = [x for x in text.split(",") if x.strip()]
    values = [_amount(x) for x in parts]
    if not values or None in values:
        raise argparse.ArgumentTypeError(f"takes comma-separated whole numbers such as 40000,80k,1.5M, got "
                                         f"{clip(repr(text))}")
    return values  # type: ignore[return-value]


def _count(text: str) -> int:
    """One whole number >= 0 (a message count)."""
    if not re.fullmatch(r"\d+(?:_\d+)*", text.strip()):
        raise argparse.ArgumentTypeError(f"takes one whole number (0 or more), got {clip(repr(text))}")
    return int(text.strip().replace("_", ""))


def _counts(text: str) -> list[int]:
    """Comma-separated whole numbers >= 0 (``--keep-recent 4,10`` in a sweep)."""
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if not parts or not all(re.fullmatch(r"\d+(?:_\d+)*", x) for x in parts):
        raise argparse.ArgumentTypeError(f"takes comma-separated whole numbers such as 4,10, got {clip(repr(text))}")
    return [int(x.replace("_", "")) for x in parts]


def _positive(text: str) -> int:
    """One whole number >= 1 (workers, requests, seconds)."""
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"takes one whole number of 1 or more, got {clip(repr(text))}")
    return value


def max_jobs() -> int:
    """The most ``sweep --jobs`` accepts: ``MAX_JOBS_PER_CPU`` per CPU this process may run on."""
    import os

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return MAX_JOBS_PER_CPU * max(cpus, 1)


def _jobs(text: str) -> int:
    """Worker processes: 1 to ``max_jobs()`` (``--jobs 100000`` would start processes until something stops it)."""
    value, most = _positive(text), max_jobs()
    if value > most:
        raise argparse.ArgumentTypeError(f"takes 1 to {most} on this machine ({MAX_JOBS_PER_CPU} per CPU), "
                                         f"got {clip(text.strip())}")
    return value


MAX_TIMEOUT = 86_400  # run --timeout: a day per request at most (10**20 s overflowed the clock: OverflowError)


def _timeout(text: str) -> int:
    """Seconds per model request: 1 to ``MAX_TIMEOUT``."""
    value = _positive(text)
    if value > MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(f"takes 1 to {MAX_TIMEOUT:,} seconds, got {clip(text.strip())}")
    return value


def _policy_names(known: list[str]) -> Callable[[str], list[str]]:
    """``--policies a,b``: comma-separated names, each one of ``known`` (the registry), as ``choices`` checks."""
    def names(text: str) -> list[str]:
        chosen = [x.strip() for x in text.split(",") if x.strip()]
        wrong = [x for x in chosen if x not in known]
        if wrong or not chosen:
            raise argparse.ArgumentTypeError(f"invalid choice: {clip(repr(wrong[0] if wrong else text))} "
                                             f"(choose from {', '.join(known)}, comma-separated)")
        return chosen

    return names


_WIDE_HELP = "every column, however wide (default: fit COLUMNS, else 100 columns)"
_PRICING_HELP = "add tokens and dollars under a price preset (nanohermes_nb/resources/pricing.csv)"
_UNIT_HELP = (f"what sizes and the budget count: bytes of compact JSON (the article's; default {DEFAULT_UNIT}), "
              "chars, or tokens")
_BUDGET = DEFAULT_BUDGETS.context_char_budget


_SUMMARIZERS = ("extractive", "llm", "placeholder")


def _policy_options(p: argparse.ArgumentParser, *, summarizers: tuple[str, ...] = _SUMMARIZERS,
                    summarizer_help: str = "extractive (offline, default), llm (NANOHERMES_LLM_* env), "
                                           "placeholder") -> None:
    """The budget and the options of one policy (``ledger``, ``compact``, ``run``)."""
    from ..context.compaction import SUMMARY_ROLES

    p.add_argument("--budget", type=_size, help=f"session budget (default {_BUDGET}; 60k, 1.5M too)")
    p.add_argument("--keep-recent", type=_count,
                   help=f"messages kept after compaction (NanoHermes; default {DEFAULT_BUDGETS.keep_recent})")
    p.add_argument("--summarizer", choices=summarizers, help=summarizer_help)
    p.add_argument("--summary-role", choices=SUMMARY_ROLES, help="role of the summary message (default system, "
                                                                  "as the article; Anthropic and Gemini need user)")
    p.add_argument("--cut", choices=("forward", "backward"), help="move the cut forward (default) or backward")
    p.add_argument("--excerpt-tool-calls", action="store_true", default=None,
                   help="put name(arguments) in the excerpt")


def _add_ledger(sub) -> None:
    from ..context.sizing import UNITS
    from ..policies import POLICIES

    p = sub.add_parser("ledger", help="replay a transcript and print one row per model request")
    p.add_argument("file", help="a transcript or an agent's session log (the format is read from the content)")
    _policy_options(p)
    p.add_argument("--unit", choices=UNITS, help=_UNIT_HELP)
    p.add_argument("--policy", choices=sorted(POLICIES),
                   help="what is done over the budget (default nanohermes, the article's)")
    p.add_argument("--by-turn", action="store_true", help="print the per-turn table instead")
    p.add_argument("--wide", action="store_true", help=_WIDE_HELP)
    p.add_argument("--json", action="store_true", help="every column as a JSON list of rows")
    p.add_argument("--pricing", metavar="NAME", help=_PRICING_HELP)
    p.add_argument("--triggers", action="store_true",
                   help="when each agent's compaction rule would have fired on this session, instead of the ledger")
    p.add_argument("--verbose", action="store_true",
                   help="also say how the replay read the transcript and which providers would reject its history")


def _add_check(sub) -> None:
    from ..context.history import PROFILES

    p = sub.add_parser("check", help="exit 0 if the history is legal, 1 with one line per problem")
    p.add_argument("file", help="a transcript or an agent's session log")
    p.add_argument("--profile", choices=PROFILES, default="openai",
                   help="whose history rules to apply (default openai)")
    p.add_argument("--json", action="store_true", help="the problems as a JSON object")


def _add_compact(sub) -> None:
    from ..context.history import PROFILES

    p = sub.add_parser("compact", help="compact a transcript once, as one context")
    p.add_argument("file", help="a transcript or an agent's session log (never written to)")
    _policy_options(p)
    p.add_argument("--force", action="store_true", help="compact even under the budget (/compact)")
    p.add_argument("-o", "--output", help="write the compacted message list here (JSON; a new file or a regular "
                                          "one that is not the input)")
    p.add_argument("--show", action="store_true", help="print the before/after table")
    p.add_argument("--wide", action="store_true", help=f"with --show: {_WIDE_HELP}")
    p.add_argument("--verify", action="store_true",
                   help="run the article's checklist; exit 1 when a check fails")
    p.add_argument("--profile", choices=PROFILES, default=None,
                   help="the provider whose history rules --verify applies (default: every one)")
    p.add_argument("--json", action="store_true", help="what the compaction did as a JSON object")


def _add_sweep(sub) -> None:
    from ..context.sizing import UNITS
    from ..policies import POLICIES

    known = sorted(POLICIES)
    p = sub.add_parser("sweep", help="replay files or folders under many settings")
    p.add_argument("paths", nargs="+", help="transcript files, or folders of them (agent logs found in subfolders)")
    p.add_argument("--budgets", type=_sizes, help=f"comma-separated budgets (default {_BUDGET})")
    p.add_argument("--keep-recent", type=_counts, help="values for the policies that keep recent messages")
    p.add_argument("--policies", type=_policy_names(known), metavar="NAME[,NAME...]",
                   help=f"comma-separated policies, of: {', '.join(known)} (default nanohermes)")
    p.add_argument("--jobs", type=_jobs, default=1,
                   help=f"worker processes, one transcript each at a time (1 to {MAX_JOBS_PER_CPU} per CPU)")
    p.add_argument("-o", "--out", "--csv", dest="out", metavar="FILE",
                   help="write every row (every column) to this .csv or .parquet file, streamed as the rows come "
                        "(--csv is the same option)")
    p.add_argument("--strict", action="store_true", help="stop at the first file that cannot be loaded")
    p.add_argument("--unit", choices=UNITS, help=_UNIT_HELP)
    p.add_argument("--summarizer", choices=_SUMMARIZERS,
                   help="extractive (offline, default), llm (NANOHERMES_LLM_* env), placeholder")
    p.add_argument("--retention", action=argparse.BooleanOptionalAction,
                   help="the retention score at each event (on by default, as in every replay)")
    p.add_argument("--json", action="store_true", help="print the full table as JSON instead of the summary")
    p.add_argument("--wide", action="store_true", help=_WIDE_HELP)
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--pricing", metavar="NAME", help=_PRICING_HELP)


def _add_sessions(sub) -> None:
    p = sub.add_parser("sessions", help="list the coding agents' session logs on this machine (read-only)")
    p.add_argument("roots", nargs="*", help="folders or files to search (default: the agents' usual folders)")
    p.add_argument("--json", action="store_true", help="every field as a JSON list of rows")
    p.add_argument("--wide", action="store_true", help=_WIDE_HELP)


def _add_run(sub) -> None:
    from ..context.sizing import UNITS
    from ..policies import POLICIES

    p = sub.add_parser("run", help="run the agent loop on a task against an OpenAI-compatible endpoint",
                       description="Run NanoHermes's agent loop on TASK in --workspace, printing one line per "
                                   "model request, and write the session to -o. The model's shell commands run "
                                   "in the workspace with your rights (docs/safety.md). The endpoint comes from "
                                   "NANOHERMES_LLM_BASE_URL, NANOHERMES_LLM_API_KEY and NANOHERMES_LLM_MODEL.")
    p.add_argument("task", help="what the agent is asked to do (its first user message)")
    p.add_argument("--workspace", required=True, help="the folder the agent works in")
    p.add_argument("-o", "--output", required=True, help="write the session here (JSON, written even on error)")
    p.add_argument("--unit", choices=UNITS, help=_UNIT_HELP)
    p.add_argument("--policy", choices=sorted(POLICIES),
                   help="what is done over the budget (default nanohermes, the article's)")
    _policy_options(p, summarizers=("model", "extractive", "placeholder"),
                    summarizer_help="model (one more request to the same model, the default), extractive "
                                    "(offline), placeholder")
    p.add_argument("--max-requests", type=_positive, default=50, help="stop after this many requests (default 50)")
    p.add_argument("--model", help="model name (default: NANOHERMES_LLM_MODEL, else gpt-4o-mini)")
    p.add_argument("--base-url", help="endpoint base URL (default: NANOHERMES_LLM_BASE_URL); the key is only "
                                      "read from NANOHERMES_LLM_API_KEY")
    p.add_argument("--timeout", type=_timeout, default=120,
                   help=f"seconds per model request (default 120, at most {MAX_TIMEOUT:,})")


def build_parser() -> argparse.ArgumentParser:
    """``nanohermes-nb`` and its subcommands, in the order ``--help`` lists them."""
    parser = _Parser(prog="nanohermes-nb")
    parser.add_argument("--version", action="version", version=f"nanohermes-nb {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND",
                                title="commands")
    for add in (_add_ledger, _add_check, _add_compact, _add_sweep, _add_sessions, _add_run):
        add(sub)
    __import__("nanohermes_nb.cli.whatif", fromlist=["add_whatif"]).add_whatif(sub, _sizes, _counts)  # issue 33
    add_report_parser(sub)  # issue 33: cli/report.py
    parser.description = describe(sub)
    return parser


def describe(sub: argparse._SubParsersAction) -> str:
    """The tool's description, naming every command (those other modules add too) with its one-line help."""
    helps = {a.dest: a.help for a in sub._choices_actions}
    listed = "; ".join(f"{name}: {helps.get(name) or ''}".rstrip(": ") for name in sub.choices)
    return ("Replay, check, compact and sweep coding-agent transcripts and session logs under NanoHermes's context "
            f"rules and other systems' policies, in bytes, tokens and dollars. Commands: {listed}.")
