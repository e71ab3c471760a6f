"""Submodules on first attribute access, so ``nh.context.compaction.SUMMARY_HEADER`` works after
``import nanohermes_nb as nh`` without importing every module (and pandas, httpx) up front."""

from __future__ import annotations

import importlib
from types import ModuleType


def submodule(package: str, name: str) -> ModuleType:
    """``package.name`` imported; ``AttributeError`` when there is no such submodule (PEP 562)."""
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.{name}":
            raise  # the submodule exists but something it imports does not
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

