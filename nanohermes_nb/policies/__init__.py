"""Context policies: what an agent does once its context is over budget.

``nanohermes`` (the default everywhere) is SPEC section 3 exactly. The others
reproduce what other agents and libraries do, for comparison on equal footing,
one module each:

- ``langchain_trim``: LangChain ``trim_messages`` (keep the newest messages that
  fit, start on a user message, keep the system message; no summary);
- ``hermes_agent``: NousResearch hermes-agent's ``ContextCompressor`` (head and
  token-budget tail protected, old tool results pruned and deduplicated, the
  middle summarized, the previous summary updated, call/result pairs repaired);
- ``codex``: OpenAI Codex CLI compaction (every real user message up to 20,000
  tokens, newest first, plus one summary in the user role; no tool traffic);
- ``observation_masking``: OpenHands' ``ObservationMaskingCondenser`` (tool
  results outside the last events become user-role placeholders, their
  tool-call messages no longer sent; no summary);
- ``clear_tool_uses``: Anthropic context editing ``clear_tool_uses_20250919``
  as LangChain's ``ClearToolUsesEdit`` mirrors it (old tool results cleared,
  the last 3 kept);
- ``langchain_summarize``: LangChain's ``SummarizationMiddleware`` (the history
  before the last 20 messages becomes one user-role summary);
- ``mask_then_summarize``: the hybrid of JetBrains' "The Complexity Trap" (mask old
  tool results; still over budget, NanoHermes's summary of what is left). Not a port.

Equal footing: every policy is called only when ``over_budget(size, budget)``
holds, with ``size`` in the ledger's unit (bytes of compact JSON by default).
The source systems trigger differently (hermes at 50% of the model window, Codex
at its auto-compact limit, Anthropic at 100,000 input tokens, OpenHands' masking
and LangChain's trimming on every call); in the lab the one trigger replaces all
of them, so differences come from what each policy keeps, not from when it runs.
Each policy keeps its own constants; those a source gives in tokens are measured
with ``env.tokens()``, shares of the trigger are taken of ``env.budget``. See
``docs/policies.md`` for each source's provenance.
"""

from __future__ import annotations

from ..context.messages import repair_tool_pairs
from ..context.summarizers import PREVIOUS_SUMMARY_ROLE
from .aider import AiderPolicy
from .base import (
    POLICIES,
    Applied,
    Event,
    Policy,
    PolicyEnv,
    PolicyError,
    accepts_option,
    apply_policy,
    is_summary_message,
    make_event,
    over_budget,
    policy_options,
    register,
    resolve_policy,
    summary_prefixes,
)
from .claude_code import ClaudeCodePolicy
from .clear_tool_uses import ClearToolUsesPolicy
from .cline import ClinePolicy
from .codex import CodexPolicy
from .codex_cli import CodexCliPolicy
from .goose import GoosePolicy
from .hermes_agent import HermesAgentPolicy
from .langchain_summarize import LangChainSummarizePolicy
from .langchain_trim import LangChainTrimPolicy
from .mask_then_summarize import MaskThenSummarizePolicy  # issue 36: the hybrid
from .nanohermes import NanoHermesPolicy
from .observation_masking import ObservationMaskingPolicy
from .opencode import OpenCodePolicy
from .roo_code import RooCodePolicy
from .swe_agent import SweAgentPolicy

# issue 37: the compaction rules of the agents people run, named ``<agent>_rule`` so that they are never
# confused with an agent's own compactions read from its log (rows named ``claude_code``, ``codex_cli``)
AGENT_RULES = ("codex_cli_rule", "claude_code_rule", "aider_rule", "cline_rule", "roo_code_rule",
               "opencode_rule", "goose_rule", "swe_agent_rule")
for _name in AGENT_RULES:  # listed after the lab policies, whatever the import order
    POLICIES[_name] = POLICIES.pop(_name)

__all__ = [
    "PolicyError",
    "Event",
    "PolicyEnv",
    "Policy",
    "Applied",
    "apply_policy",
    "resolve_policy",
    "accepts_option",
    "policy_options",
    "over_budget",
    "make_event",
    "NanoHermesPolicy",
    "LangChainTrimPolicy",
    "HermesAgentPolicy",
    "CodexPolicy",
    "ObservationMaskingPolicy",
    "ClearToolUsesPolicy",
    "LangChainSummarizePolicy",
    "MaskThenSummarizePolicy",
    "POLICIES",
    "register",
    "summary_prefixes",
    "is_summary_message",
    "repair_tool_pairs",
    "PREVIOUS_SUMMARY_ROLE",
    "AGENT_RULES",
    "CodexCliPolicy",
    "ClaudeCodePolicy",
    "AiderPolicy",
    "ClinePolicy",
    "RooCodePolicy",
    "OpenCodePolicy",
    "GoosePolicy",
    "SweAgentPolicy",
]

