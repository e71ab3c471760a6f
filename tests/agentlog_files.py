"""The real agent logs the bill tests read: ``data/agentlogs`` (vendored) and ``../shared/agentlogs`` when present.

``$NANOHERMES_AGENTLOGS`` names another folder laid out the same way (``claude-code/``, ``codex/``, ...).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def agentlog_folders() -> list[Path]:
    """The folders of agent logs found: the vendored sample first, then the shared corpus."""
    env = os.environ.get("NANOHERMES_AGENTLOGS")
    found = [ROOT / "data" / "agentlogs", Path(env) if env else ROOT.parent / "shared" / "agentlogs"]
    return [f for f in found if f.is_dir()]


def agent_logs(kinds: tuple[str, ...] = ("claude-code", "codex"), synthetic: bool = True) -> list[Path]:
    """Every log of those kinds in every folder (``synthetic=False`` leaves the FIXTURE files out)."""
    out = []
    for folder in agentlog_folders():
        for kind in kinds:
            out += [p for p in sorted((folder / kind).glob("*.json*"))
                    if p.name != "NOTICE.md" and (synthetic or "FIXTURE" not in p.name)]
    return out
