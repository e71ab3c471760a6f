"""A wheel install, then the first ``ledger``: no slower than from the checkout (issue 34).

Run: .venv/bin/python bench/bench_wheel.py [--runs N]

Builds the wheel as ``tests/test_wheel.py`` does, installs it into a fresh venv (its dependencies by
one ``.pth`` line naming this venv's site-packages, so both sides import the very same libraries), then
runs ``nanohermes-nb ledger`` (the checkout's start-up also runs its editable install's finder; the
wheel's does not, which is the point of a wheel) on the 100 KB vendored transcript and on the vendored Claude Code log:
first the wheel's very first run after its install, then the checkout's and the wheel's alternately,
``--runs`` times each. Printed: CPU seconds (user + system of the child) and wall seconds of each, and the
ratio wheel / checkout of the first run and of the medians. The target is a ratio of 1.0 or less, within
the noise of the machine.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_wheel import build, fresh_venv, source_tree  # noqa: E402  (the test's own steps)

LOGS = (ROOT / "data" / "transcripts" / "deerflow_bigcsv_ad76c455.json",
        ROOT / "data" / "agentlogs" / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl")


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=cwd)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def same_start(venv: Path) -> None:
    """The fresh venv starts as a user's would: with setuptools' ``distutils-precedence.pth`` run at start-up, as
    this venv does (its dependencies come by a ``.pth`` line, whose own ``.pth`` files Python does not run)."""
    import sysconfig

    mine = Path(sysconfig.get_paths()["purelib"]) / "distutils-precedence.pth"
    theirs = next((venv / "lib").glob("python*/site-packages"))
    if mine.exists():
        shutil.copy(mine, theirs / mine.name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each side after the first (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-wheel-") as tmp:
        work = Path(tmp)
        (work / "src").mkdir()
        build(source_tree(work / "src"), work / "dist")
        (wheel,) = (work / "dist").glob("*.whl")
        wheel_bin = fresh_venv(work / "venv", wheel)
        same_start(work / "venv")
        sides = {"wheel": str(wheel_bin / "nanohermes-nb"), "checkout": str(ROOT / ".venv" / "bin" / "nanohermes-nb")}
        print(f"{'log':<55} {'side':<9} {'first CPU':>9} {'first wall':>10} {'median CPU':>10} {'median wall':>11}")
        for log in LOGS:
            first = {side: timed([exe, "ledger", str(log)], work) for side, exe in sides.items()}
            runs: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
            for _ in range(args.runs):
                for side, exe in sides.items():
                    runs[side].append(timed([exe, "ledger", str(log)], work))
            medians = {side: (statistics.median(c for c, _ in r), statistics.median(w for _, w in r))
                       for side, r in runs.items()}
            for side in sides:
                print(f"{log.name:<55} {side:<9} {first[side][0]:9.2f} {first[side][1]:10.2f} "
                      f"{medians[side][0]:10.2f} {medians[side][1]:11.2f}")
            print(f"{'':<55} {'ratio':<9} {first['wheel'][0] / first['checkout'][0]:9.2f} "
                  f"{first['wheel'][1] / first['checkout'][1]:10.2f} "
                  f"{medians['wheel'][0] / medians['checkout'][0]:10.2f} "
                  f"{medians['wheel'][1] / medians['checkout'][1]:11.2f}   (wheel / checkout)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
