"""What the probe book adds to a sweep's time (issue 36: at most 1.5x), side by side on the real agent logs.

Run: .venv/bin/python bench/bench_probes.py [--repeat 1] [--budgets 120000] [--markdown]

The logs: the Claude Code and Codex sessions of ``../shared/agentlogs`` when it is there (the synthetic
FIXTURE files left out), else the vendored ``data/agentlogs`` and ``data/compactions``. Each log is
loaded once, then the same sweep (every registered policy, ``--budgets``) runs with ``probes=False``
and ``probes=True`` in turn, ``repeat`` times, after one untimed warm-up on three logs (process-wide
caches such as the tokenizers would otherwise be paid by whichever run comes first); the ratio of the
medians is the figure. Each round starts from fresh sessions, so the probe index is built inside the
timed ``probes=True`` run (what a user's first sweep pays).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanohermes_nb import POLICIES, load_transcript, sweep
from nanohermes_nb.engine.recorded import RecordedSession


def logs() -> tuple[str, list[Path]]:
    shared = ROOT.parent / "shared" / "agentlogs"
    if shared.is_dir():
        found = [p for kind in ("claude-code", "codex") for p in sorted((shared / kind).glob("*.jsonl"))
                 if "FIXTURE" not in p.name]
        return str(shared), found
    folders = [ROOT / "data" / "agentlogs", ROOT / "data" / "compactions"]
    return "data/agentlogs + data/compactions", sorted(p for f in folders for p in f.rglob("*.jsonl"))


def timed(transcripts: list, probes: bool, budgets: list[int]) -> tuple[float, object]:
    sessions = [(name, RecordedSession.of(t)) for name, t in transcripts]  # fresh caches: nothing carried over
    start = time.perf_counter()
    frame = sweep(sessions, policies=list(POLICIES), budgets=budgets, probes=probes)
    return time.perf_counter() - start, frame


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--budgets", type=lambda t: [int(x) for x in t.split(",")], default=[120_000])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    where, paths = logs()
    transcripts = [(p.name, load_transcript(p)) for p in paths]
    timed(transcripts[:3], True, args.budgets)  # warm the process-wide caches (tokenizers, path memo) first
    plain, probed = [], []
    for _ in range(args.repeat):
        t0, _f = timed(transcripts, False, args.budgets)
        t1, frame = timed(transcripts, True, args.budgets)
        plain.append(t0)
        probed.append(t1)
    a, b = statistics.median(plain), statistics.median(probed)
    rows, events = len(frame), int(frame["compactions"].sum())  # type: ignore[index]
    items = int(frame["probe_items"].sum())  # type: ignore[index]
    line = (f"{len(paths)} logs ({where}), {len(POLICIES)} policies x {len(args.budgets)} budgets = {rows} rows, "
            f"{events} events, {items} probes: sweep {a:.2f} s, with probes {b:.2f} s, ratio {b / a:.2f}x "
            f"(medians of {args.repeat})")
    if args.markdown:
        print("| logs | rows | events | probes | sweep (s) | with probes (s) | ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        print(f"| {len(paths)} ({where}) | {rows} | {events} | {items} | {a:.2f} | {b:.2f} | {b / a:.2f}x |")
    else:
        print(line)


if __name__ == "__main__":
    main()
