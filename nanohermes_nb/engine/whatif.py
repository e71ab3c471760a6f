"""What if the agent had compacted differently? The recorded session replayed under each policy, in dollars.

The rows are a ``sweep`` of the session (one per policy x budget x keep_recent, o200k tokens of
visible context), so they are priced as every table of an agent log is: by the one model of
``costmodel`` inside the replay (``modelbook.ModelBook``: free-running, hidden prefix, token scale,
the cache rule with its time-to-live, 5-minute and 1-hour writes, each request priced by its own
model), fitted on the session's first ``FIT_REQUESTS`` billed requests and the priors learned on
other sessions (``cost_priors.json``). A sweep row, a ledger's totals and a ``compare_policies``
row of the same session and setting hold the same dollars; here they are rounded to the band, the
model's own leave-one-session-out error (``validation``: the 90th percentile of |cost error| over
the priced sessions of 30 requests or more).

Beside the policies stand the agent's own rows, named after the tool (``claude_code``,
``codex_cli``): what it was **billed**, and what the same model predicts for the recorded
trajectory (**modelled**: its distance from the bill is the model's error on this session).
Its compactions are the ones its log records (``toolrows``), not simulated. ``whatif_total``
adds several sessions' rows up.

Counterfactual caveat (``ledger.CAVEAT``): a replay assumes the recorded future did not depend
on what a policy dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..transcripts.session import Session, SessionLike
from .costmodel import Priors, Tokens, request_dollars
from .modelbook import DEFAULT_BAND, SessionModel, finite, rule_pricing
from .toolrows import (  # noqa: F401  (re-exported: their old home)
    TOOL_EVENT_COLUMNS,
    ToolEvent,
    recorded_tool_rows,
    tool_events,
    tool_events_frame,
    with_tool_rows,
)

__all__ = ["WHATIF_COLUMNS", "whatif", "whatif_rows", "whatif_total", "whatif_frame", "whatif_visible",
           "has_usage", "round_figures", "default_budget", "own_trigger", "steps_cost", "round_to_band", "money",
           "session_model", "SessionModel", "tool_events_frame", "tool_events", "recorded_tool_rows",
           "with_tool_rows", "TOOL_EVENT_COLUMNS", "ToolEvent", "DEFAULT_BAND"]

WHATIF_COLUMNS = ("policy", "source", "budget", "keep_recent", "requests", "compactions", "summarizer_calls",
                  "cost_usd", "cost_low_usd", "cost_high_usd", "saving_usd", "saving_low_usd", "saving_high_usd",
                  "saving_share", "needed_later", "needed_later_items")


def session_model(transcript: SessionLike, priors: Priors | None = None) -> SessionModel:
    return SessionModel(transcript, priors)


def steps_cost(tokens: Sequence[Tokens], models: Sequence[str], prices: dict) -> float | None:
    """Dollars of predicted requests, each at its own model's price; None when any is unpriced."""
    total = 0.0
    for t, m in zip(tokens, models, strict=True):
        c = request_dollars(t, prices.get(m))
        if c is None:
            return None
        total += c
    return total


def round_to_band(value: float | None, band: float) -> float | None:
    """``value`` rounded to a step no finer than a fifth of its band (1, 2 or 5 times a power of ten)."""
    if value is None or not math.isfinite(value):
        return None
    width = abs(value) * band
    if width <= 0:
        return round(value, 2)
    raw = width / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(k * power for k in (1, 2, 5, 10) if k * power >= raw)
    return round(round(value / step) * step, 10)


def own_trigger(model: SessionModel) -> int | None:
    """The tool's own trigger in o200k tokens of visible context: the visible context of the last request
    before its first compaction after the session's first request (None: it never compacted later)."""
    facts = model.case.facts
    first = next((k for k, f in enumerate(facts) if f.compacted), None)
    return None if not first else max(1, int(facts[first - 1].visible))


