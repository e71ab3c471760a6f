"""The 100-setting sweep, this checkout's engine side by side with the engine as it stood after issue 10.

Run: .venv/bin/python bench/bench_sweep_baseline.py [--repeat N] [--max-ratio X]

The baseline is pinned (``BASELINE``): the last commit of the round that closed issue 10
(the engine did not change from ``6d73351``, "bench_compiled: how far the 12x sweep bar is",
to it). Its ``nanohermes_nb`` is taken out of git (``git archive``) into a temporary folder,
and each measurement runs in a fresh process that imports one engine or the other, the
two alternating (which one goes first alternates too), ``--repeat`` times each (default 5).

In each process, after the imports: the floor (read every file, ``json.loads``, serialize
every message once: ``_corpus.FLOOR``), then the sweep of issue 10 (10 budgets x 10
keep_recent over the corpus, each engine's default books) with every cache cold, then the
same sweep again in the same process (every text already read). CPU time
(``time.process_time``) is the figure: the machine is shared and CPU time is the steadier
clock; wall time is printed beside it. The ratio now / baseline is taken on the best run
of each (the least disturbed), and on the medians; each engine's sweep is also given
against the floor measured in its own processes.

Two sweeps are compared: each engine's default (what ``nh.sweep(paths, budgets=...,
keep_recent=...)`` does: the current engine scores retention by default, the baseline did
not), and both with ``retention=True`` (the same books). A ratio above 1 is a slowdown;
``--max-ratio X`` exits 1 when the default sweep's best-run ratio is above X.

Rows are compared too: the columns both engines write, transcript by transcript and
setting by setting (a column whose values differ is listed: the engine's results changed
since issue 10 there, on purpose or not).

This is a benchmark, not a test: it is not collected by pytest (``make bench`` runs it).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import BUDGETS, FLOOR, KEEPS, corpus, files  # noqa: E402

# the engine as it stood after issue 10 (the last commit of that round; engine unchanged since 6d73351)
BASELINE = "67acf5218a9a1ed5f192b83b779dd76ff6afa6f4"

CHILD = rf"""
import json, pickle, sys, time
from pathlib import Path
root, mode, rows_out, paths = sys.argv[1], sys.argv[2], sys.argv[3], [Path(p) for p in sys.argv[4:]]
sys.path.insert(0, root)
import pandas, pyarrow.pandas_compat  # imports are not part of any figure
import nanohermes_nb as nh
sweep = nh.sweep  # the current package loads it on first use: loaded here, outside the figures
engine = [m.__file__ for k, m in sys.modules.items() if k.startswith("nanohermes_nb") and getattr(m, "__file__", None)]
assert all(f.startswith(root) for f in engine), "an engine module came from elsewhere"
kwargs = {{"retention": True}} if mode == "retention" else {{}}

def clocks():
    return time.perf_counter(), time.process_time()

{FLOOR}
def work():
    return sweep([str(p) for p in paths], budgets={BUDGETS!r}, keep_recent={KEEPS!r}, **kwargs)

w0, c0 = clocks(); floor(); w1, c1 = clocks(); frame = work(); w2, c2 = clocks(); work(); w3, c3 = clocks()
if rows_out != "-":
    frame.to_pickle(rows_out)
print(json.dumps({{"floor_cpu": c1 - c0, "floor_wall": w1 - w0, "cpu": c2 - c1, "wall": w2 - w1,
                  "warm_cpu": c3 - c2, "warm_wall": w3 - w2, "rows": len(frame)}}))
"""


def baseline_engine(into: Path) -> Path:
    """The pinned commit's ``nanohermes_nb`` under ``into`` (from git: this must be a checkout)."""
    try:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE, "nanohermes_nb"], check=True,
                             capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"bench_sweep_baseline: cannot read commit {BASELINE[:12]} from git ({exc}); run it in a checkout")
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.10.12 / 3.11.4
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into, **safe)
    return into


