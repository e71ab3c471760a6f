"""``sessions``: the coding agents' session logs found on this machine (read-only)."""

from __future__ import annotations

from ..views.tables import text_table
from .common import EXIT_OK, comment, plural, print_json, say


def sessions_command(args) -> int:
    """One row per agent session found: agent, model, size, requests, time span, path."""
    import dataclasses
    import datetime

    from ..transcripts.agentlogs import find_sessions

    rows = [dataclasses.asdict(s) for s in find_sessions(args.roots or None)]
    if args.json:
        print_json(rows)
        return EXIT_OK

    def when(t):
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M") if t else ""

    table = [{"agent": r["agent"], "model": r["model"], "size": f"{r['size'] / 1e6:.1f} MB",
              "requests": r["requests"], "compactions": r["compactions"], "start (UTC)": when(r["start"]),
              "hours": "" if r["start"] is None else f"{(r['end'] - r['start']) / 3600:.1f}", "path": r["path"]}
             for r in rows]
    lines, _ = text_table(table, list(table[0]) if table else ["agent"], width=None)
    say(comment(f"{plural(len(rows), 'session')} found" + ("" if args.roots else " in the usual folders")))
    say(lines)
    return EXIT_OK

