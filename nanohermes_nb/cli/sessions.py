"""``sessions``: the coding agents' session logs found on this machine, or under DIR (read-only)."""

from __future__ import annotations

from ..views.tables import text_table
from .common import EXIT_OK, comment, plural, print_json, say, table_width

_USAGE = {"reported": "", "zeros": "no usage (all zeros)", "none": "no usage"}


def _when(t: float | None) -> str:
    import datetime

    if t is None:
        return ""
    try:
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError, OSError):  # epoch() keeps times in range; a caller's may not be
        return ""


def _cut_paths(table: list[dict], columns: list[str], width: int) -> None:
    """Paths longer than the room the columns before them leave are cut from the left (the file name stays)."""
    before = columns[:columns.index("path")]
    used = sum(max([len(c)] + [len(str(r[c])) for r in table]) + 1 for c in before)
    room = max(width - used, 8)
    for r in table:
        if len(r["path"]) > room:
            r["path"] = "\u2026" + r["path"][-(room - 1):]


def sessions_command(args) -> int:
    """One row per agent session found: agent, model, size, requests, sub-agents, time span, usage, path.

    A folder is searched recursively, and a backed-up home's ``.claude``, ``.codex``, ``.gemini`` and
    ``.copilot`` folders inside it too; the table fits ``COLUMNS`` (the path is cut first; ``--wide``
    shows everything)."""
    import dataclasses

    from ..transcripts.agentlogs import find_sessions

    found = find_sessions(args.roots or None)
    rows = [dataclasses.asdict(s) for s in found]
    if args.json:
        print_json(rows)
        return EXIT_OK
    table = [{"agent": r["agent"], "model": r["model"], "size": f"{r['size'] / 1e6:.1f} MB",
              "requests": r["requests"], "sub-agents": r["sub_agents"] or "", "compactions": r["compactions"],
              "start (UTC)": _when(r["start"]),
              "hours": "" if r["start"] is None or r["end"] is None else f"{(r['end'] - r['start']) / 3600:.1f}",
              "usage": _USAGE.get(r["usage"], ""), "path": r["path"]} for r in rows]
    columns = ["agent", "requests", "usage", "start (UTC)", "path", "model", "size", "sub-agents", "compactions",
               "hours"]  # narrowed from the right; the path is cut only when it alone is too wide
    if not any(r["usage"] for r in table):
        columns.remove("usage")
    width = table_width(args)
    if width is not None:
        _cut_paths(table, columns, width)
    lines, hidden = text_table(table, columns, width=width, shrink=("model",))
    say(comment(f"{plural(len(rows), 'session')} found" + ("" if args.roots else " in the usual folders")
                + (f"; {plural(len(hidden), 'column')} more with --wide" if hidden else ""), width))
    say(lines)
    return EXIT_OK
