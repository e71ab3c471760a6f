"""How fast the CLI starts: ``nanohermes-nb ledger`` on a 100 KB transcript versus ``json.load`` of it.

Run: .venv/bin/python bench/bench_cli.py

Both run as fresh processes, alternately, five times each; the figure is the ratio of the
median CPU time (user + system, from ``getrusage`` of the children) of the ledger to the
median of ``python -c "import json; json.load(open(f))"`` on the same file. The target
(issue 25) is 8x or less. Also printed: which heavy modules the ledger path imported
(none of pandas, pyarrow, httpx is the goal) and the wall times.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 8.0
HEAVY = ("pandas", "pyarrow", "httpx", "numpy", "matplotlib")


def transcript() -> Path:
    """The vendored transcript closest to 100 KB."""
    files = [p for p in (ROOT / "data" / "transcripts").glob("*.json") if p.name != "manifest.json"]
    return min(files, key=lambda p: abs(p.stat().st_size - 100_000))


def cpu_of(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def imported_by_ledger(path: Path) -> list[str]:
    code = ("import io, contextlib, sys, json\nfrom nanohermes_nb.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()): main(['ledger', {str(path)!r}])\n"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    path = transcript()
    floor_cmd = [sys.executable, "-c", f"import json; json.load(open({str(path)!r}))"]
    cli_cmd = [sys.executable, "-m", "nanohermes_nb", "ledger", str(path)]
    floors, clis = [], []
    for _ in range(5):  # alternate, so a change in the machine's load touches both
        floors.append(cpu_of(floor_cmd))
        clis.append(cpu_of(cli_cmd))
    f_cpu = statistics.median(c for c, _ in floors)
    c_cpu = statistics.median(c for c, _ in clis)
    ratio = c_cpu / f_cpu
    print(f"transcript: {path.name} ({path.stat().st_size:,} bytes)")
    print(f"json.load floor: {f_cpu * 1000:.0f} ms CPU "
          f"(median of 5; wall {statistics.median(w for _, w in floors):.2f} s)")
    print(f"nanohermes-nb ledger: {c_cpu * 1000:.0f} ms CPU "
          f"(median of 5; wall {statistics.median(w for _, w in clis):.2f} s)")
    print(f"ratio: {ratio:.1f}x (target <= {TARGET:.0f}x): {'met' if ratio <= TARGET else 'NOT met'}")
    print(f"heavy modules imported on the ledger path: {imported_by_ledger(path) or 'none'}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "0")
    main()
