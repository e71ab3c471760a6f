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

from .calibrate import Calibration, CacheRule, Fit
from .pricing import Pricing

__all__ = ["WHATIF_COLUMNS", "ToolEvent", "replay_cost", "whatif_row", "tool_events"]

WHATIF_COLUMNS = ("policy", "source", "requests", "compactions", "prompt_tokens", "cached_tokens",
                  "cost_usd", "needed_later", "needed_later_items")


@dataclass(frozen=True)
class ToolEvent:
    """One of the tool's own compactions as its log records it."""

    request: int  # the first request after it (1-based, as in a ledger)
    index: int  # message index of the compaction in the transcript
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
    for j, (n, c, o) in enumerate(zip(rows["input_tokens"], rows["cached_tokens"], rows["output_tokens"])):
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
    money = replay_cost(ledger, times, calibration.fit, calibration.rule, pricing, eff)
    t = ledger.totals
    return {"policy": ledger.policy, "source": "replay", "requests": t.requests, "compactions": t.compactions,
            **money, "needed_later": t.needed_later, "needed_later_items": t.needed_later_items}


def tool_events(transcript: Any, request_index: Sequence[int]) -> list[ToolEvent]:
    """The tool's own compactions, each with the request after it and its needed-later retention.

    ``request_index[j]`` is the message index of request ``j``. What a
    compaction removed is the context since the previous one (or the start);
    what it kept is the transcript's message at its index (the summary the tool
    wrote) and, for Codex, the replacement history it carried.
    """
    from bisect import bisect_left

    from .needed import IdentifierIndex, needed_later

    messages = list(transcript)
    index = IdentifierIndex(messages)
    out: list[ToolEvent] = []
    start = 0
    for c in getattr(transcript, "compactions", ()) or ():
        at = int(c.index)
        kept = messages[at:at + 1] + list(getattr(c, "kept", ()) or ())
        nl = needed_later(messages[start:at], kept, at + 1, index) if at > start else None
        request = bisect_left(request_index, at) + 1
        out.append(ToolEvent(request, at, getattr(c, "time", None), getattr(c, "pre_tokens", None),
                             getattr(c, "post_tokens", None), nl))
        start = at
    return out
