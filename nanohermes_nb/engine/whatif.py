"""What if the agent had compacted differently? The recorded session replayed under each policy, in dollars.

The model calibrated on the session's own bill (``calibrate``: hidden prefix,
token scale, output scale, cache rule and TTL, OpenAI's cache efficiency)
turns every replay's per-request tokens (o200k, ``costbook``) into the
provider's tokens and dollars: prompt = hidden + scale x context, cached =
hidden + scale x the part the rule reads (nothing after an idle gap longer
than the TTL; only the hidden prefix after an event that rewrote the start).
Beside the policies stand two rows for the agent itself, named after the tool
(``claude_code``, ``codex_cli``): what it was billed, and what the same model
says the recorded trajectory cost. Its compactions are the ones its log
records (read, not simulated), with the before/after tokens it reported.

Counterfactual caveat (``ledger.CAVEAT``): a replay assumes the recorded future
did not depend on what a policy dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .calibrate import CacheRule, Calibration, Fit
from .pricing import Pricing

__all__ = ["WHATIF_COLUMNS", "ToolEvent", "replay_cost", "whatif_row", "tool_events", "modelled_cost",
           "default_budget", "whatif", "tool_events_frame", "TOOL_EVENT_COLUMNS", "recorded_tool_rows",
           "with_tool_rows"]

WHATIF_COLUMNS = ("policy", "source", "requests", "compactions", "prompt_tokens", "cached_tokens",
                  "cost_usd", "needed_later", "needed_later_items")


@dataclass(frozen=True)
class ToolEvent:
    """One of the tool's own compactions as its log records it."""

    request: int  # the first request after it (1-based, as in a ledger)
    index: int  # transcript index of the first message recorded after it
    time: float | None
    pre_tokens: int | None
    post_tokens: int | None
    needed_later: Any = None  # needed.NeededLater


def replay_cost(ledger: Any, times: Sequence[float | None], fit: Fit, rule: CacheRule, pricing: Pricing,
                efficiency: float = 1.0) -> dict:
    """Provider tokens and dollars of a priced o200k ledger under the calibrated model.

    ``times[j]`` is when request ``j`` was sent (the recorded time: a replay
    keeps the agent's pace). The summarizer's requests are priced uncached.
    """
    rows = ledger.requests
    prompt = cached = 0.0
    cost = 0.0
    previous_time = None
    for j, (n, c, o) in enumerate(zip(rows["input_tokens"], rows["cached_tokens"], rows["output_tokens"], strict=True)):
        t = times[j] if j < len(times) else None
        p = fit.hidden + fit.scale * n
        idle = t is not None and previous_time is not None and t - previous_time > rule.ttl
        if j == 0 or idle:
            r = 0.0
        else:
            r = fit.hidden + fit.scale * c if c > 0 else fit.hidden
            r = min(rule.read(r) * efficiency, p)
        write = p - r if rule.provider == "anthropic" else 0.0
        cost += pricing.cost(round(p), round(r), round(fit.output_scale * o), round(write))
        prompt, cached, previous_time = prompt + p, cached + r, t if t is not None else previous_time
    t = ledger.totals
    summarizer = pricing.cost(round(fit.scale * (t.summarizer_input_tokens or 0)), 0,
                              round(fit.output_scale * (t.summarizer_output_tokens or 0)))
    return {"prompt_tokens": round(prompt), "cached_tokens": round(cached), "cost_usd": cost + summarizer}


def whatif_row(ledger: Any, times: Sequence[float | None], calibration: Calibration, pricing: Pricing) -> dict:
    """One policy's row of the what-if table."""
    eff = calibration.summary.get("cache_efficiency", 1.0) or 1.0
    if calibration.fit is None:
        raise ValueError("no fit: the session has too few billed requests to calibrate the model")
    money = replay_cost(ledger, times, calibration.fit, calibration.rule, pricing, eff)
    t = ledger.totals
    return {"policy": ledger.policy, "source": "replay", "requests": t.requests, "compactions": t.compactions,
            **money, "needed_later": t.needed_later, "needed_later_items": t.needed_later_items}


