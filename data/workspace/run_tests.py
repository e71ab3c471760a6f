"""A tiny test runner with stable output (no timings, no absolute paths).

    python3 run_tests.py            # tests/test_*.py
    python3 run_tests.py --all      # also the slow tests in tests/slow/
    python3 run_tests.py -v         # one line per test case

A test is a module-level function named ``test_*``; ``tests.support.params``
runs one function over several cases. Failures are listed briefly on stdout and
in full (expected, actual, diff) in test_output.txt.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from pathlib import Path

sys.dont_write_bytecode = True  # keep the tree free of __pycache__ folders

ROOT = Path(__file__).resolve().parent
REPORT = ROOT / "test_output.txt"


def discover(include_slow: bool) -> list[str]:
    """Module names of the test files, sorted by path."""
    folders = [ROOT / "tests"] + ([ROOT / "tests" / "slow"] if include_slow else [])
    files = sorted(p for folder in folders for p in folder.glob("test_*.py"))
    return [".".join(p.relative_to(ROOT).with_suffix("").parts) for p in files]


def cases(module) -> list[tuple[str, object, tuple]]:
    """(name, function, args) for every test case of a module, in definition order."""
    out = []
    for name, fn in vars(module).items():
        if not name.startswith("test_") or not callable(fn):
            continue
        params = getattr(fn, "params", None)
        if params is None:
            out.append((name, fn, ()))
        else:
            out.extend((f"{name}[{case_id}]", fn, args) for case_id, args in params)
    return out


def where(exc: BaseException, rel: str) -> str:
    """The line of the test file where the failure was raised."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(rel)]
    return f"{rel} line {frames[-1].lineno}" if frames else rel


def run(include_slow: bool, verbose: bool) -> int:
    sys.path.insert(0, str(ROOT))
    passed, failures = 0, []
    for mod_name in discover(include_slow):
        module = importlib.import_module(mod_name)
        rel = mod_name.replace(".", "/") + ".py"
        marks = []
        for name, fn, args in cases(module):
            label = f"{rel}::{name}"
            try:
                fn(*args)
            except AssertionError as exc:
                failures.append((label, where(exc, rel), str(exc) or "assertion failed"))
                marks.append("F")
                if verbose:
                    print(f"FAIL {label}")
                continue
            except Exception as exc:  # an error in the test or the code under test
                failures.append((label, where(exc, rel), f"{type(exc).__name__}: {exc}"))
                marks.append("E")
                if verbose:
                    print(f"ERROR {label}")
                continue
            passed += 1
            marks.append(".")
            if verbose:
                print(f"ok   {label}")
        if not verbose:
            print(f"{rel} {''.join(marks)}")
    write_report(failures)
    print()
    for label, place, message in failures:
        print(f"FAIL {label} ({place}): {message.splitlines()[0]}")
    summary = f"{passed} passed, {len(failures)} failed"
    if failures:
        summary += f" (details in {REPORT.name})"
    print(summary)
    return 1 if failures else 0


def write_report(failures: list[tuple[str, str, str]]) -> None:
    """Every failure in full, for reading after a short run."""
    if not failures:
        REPORT.write_text("no failures\n", encoding="utf-8")
        return
    parts = []
    for label, place, message in failures:
        parts.append(f"=== {label}\nat {place}\n{message}\n")
    REPORT.write_text("\n".join(parts), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Run the logstat tests.")
    p.add_argument("--all", action="store_true", help="include the slow tests in tests/slow/")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per test case")
    args = p.parse_args(argv)
    return run(args.all, args.verbose)


if __name__ == "__main__":
    raise SystemExit(main())
