"""Views of the engine: pandas tables, matplotlib plots, ipywidgets explorers.

Each submodule imports only what it needs (``tables``: pandas; ``plots``,
``context_plots``, ``sweep_plots``: matplotlib; ``widgets``, ``cut_widgets``,
``clamp_widgets``: ipywidgets and matplotlib), so names load lazily here as they
do at the package's top level. The engine never imports views.
"""

from __future__ import annotations

import importlib

_NAMES = {
    "message_table": "tables",
    "compaction_table": "tables",
    "message_frame": "tables",
    "compaction_frame": "tables",
    "table_text": "tables",
    "plot_ledger": "plots",
    "plot_cumulative": "plots",
    "plot_by_turn": "plots",
    "plot_composition": "context_plots",
    "plot_sweep": "sweep_plots",
    "plot_triggers": "trigger_plots",
    "plot_tool_sizes": "context_plots",
    "plot_cut": "context_plots",
    "composition_frame": "context_plots",
    "plot_context_series": "usage_plots",
    "plot_money_parts": "usage_plots",
    "unit_label": "plots",
    "budget_explorer": "widgets",
    "cut_explorer": "cut_widgets",
    "clamp_explorer": "clamp_widgets",
    "explore_budget": "widgets",
    "explore_cut": "cut_widgets",
    "explore_clamp": "clamp_widgets",
    "hand_cut": "cut_widgets",
    "totals_line": "widgets",
    "live_ledger": "live",
    "LiveLedger": "live",
    "live_view": "live",
    "event_change": "live",
    "plot_survival_ledger": "probe_plots",  # issue 36
    "plot_probe_survival": "probe_plots",
    "plot_cost_and_survival": "probe_plots",
    "plot_rereads": "probe_plots",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str):
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_NAMES))