def run(root: Path, mode: str, paths: list[Path], rows_out: str = "-") -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), mode, rows_out, *map(str, paths)],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        sys.exit(f"bench_sweep_baseline: the {root} engine failed:\n{out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(engines: dict[str, Path], mode: str, paths: list[Path], repeat: int, tmp: Path) -> dict[str, list]:
    """``repeat`` fresh processes per engine, alternating (and alternating which goes first)."""
    runs: dict[str, list] = {name: [] for name in engines}
    names = list(engines)
    for k in range(repeat):
        for name in names if k % 2 == 0 else names[::-1]:
            rows = str(tmp / f"{name}-{mode}.pkl") if k == 0 else "-"
            runs[name].append(run(engines[name], mode, paths, rows))
    return runs


def _best(runs: list[dict], key: str) -> float:
    return min(r[key] for r in runs)


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def report(mode: str, runs: dict[str, list]) -> float:
    """Print one comparison; the best-run CPU ratio now / baseline."""
    now, base = runs["now"], runs["baseline"]
    print(f"\n{mode}: {len(now)} fresh processes per engine, CPU seconds (wall beside)")
    for name, rs in (("baseline", base), ("now", now)):
        floor = _best(rs, "floor_cpu")
        ratios = sorted(r["cpu"] / r["floor_cpu"] for r in rs)
        print(f"  {name:8s}: cold sweep best {_best(rs, 'cpu'):.3f} s, median {_median(rs, 'cpu'):.3f} s "
              f"(wall best {_best(rs, 'wall'):.3f} s); again, warm: best {_best(rs, 'warm_cpu'):.3f} s; "
              f"floor {floor * 1000:.0f} ms -> {statistics.median(ratios):.1f}x the floor "
              f"(per run {', '.join(f'{x:.1f}' for x in ratios)})")
    best = _best(now, "cpu") / _best(base, "cpu")
    median = _median(now, "cpu") / _median(base, "cpu")
    warm = _best(now, "warm_cpu") / _best(base, "warm_cpu")
    verdict = "no slower" if best <= 1.0 else "SLOWER than the baseline"
    print(f"  now / baseline: {best:.2f}x on the best runs, {median:.2f}x on the medians, {warm:.2f}x warm "
          f"-> {verdict}")
    return best


def compare_rows(tmp: Path, mode: str) -> None:
    import pandas as pd

    base, now = pd.read_pickle(tmp / f"baseline-{mode}.pkl"), pd.read_pickle(tmp / f"now-{mode}.pkl")
    keys = ["transcript", "policy", "options", "budget", "keep_recent"]
    shared = [c for c in base.columns if c in now.columns and c not in keys]
    if len(base) != len(now):
        print(f"  rows: {len(base)} (baseline) vs {len(now)} (now)")
        return
    a = base.sort_values(keys, kind="stable").reset_index(drop=True)
    b = now.sort_values(keys, kind="stable").reset_index(drop=True)
    differ = []
    for c in [*keys, *shared]:
        x, y = a[c].astype(object), b[c].astype(object)
        same = (x == y) | (x.isna() & y.isna())
        if not bool(same.all()):
            differ.append(f"{c} ({int((~same).sum())} rows)")
    print(f"  rows: {len(now)} each; {len(shared)} shared columns; "
          + (f"differing: {', '.join(differ)}" if differ else "every shared column equal"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-ratio", type=float, default=None)
    args = ap.parse_args()
    folder = corpus()
    paths = files(folder)
    print(f"corpus: {folder} ({len(paths)} transcripts); baseline: {BASELINE[:12]} (after issue 10); "
          f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        engines = {"baseline": baseline_engine(tmp / "baseline"), "now": ROOT}
        ratios = {}
        for mode in ("default", "retention"):
            ratios[mode] = report(mode, measure(engines, mode, paths, args.repeat, tmp))
            compare_rows(tmp, mode)
    print(f"\nload average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.max_ratio is not None and ratios["default"] > args.max_ratio:
        sys.exit(f"the default sweep is {ratios['default']:.2f}x the baseline (over --max-ratio {args.max_ratio})")


if __name__ == "__main__":
    main()
