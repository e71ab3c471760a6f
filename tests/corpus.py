"""The transcripts tests run over: the vendored sample always, the shared corpus when present."""

from pathlib import Path

from conftest import ROOT, TRANSCRIPTS

VENDORED = ROOT / "data" / "transcripts"


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != "manifest.json") if folder.is_dir() else []


def corpus_files() -> list[Path]:
    """Vendored files first, then the shared ones not already vendored (by name)."""
    vendored = _files(VENDORED)
    names = {p.name for p in vendored}
    return vendored + [p for p in _files(TRANSCRIPTS) if p.name not in names]
