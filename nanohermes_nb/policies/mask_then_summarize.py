"""Mask first, summarize when masking is not enough: the hybrid of "The Complexity Trap" (issue 36).

Lindenbauer et al., "The Complexity Trap: Simple Observation Masking Is as Efficient as LLM
Summarization for Agent Context Management" (JetBrains Research, arXiv 2508.21433) run SWE-agent
with two history processors at once: ``last_n_observations`` (n=10: every tool output but the
last ten becomes ``Old environment output: (N lines omitted)``, the call itself stays) and
``summarize_every_n_turns`` (N=43 turns summarized, the last M=10 kept). Source: the paper's
code, ``sweagent/agent/history_processors.py`` (``LastNObservations._get_omit_indices`` and
``__call__``: the placeholder; ``SummarizeEveryNTurns``), configured by
``config/default_no_demo_checkpoint_same_model_openhands_N=43_M=10_masking_M=10.yaml``
(repository Recursive-Safeguarding/the-complexity-trap, a fork of JetBrains-Research's, commit
adfaa1a1). The paper reports the hybrid 7% cheaper than masking alone and 11% cheaper than
summaries alone on SWE-bench Verified.

This lab has one trigger for every policy (``over_budget``), so the hybrid is stated in its
terms: over budget, mask; still over budget, summarize what masking left with NanoHermes's
own compaction (SPEC section 3). Not a port of the SWE-agent code (its turn counter is replaced
by the trigger), and not the default anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.budgets import DEFAULT_BUDGETS
from ..context.messages import role_of, text_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register
from .nanohermes import NanoHermesPolicy

MASK_PREFIX = "Old environment output: ("


def mask_text(text: str) -> str:
    """SWE-agent's placeholder for an omitted observation: how many lines it had."""
    return f"{MASK_PREFIX}{len(text.splitlines())} lines omitted)"


def is_masked(message: dict) -> bool:
    """A tool result this policy (or SWE-agent) already replaced by its placeholder."""
    text = text_of(message)
    return text.startswith(MASK_PREFIX) and text.endswith(" lines omitted)")


def mask_observations(context: list, keep: int) -> list:
    """The context with every tool result but the last ``keep`` replaced by the placeholder, in place.

    Calls, ids and pairs are untouched (SWE-agent keeps the action and elides its output);
    a result masked before is left as the same object, so a second pass changes nothing.
    """
    tools = [i for i, m in enumerate(context) if role_of(m) == "tool"]
    older = tools[: max(len(tools) - keep, 0)]
    if not older:
        return context
    new = list(context)
    for i in older:
        m = context[i]
        if not is_masked(m):
            new[i] = {**m, "content": mask_text(text_of(m))}
    return new


@register
@dataclass(frozen=True)
class MaskThenSummarizePolicy(Policy):
    """Mask, then summarize if still over budget (JetBrains' hybrid, arXiv 2508.21433), in the lab's one trigger.

    Options: ``observations`` (10: the tool results kept verbatim, SWE-agent's
    ``last_n_observations`` n=10), ``keep_recent`` (10: the messages NanoHermes's compaction
    keeps when masking is not enough; the paper keeps M=10 turns), ``summary_role``
    (``"system"``, as NanoHermes). Masking is in place: the calls and their pairing stay, the
    output becomes ``Old environment output: (N lines omitted)``. The summary reads the
    masked history, so its excerpt (and its summarizer request) is smaller than NanoHermes's.
    """

    observations: int = 10
    keep_recent: int = DEFAULT_BUDGETS.keep_recent
    summary_role: str = "system"
    name: ClassVar[str] = "mask_then_summarize"

    def __post_init__(self) -> None:
        check_positive(self.observations, "observations", zero=True)
        check_positive(self.keep_recent, "keep_recent", zero=True)
        NanoHermesPolicy(keep_recent=self.keep_recent, summary_role=self.summary_role)  # validates both

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        masked = mask_observations(context, self.observations)
        changed = masked is not context and any(a is not b for a, b in zip(masked, context, strict=True))
        masked_size = sum(env.meter(m) for m in masked) if changed else size
        if masked_size <= env.budget:
            ev = make_event(self, "mask", context, masked, env, size)
            return masked, replace(ev, detail=f"{self.name}: masked old tool results; {size:,} -> {ev.size_after:,}")
        summary = NanoHermesPolicy(keep_recent=self.keep_recent, summary_role=self.summary_role)
        new, inner = summary.compact(masked, env, masked_size)
        if inner is None:
            if not changed:
                return context, None
            ev = make_event(self, "mask", context, masked, env, size)
            return masked, replace(ev, detail=f"{self.name}: masked, still over budget, nothing to summarize; "
                                              f"{size:,} -> {ev.size_after:,}")
        ev = make_event(self, inner.kind, context, new, env, size)  # "summary" or "placeholder", as NanoHermes
        return new, replace(ev, cut=inner.cut, naive_cut=inner.naive_cut, note=inner.note,
                            summarizer_calls=inner.summarizer_calls, failure=inner.failure,
                            summarizer_tokens=inner.summarizer_tokens,
                            detail=f"{self.name}: masked, then {inner.detail}")
