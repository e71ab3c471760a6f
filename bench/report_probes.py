"""The figures of docs/quality.md (issue 36), computed again: probe survival, the masking-vs-summary shape, re-reads.

Run: .venv/bin/python bench/report_probes.py [--logs FOLDER ...] [--budget 120000]

Without ``--logs``: the real Claude Code and Codex logs of ``../shared/agentlogs`` (synthetic FIXTURE
files left out) when they are there, else the vendored ``data/agentlogs`` and ``data/compactions``.
Prints Markdown tables: every policy's probe survival per category beside its cost; the
masking-vs-summary rows (extractive summaries on the logs; SmolLM2's cached ones on issue 27's
corpora); every real compaction and what followed it; how well probe survival predicts re-reads.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanohermes_nb import compare_policies
from nanohermes_nb.agent.local_summaries import CORPORA, corpus_sources
from nanohermes_nb.context.cached import CachedSummarizer
from nanohermes_nb.context.probes import CATEGORIES
from nanohermes_nb.context.summarizers import ExtractiveSummarizer
from nanohermes_nb.engine.complexity_trap import masking_vs_summary
from nanohermes_nb.engine.forgetting_report import compactions_table, prediction_table, study

SURVIVAL = ["events", "cumulative_input", "probe_items", "probe_survival", "probe_kept", "probe_reinjected",
            "probe_summarized", *(f"probe_{c}" for c in CATEGORIES)]


def default_logs() -> tuple[str, list[Path]]:
    shared = ROOT.parent / "shared" / "agentlogs"
    if shared.is_dir():
        real = [p for kind in ("claude-code", "codex") for p in sorted((shared / kind).glob("*.jsonl"))
                if "FIXTURE" not in p.name]
        return "../shared/agentlogs", real
    found = [p for f in ("data/agentlogs", "data/compactions") for p in sorted((ROOT / f).rglob("*.jsonl"))]
    return "data/agentlogs + data/compactions", found


def markdown(frame, digits: int = 3) -> str:
    frame = frame.reset_index()
    head = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"

    def cell(v) -> str:
        if isinstance(v, float):
            return "–" if v != v else f"{v:,.{digits}f}".rstrip("0").rstrip(".") if abs(v) < 1000 else f"{v:,.0f}"
        return "–" if v is None else str(v)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--logs", nargs="*", type=Path)
    parser.add_argument("--budget", type=int, default=120_000)
    args = parser.parse_args()
    where, logs = (" + ".join(map(str, args.logs)), args.logs) if args.logs else default_logs()
    started = time.perf_counter()
    print(f"## Every policy's probe survival ({len(logs)} logs of {where}, {args.budget:,} bytes)\n")
    frame = compare_policies([str(p) for p in logs], probes=True, budget=args.budget)
    print(markdown(frame[[c for c in SURVIVAL if c in frame.columns]]))
    print(f"\n## Masking against summaries ({where}, {args.budget:,} bytes; dollars at claude-sonnet-4.5)\n")
    print(markdown(masking_vs_summary([str(p) for p in logs], {"extractive": ExtractiveSummarizer()},
                                      budget=args.budget)))
    smollm2 = {"extractive": ExtractiveSummarizer(), "SmolLM2-135M": CachedSummarizer.smollm2()}
    for corpus in CORPORA:
        print(f"\n## Masking against summaries, SmolLM2's cached summaries ({corpus.name}, {corpus.budget:,} bytes)\n")
        print(markdown(masking_vs_summary(corpus_sources(corpus), smollm2, budget=corpus.budget)))
    cases = study(logs)
    table = compactions_table(cases)
    print(f"\n## Every real compaction and the 20 tool calls after it ({len(table)} compactions)\n")
    print(markdown(table.drop(columns=["note"])))
    real = table[table["duplicate_of"] == ""]
    followed = int((real["reread_files"] > 0).sum())
    print(f"\n{followed} of {len(real)} compactions (forks counted once) were followed by a re-read; "
          f"{int(real['reread_tokens'].sum()):,} tokens re-read, ${real['reread_usd'].sum():.2f} on first reading, "
          f"${real['carried_usd'].sum():.2f} carried until the next compaction.")
    print("\n## Does a gone probe predict a re-read?\n")
    print(markdown(prediction_table(cases)))
    print(f"\n(computed in {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
