"""``report [DIR...]``: tokens and dollars per day, project, model and session, and where the money went.

The reports ccusage gives (daily, per session, per model), from every agent the package reads, with
sub-agents attributed to their session, cache writes split into five-minute and one-hour ones, and a
model nothing prices shown as "unpriced" (never $0). Read-only: nothing is written anywhere.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..views.tables import text_table
from .common import EXIT_BAD_INPUT, EXIT_OK, comment, err, plural, print_json, say, table_width

__all__ = ["add_report_parser", "report_command"]

_TABLES = ("parts", "day", "project", "model", "session", "tools")
_HEADERS = {"cost_usd": "USD", "total_tokens": "tokens", "cache_write_5m": "write 5m", "cache_write_1h": "write 1h",
            "cache_read": "read", "sub_agent_requests": "sub-agent", "requests": "requests"}
_GROUP_COLUMNS = ("cost_usd", "total_tokens", "requests", "input", "cache_write_5m", "cache_write_1h", "cache_read",
                  "output", "reasoning", "sub_agent_requests", "unpriced")


def add_report_parser(sub: Any) -> None:
    """The ``report`` subcommand's grammar (called from ``parser.build_parser``)."""
    p = sub.add_parser("report", help="tokens and dollars per day, project, model and session (read-only)",
                       description="Read the agents' logs under DIR (default: the usual folders; a backed-up "
                                   "home works: its .claude, .codex, .gemini and .copilot are searched) and print "
                                   "where the money went and the totals per day, project, model and session.")
    p.add_argument("roots", nargs="*", metavar="DIR", help="folders or files (default: the agents' usual folders)")
    p.add_argument("--tables", default="parts,day,project,model,session",
                   help=f"comma-separated tables to print, of {', '.join(_TABLES)} (default: all but tools)")
    p.add_argument("--sessions", type=int, default=15, metavar="N",
                   help="the N dearest sessions in the session table (default 15; 0: all)")
    p.add_argument("--wide", action="store_true", help="every column, however wide")
    p.add_argument("--json", action="store_true", help="every table as JSON")


def _tables(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in names if t not in _TABLES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"--tables takes {', '.join(_TABLES)}, got {text!r}")
    return names


def _money(value: Any, unpriced: str) -> str:
    if value is None:
        return "unpriced"
    text = f"{value:,.4f}" if 0 < value < 0.01 else f"{value:,.2f}"
    return text + ("+?" if unpriced else "")  # +?: the group also holds unpriced requests


def _compute(args, names: list[str]) -> tuple[Any, dict[str, list[dict]]]:
    from ..engine.usage_report import money_parts, summarize, tool_outputs, usage_rows
    from ..transcripts.agentlogs.discovery import default_roots

    found = usage_rows(args.roots or default_roots(), keep_sessions="tools" in names)
    out: dict[str, list[dict]] = {}
    for name in names:
        if name == "parts":
            out[name] = money_parts(found.rows)
        elif name == "tools":
            out[name] = tool_outputs(found.sessions)
        else:
            rows = summarize(found.rows, name)
            if name == "session":
                rows.sort(key=lambda r: -(r["cost_usd"] or 0.0))
                rows = rows[:args.sessions] if args.sessions > 0 else rows
            out[name] = rows
    return found, out


def report_command(args) -> int:
    """Print the report (``--json``: every table as JSON); exit 2 when no log with usage was found."""
    from ..engine.usage_report import summarize

    try:
        names = _tables(args.tables)
    except argparse.ArgumentTypeError as exc:
        err(f"nanohermes-nb report: error: {exc}")
        return EXIT_BAD_INPUT
    found, tables = _compute(args, names)
    for line in found.skipped:
        err(f"nanohermes-nb: skipped: {line}")
    if not found.rows:
        err("nanohermes-nb report: error: no agent log with reported usage found"
            + (f" under {', '.join(args.roots)}" if args.roots else " in the usual folders"))
        return EXIT_BAD_INPUT
    totals = summarize(found.rows, "agent")
    if args.json:
        print_json({"agents": totals, **tables, "notes": found.notes})
        return EXIT_OK
    width = table_width(args)
    say(comment(_headline(found.rows, totals), width))
    for note in found.notes:  # what was counted once (a copy, a forked history), never silently
        say(comment(note, width))
    for name in names:
        say([""] + comment(_TITLES[name], width))
        say(_render(name, tables[name], width))
    return EXIT_OK


_TITLES = {"parts": "where the money went (priced requests; reasoning is billed as output)",
           "day": "per day (UTC)", "project": "per project (the log's working folder)", "model": "per model",
           "session": "the dearest sessions (sub-agents counted with the session that started them)",
           "tools": "which tool outputs filled the window, the 20 largest (estimated tokens; --json: all)"}


def _headline(rows: list, totals: list[dict]) -> str:
    sessions = len({r.session for r in rows})
    cost = sum(t["cost_usd"] or 0.0 for t in totals)
    unpriced = sorted({m for t in totals for m in t["unpriced"].split(", ") if m})
    subs = sum(r.sub_agent for r in rows)
    return (f"{plural(sessions, 'session')}, {plural(len(rows), 'request')} with usage"
            + (f" ({subs:,} by sub-agents)" if subs else "")
            + f"; {sum(t['total_tokens'] for t in totals):,} tokens; {cost:,.2f} USD"
            + (f" (unpriced: {', '.join(unpriced)}; their tokens are counted, not their dollars)" if unpriced else "")
            + "; prices: LiteLLM's table as litellm ships it, and the package's hand rows (engine/prices.py)")


def _render(name: str, rows: list[dict], width: int | None) -> list[str]:
    if name == "parts":
        cells = [{**r, "cost_usd": f"{r['cost_usd']:,.2f}", "share": "" if r["share"] is None else
                  f"{r['share']:.1%}"} for r in rows]
        lines, _ = text_table(cells, ["part", "cost_usd", "share", "tokens"], headers=_HEADERS, width=width)
        return lines
    if name == "tools":
        cells = [{**r, "share": f"{r['share']:.1%}"} for r in rows[:20]]
        lines, _ = text_table(cells, ["tool", "tokens_approx", "share", "results", "largest"], width=width,
                              headers={"tokens_approx": "tokens"})
        return lines
    first = [name] + (["agent", "models"] if name == "session" else [])
    cells = [{**r, "cost_usd": _money(r["cost_usd"], r["unpriced"])} for r in rows]
    if name == "session":
        cells = [{**c, name: c[name].rsplit("/", 1)[-1]} for c in cells]
    lines, hidden = text_table(cells, [*first, *_GROUP_COLUMNS], headers=_HEADERS, width=width,
                               shrink=("models", "session", "unpriced"))
    if hidden:
        lines.append(f"({plural(len(hidden), 'column')} more with --wide or --json: {', '.join(hidden)})")
    return lines
