"""``whatif``: what each policy and budget would have cost on your own sessions, against what they were billed.

One row per session x policy x budget (x keep_recent), priced by the one cost model
(``engine/costmodel.py``, inside the replay: ``engine/modelbook.py``) with the band its
leave-one-session-out validation gives, then the agent's own rows (billed, and modelled by the same
model); with several sessions, their total (``session`` "total"). ``--json`` and ``--csv`` print
every column to stdout; the default is a table that fits ``COLUMNS``, which cost model priced each
session, in one line, and the counterfactual caveat. Nothing is written anywhere.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import EXIT_OK, UsageError, comment, load, pricing_named, print_json, records, say, table_width

if TYPE_CHECKING:
    from ..engine.modelbook import SessionModel

WHATIF_TABLE = ("policy", "source", "budget", "keep_recent", "cost_usd", "band_usd", "saving_usd", "compactions",
                "summarizer_calls", "needed_later", "saving_share")
HEADERS = {"keep_recent": "keep", "cost_usd": "cost_usd", "band_usd": "band_usd", "saving_usd": "saving",
           "compactions": "events", "summarizer_calls": "calls", "needed_later": "needed", "saving_share": "saving%"}


def add_whatif(sub, sizes, counts) -> None:
    """The ``whatif`` subcommand (``sizes``/``counts``: the parser's value types for budgets and keep_recent)."""
    p = sub.add_parser("whatif", help="what other policies and budgets would have cost on agent logs, with a band")
    p.add_argument("sessions", nargs="+", metavar="SESSION",
                   help="Claude Code or Codex session logs, or folders of them (every session found there that "
                        "reports usage); transcripts with no bill with --pricing")
    p.add_argument("--budgets", type=sizes, help="comma-separated budgets in o200k tokens of visible context "
                                                 "(default: each session's own tool's trigger)")
    p.add_argument("--policies", help="comma-separated policy names (default: every policy)")
    p.add_argument("--keep-recent", type=counts, help="values for the policies that keep recent messages")
    p.add_argument("--pricing", metavar="NAME", help="a transcript with no bill only: price its visible text at "
                                                     "this preset (uncalibrated); an agent log's own models price it")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="every column as a JSON list of rows")
    out.add_argument("--csv", action="store_true", help="every column as CSV on stdout")
    p.add_argument("--wide", action="store_true", help="every column, however wide")


def _policies(text: str | None) -> list[str] | None:
    from ..policies import POLICIES

    if text is None:
        return None
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [n for n in names if n not in POLICIES]
    if unknown or not names:
        raise UsageError(f"--policies: unknown policy {', '.join(unknown) or repr(text)}; "
                         f"known: {', '.join(sorted(POLICIES))}")
    return names


@dataclass(frozen=True)
class WhatifSession:
    """One SESSION of the command: its exact rows and its model, or (no bill) its visible-text frame."""

    path: str
    rows: list[dict] = field(default_factory=list)
    model: SessionModel | None = None
    frame: Any = None


def _session(path: str, args: argparse.Namespace, policies: list[str] | None) -> WhatifSession:
    """One session's rows; a file that cannot be priced is one line, exit 2."""
    from ..engine.whatif import whatif_rows, whatif_visible
    from ..transcripts.session import Session

    transcript = Session.of(load(path))
    try:
        if not transcript.billed:
            if args.pricing is None:
                raise UsageError(f"{path}: no bill to fit the cost model on (not a Claude Code or Codex log with "
                                 "usage); --pricing NAME prices its visible text, uncalibrated")
            frame = whatif_visible(transcript, pricing_named(args.pricing), policies=policies, budgets=args.budgets,
                                   keep_recent=args.keep_recent)
            frame.insert(0, "session", path)
            return WhatifSession(path, frame=frame)
        rows, model, _ = whatif_rows(transcript, policies=policies, budgets=args.budgets, keep_recent=args.keep_recent)
    except TypeError as exc:  # keep_recent for policies that have no such option
        raise UsageError(str(exc)) from None
    except ValueError as exc:  # no usage to fit on
        raise UsageError(f"{path}: {exc}") from None
    return WhatifSession(path, [{**r, "session": path} for r in rows], model)


def session_paths(given: list[str]) -> list[str]:
    """The files named, and for a folder every agent session in it whose log reports usage (``find_sessions``:
    a Claude Code sub-agent's own file goes with its parent's session); a folder with none is a usage error."""
    from ..transcripts.agentlogs import find_sessions

    out: list[str] = []
    for path in given:
        if not os.path.isdir(path):
            out.append(path)
            continue
        found = [s.path for s in find_sessions([path]) if s.usage == "reported"]
        if not found:
            raise UsageError(f"{path}: no agent session that reports usage found in this folder")
        out += found
    return out


