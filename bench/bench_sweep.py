"""Sweep speed, side by side with a naive replay that re-serializes every request.

Run: .venv/bin/python bench/bench_sweep.py   (figures go in the README)

Timings on a shared machine are noisy: the script reports medians of several
runs, measured in one process one after the other, and the ratio between them.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanohermes_nb import load_transcript, load_transcripts, replay, sweep  # noqa: E402
from nanohermes_nb.context.summarizers import ExtractiveSummarizer  # noqa: E402
from nanohermes_nb.engine.ledger import reference_replay

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import BUDGETS, KEEPS, corpus  # noqa: E402
from _corpus import longest as longest_of


def median_time(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    folder = corpus()
    longest = longest_of(folder)
    msgs = load_transcript(longest)
    print(f"corpus: {folder}; longest transcript: {longest.name} "
          f"({longest.stat().st_size:,} bytes, {len(msgs)} messages)")

    summarizer = ExtractiveSummarizer()
    settings = [(b, 10) for b in (30_000, 60_000, 90_000, 120_000, 150_000)] + [(120_000, k) for k in (2, 4, 6, 8, 14)]

    for budget in (120_000, 30_000):
        naive = median_time(lambda b=budget: reference_replay(msgs, budget=b, summarizer=summarizer))
        fast = median_time(lambda b=budget: sweep([("t", msgs)], budgets=[b], summarizer=summarizer))
        print(f"one setting (budget {budget:,}): naive replay {naive * 1000:7.1f} ms | sweep {fast * 1000:6.1f} ms"
              f" | {naive / fast:5.1f}x faster")

    naive10 = median_time(lambda: [reference_replay(msgs, budget=b, keep_recent=k, summarizer=summarizer)
                                   for b, k in settings], repeat=3)

    def sweep10():
        sweep([("t", msgs)], budgets=[30_000, 60_000, 90_000, 120_000, 150_000], keep_recent=[10],
              summarizer=summarizer)
        sweep([("t", msgs)], budgets=[120_000], keep_recent=[2, 4, 6, 8, 14], summarizer=summarizer)

    fast10 = median_time(sweep10, repeat=3)
    print(f"10 settings (5 budgets, 5 keep_recent): naive replay {naive10 * 1000:8.1f} ms | "
          f"sweep {fast10 * 1000:7.1f} ms | {naive10 / fast10:5.1f}x faster")
    fast_replay = median_time(lambda: replay(msgs, budget=30_000, summarizer=summarizer))
    print(f"replay with the full ledger (rows, problems, prefix reuse, retention): {fast_replay * 1000:.1f} ms")

    everything = load_transcripts(folder)
    named = [(Path(t.path).name, t) for t in everything]
    t = time.perf_counter()
    frame = sweep(named, budgets=BUDGETS, keep_recent=KEEPS)
    wall = time.perf_counter() - t
    print(f"100-setting sweep (10 budgets x 10 keep_recent) over {len(named)} transcripts: {wall:.2f} s "
          f"({len(frame)} rows, {int(frame['compactions'].sum())} compactions; every text read for the first time)")
    t = time.perf_counter()
    sweep(named, budgets=BUDGETS, keep_recent=KEEPS)
    print(f"  the same again, every text already read: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    sweep(named, budgets=BUDGETS, keep_recent=KEEPS, retention=True)
    print(f"  the same with the retention score: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    sweep(named, budgets=BUDGETS, keep_recent=KEEPS, profiles=(), prefix_reuse=False)
    print("  the same without the history and prefix-reuse books (sizes and savings only): "
          f"{time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    quiet = sweep(named, budgets=[10**9 + k for k in range(10)], keep_recent=KEEPS)  # no setting ever compacts
    wall = time.perf_counter() - t
    assert int(quiet["compactions"].sum()) == 0
    print(f"  100 settings that never compact: {wall:.2f} s, {wall / len(quiet) * 1e6:.0f} us per transcript-setting")


if __name__ == "__main__":
    main()
