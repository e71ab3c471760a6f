"""Real summaries beside extractive ones (issue 27): retention with SmolLM2-135M and with the offline summarizer.

Run: .venv/bin/python bench/bench_local_summaries.py [--file FILE] [--speed] [--markdown]
(FILE: default nanohermes_nb/resources/summaries/smollm2.json)

Offline (no model needed): replays the logs of
``nanohermes_nb.agent.local_summaries.CORPORA`` (vendored transcripts at a 30,000-byte
budget, the vendored Claude Code log at 120,000, the rest of the settings default) under
NanoHermes's policy twice, with the extractive summarizer and with SmolLM2's summaries replayed from the cache
(``CachedSummarizer``), and prints one table: compactions, summarizer requests,
retention, needed-later retention, and the time one summary cost (per corpus). The extractive
summarizer's time is measured here (its summary of each excerpt, timed); the model's
is what the file recorded when ``python -m nanohermes_nb.agent.local_summaries make``
asked it (the machine's load at that moment included), so the ratio is the figure
to quote, not the seconds.

``--speed`` (needs ``make local-model``) also starts the model and measures its
prompt and completion tokens per second from the server's own usage counts.
``--markdown`` prints the table as the Markdown block docs/local-model.md holds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanohermes_nb.agent.local_summaries import CORPORA, DEFAULT_FILE, retention_table  # noqa: E402
from nanohermes_nb.context.cached import CachedSummarizer  # noqa: E402
from nanohermes_nb.context.summarizers import ExtractiveSummarizer  # noqa: E402


class TimedExtractive:
    """The extractive summarizer on the excerpt text, each call timed (the same summary as in a replay)."""

    def __init__(self) -> None:
        self.inner = ExtractiveSummarizer()
        self.seconds: list[float] = []

    def __call__(self, excerpt: str) -> str | None:
        started = time.perf_counter()
        summary = self.inner(excerpt)
        self.seconds.append(time.perf_counter() - started)
        return summary


def speed(local, repeats: int = 3) -> tuple[float, float]:
    """Median prompt and completion tokens per second over ``repeats`` rounds, from the server's usage counts.

    Prompt: a fresh ~1,000-token prompt (a new first word each time, so no cached prefix) answered with one
    token. Completion: a short prompt answered once with 1 token and once with up to 128; the rate is the
    extra tokens over the extra time (the prompt is then cached, so its cost cancels).
    """
    client = local.chat_model(timeout=600)._client

    def ask(text: str, max_tokens: int) -> tuple[dict, float]:
        started = time.perf_counter()
        data = client.post({"model": local.model, "messages": [{"role": "user", "content": text}],
                            "max_tokens": max_tokens, "temperature": 0.0, "stream": False})
        return data["usage"], time.perf_counter() - started

    prompt_rates, completion_rates = [], []
    for k in range(repeats):
        usage, seconds = ask(f"Run {k}. " + "The helper in src/app.py reads the budget and returns the size. " * 70, 1)
        prompt_rates.append(usage["prompt_tokens"] / seconds)
        story = f"Story {k}: write a long story about a robot who fixes bugs in a big codebase."
        short, t1 = ask(story, 1)
        usage, tn = ask(story, 128)
        if usage["completion_tokens"] > short["completion_tokens"] and tn > t1:
            completion_rates.append((usage["completion_tokens"] - short["completion_tokens"]) / (tn - t1))
    return statistics.median(prompt_rates), statistics.median(completion_rates) if completion_rates else float("nan")


class RecordedSeconds(CachedSummarizer):
    """The cached summaries, with the seconds the model took for each one answered (as the file recorded)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.seconds: list[float] = []

    def __call__(self, excerpt: str) -> str:
        summary = super().__call__(excerpt)
        self.seconds.append(self.last_cost.seconds if self.last_cost is not None else float("nan"))
        return summary


def table(path: Path):
    """The retention table with a seconds-per-summary column (each corpus its own), and the ratio of the means."""
    parts, model_seconds, extractive_seconds = [], [], []
    for corpus in CORPORA:
        cached, timed = RecordedSeconds(path), TimedExtractive()
        frame = retention_table({"extractive": timed, "smollm2": cached}, [corpus])
        per = {"extractive": statistics.mean(timed.seconds) if timed.seconds else float("nan"),
               "smollm2": statistics.mean(cached.seconds) if cached.seconds else float("nan")}
        frame["seconds_per_summary"] = [per[s] for s in frame.index.get_level_values("summarizer")]
        parts.append(frame)
        model_seconds += cached.seconds
        extractive_seconds += timed.seconds
    import pandas as pd

    ratio = statistics.mean(model_seconds) / statistics.mean(extractive_seconds)
    return pd.concat(parts), ratio


def markdown(frame) -> str:
    lines = ["| logs (budget) | summarizer | compactions | summarizer requests | retention | needed later kept "
             "| seconds per summary |", "|---|---|---:|---:|---:|---:|---:|"]
    budgets = {c.name: c.budget for c in CORPORA}
    for (corpus, summarizer), row in frame.iterrows():
        needed = "–" if row["needed_later_items"] == 0 else \
            f"{row['needed_later']:.2f} of {int(row['needed_later_items'])}"
        lines.append(f"| {corpus} ({budgets[corpus]:,} bytes) | {summarizer} | {int(row['events'])} | "
                     f"{int(row['summarizer_calls'])} | {row['retention']:.2f} | {needed} | "
                     f"{row['seconds_per_summary']:.3g} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--speed", action="store_true", help="start the local model and measure its tokens/s")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if not args.file.exists():
        print(f"bench_local_summaries: {args.file}: no such file (python -m nanohermes_nb.agent.local_summaries make)")
        return 1
    frame, ratio = table(args.file)
    cached = CachedSummarizer(args.file)
    print(f"cache: {args.file} ({len(cached)} summaries by {cached.meta.get('model')})")
    print(markdown(frame) if args.markdown else frame.to_string())
    print(f"\none summary: the local model took {ratio:,.0f}x the extractive summarizer's time")
    if args.speed:
        from nanohermes_nb.agent.local import LocalModel, unavailable_reason

        reason = unavailable_reason()
        if reason is not None:
            print(f"bench_local_summaries: no local model: {reason}")
            return 1
        with LocalModel(n_threads=args.threads) as local:
            prompt_rate, completion_rate = speed(local)
        print(f"SmolLM2 on this machine ({args.threads} threads): {prompt_rate:,.0f} prompt tokens/s, "
              f"{completion_rate:,.0f} completion tokens/s (medians of 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
