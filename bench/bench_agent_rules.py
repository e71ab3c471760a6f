"""The eight agent rules (issue 37) against ``nanohermes`` on the same contexts, side by side.

Run: .venv/bin/python bench/bench_agent_rules.py [--runs N] [--budgets 30000,60000]

Two measures over the corpus (``_corpus.corpus()``: the extended corpus when present), each the median
CPU time of N runs, with its ratio to ``nanohermes``:

- *per context* (the target, issue 37: within 3x): every policy applied once to every tool-batch
  point of every transcript at half its size (``apply_policy``, the same stub summarizer), the
  contexts the lab's replays hand a policy;
- *whole replays*, informative: every transcript replayed at the same budgets in bytes with the
  default books, and the number of events. A rule that acts more often (SWE-agent's masks every
  request once over the budget) costs the replay's books (legality, prefix reuse) per event, so its
  replay ratio follows its event count, not its own speed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import corpus, cpu, files  # noqa: E402

from nanohermes_nb.engine.ledger import replay  # noqa: E402
from nanohermes_nb.engine.recorded import RecordedSession  # noqa: E402
from nanohermes_nb.peers import batch_points  # noqa: E402
from nanohermes_nb.policies import (
    AGENT_RULES,  # noqa: E402
    apply_policy,  # noqa: E402
)
from nanohermes_nb.transcripts import load_transcript  # noqa: E402

TARGET = 3.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--budgets", default="30000,60000")
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    folder = corpus()
    transcripts = [load_transcript(p) for p in files(folder)]

    def run(policy: str) -> None:
        for t in transcripts:
            session = RecordedSession.of(t)  # measured afresh for every policy: no policy inherits a cache
            for budget in budgets:
                replay(session, budget=budget, policy=policy, summarizer=lambda _e: "STUB SUMMARY")

    contexts = [ctx for t in transcripts for ctx in batch_points(t)]
    from nanohermes_nb.context.sizing import context_size

    budgets_at = [max(context_size(ctx) // 2, 1) for ctx in contexts]

    def apply_all(policy: str) -> None:
        for ctx, budget in zip(contexts, budgets_at, strict=True):
            apply_policy(policy, ctx, budget=budget, summarizer=lambda _e: "STUB SUMMARY")

    def events(policy: str) -> int:
        return sum(replay(t, budget=b, policy=policy, summarizer=lambda _e: "S").totals.n_compactions
                   for t in transcripts for b in budgets)

    print(f"{folder}: {len(transcripts)} transcripts, {len(contexts)} contexts; replays at budgets {budgets}; "
          f"median of {args.runs} runs (CPU seconds)")
    print(f"{'policy':<18} {'per context':>11} {'ratio':>6} {'replays':>8} {'ratio':>6} {'events':>7}")
    base_apply, base_run = cpu(lambda: apply_all("nanohermes"), args.runs), cpu(lambda: run("nanohermes"), args.runs)
    print(f"{'nanohermes':<18} {base_apply:11.2f} {1.0:6.2f} {base_run:8.2f} {1.0:6.2f} {events('nanohermes'):7d}")
    worst = 0.0
    for rule in AGENT_RULES:
        a = cpu(lambda rule=rule: apply_all(rule), args.runs)
        r = cpu(lambda rule=rule: run(rule), args.runs)
        worst = max(worst, a / base_apply)
        flag = "" if a / base_apply <= TARGET else "  over the 3x target"
        print(f"{rule:<18} {a:11.2f} {a / base_apply:6.2f} {r:8.2f} {r / base_run:6.2f} {events(rule):7d}{flag}")
    print(f"worst per-context ratio {worst:.2f} (target <= {TARGET:.0f})")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
