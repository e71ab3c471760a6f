"""The agent's own compactions, read from its log (not simulated): per event, per tool, as rows beside the policies'.

``tool_events`` pairs each of the tool's compactions with the request after it and its needed-later
retention; ``recorded_tool_rows`` sums them per tool for ``compare_policies``; ``tool_events_frame``
is the table notebook 20 and ``whatif`` show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..transcripts.session import Session, SessionLike

__all__ = ["ToolEvent", "tool_events", "tool_events_frame", "TOOL_EVENT_COLUMNS", "recorded_tool_rows",
           "with_tool_rows", "agent_log"]


@dataclass(frozen=True)
class ToolEvent:
    """One of the tool's own compactions as its log records it."""

    request: int  # the first request after it (1-based, as in a ledger)
    index: int  # transcript index of the first message recorded after it
    time: float | None
    pre_tokens: int | None
    post_tokens: int | None
    needed_later: Any = None  # needed.NeededLater


def tool_events(transcript: SessionLike, request_index: Sequence[int], index: Any = None,
                shift: int = 0) -> list[ToolEvent]:
    """The tool's own compactions, each with the request after it and its needed-later retention.

    ``request_index[j]`` is the message index of request ``j``. What a
    compaction removed is the context since the previous one (or the start);
    what it kept is the context it went on from (``continuation``: the summary
    the tool wrote, Codex's replacement history). ``index``: an ``IdentifierIndex``
    built already over the transcript's messages with ``shift`` more in front (a
    replay's session, which may prepend a system message); else one is built.
    """
    from bisect import bisect_left

    from ..context.needed import IdentifierIndex, needed_later

    log = Session.of(transcript)
    messages = log.messages
    if index is None:
        index, shift = IdentifierIndex(messages), 0
    out: list[ToolEvent] = []
    start = 0
    for c in log.compactions:
        at = int(c.message)
        kept = list(c.continuation or ()) or ([{"role": "user", "content": c.summary}] if c.summary else [])
        nl = needed_later(messages[start:at], kept, at + shift, index) if at > start else None
        request = bisect_left(request_index, at) + 1
        out.append(ToolEvent(request, at, c.time, c.pre_tokens, c.post_tokens, nl))
        start = at
    return out


def tool_events_frame(transcript: SessionLike) -> Any:
    """The tool's own compactions as a table: policy (the tool), request, time, reported tokens before and after."""
    from .calibrate import seconds
    from .frames import frame
    from .recorded import RecordedSession

    log = Session.of(transcript)
    session = RecordedSession.of(log)
    shift = len(session.messages) - len(log.messages)
    agent = log.agent or "agent"
    rows = [{"policy": agent, "request": e.request, "index": e.index, "time": seconds(e.time),
             "pre_tokens": e.pre_tokens, "post_tokens": e.post_tokens,
             "needed_later": e.needed_later.score if e.needed_later else None,
             "needed_later_items": e.needed_later.items if e.needed_later else 0}
            for e in tool_events(log, [i - shift for i in session.reply])]
    return frame(rows, ["policy", "request", "index", "time", "pre_tokens", "post_tokens", "needed_later",
                        "needed_later_items"])


TOOL_EVENT_COLUMNS = ("transcript", "policy", "request", "index", "trigger", "pre_tokens", "post_tokens")


def recorded_tool_rows(sources: Sequence[tuple[str, Any]], needed_later: bool = False) -> tuple[list[dict], list[dict]]:
    """The tools' own compactions, read from their logs (not simulated): one row per tool, one per event.

    ``sources``: ``(name, transcript, session or path)`` pairs; a path is read only when
    its content says it is an agent log, and one that cannot be read is left
    to the sweep to report. Each tool's row (``policy`` named after the tool,
    ``claude_code``, ``codex_cli``) counts its logs, their requests and its
    compactions, and sums the context sizes the log reports around them
    (``reported_tokens_before`` / ``_after``, the provider's tokens); with
    ``needed_later``, the needed-later retention of its own compactions; ``billed_usd``, what its
    logs say was billed (``bill.session_bill``; None when a model of them has no price).
    """
    from bisect import bisect_left

    tools: dict[str, dict] = {}
    events: list[dict] = []
    for name, item in sources:
        log = agent_log(item)
        if log is None:
            continue
        agent = log.agent
        row = tools.setdefault(agent, {"policy": agent, "transcripts": 0, "requests": 0, "events": 0,
                                       "reported_tokens_before": None, "reported_tokens_after": None,
                                       "billed_usd": 0.0, "_needed": 0, "_kept": 0})
        requests = [int(r.message) for r in log.requests]
        compactions = log.compactions
        row["transcripts"] += 1
        row["billed_usd"] = _add_bill(row["billed_usd"], log)
        row["requests"] += len(requests)
        for c in compactions:
            row["events"] += 1
            for key, value in (("reported_tokens_before", c.pre_tokens), ("reported_tokens_after", c.post_tokens)):
                if value is not None:
                    row[key] = (row[key] or 0) + int(value)
            events.append({"transcript": name, "policy": agent, "request": bisect_left(requests, int(c.message)) + 1,
                           "index": int(c.message), "trigger": c.trigger, "pre_tokens": c.pre_tokens,
                           "post_tokens": c.post_tokens})
        if needed_later and compactions:
            scored = [e.needed_later for e in tool_events(log, requests) if e.needed_later is not None]
            row["_needed"] += sum(len(n.needed) for n in scored)
            row["_kept"] += sum(len(n.kept) for n in scored)
    rows = []
    for row in tools.values():
        needed, kept = row.pop("_needed"), row.pop("_kept")
        if needed_later:
            row["needed_later"] = round(kept / needed, 4) if needed else None
            row["needed_later_items"] = needed
        rows.append(row)
    return rows, events


def agent_log(item: Any) -> Session | None:
    """``item`` (a path, a transcript or a session) as a ``Session`` when it is a coding agent's own log, else None.

    A path is read only when its content says it is an agent log; one that cannot be read gives None (the
    sweep reports it)."""
    from pathlib import Path

    from ..transcripts import TranscriptError, load_transcript
    from ..transcripts.agentlogs.discovery import looks_like_agent_log
    from .recorded import RecordedSession

    if isinstance(item, (str, Path)):
        try:
            item = load_transcript(item) if looks_like_agent_log(Path(item)) else None
        except (TranscriptError, OSError):
            return None
    if item is None:
        return None
    if isinstance(item, RecordedSession):  # a session already cut into requests: the log it was cut from, if any
        item = item.source
        if item is None:
            return None
    log = Session.of(item)
    return log if log.agent else None


def _add_bill(total: float | None, log: Session) -> float | None:
    """``total`` plus what the log says was billed; None once any log names a model with no price."""
    from .bill import session_bill

    bill = session_bill(log.requests)
    return None if total is None or bill.unpriced else total + bill.cost_usd


def with_tool_rows(table: Any, rows: Sequence[dict]) -> Any:
    """``compare_policies``' table with the tools' rows after the policies' (integer columns stay integers)."""
    import pandas as pd

    from .frames import frame

    if not rows:
        return table
    extra = frame(list(rows)).set_index("policy")
    out = pd.concat([table, extra])
    counts = ("transcripts", "requests", "events", "reported_tokens_before", "reported_tokens_after")
    for c in out.columns:
        if c in counts or (c in table.columns and pd.api.types.is_integer_dtype(table[c].dtype)):
            out[c] = out[c].astype("Int64")
    out.attrs.update(table.attrs)
    return out