def whatif_command(args: argparse.Namespace) -> int:
    """Replay each session under each setting and print the predicted costs beside the bill (and their total)."""
    import pandas as pd

    from ..engine.whatif import whatif_frame, whatif_total

    policies = _policies(args.policies)
    sessions = [_session(path, args, policies) for path in session_paths(args.sessions)]
    billed = [s for s in sessions if s.model is not None]
    frames = [s.frame if s.model is None else whatif_frame(s.rows, s.model.billed_usd, s.model.band)
              for s in sessions]
    if len(billed) > 1:
        frames.append(whatif_total([(s.rows, s.model) for s in billed if s.model is not None],
                                   own_budgets=args.budgets is None))
    frame = pd.concat(frames, ignore_index=True)
    if args.json:
        print_json(records(frame))
        return EXIT_OK
    if args.csv:
        import sys

        frame.to_csv(sys.stdout, index=False)
        return EXIT_OK
    _print_table(frame, _notes(sessions, billed, frames, args), args, several=len(sessions) > 1)
    return EXIT_OK


def _notes(sessions: list[WhatifSession], billed: list[WhatifSession], frames: list,
           args: argparse.Namespace) -> list[str]:
    """Which model priced each session, where its budget came from, what has no price, what the total adds."""
    notes = []
    for s in sessions:
        if s.model is None:
            notes.append(f"{s.path}: {s.frame.attrs['cost_model']}")
            continue
        notes.append(f"{s.path}: {s.model.describe()}")
        if args.budgets is None:
            notes.append(f"{s.path}: budget {_own_budget(s.model)}")
        if s.model.bill.unpriced:
            notes.append(f"{s.path}: no price for {', '.join(s.model.bill.unpriced)}: no dollars")
    if len(billed) > 1:
        band = frames[-1].attrs["band"]
        own = "; each session at its own tool's trigger" if args.budgets is None else ""
        notes.append(f"total (the sessions with a bill): each session's dollars summed, with the widest band of "
                     f"them ({band:.0%}){own}")
    if billed and len(billed) < len(sessions):
        notes.append("sessions with no bill are left out of the total: their dollars are another model's")
    return notes


def _own_budget(model) -> str:
    """Where the default budget came from: the tool's own trigger, else half the session's largest context."""
    from ..engine.whatif import default_budget, own_trigger

    budget = default_budget(model)
    if own_trigger(model) is not None:
        return f"{budget:,}: the tool's own trigger (the visible context before its first compaction)"
    return f"{budget:,}: half the largest visible context (the tool did not compact after its first request)"


def _band(row: dict) -> str:
    low, high = row.get("cost_low_usd"), row.get("cost_high_usd")
    if low is None or high is None or row.get("source") == "billed":
        return "-"
    return f"{low:g}-{high:g}"


def _cell(row: dict) -> dict:
    """A row as the table shows it: dollars as the band rounded them, retention as a percentage."""
    out = dict(row)
    out["band_usd"] = _band(row)
    cost = row.get("cost_usd")
    if row.get("source") == "billed":
        out["cost_usd"] = "unpriced" if cost is None else f"{cost:.2f}"
    else:
        out["cost_usd"] = "unpriced" if cost is None else f"{cost:g}"
    out["saving_usd"] = "-" if row.get("saving_usd") is None or row.get("source") == "billed" else \
        f"{row['saving_usd']:g}"
    share = row.get("saving_share")
    out["saving_share"] = "-" if share is None or row.get("source") == "billed" else f"{share:.0%}"
    kept = row.get("needed_later")
    out["needed_later"] = "-" if kept is None else f"{kept:.0%}"
    if out.get("session") not in (None, "total"):
        out["session"] = Path(str(out["session"])).name
    return out


def _print_table(frame, notes: list[str], args, several: bool) -> None:
    from ..engine.ledger import CAVEAT
    from ..views.tables import text_table

    rows = [_cell(r) for r in records(frame)]
    width = table_width(args)
    columns = list(frame.columns) + ["band_usd"] if args.wide else (["session"] if several else []) + list(WHATIF_TABLE)
    lines, hidden = text_table(rows, columns, headers=HEADERS, width=width, shrink="session")
    legend = ("cost_usd: predicted by the cost model, rounded to its band (billed: the log's bill; a transcript with "
              "no bill: its visible text at --pricing, see its note); band_usd: the "
              "leave-one-out band; saving: billed less predicted (its band: billed less band_usd); events: "
              "compactions; calls: summarizer calls; needed: needed-later retention; budgets in o200k tokens of "
              "visible context")
    if hidden:
        legend += f"; --wide, --json or --csv for {', '.join(hidden)}"
    say(comment(legend, width))
    say(lines)
    for note in notes:
        say(comment(note, width))
    say(comment(CAVEAT, width))
