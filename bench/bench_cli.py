"""How fast the CLI starts: ``nanohermes-nb ledger`` on a 100 KB transcript versus ``json.load`` of it.

Run: .venv/bin/python bench/bench_cli.py

Both run as fresh processes, alternately, five times each; the figure is the ratio of the
median CPU time (user + system, from ``getrusage`` of the children) of the ledger to the
median of ``python -c "import json; json.load(open(f))"`` on the same file. The target
(issue 25) is 8x or less. Also printed: which heavy modules the ledger path imported
(none of pandas, pyarrow, httpx is the goal) and the wall times.

Bytecode: an installed package runs from compiled ``.pyc`` files (pip compiles them at install), so
the children may write and read the package's ``__pycache__`` (git-ignored; one untimed run of each
command first) even where ``PYTHONDONTWRITEBYTECODE`` is set in the environment (it is on the CI
machines: every child would compile every module of the package from source, about 100 ms of the
ledger's CPU). The same ratio with no bytecode at all (``PYTHONPYCACHEPREFIX`` an empty folder, the
standard library compiled too) is printed beside it, for reference.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 8.0
HEAVY = ("pandas", "pyarrow", "httpx", "numpy", "matplotlib")


def transcript() -> Path:
    """The vendored transcript closest to 100 KB."""
    files = [p for p in (ROOT / "data" / "transcripts").glob("*.json") if p.name != "manifest.json"]
    return min(files, key=lambda p: abs(p.stat().st_size - 100_000))


def child_env(empty: str | None = None) -> dict:
    """The children's environment: bytecode written and read as usual, or (``empty``, an empty folder for
    ``PYTHONPYCACHEPREFIX``) none at all."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    if empty is not None:
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=empty)
    return env


def cpu_of(argv: list[str], env: dict | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def imported_by_ledger(path: Path) -> list[str]:
    code = ("import io, contextlib, sys, json\nfrom nanohermes_nb.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()): main(['ledger', {str(path)!r}])\n"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def ratio(floor_cmd: list[str], cli_cmd: list[str], env: dict, runs: int = 5) -> tuple[float, float, float, float]:
    """Median CPU of each command over ``runs`` alternating fresh processes: (floor, ledger, floor wall,
    ledger wall)."""
    floors, clis = [], []
    for _ in range(runs):  # alternate, so a change in the machine's load touches both
        floors.append(cpu_of(floor_cmd, env))
        clis.append(cpu_of(cli_cmd, env))
    return (statistics.median(c for c, _ in floors), statistics.median(c for c, _ in clis),
            statistics.median(w for _, w in floors), statistics.median(w for _, w in clis))


def main() -> None:
    path = transcript()
    floor_cmd = [sys.executable, "-c", f"import json; json.load(open({str(path)!r}))"]
    cli_cmd = [sys.executable, "-m", "nanohermes_nb", "ledger", str(path)]
    print(f"transcript: {path.name} ({path.stat().st_size:,} bytes); "
          f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as empty:
        compiled = child_env()
        cpu_of(floor_cmd, compiled), cpu_of(cli_cmd, compiled)  # untimed: fills the bytecode cache
        f_cpu, c_cpu, f_wall, c_wall = ratio(floor_cmd, cli_cmd, compiled)
        r = c_cpu / f_cpu
        print(f"json.load floor: {f_cpu * 1000:.0f} ms CPU (median of 5; wall {f_wall:.2f} s)")
        print(f"nanohermes-nb ledger: {c_cpu * 1000:.0f} ms CPU (median of 5; wall {c_wall:.2f} s)")
        print(f"ratio: {r:.1f}x (target <= {TARGET:.0f}x): {'met' if r <= TARGET else 'NOT met'}")
        f0, c0, _, _ = ratio(floor_cmd, cli_cmd, child_env(empty), runs=3)
        print(f"without bytecode (every module compiled at start): {c0 * 1000:.0f} ms vs {f0 * 1000:.0f} ms CPU "
              f"-> {c0 / f0:.1f}x (for reference)")
    print(f"heavy modules imported on the ledger path: {imported_by_ledger(path) or 'none'}")


if __name__ == "__main__":
    main()
