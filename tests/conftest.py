"""Shared test set-up: Agg backend in this process only, and the shared transcripts."""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # never open a window; only the pytest process, not notebook kernels

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _find_transcripts() -> Path:
    """``$NANOHERMES_TRANSCRIPTS``, else ``shared/transcripts`` beside the checkout (or above it)."""
    if os.environ.get("NANOHERMES_TRANSCRIPTS"):
        return Path(os.environ["NANOHERMES_TRANSCRIPTS"])
    for parent in ROOT.parents:
        candidate = parent / "shared" / "transcripts"
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "transcripts"


TRANSCRIPTS = _find_transcripts()


def shared_transcript_files():
    return sorted(p for p in TRANSCRIPTS.glob("*.json") if p.name != "manifest.json")


@pytest.fixture(scope="session")
def transcripts_dir() -> Path:
    if not TRANSCRIPTS.is_dir():
        pytest.fail(f"shared transcripts not found at {TRANSCRIPTS} (set NANOHERMES_TRANSCRIPTS)")
    return TRANSCRIPTS


def pytest_collection_modifyitems(config, items):
    """An empty shared folder must fail loudly, not turn its tests into silent skips."""
    if not shared_transcript_files():
        raise pytest.UsageError(f"no shared transcripts at {TRANSCRIPTS} (set NANOHERMES_TRANSCRIPTS)")
