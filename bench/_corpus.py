"""Which transcripts the benchmarks read: the extended corpus when there is one, else the vendored sample.

``$NANOHERMES_TRANSCRIPTS`` names a folder; otherwise ``../shared/transcripts`` beside the
checkout (CI's extended corpus) when it exists; otherwise ``data/transcripts/``, which every
clone has. Every benchmark prints the folder it read, so a figure says what it was measured on.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "data" / "transcripts"

# issue #10's 100-setting sweep: 10 budgets x 10 keep_recent
BUDGETS = [20_000 * k for k in range(1, 11)]
KEEPS = [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]

# the floor every cold figure is a ratio to, as source for the benchmarks' child processes (which define
# ``paths``): what any replay must do at least -- read the files, ``json.loads``, serialize every message once
FLOOR = """
def floor():
    for p in paths:
        for m in json.loads(p.read_bytes()):
            json.dumps(m, ensure_ascii=False, separators=(",", ":")).encode()
"""


def corpus() -> Path:
    """The folder the benchmarks read (see the module docstring)."""
    env = os.environ.get("NANOHERMES_TRANSCRIPTS")
    if env:
        return Path(env)
    shared = ROOT.parent / "shared" / "transcripts"
    return shared if shared.is_dir() else VENDORED


def files(folder: Path) -> list[Path]:
    """The converted transcripts of a corpus folder (its ``manifest.json`` and ``raw/`` left out)."""
    return sorted(p for p in folder.glob("*.json") if p.name != "manifest.json")


def longest(folder: Path) -> Path:
    """The largest transcript of a folder, by bytes on disk."""
    return max(files(folder), key=lambda p: p.stat().st_size)


def cpu(fn, runs: int = 3) -> float:
    """The median CPU time (this process) of ``runs`` calls of ``fn``."""
    out = []
    for _ in range(runs):
        c0 = time.process_time()
        fn()
        out.append(time.process_time() - c0)
    return statistics.median(out)
