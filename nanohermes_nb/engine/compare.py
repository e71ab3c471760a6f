"""compare_policies: every policy under the same trigger, one row each, summed over the transcripts.

The rows are a sweep's, grouped by policy (and its options): totals are summed, peaks are
the maximum, shares are weighted (prefix reuse by request bytes, cache hits by tokens),
problems count the transcripts where any request carried one, and retention is a mean over
the transcripts that had an event. Agent logs add a row per tool, read from the log itself
(``toolrows.recorded_tool_rows``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..policies import Policy
from .frames import frame as text_frame
from .grid import sources_of
from .pricing import Pricing
from .settings import Settings
from .sweep import per_summarizer, sweep

__all__ = ["compare_policies"]

# summed on their own in a row's totals (the saving share compares them)
_INPUT_TOTALS = ("cumulative_input", "cumulative_input_no_compaction")


def compare_policies(
    transcripts: Any,
    settings: Settings | None = None,
    *,
    policies: Sequence[str | type[Policy] | Policy] | None = None,
    progress: bool | None = False,
    executor: Any = None,
    workers: int | None = None,
    summarizers: Mapping[str, Any] | None = None,
    **changes: Any,
):
    """One row per policy: what it costs, what a cache could reuse, what it breaks, what it keeps.

    ``summarizers`` (issue 27): a mapping name -> summarizer; one row per summarizer
    and policy, indexed by both (``frame.loc["smollm2"]``).

    Every policy is triggered by the same ``settings`` (default ``Settings()``;
    keyword ``changes`` are its fields); ``policies`` defaults to every policy in
    ``POLICIES``. Totals are summed over the transcripts (peaks are the maximum),
    the prefix reuse share is weighted by request bytes, problems count the
    transcripts x profiles where any request carried a problem, and retention is
    the mean over transcripts that had an event. With ``needed_later=True``, the
    needed-later retention pooled over every event (kept / needed identifiers);
    with ``pricing``, dollars with and without compaction (summed) and the
    cache-hit rate (weighted by tokens).

    Agent logs add a row per tool (``claude_code``, ``codex_cli``): its own compactions read from the
    log, with the tokens reported around them (``toolrows.recorded_tool_rows``; ``attrs["tool_events"]``).
    """
    from ..policies import POLICIES

    if summarizers is not None:
        return per_summarizer(lambda s: compare_policies(
            transcripts, settings, policies=policies, progress=progress, executor=executor, workers=workers,
            **{**changes, "summarizer": s}).reset_index(), summarizers).set_index(["summarizer", "policy"])
    base = Settings.of(settings, "compare_policies", **changes)
    chosen = list(policies) if policies is not None else list(POLICIES)
    rows = sweep(transcripts, base, policies=chosen, progress=progress, executor=executor, workers=workers)
    pricing = base.pricing if isinstance(base.pricing, Pricing) else None  # Settings resolved it
    table = _policy_table(rows, base.needed_later, pricing)
    out = _with_recorded_tools(table, transcripts, base, pricing, skipped=rows.attrs.get("skipped", []))
    out.attrs["cost_model"] = cost_model_line(rows, pricing)
    return out


def _policy_table(rows: Any, needed_later: bool, pricing: Pricing | None) -> Any:
    """The sweep's rows grouped by policy and options (``name(options)``), one row each, in the sweep's order."""
    label = rows["policy"] + rows["options"].map(lambda o: f"({o})" if o else "")
    probes = "probe_items" in rows.columns
    table = [{"policy": name, **_totals(g), **_problems_and_tokens(g), **_retention(g, needed_later),
              **(_probes(g) if probes else {}), **(_costs(g) if pricing is not None else {})}
             for name, g in rows.groupby(label, sort=False)]
    return text_frame(table).set_index("policy")


def _totals(g: Any) -> dict:
    """How often and how large: transcripts, the peak request, events and calls, input and what was saved."""
    return {
        "transcripts": len(g),
        "peak_request": int(g["peak_request"].max()),
        "events": int(g["compactions"].sum()),
        "ineffective_events": int(g["ineffective_compactions"].sum()),
        "summarizer_calls": int(g["summarizer_calls"].sum()),
        "cumulative_input": int(g["cumulative_input"].sum()),
        "saving_share": round(1 - g["cumulative_input"].sum() / g["cumulative_input_no_compaction"].sum(), 4),
        "prefix_reuse_share": round(g["prefix_reuse"].sum() / g["request_bytes"].sum(), 4),
    }


def _problems_and_tokens(g: Any) -> dict:
    """Transcripts with a problem, per profile (``logs_with_problems_*``); the other cumulative columns, summed."""
    row = {f"logs_with_{c}": int((g[c] > 0).sum()) for c in g.columns if c.startswith("problems_")}
    row.update({c: int(g[c].sum()) for c in g.columns if c.startswith("cumulative_") and c not in _INPUT_TOTALS})
    return row


def _retention(g: Any, needed_later: bool) -> dict:
    """The mean retention over transcripts with an event; needed-later retention pooled over every event."""
    scored = g["retention"].dropna()
    row = {"retention": round(float(scored.mean()), 4) if len(scored) else None}
    if needed_later:
        items = g["needed_later_items"].sum()
        kept = (g["needed_later"].fillna(0) * g["needed_later_items"]).sum()
        row["needed_later"] = round(float(kept / items), 4) if items else None
        row["needed_later_items"] = int(items)
    return row


def _probes(g: Any) -> dict:
    """Probe survival pooled over the transcripts (issue 36): shares weighted by their probes."""
    from .columns import PROBES

    row: dict = {}
    for col in PROBES:
        name = col.name
        if name.endswith("_items"):
            row[name] = int(g[name].sum())
            continue
        weight = g["probe_items"] if name in ("probe_survival", "probe_kept", "probe_reinjected",
                                              "probe_summarized") else g[f"{name}_items"]
        total = weight.sum()
        row[name] = round(float((g[name].fillna(0) * weight).sum() / total), 4) if total else None
    return row


def _costs(g: Any) -> dict:
    """Dollars with and without compaction and for the summaries (summed); the cache-hit rate, weighted by tokens.

    A transcript with no dollars (an agent log whose model has no price, or too few billed requests to fit
    the cost model on) makes the sum NaN: never a partial sum shown as the whole.
    """
    import pandas as pd

    def whole(column: str) -> float:
        values = pd.to_numeric(g[column], errors="coerce")
        return float(values.sum(skipna=False))

    tokens = whole("input_tokens")
    return {
        "cost_usd": whole("cost_usd"),
        "cost_usd_no_compaction": whole("cost_usd_no_compaction"),
        "summarizer_cost_usd": whole("summarizer_cost_usd"),
        "cache_hit_rate": round(whole("cached_tokens") / tokens, 4) if tokens else 0.0,
    }


def cost_model_line(rows: Any, pricing: Pricing | None) -> str | None:
    """Which model priced the table (``attrs["cost_model"]``): the cost model for agent logs with a bill, the cost
    book's visible-text count for the rest (``modelbook.describe_pricing``); None when nothing was priced."""
    from .modelbook import describe_pricing

    if pricing is None or "pricing" not in rows.columns:
        return None
    return describe_pricing(list(rows["pricing"]), pricing)


def _with_recorded_tools(table: Any, transcripts: Any, base: Settings, pricing: Pricing | None, skipped: list) -> Any:
    """The table with a row per agent tool whose log records its own compactions, and the table's attrs."""
    from .toolrows import TOOL_EVENT_COLUMNS, recorded_tool_rows, with_tool_rows

    named = [(s.name, s.path or s.messages) for s in sources_of(transcripts)]
    tools, tool_events = recorded_tool_rows(named, base.needed_later)
    if base.probes:  # issue 36: the agent's own compactions asked the same probes
        from .own_compactions import own_probe_rows

        own = own_probe_rows(named)
        tools = [{**row, **own.get(row["policy"], {})} for row in tools]
    if pricing is None:  # the tools' bills, beside priced rows only
        tools = [{k: v for k, v in t.items() if k != "billed_usd"} for t in tools]
    out = with_tool_rows(table, tools)
    out.attrs.update(budget=base.budget, unit=base.unit, skipped=skipped,
                     pricing=None if pricing is None else pricing.name,
                     # plain records, not a frame: pandas compares attrs when frames are stacked
                     tool_events=[{c: e.get(c) for c in TOOL_EVENT_COLUMNS} for e in tool_events])
    return out
