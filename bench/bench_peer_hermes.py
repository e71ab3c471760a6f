"""The ``hermes_agent`` port against hermes-agent 0.19.0 ``ContextCompressor.compress``, side by side.

Run: .venv/bin/python bench/bench_peer_hermes.py [--every K] [--repeat N]

On the same contexts (every K-th tool-batch point of each corpus transcript, the
three budgets below its size) the real compressor (its summary LLM stubbed at
``call_llm``, a fresh compressor per call, as in the differential test) and the
port (``apply_policy`` with hermes' estimator as ``size`` and a stub summarizer)
are timed one after the other on each context, the median of N runs each after
one warm-up run. Prints the median time per context on each side and the ratio
real / port, plus whether every context came out identical. hermes spends most
of its time building the summary prompt (secret redaction over every summarized
turn), work the stub does not need but the real call path does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from corpus import corpus_files  # noqa: E402

from nanohermes_nb.peers import batch_points, budgets_below, canonical  # noqa: E402
from nanohermes_nb.peers.hermes import (  # noqa: E402
    hermes_available,
    hermes_port,
    hermes_real,
    hermes_size,
)
from nanohermes_nb.transcripts import load_transcript  # noqa: E402


def contexts(every: int) -> list[tuple[list, int]]:
    out = []
    for path in corpus_files():
        for point, ctx in enumerate(batch_points(load_transcript(path))):
            if point % every == 0:
                out.extend((ctx, b) for b in budgets_below(sum(hermes_size(m) for m in ctx)))
    return out


def timed(fn, ctx: list, budget: int, repeat: int) -> tuple[float, list]:
    result = fn(list(ctx), budget)  # warm-up (and the result compared)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(list(ctx), budget)
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=5, help="every K-th tool-batch point (default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per context and side (default 3)")
    args = ap.parse_args()
    why = hermes_available()
    if why:
        sys.exit(f"bench_peer_hermes: {why}")
    work = contexts(args.every)
    real_t, port_t, same = [], [], 0
    for ctx, budget in work:
        rt, real = timed(hermes_real, ctx, budget, args.repeat)
        pt, port = timed(hermes_port, ctx, budget, args.repeat)
        real_t.append(rt)
        port_t.append(pt)
        same += canonical(real) == canonical(port)
    real_ms, port_ms = statistics.median(real_t) * 1e3, statistics.median(port_t) * 1e3
    print(f"contexts: {len(work)} (every {args.every}th tool-batch point, 3 budgets), identical: {same}")
    print(f"hermes-agent 0.19.0 compress: median {real_ms:8.2f} ms per context")
    print(f"hermes_agent port:            median {port_ms:8.2f} ms per context")
    print(f"ratio real / port: {real_ms / port_ms:.1f}x")


if __name__ == "__main__":
    main()
