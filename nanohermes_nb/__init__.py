"""nanohermes_nb: how a coding agent decides what to keep in its context window.

A faithful Python reproduction of NanoHermes's context layer (caps where tool
output is produced, the byte clamp, the system message, memory injection,
compaction and its cut point), with a replay ledger, sweeps and policies for
tuning budgets on real agent logs. The views (tables, plots, widgets) load
lazily, so importing the package does not import matplotlib or ipywidgets.
"""

from .agent.loop import (
    Agent,
    AgentResult,
    LiveEvent,
    LiveReplayMismatch,
    ModelCall,
    Step,
)
from .agent.memory import (
    MemoryEntry,
    MemoryStore,
    MemoryStoreError,
    inject,
    render_block,
    set_block,
)
from .agent.models import (
    ModelError,
    ModelReply,
    ModelSummarizer,
    OpenAICompatibleModel,
    OpenAICompatibleSummarizer,
    RecordedSummarizer,
    ScriptedModel,
    Usage,
    assistant,
)
from .agent.prompt import (
    PrefixReport,
    SystemConfig,
    prefix_reuse,
    project_context,
    project_docs,
    refresh_system,
    system_content,
    system_prompt,
)
from .agent.skills import Skill, load_skills, skill_body
from .agent.skills import listing as skills_listing
from .agent.tools.toolbox import TOOL_NAMES, TOOL_SPECS, ToolError, Tools
from .context.budgets import DEFAULT_BUDGETS, Budgets, CapRow, caps_table
from .context.clamp import ClampReport, clamp, clamp_report
from .context.compaction import (
    PLACEHOLDER_NOTE,
    SUMMARY_HEADER,
    CompactionResult,
    build_excerpt,
    compact,
    find_cut,
    find_cut_backward,
    naive_cut,
)
from .context.history import PROFILES, Problem, check_history
from .context.metrics import Check, Retention, retention, verify_compaction
from .context.needed import NeededLater, identifiers
from .context.sizing import (
    APPROX_CHARS_PER_TOKEN,
    UNITS,
    Meter,
    context_size,
    count_tokens,
    measure,
    measure_each,
    message_size,
    request_bytes,
    serialize,
    shared_prefix_bytes,
)
from .context.summarizers import (
    ExtractiveSummarizer,
    PlaceholderSummarizer,
    SummarizerError,
    summary_prompt,
)
from .engine.ledger import CAVEAT, Ledger, reference_replay, replay
from .engine.pricing import (
    Pricing,
    PricingError,
    get_pricing,
    pricing_presets,
    pricing_table,
)
from .engine.recorded import RecordedSession
from .engine.sweep import SweepReport, compare_policies, sweep
from .policies import (
    POLICIES,
    Applied,
    ClearToolUsesPolicy,
    CodexPolicy,
    Event,
    HermesAgentPolicy,
    LangChainSummarizePolicy,
    LangChainTrimPolicy,
    NanoHermesPolicy,
    ObservationMaskingPolicy,
    Policy,
    PolicyEnv,
    apply_policy,
    get_policy,
    over_budget,
    resolve_policy,
)
from .transcripts import Transcript, TranscriptError, load_transcript, load_transcripts

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BUDGETS",
    "Budgets",
    "CapRow",
    "caps_table",
    "ClampReport",
    "clamp",
    "clamp_report",
    "APPROX_CHARS_PER_TOKEN",
    "UNITS",
    "Meter",
    "context_size",
    "count_tokens",
    "measure",
    "measure_each",
    "message_size",
    "request_bytes",
    "serialize",
    "shared_prefix_bytes",
    "PROFILES",
    "Problem",
    "check_history",
    "ExtractiveSummarizer",
    "OpenAICompatibleSummarizer",
    "PlaceholderSummarizer",
    "SummarizerError",
    "summary_prompt",
    "PLACEHOLDER_NOTE",
    "SUMMARY_HEADER",
    "CompactionResult",
    "build_excerpt",
    "compact",
    "find_cut",
    "find_cut_backward",
    "naive_cut",
    "Transcript",
    "TranscriptError",
    "load_transcript",
    "load_transcripts",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "Tools",
    "ToolError",
    "PrefixReport",
    "SystemConfig",
    "prefix_reuse",
    "project_context",
    "project_docs",
    "refresh_system",
    "system_content",
    "system_prompt",
    "Skill",
    "load_skills",
    "skill_body",
    "skills_listing",
    "MemoryEntry",
    "MemoryStore",
    "MemoryStoreError",
    "inject",
    "render_block",
    "set_block",
    "Check",
    "Retention",
    "retention",
    "verify_compaction",
    "POLICIES",
    "Applied",
    "Event",
    "Policy",
    "PolicyEnv",
    "apply_policy",
    "get_policy",
    "resolve_policy",
    "over_budget",
    "NanoHermesPolicy",
    "LangChainTrimPolicy",
    "HermesAgentPolicy",
    "CodexPolicy",
    "ObservationMaskingPolicy",
    "ClearToolUsesPolicy",
    "LangChainSummarizePolicy",
    "RecordedSession",
    "Pricing",
    "PricingError",
    "get_pricing",
    "pricing_presets",
    "pricing_table",
    "NeededLater",
    "identifiers",
    "CAVEAT",
    "Ledger",
    "reference_replay",
    "replay",
    "compare_policies",
    "sweep",
    "SweepReport",
    "ModelError",
    "ModelReply",
    "ModelSummarizer",
    "OpenAICompatibleModel",
    "RecordedSummarizer",
    "ScriptedModel",
    "Usage",
    "assistant",
    "Agent",
    "AgentResult",
    "LiveEvent",
    "LiveReplayMismatch",
    "ModelCall",
    "Step",
    "message_table",
    "compaction_table",
    "composition_frame",
    "plot_ledger",
    "plot_cumulative",
    "plot_by_turn",
    "plot_composition",
    "plot_sweep",
    "plot_tool_sizes",
    "budget_explorer",
    "cut_explorer",
    "clamp_explorer",
    "live_ledger",
]

# views: tables, plots and widgets, imported on first use from nanohermes_nb.views
_VIEWS = frozenset(name for name in __all__ if name not in globals())  # the names not imported above


def __getattr__(name: str):
    if name not in _VIEWS:
        raise AttributeError(f"module 'nanohermes_nb' has no attribute {name!r}")
    from . import views

    value = getattr(views, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | _VIEWS)
