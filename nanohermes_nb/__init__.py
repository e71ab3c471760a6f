"""nanohermes_nb: how a coding agent decides what to keep in its context window.

A faithful Python reproduction of NanoHermes's context layer (caps where tool
output is produced, the byte clamp, the system message, memory injection,
compaction and its cut point), with a replay ledger, sweeps and policies for
tuning budgets on real agent logs.

The package is laid out as the architecture (imports flow one way):

- ``context``: the rules as the article states them (caps, sizes, clamp, compaction);
- ``transcripts``: reading the logs people have into OpenAI-form messages;
- ``policies``: NanoHermes's rule and the peers' rules behind one interface;
- ``engine``: replaying a recorded session under a policy (ledger, sweep, pricing);
- ``agent``: the live loop, its model, tools, system prompt and memory;
- ``views``: tables, plots and widgets; ``course``: the notebooks' build.

The names below are the public API; everything else is imported from its module
(``from nanohermes_nb.context.compaction import SUMMARY_HEADER``). Names load on
first use, so ``import nanohermes_nb`` imports neither pandas, pyarrow nor httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"

# name -> the module that defines it (relative to this package)
_EXPORTS = {
    # context: the article's rules
    "DEFAULT_BUDGETS": "context.budgets",
    "Budgets": "context.budgets",
    "clamp": "context.clamp",
    "message_size": "context.sizing",
    "context_size": "context.sizing",
    "compact": "context.compaction",
    "find_cut": "context.compaction",
    "build_excerpt": "context.compaction",
    "check_history": "context.history",
    "retention": "context.metrics",
    "verify_compaction": "context.metrics",
    "ExtractiveSummarizer": "context.summarizers",
    # transcripts: the logs people have
    "Transcript": "transcripts",
    "Session": "transcripts",
    "TranscriptError": "transcripts",
    "load_transcript": "transcripts",
    "load_transcripts": "transcripts",
    "find_sessions": "transcripts.agentlogs",
    # policies
    "POLICIES": "policies",
    "Policy": "policies",
    "NanoHermesPolicy": "policies",
    "resolve_policy": "policies",
    # engine: replay, sweep, money
    "Settings": "engine.settings",
    "replay": "engine.ledger",
    "Ledger": "engine.ledger",
    "sweep": "engine.sweep",
    "compare_policies": "engine.compare",
    "trigger_timeline": "engine.triggers",  # issue 37: when each agent's rule would have compacted
    "get_pricing": "engine.pricing",
    # agent: the live loop
    "Agent": "agent.loop",
    "Tools": "agent.tools.toolbox",
    "SystemConfig": "agent.prompt",
    "system_content": "agent.prompt",
    "MemoryStore": "agent.memory",
    "OpenAICompatibleModel": "agent.models",
    "OpenAICompatibleSummarizer": "agent.models",
    "ScriptedModel": "agent.models",
    "LocalModel": "agent.local",  # issue 27: a real model on this machine (`make local-model`)
    # views
    "plot_ledger": "views",
}
_SUBPACKAGES = frozenset({"context", "transcripts", "policies", "engine", "agent", "views", "course", "peers", "cli"})

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what a type checker and an editor see; at run time the names load on first use
    from .agent.local import LocalModel
    from .agent.loop import Agent
    from .agent.memory import MemoryStore
    from .agent.models import (
        OpenAICompatibleModel,
        OpenAICompatibleSummarizer,
        ScriptedModel,
    )
    from .agent.prompt import SystemConfig, system_content
    from .agent.tools.toolbox import Tools
    from .context.budgets import DEFAULT_BUDGETS, Budgets
    from .context.clamp import clamp
    from .context.compaction import build_excerpt, compact, find_cut
    from .context.history import check_history
    from .context.metrics import retention, verify_compaction
    from .context.sizing import context_size, message_size
    from .context.summarizers import ExtractiveSummarizer
    from .engine.compare import compare_policies
    from .engine.ledger import Ledger, replay
    from .engine.pricing import get_pricing
    from .engine.settings import Settings
    from .engine.sweep import sweep
    from .engine.triggers import trigger_timeline
    from .policies import POLICIES, NanoHermesPolicy, Policy, resolve_policy
    from .transcripts import (
        Session,
        Transcript,
        TranscriptError,
        load_transcript,
        load_transcripts,
    )
    from .transcripts.agentlogs import find_sessions
    from .views import plot_ledger


def __getattr__(name: str) -> Any:
    """A public name or a subpackage, imported on first use (PEP 562)."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | _SUBPACKAGES)
