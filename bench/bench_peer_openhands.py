"""The project's observation_masking against OpenHands' real code (openhands-ai 1.6.0), side by side.

Run: .venv/bin/python bench/bench_peer_openhands.py [--stride N] [--window W] [--time-only]

On every N-th tool-batch point of every corpus transcript (the vendored sample
and ``../shared/transcripts``):

1. agreement, in both readings of ``nanohermes_nb/peers/openhands.py``:
   ``stand_in`` (SPEC 5's empty system message stands in for the agent's
   prompt) and ``strict`` (OpenHands sees only what was recorded and knows no
   prompt), with the transcripts of the differing contexts and whether the
   condenser masked anything in them;
2. time per context, after a warm-up, measured in one run: the real side
   (``condense`` + ``process_events`` on events built once per transcript)
   and the project's policy through the one trigger, and their ratio.

The wheel is fetched into ``.cache/peers/`` when missing (as the tests do).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from corpus import corpus_files  # noqa: E402

from nanohermes_nb.context.sizing import message_size  # noqa: E402
from nanohermes_nb.peers import batch_points  # noqa: E402
from nanohermes_nb.peers.openhands import (  # noqa: E402
    MODES,
    agreement_by_context,
    events_for,
    openhands,
    openhands_port,
    openhands_real,
)
from nanohermes_nb.transcripts import load_transcript  # noqa: E402


def agreement_lines(transcripts, window: int, stride: int) -> None:
    for mode in MODES:
        started = time.perf_counter()
        compared, diffs = agreement_by_context(transcripts, window, mode, stride=stride)
        share = (compared - len(diffs)) / compared
        print(f"{mode:9s} window {window:3d}: {compared - len(diffs)} of {compared} contexts identical "
              f"({share:.1%}), {time.perf_counter() - started:.0f} s")
        for (name, masked), n in sorted(Counter((d.transcript, d.masked) for d in diffs).items()):
            print(f"    {n:4d} differ in {name} ({'masked' if masked else 'nothing masked'})")


def timing(transcripts, window: int, stride: int) -> None:
    oh = openhands()
    cases = []
    for _, msgs in transcripts:
        points = list(batch_points(msgs))
        per_message = events_for(points[-1], oh) if points else []
        cases += [(ctx, per_message[: len(ctx)]) for k, ctx in enumerate(points) if k % stride == 0]

    def real(ctx, events):
        openhands_real(ctx, window, "stand_in", oh, events)

    def port(ctx, _events):
        openhands_port(ctx, sum(message_size(m) for m in ctx) // 2, window)

    def per_context(fn, chosen):
        out = []
        for ctx, events in chosen:
            t = time.perf_counter()
            fn(ctx, events)
            out.append(time.perf_counter() - t)
        return out

    per_context(real, cases[:20]), per_context(port, cases[:20])  # warm-up
    t_real, t_port = per_context(real, cases), per_context(port, cases)
    m_real, m_port = statistics.median(t_real), statistics.median(t_port)
    print(f"{len(cases)} contexts (every {stride}th tool-batch point), attention_window={window}")
    print(f"real (OpenHands 1.6.0): median {m_real * 1e3:8.3f} ms/context, total {sum(t_real):6.2f} s")
    print(f"port (project policy):  median {m_port * 1e3:8.3f} ms/context, total {sum(t_port):6.2f} s")
    print(f"ratio port/real: median {m_port / m_real:.2f}, total {sum(t_port) / sum(t_real):.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--time-only", action="store_true", help="skip the agreement figures")
    args = ap.parse_args()
    transcripts = [(p.name, load_transcript(p)) for p in corpus_files()]
    if not args.time_only:
        agreement_lines(transcripts, args.window, args.stride)
    timing(transcripts, args.window, max(args.stride, 4))


if __name__ == "__main__":
    main()
