"""The files the package reads at run time, shipped inside it (``importlib.resources``).

``pricing.csv``: the price presets and caching rules (``engine.pricing``);
``summaries/``: the local model's cached summaries (``context.cached``). A
checkout and an installed wheel read the same files from the same place, so
nothing depends on the repository's ``data/`` folder at run time.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["resource_path"]


def resource_path(*parts: str) -> Path:
    """The path of a file shipped in this folder (the package is never zipped: setuptools installs it as files)."""
    return Path(str(files(__name__).joinpath(*parts)))
