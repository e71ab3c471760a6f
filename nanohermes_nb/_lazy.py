"""Submodules on first attribute access, so ``nh.context.compaction.SUMMARY_HEADER`` works after
``import nanohermes_nb as nh`` without importing every module (and pandas, httpx) up front."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any


def submodule(package: str, name: str) -> ModuleType:
    """``package.name`` imported; ``AttributeError`` when there is no such submodule (PEP 562)."""
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.{name}":
            raise  # the submodule exists but something it imports does not
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None


def moved(module: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module's ``__getattr__`` for names that now live in a sibling module (PEP 562).

    ``names`` maps each name to the sibling that defines it (``{"plot_sweep": "sweep_plots"}``):
    ``from nanohermes_nb.views.plots import plot_sweep`` keeps working after the split, and the
    sibling, which imports the old module's helpers, is imported only when asked for (no cycle).
    """
    package = module.rpartition(".")[0]

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{names[name]}"), name)

    return __getattr__
