"""The lab's observation_masking against OpenHands' masking logic (ported), side by side.

Run: .venv/bin/python bench/bench_peer_openhands.py [--stride N] [--window W]

On the same contexts (every N-th tool-batch point of every shared transcript,
budget half the context's size), times per context, after one warm-up pass:
- real: ``openhands_real`` (events, ``condense``, ``process_events``, back to
  OpenAI form), the ported OpenHands logic the differential test trusts;
- port: ``apply_policy(ObservationMaskingPolicy(...))``, the lab's policy
  through the one trigger (its sizes in bytes included).
Prints the median per context of each and their ratio (port / real), measured
in one run. The real side's conversation memory re-checks every never-released
tool-call message after every event, so it grows quadratically with the
number of masked turns; the port indexes the pending messages by call id.
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

from nanohermes_nb import load_transcript  # noqa: E402
from nanohermes_nb.context.sizing import message_size  # noqa: E402
from nanohermes_nb.peers import batch_points  # noqa: E402
from nanohermes_nb.peers.openhands import openhands_port, openhands_real  # noqa: E402


def contexts(stride: int) -> list[tuple[list, int]]:
    """(context, budget) for every ``stride``-th tool-batch point of the corpus."""
    out = []
    for path in corpus_files():
        for k, ctx in enumerate(batch_points(load_transcript(path))):
            if k % stride == 0:
                out.append((ctx, sum(message_size(m) for m in ctx) // 2))
    return out


def per_context(fn, cases) -> list[float]:
    times = []
    for ctx, budget in cases:
        t = time.perf_counter()
        fn(ctx, budget)
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stride", type=int, default=4)
    ap.add_argument("--window", type=int, default=5)
    args = ap.parse_args()
    cases = contexts(args.stride)
    real = lambda ctx, budget: openhands_real(ctx, args.window)  # noqa: E731
    port = lambda ctx, budget: openhands_port(ctx, budget, args.window)  # noqa: E731
    per_context(real, cases[:20]), per_context(port, cases[:20])  # warm-up
    t_real, t_port = per_context(real, cases), per_context(port, cases)
    m_real, m_port = statistics.median(t_real), statistics.median(t_port)
    print(f"{len(cases)} contexts (every {args.stride}th tool-batch point), attention_window={args.window}")
    print(f"real (ported OpenHands): median {m_real * 1e3:8.3f} ms/context, total {sum(t_real):6.2f} s")
    print(f"port (lab policy):       median {m_port * 1e3:8.3f} ms/context, total {sum(t_port):6.2f} s")
    print(f"ratio port/real: median {m_port / m_real:.2f}, total {sum(t_port) / sum(t_real):.2f}")


if __name__ == "__main__":
    main()