def default_budget(model: SessionModel, fallback: int | None = None) -> int:
    """The tool's own trigger (``own_trigger``); without one, ``fallback`` (default: half the session's largest
    visible context, so that the policies act)."""
    own = own_trigger(model)
    if own is not None:
        return own
    if fallback is not None:
        return fallback
    return max(1, int(max((f.visible for f in model.case.facts), default=2) // 2))


def money(cost: float | None, billed: float | None, band: float) -> dict:
    """A predicted cost with its band and its saving against the bill with the same band, each rounded to what the
    band supports (the saving's width is the cost's: ``band x cost`` either way)."""
    if cost is None:
        return dict.fromkeys(("cost_usd", "cost_low_usd", "cost_high_usd", "saving_usd", "saving_low_usd",
                              "saving_high_usd", "saving_share"))
    saving = None if billed is None else billed - cost
    relative = band * cost / max(abs(saving), 1e-9) if saving is not None else band  # the band, as a share of it

    def off(x: float | None) -> float | None:  # a saving, rounded as finely as its band allows
        return None if x is None else round_to_band(x, band * cost / max(abs(x), 1e-9))

    return {"cost_usd": round_to_band(cost, band), "cost_low_usd": round_to_band(cost * (1 - band), band),
            "cost_high_usd": round_to_band(cost * (1 + band), band),
            "saving_usd": off(saving), "saving_low_usd": off(None if billed is None else billed - cost * (1 + band)),
            "saving_high_usd": off(None if billed is None else billed - cost * (1 - band)),
            "saving_share": None if saving is None or not billed else round_to_band(saving / billed, relative)}


def _policy_rows(session: Any, pricing: Any, policies: Sequence[Any], budgets: Sequence[int],
                 keep_recent: Sequence[int] | None) -> list[dict]:
    """A sweep of the session under every setting, priced as every table prices it (``modelbook.cost_book``):
    exact dollars."""
    from .sweep import sweep

    rows = sweep([session], policies=list(policies), budgets=list(budgets), keep_recent=keep_recent,
                 unit="o200k", pricing=pricing, needed_later=True, profiles=(), retention=False,
                 prefix_reuse=False)
    out = []
    for r in rows.to_dict("records"):
        kr = r["keep_recent"]
        out.append({"policy": r["policy"], "source": "replay", "budget": int(r["budget"]),
                    "keep_recent": None if kr is None or kr != kr else int(kr), "requests": int(r["requests"]),
                    "compactions": int(r["compactions"]), "summarizer_calls": int(r["summarizer_calls"]),
                    "cost": finite(r["cost_usd"]), "needed_later": finite(r["needed_later"]),
                    "needed_later_items": int(r["needed_later_items"] or 0)})
    return out


def _agent_rows(model: SessionModel) -> list[dict]:
    """The tool's own rows: billed (the log's bill) and modelled (the same model on the recorded trajectory)."""
    t, s = model.transcript, model.session
    shift = len(s.messages) - len(t.messages)
    events = tool_events(t, [i - shift for i in s.reply], index=s.cache.identifiers(), shift=shift)
    scored = [e.needed_later for e in events if e.needed_later is not None]
    needed = sum(len(n.needed) for n in scored)
    share = sum(len(n.kept) for n in scored) / needed if needed else None
    modelled = model.recorded_cost()
    common = {"policy": model.agent, "budget": None, "keep_recent": None, "requests": model.bill.n_requests,
              "compactions": len(events), "summarizer_calls": len(events), "needed_later": share,
              "needed_later_items": needed}
    return [{**common, "source": "billed", "cost": model.billed_usd},
            {**common, "source": "modelled", "cost": modelled}]


def whatif_rows(transcript: SessionLike, *, policies: Sequence[Any] | None = None, budgets: Sequence[int] | None = None,
                budget: int | None = None, keep_recent: Sequence[int] | None = None, priors: Priors | None = None,
                model: SessionModel | None = None) -> tuple[list[dict], SessionModel, list[int]]:
    """The rows of ``whatif`` with exact dollars (``cost``, not rounded), the session's model and the budgets."""
    from ..policies import POLICIES

    model = model or SessionModel(transcript, priors)
    if model.fit is None:
        raise ValueError("no request of the session reports a prompt: no cost model can be fitted on it")
    chosen = list(policies) if policies is not None else list(POLICIES)
    sizes = list(budgets) if budgets is not None else [budget if budget is not None else default_budget(model)]
    rows = _policy_rows(model.session, rule_pricing(model.provider), chosen, sizes, keep_recent)
    return rows + _agent_rows(model), model, sizes


def whatif_frame(rows: Sequence[dict], billed: float | None, band: float) -> Any:
    from .frames import frame

    shown = []
    for r in rows:
        row = {k: v for k, v in r.items() if k != "cost"}
        if r["source"] == "billed":
            c = r["cost"]
            zero = 0.0 if c is not None else None
            row.update(cost_usd=c, cost_low_usd=c, cost_high_usd=c, saving_usd=zero, saving_low_usd=zero,
                       saving_high_usd=zero, saving_share=0.0 if c else None)
        else:
            row.update(money(r["cost"], billed, band))
        shown.append(row)
    table = frame(shown, [c for c in (("session",) if any("session" in r for r in rows) else ()) + WHATIF_COLUMNS])
    table["keep_recent"] = table["keep_recent"].astype("Int64")
    table["budget"] = table["budget"].astype("Int64")
    return table


def has_usage(transcript: SessionLike) -> bool:
    """Whether ``transcript`` is an agent log that reports what it was billed (the cost model can price it)."""
    return Session.of(transcript).billed


def round_figures(value: float | None, figures: int = 2) -> float | None:
    """``value`` to ``figures`` significant figures (None stays None): a figure whose error is not known."""
    if value is None or not math.isfinite(value) or value == 0:
        return value
    return round(value, figures - 1 - math.floor(math.log10(abs(value))))


def whatif_visible(transcript: SessionLike, pricing: Any, *, policies: Sequence[Any] | None = None,
                   budgets: Sequence[int] | None = None, keep_recent: Sequence[int] | None = None) -> Any:
    """The what-if of a transcript with no bill: the cost book's count of its visible text at ``pricing``.

    No hidden prefix, no provider token scale, no bill to measure the error against: the dollars are
    uncalibrated (on agent logs the same count is 68% under the bill: issue 33), so they are shown to two
    significant figures, with no band and no saving, and ``attrs["cost_model"]`` says so. ``budgets``
    default to half the largest context the transcript sends (o200k tokens).
    """
    from ..policies import POLICIES
    from .pricing import get_pricing
    from .recorded import RecordedSession

    price = get_pricing(pricing)
    session = RecordedSession.of(transcript)
    if budgets is None:
        p = session.prefix("o200k")
        budgets = [max(1, max((p[i] for i in session.reply), default=2) // 2)]
    chosen = list(policies) if policies is not None else list(POLICIES)
    rows = _policy_rows(session, price, chosen, list(budgets), keep_recent)
    table = whatif_frame([{**r, "cost": round_figures(r["cost"])} for r in rows], None, 0.0)
    for c in ("cost_low_usd", "cost_high_usd"):
        table[c] = None
    table.attrs.update(cost_model=f"the cost book's count of the visible text at {price.name}: no hidden prefix, no "
                                  "provider token scale, no bill to measure it against (uncalibrated); two "
                                  "significant figures, no band", band=None, budgets=list(budgets), billed_usd=None,
                       unpriced=[])
    return table


def whatif(transcript: SessionLike, *, policies: Sequence[Any] | None = None, budgets: Sequence[int] | None = None,
           budget: int | None = None, keep_recent: Sequence[int] | None = None, priors: Priors | None = None,
           model: SessionModel | None = None, pricing: Any = None) -> Any:
    """One row per policy x budget (x keep_recent) replayed over the session, then the agent's billed and modelled rows.

    ``budgets`` (o200k tokens of visible context; ``budget`` for one) default to the tool's own
    trigger (``default_budget``); ``policies`` to every policy. ``cost_usd`` is the predicted
    cost, ``cost_low_usd``/``cost_high_usd`` its band, ``saving_usd`` the billed cost less it
    (all rounded to the band; None where a model of the session has no price). ``attrs``:
    ``cost_model`` (which model priced it, in one line), ``band``, ``budgets``, ``billed_usd``.
    ``model``: a ``SessionModel`` of the transcript made before (its session's work is reused).
    A transcript with no bill is priced by the cost book at ``pricing`` (``whatif_visible``, uncalibrated,
    and said so); an agent log with a bill ignores ``pricing``: each request is priced at its own model.
    """
    transcript = Session.of(transcript)
    if model is None and not transcript.billed:
        if pricing is None:
            raise ValueError("the transcript reports no bill: give a pricing to price its visible text "
                             "(uncalibrated: no hidden prefix, no provider token scale)")
        sizes = list(budgets) if budgets is not None else ([budget] if budget is not None else None)
        return whatif_visible(transcript, pricing, policies=policies, budgets=sizes, keep_recent=keep_recent)
    rows, model, sizes = whatif_rows(transcript, policies=policies, budgets=budgets, budget=budget,
                                     keep_recent=keep_recent, priors=priors, model=model)
    table = whatif_frame(rows, model.billed_usd, model.band)
    table.attrs.update(cost_model=model.describe(), band=model.band, band_sessions=model.band_sessions,
                       budgets=sizes, billed_usd=model.billed_usd, unpriced=list(model.bill.unpriced))
    return table


def whatif_total(sessions: Sequence[tuple[list[dict], SessionModel]], own_budgets: bool = False) -> Any:
    """Several sessions' ``whatif_rows`` added up: one row per policy x budget x keep_recent, and the tools' rows.

    Dollars are summed exactly, then rounded to the widest band among the sessions (the errors of
    one model may share a sign: the band of a sum is at most its largest relative band); a total is
    unpriced when any session is. Needed-later retention is pooled over every event.
    ``own_budgets``: each session ran at its own tool's trigger, so the total's budget is empty.
    """
    band = max((m.band for _, m in sessions), default=DEFAULT_BAND)
    billed_parts = [m.billed_usd for _, m in sessions]
    billed = None if any(b is None for b in billed_parts) else float(sum(billed_parts))  # type: ignore[arg-type]
    groups: dict[tuple, dict] = {}
    tools = {m.agent for _, m in sessions}
    tool = tools.pop() if len(tools) == 1 else "agents"  # the tools' own rows add up across tools
    for rows, _ in sessions:
        for r in rows:
            policy = r["policy"] if r["source"] == "replay" else tool
            key = (policy, r["source"], None if own_budgets else r["budget"], r["keep_recent"])
            g = groups.setdefault(key, {"policy": policy, "source": r["source"], "budget": key[2],
                                        "keep_recent": r["keep_recent"], "requests": 0, "compactions": 0,
                                        "summarizer_calls": 0, "cost": 0.0, "needed_later_items": 0, "_kept": 0.0})
            for k in ("requests", "compactions", "summarizer_calls", "needed_later_items"):
                g[k] += r[k]
            g["cost"] = None if g["cost"] is None or r["cost"] is None else g["cost"] + r["cost"]
            g["_kept"] += (r["needed_later"] or 0.0) * r["needed_later_items"]
    rows = []
    for g in groups.values():
        kept = g.pop("_kept")
        rows.append({"session": "total", **g,
                     "needed_later": kept / g["needed_later_items"] if g["needed_later_items"] else None})
    table = whatif_frame(rows, billed, band)
    table.attrs.update(band=band, billed_usd=billed, sessions=len(sessions))
    return table
