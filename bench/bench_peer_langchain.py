"""Each LangChain port against its real library, side by side: median time per context and the ratio.

Run: .venv/bin/python bench/bench_peer_langchain.py [--every N] [--repeat R]

For ``langchain_trim``, ``clear_tool_uses`` and ``langchain_summarize``, on every
N-th tool-batch point of the corpus (the shared transcripts, plus the vendored
ones when present) at the three budgets below its size (the differential
test's contexts), the real code (``nanohermes_nb/peers/langchain.py``: the
library on LangChain messages, the OpenAI -> LangChain conversion cached per
message as in the test, the token counter going through the bridge) and the
port (``apply_policy``) are timed one after the other on the same context, R
times each; the figure per context is the best of R, the table shows the median
over contexts and real / port. A warm-up pass fills the conversion and size
caches first, so neither side pays for them. Both sides use the same per-message
size (bytes; cl100k tokens for the summary) and the summary is stubbed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanohermes_nb import load_transcript  # noqa: E402
from nanohermes_nb.peers import PEERS, batch_points, budgets_below  # noqa: E402
from nanohermes_nb.peers import langchain as lc_peer  # noqa: E402

SHARED = Path(os.environ.get("NANOHERMES_TRANSCRIPTS", ROOT.parent / "shared" / "transcripts"))
VENDORED = ROOT / "data" / "transcripts"
POLICIES = ("langchain_trim", "clear_tool_uses", "langchain_summarize")


def corpus() -> list[tuple[str, list]]:
    files = {}
    for folder in (VENDORED, SHARED):
        if folder.is_dir():
            for p in sorted(folder.glob("*.json")):
                if p.name != "manifest.json":
                    files.setdefault(p.name, p)
    return [(name, load_transcript(p)) for name, p in files.items()]


def contexts(named, peer, every: int) -> list[tuple[list, int]]:
    out = []
    k = 0
    for _, messages in named:
        for ctx in batch_points(messages):
            if k % every == 0:
                out.extend((ctx, b) for b in budgets_below(sum(peer.size(m) for m in ctx)))
            k += 1
    return out


def best_of(fn, ctx, budget, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(list(ctx), budget)
        times.append(time.perf_counter() - t)
    return min(times)


def bench(policy: str, named, every: int, repeat: int) -> dict:
    peer = PEERS[policy]
    cases = contexts(named, peer, every)
    for ctx, budget in cases:  # warm-up: conversions and sizes cached on both sides
        peer.real(list(ctx), budget)
        peer.port(list(ctx), budget)
    real, port = [], []
    for ctx, budget in cases:
        real.append(best_of(peer.real, ctx, budget, repeat))
        port.append(best_of(peer.port, ctx, budget, repeat))
    r, p = statistics.median(real), statistics.median(port)
    return {"policy": policy, "contexts": len(cases), "real_ms": r * 1e3, "port_ms": p * 1e3, "ratio": r / p}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=3, help="time every N-th tool-batch point (default 3)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per context, best kept (default 3)")
    args = ap.parse_args()
    why = lc_peer.available()
    if why:
        sys.exit(f"bench_peer_langchain: {why}")
    named = corpus()
    if not named:
        sys.exit(f"bench_peer_langchain: no transcripts in {SHARED} or {VENDORED}")
    print(f"{lc_peer.version()}; {len(named)} transcripts, every {args.every}th tool-batch point, "
          f"3 budgets each, best of {args.repeat}")
    print(f"{'policy':<22}{'contexts':>9}{'real ms':>10}{'port ms':>10}{'real/port':>11}")
    for policy in POLICIES:
        row = bench(policy, named, args.every, args.repeat)
        print(f"{row['policy']:<22}{row['contexts']:>9}{row['real_ms']:>10.3f}{row['port_ms']:>10.3f}"
              f"{row['ratio']:>10.1f}x")


if __name__ == "__main__":
    main()