def tool_events(transcript: Any, request_index: Sequence[int]) -> list[ToolEvent]:
    """The tool's own compactions, each with the request after it and its needed-later retention.

    ``request_index[j]`` is the message index of request ``j``. What a
    compaction removed is the context since the previous one (or the start);
    what it kept is the context it went on from (``continuation``: the summary
    the tool wrote, Codex's replacement history).
    """
    from bisect import bisect_left

    from ..context.needed import IdentifierIndex, needed_later

    messages = list(transcript)
    index = IdentifierIndex(messages)
    out: list[ToolEvent] = []
    start = 0
    for c in getattr(transcript, "compactions", ()) or ():
        at = int(c.message)
        kept = list(c.continuation or ()) or ([{"role": "user", "content": c.summary}] if c.summary else [])
        nl = needed_later(messages[start:at], kept, at, index) if at > start else None
        request = bisect_left(request_index, at) + 1
        out.append(ToolEvent(request, at, getattr(c, "time", None), getattr(c, "pre_tokens", None),
                             getattr(c, "post_tokens", None), nl))
        start = at
    return out


def modelled_cost(calibration: Calibration, prices: Any) -> dict:
    """The recorded trajectory priced by the free-running model (no bill after the fit): the tool's own row.

    Same model as the replays: prompt = hidden + scale x visible, the cache rule
    on those estimates, the session's cache efficiency; so it is the row the
    policies compare with, and its distance from the bill shows the model's error.
    """
    rows = calibration.rows
    fit, rule = calibration.fit, calibration.rule
    eff = calibration.summary.get("cache_efficiency", 1.0) or 1.0
    prompt = cached = cost = 0.0
    previous = None
    for _, r in rows.iterrows():
        p = float(r["est_prompt_free"])
        if previous is None or r["model"] != previous["model"] or (
                r["time"] is not None and previous["time"] is not None and r["time"] - previous["time"] > rule.ttl):
            c = 0.0
        elif r["compacted"]:
            c = rule.read(fit.hidden + fit.scale * float(r["kept"])) if fit is not None else 0.0
        else:
            c = rule.read(float(previous["est_prompt_free"]))
        c = min(c * eff, p)
        pricing = prices.get(r["model"]) if isinstance(prices, dict) else prices
        if pricing is not None:
            write = p - c if rule.provider == "anthropic" else 0.0
            cost += pricing.cost(round(p), round(c), int(r["est_output"]), round(write))
        prompt, cached, previous = prompt + p, cached + c, r
    return {"prompt_tokens": round(prompt), "cached_tokens": round(cached), "cost_usd": cost}


def default_budget(transcript: Any, calibration: Calibration, fallback: int = 100_000) -> int:
    """The tool's own trigger in o200k tokens of visible context: the billed prompt of the last request
    before its first compaction, less the hidden prefix, unscaled (``fallback`` when it never compacted).

    (Claude Code's ``preTokens`` is not used: on the 2.1.219 log it says 998,659 where the last request
    before the compaction was billed 230,000 prompt tokens.)
    """
    fit, rows = calibration.fit, calibration.rows
    if fit is None or fit.scale <= 0 or not len(rows) or not rows["compacted"].any():
        return fallback
    first = int(rows.index[rows["compacted"]][0])
    if first == 0:
        return fallback
    before = float(rows["prompt"].iloc[first - 1])
    return max(1, round((before - fit.hidden) / fit.scale))


