"""What pricing and needed-later retention add to a replay and a sweep, side by side in one run (README, cost).

Run: .venv/bin/python bench/bench_pricing.py

- one replay of the longest transcript at budget 30,000, without and with ``pricing="gpt-4.1"``, each in a
  fresh ``RecordedSession`` (cold: the pricing run tokenizes every message once with o200k), then warm (the
  session's tokens reused, as in a sweep);
- the 100-setting sweep (10 budgets x 10 keep_recent) over the corpus without and with pricing, and with
  ``needed_later=True``;
- the share of the priced cold replay spent tokenizing (``session.prefix("o200k")`` alone).

CPU time (``time.process_time``), medians of 3; the ratios are what to quote.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _corpus import corpus, cpu, files  # noqa: E402
from bench_engine import BUDGETS, KEEPS  # noqa: E402

import nanohermes_nb as nh  # noqa: E402


def main() -> None:
    paths = files(corpus())
    longest = max(paths, key=lambda p: p.stat().st_size)
    msgs = nh.load_transcript(longest)
    # the tokenizer's one-off load is not part of either figure
    nh.context.sizing.count_tokens("warm the o200k tables", "o200k")
    plain = cpu(lambda: nh.replay(nh.engine.recorded.RecordedSession.of(msgs), budget=30_000))
    cold = cpu(lambda: nh.replay(nh.engine.recorded.RecordedSession.of(msgs), budget=30_000, pricing="gpt-4.1"))
    tokenize = cpu(lambda: nh.engine.recorded.RecordedSession.of(msgs).prefix("o200k"))
    session = nh.engine.recorded.RecordedSession.of(msgs)
    nh.replay(session, budget=30_000, pricing="gpt-4.1")
    warm_plain = cpu(lambda: nh.replay(session, budget=30_000))
    warm = cpu(lambda: nh.replay(session, budget=30_000, pricing="gpt-4.1"))
    print(f"replay of {longest.name} at 30,000, cold: {plain * 1e3:.0f} ms without pricing, {cold * 1e3:.0f} ms with "
          f"({cold / plain:.1f}x; tokenizing alone {tokenize * 1e3:.0f} ms); warm: {warm_plain * 1e3:.0f} ms vs "
          f"{warm * 1e3:.0f} ms ({warm / warm_plain:.2f}x)")
    grid = dict(budgets=BUDGETS, keep_recent=KEEPS)
    s_plain = cpu(lambda: nh.sweep([str(p) for p in paths], **grid), runs=1)
    s_priced = cpu(lambda: nh.sweep([str(p) for p in paths], pricing="gpt-4.1", **grid), runs=1)
    s_needed = cpu(lambda: nh.sweep([str(p) for p in paths], needed_later=True, **grid), runs=1)
    print(f"100-setting sweep over {len(paths)} transcripts: {s_plain:.2f} s without pricing, {s_priced:.2f} s with "
          f"({s_priced / s_plain:.1f}x), {s_needed:.2f} s with needed-later retention ({s_needed / s_plain:.2f}x)")


if __name__ == "__main__":
    main()
