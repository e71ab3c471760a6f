"""The shape of "The Complexity Trap" (JetBrains, arXiv 2508.21433), replayed on logs: cost beside probe survival.

Lindenbauer et al. ran SWE-agent on SWE-bench Verified with no context management, observation
masking, an LLM summary, and a hybrid of the two: masking halved the raw agent's cost and matched
the summary's solve rate; the hybrid cost 7% less than masking and 11% less than the summary.
A replay cannot measure a solve rate. What it can put beside the cost is what each compaction
left answerable: probe survival (``context.survival``), per category.

``masking_vs_summary`` replays the same logs at one budget under ``observation_masking``,
``nanohermes`` and the hybrid ``mask_then_summarize`` (and any other policies given), each
summarizing policy once per summarizer (``{"extractive": ..., "SmolLM2-135M": CachedSummarizer.smollm2()}``),
and returns one row per (policy, summarizer): events, summarizer requests, tokens and dollars under
one price table, the share of the uncompacted input each one sends (``input_share``), and probe
survival overall and per category. Masking calls no summarizer, so it has one row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..context.budgets import DEFAULT_BUDGETS
from ..context.probes import CATEGORIES

__all__ = ["masking_vs_summary", "TRAP_POLICIES", "TRAP_COLUMNS"]

TRAP_POLICIES = ("observation_masking", "nanohermes", "mask_then_summarize")
TRAP_COLUMNS = ("events", "summarizer_calls", "cumulative_input", "input_share", "cost_usd", "summarizer_cost_usd",
                "probe_items", "probe_survival", "probe_kept", "probe_summarized",
                *(f"probe_{c}" for c in CATEGORIES))


def masking_vs_summary(sources: Any, summarizers: Mapping[str, Any], *,
                       budget: int = DEFAULT_BUDGETS.context_char_budget, pricing: str = "claude-sonnet-4.5",
                       policies: Sequence[str] = TRAP_POLICIES) -> Any:
    """One row per policy and summarizer (masking once): cost, the share of the raw input sent, probe survival.

    ``sources`` as ``compare_policies`` takes them. The agents' own rows are left out (their cost is
    not a replay's); ``compare_policies(..., probes=True)`` shows them.
    """
    import pandas as pd

    from .compare import compare_policies

    frame = compare_policies(sources, policies=list(policies), budget=budget, probes=True, pricing=pricing,
                             summarizers=summarizers)
    frame = frame.assign(input_share=(1 - frame["saving_share"].astype(float)).round(4))
    rows, index = [], []
    for policy in policies:
        part = frame.xs(policy, level="policy")
        if not (part["summarizer_calls"] > 0).any():  # never summarized: the same under every summarizer, once
            rows.append(part.iloc[0])
            index.append((policy, "—"))
            continue
        for name in summarizers:
            rows.append(part.loc[name])
            index.append((policy, name))
    out = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["policy", "summarizer"]))
    return out[[c for c in TRAP_COLUMNS if c in out.columns]]
