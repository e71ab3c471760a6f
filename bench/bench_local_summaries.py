"""Real summaries beside extractive ones (issue 27): retention with SmolLM2-135M and with the offline summarizer.

Run (after ``make local-model``): .venv/bin/python bench/bench_local_summaries.py [--budget N] [--threads N]

Starts the local model (``LocalModel``), measures its speed (prompt and completion
tokens per second, from the server's own usage counts), then runs
``compare_policies`` on the vendored transcripts (``data/transcripts``) under
NanoHermes's policy with two summarizers side by side: the offline extractive one,
and the real model through the window-fitting summarizer (chunks, then the chunks'
summaries), every summary kept in ``data/summaries/smollm2.json`` with the model,
prompt and settings that made it. Prints one table: events, summarizer requests,
retention, needed-later retention and the wall time of each run. A second run
reuses the file (no model request): that is what the course and the tests read.
Without the model it says what is missing in one line and exits 1.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanohermes_nb.agent.local import LocalModel, find_model, unavailable_reason  # noqa: E402
from nanohermes_nb.context.cached import SUMMARIES_DIR, CachedSummarizer  # noqa: E402
from nanohermes_nb.context.summarizers import ExtractiveSummarizer, summary_prompt  # noqa: E402
from nanohermes_nb.engine.sweep import compare_policies  # noqa: E402

COLUMNS = ["events", "summarizer_calls", "retention", "needed_later", "needed_later_items", "seconds"]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def speed(local: LocalModel) -> tuple[float, float]:
    """Prompt and completion tokens per second, from the server's own usage counts.

    Prompt: a 1,000-token prompt answered with one token. Completion: a short prompt answered with up to
    256 tokens (its prompt time, at the measured rate, is taken off).
    """
    client = local.chat_model(timeout=600)._client

    def ask(text: str, max_tokens: int) -> tuple[dict, float]:
        started = time.perf_counter()
        data = client.post({"model": local.model, "messages": [{"role": "user", "content": text}],
                            "max_tokens": max_tokens, "temperature": 0.0, "stream": False})
        return data["usage"], time.perf_counter() - started

    usage, seconds = ask("The helper in src/app.py reads the budget and returns the size. " * 70, 1)
    prompt_rate = usage["prompt_tokens"] / seconds
    usage, seconds = ask("Write a long story about a robot who fixes bugs.", 256)
    completion_rate = usage["completion_tokens"] / max(seconds - usage["prompt_tokens"] / prompt_rate, 1e-6)
    return prompt_rate, completion_rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=30_000)  # the vendored logs never pass 120,000
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--transcripts", default=str(ROOT / "data" / "transcripts"))
    parser.add_argument("--out", default=str(SUMMARIES_DIR / "smollm2.json"))
    args = parser.parse_args()
    out = Path(args.out)
    reason = unavailable_reason()
    if reason is not None and not out.exists():
        print(f"bench_local_summaries: no local model: {reason}")
        return 1
    runs: dict[str, float] = {}
    frames = []
    extractive = ExtractiveSummarizer()
    started = time.perf_counter()
    frames.append(("extractive", compare_policies(args.transcripts, policies=["nanohermes"], budget=args.budget,
                                                  needed_later=True, summarizer=extractive)))
    runs["extractive"] = time.perf_counter() - started
    if reason is None:
        path = find_model()
        with LocalModel(n_threads=args.threads) as local:
            prompt_rate, completion_rate = speed(local)
            print(f"SmolLM2 on this machine: {prompt_rate:,.0f} prompt tokens/s, {completion_rate:,.0f} completion "
                  f"tokens/s (started in {local.started_in:.1f} s)")
            live = local.summarizer(timeout=1800)
            meta = {"model": path.name, "model_sha256": sha256(path), "server": "llama-cpp-python 0.3.36 "
                    f"(python -m llama_cpp.server, chat_format {local.chat_format}, n_ctx {local.n_ctx}, seed "
                    f"{local.seed}, {args.threads} threads)", "prompt": summary_prompt(live.max_words),
                    "settings": {"temperature": live.temperature, "max_words": live.max_words,
                                 "context_window": live.context_window, "reply_tokens": live.reply_tokens,
                                 "bytes_per_token": live.bytes_per_token, "policy": "nanohermes",
                                 "budget": args.budget},
                    "made_by": "bench/bench_local_summaries.py"}
            cache = CachedSummarizer(out, fallback=live, meta=meta)
            started = time.perf_counter()
            frames.append(("smollm2 (live)", compare_policies(args.transcripts, policies=["nanohermes"],
                                                             budget=args.budget, needed_later=True, summarizer=cache)))
            runs["smollm2 (live)"] = time.perf_counter() - started
            cache.save()
    cached = CachedSummarizer(out)
    started = time.perf_counter()
    frames.append(("smollm2 (cached)", compare_policies(args.transcripts, policies=["nanohermes"],
                                                        budget=args.budget, needed_later=True, summarizer=cached)))
    runs["smollm2 (cached)"] = time.perf_counter() - started
    print(f"\n{'summarizer':<18} " + " ".join(f"{c:>18}" for c in COLUMNS))
    for name, frame in frames:
        row = frame.iloc[0].to_dict()
        row["seconds"] = round(runs[name], 1)
        print(f"{name:<18} " + " ".join(f"{row.get(c)!s:>18}" for c in COLUMNS))
    print(f"\ncache: {out} ({len(cached)} summaries, {cached.misses} misses on the cached run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