def whatif(transcript: Any, *, policies: Sequence[Any] | None = None, budget: int | None = None,
           calibration: Calibration | None = None) -> Any:
    """One row per policy replayed over the session, and the tool's own two rows (billed and modelled).

    ``budget`` (o200k tokens of the visible context) defaults to the tool's
    own trigger (``default_budget``). Each policy is priced by the session's
    main model under the calibrated model (``replay_cost``).
    """
    from ..policies import POLICIES
    from .bill import price_for_model, reported_requests, session_bill
    from .calibrate import calibrate
    from .frames import frame
    from .ledger import replay
    from .recorded import RecordedSession

    calibration = calibration or calibrate(transcript)
    if calibration.fit is None:
        raise ValueError("the session reports no usage: nothing to calibrate a what-if on")
    requests = reported_requests(transcript)
    models = [r.model for r in requests if r.usage is not None and r.model]
    main = max(set(models), key=models.count) if models else ""
    pricing = price_for_model(main)
    if pricing is None:
        raise ValueError(f"no price for model {main!r} in data/pricing.csv")
    from .calibrate import seconds

    times = [seconds(r.time) for r in requests]
    budget = budget if budget is not None else default_budget(transcript, calibration)
    session = RecordedSession.of(transcript)
    rows = []
    for name in (policies if policies is not None else list(POLICIES)):
        ledger = replay(session, policy=name, budget=budget, unit="o200k", pricing=pricing, needed_later=True,
                        profiles=(), retention=False, prefix_reuse=False)
        rows.append(whatif_row(ledger, times, calibration, pricing))
    agent = getattr(transcript, "agent", "") or "agent"
    events = tool_events(transcript, session.reply if len(session.messages) == len(transcript) else
                         [i - 1 for i in session.reply])
    scored = [e.needed_later for e in events if e.needed_later is not None]
    needed = sum(len(n.needed) for n in scored)
    kept = sum(len(n.kept) for n in scored)
    share = kept / needed if needed else None
    bill = session_bill(requests)
    prices = {m: price_for_model(m) for m in set(models)}
    modelled = modelled_cost(calibration, prices)
    rows.append({"policy": agent, "source": "billed", "requests": bill.requests, "compactions": len(events),
                 "prompt_tokens": bill.prompt_tokens, "cached_tokens": bill.cached_tokens, "cost_usd": bill.cost_usd,
                 "needed_later": share, "needed_later_items": needed})
    rows.append({"policy": agent, "source": "modelled", "requests": bill.requests, "compactions": len(events),
                 **modelled, "needed_later": share, "needed_later_items": needed})
    return frame(rows, list(WHATIF_COLUMNS))


def tool_events_frame(transcript: Any) -> Any:
    """The tool's own compactions as a table: policy (the tool), request, time, reported tokens before and after."""
    from .calibrate import seconds
    from .frames import frame
    from .recorded import RecordedSession

    session = RecordedSession.of(transcript)
    shift = len(session.messages) - len(transcript)
    agent = getattr(transcript, "agent", "") or "agent"
    rows = [{"policy": agent, "request": e.request, "index": e.index, "time": seconds(e.time),
             "pre_tokens": e.pre_tokens, "post_tokens": e.post_tokens,
             "needed_later": e.needed_later.score if e.needed_later else None,
             "needed_later_items": e.needed_later.items if e.needed_later else 0}
            for e in tool_events(transcript, [i - shift for i in session.reply])]
    return frame(rows, ["policy", "request", "index", "time", "pre_tokens", "post_tokens", "needed_later",
                        "needed_later_items"])


TOOL_EVENT_COLUMNS = ("transcript", "policy", "request", "index", "trigger", "pre_tokens", "post_tokens")


def recorded_tool_rows(sources: Sequence[tuple[str, Any]], needed_later: bool = False) -> tuple[list[dict], list[dict]]:
    """The tools' own compactions, read from their logs (not simulated): one row per tool, one per event.

    ``sources``: ``(name, transcript or path)`` pairs; a path is read only when
    its content says it is an agent log, and one that cannot be read is left
    to the sweep to report. Each tool's row (``policy`` named after the tool,
    ``claude_code``, ``codex_cli``) counts its logs, their requests and its
    compactions, and sums the context sizes the log reports around them
    (``reported_tokens_before`` / ``_after``, the provider's tokens); with
    ``needed_later``, the needed-later retention of its own compactions.
    """
    from bisect import bisect_left
    from pathlib import Path

    from ..transcripts import TranscriptError, load_transcript
    from ..transcripts.agentlogs.discovery import looks_like_agent_log

    tools: dict[str, dict] = {}
    events: list[dict] = []
    for name, item in sources:
        if isinstance(item, (str, Path)):
            try:
                item = load_transcript(item) if looks_like_agent_log(Path(item)) else None
            except (TranscriptError, OSError):
                item = None
        agent = getattr(item, "agent", "")
        if not agent:
            continue
        row = tools.setdefault(agent, {"policy": agent, "transcripts": 0, "requests": 0, "events": 0,
                                       "reported_tokens_before": None, "reported_tokens_after": None,
                                       "_needed": 0, "_kept": 0})
        requests = [int(r.message) for r in getattr(item, "requests", ()) or ()]
        compactions = tuple(getattr(item, "compactions", ()) or ())
        row["transcripts"] += 1
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
            scored = [e.needed_later for e in tool_events(item, requests) if e.needed_later is not None]
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
