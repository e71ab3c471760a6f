"""SmolLM2's cached summaries of the vendored logs: replayed offline, and reproduced by the model.

``nanohermes_nb/resources/summaries/smollm2.json`` holds the local model's summary of every compaction
NanoHermes's policy makes on the vendored logs (``local_summaries.CORPORA``). Without
any server, ``CachedSummarizer.smollm2()`` must answer every one of those compactions
(no placeholder, no miss) and the ledger must count the requests each summary cost.
With the model (slow tier, ``local_model``), the compactions of up to 4 KB (DeerFlow's three
short ones, about a minute) are summarized again live: each live summary must be the file's,
and every later excerpt (which holds the earlier summaries) must be one of the file's keys.
"""

from __future__ import annotations

import json

import pytest

from nanohermes_nb.agent.local import unavailable_reason
from nanohermes_nb.agent.local_summaries import (
    CORPORA,
    DEFAULT_FILE,
    TABLE_COLUMNS,
    check,
    main,
    replay_corpora,
    retention_table,
)
from nanohermes_nb.context.cached import CachedSummarizer, excerpt_key
from nanohermes_nb.context.summarizers import ExtractiveSummarizer, summary_prompt

pytestmark = pytest.mark.timeout(240)
REASON = unavailable_reason()


@pytest.fixture(scope="module")
def cache() -> CachedSummarizer:
    return CachedSummarizer.smollm2()


def test_the_file_says_what_made_the_summaries(cache):
    meta = cache.meta
    assert meta["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and len(meta["model_sha256"]) == 64
    assert "llama-cpp-python 0.3.36" in meta["server"] and "n_ctx 8192" in meta["server"]
    settings = meta["settings"]
    assert meta["prompt"] == summary_prompt(settings["max_words"]) and settings["temperature"] == 0.0
    assert settings["context_window"] == 8192 and settings["reply_tokens"] > 0
    assert meta["corpora"] == [c.as_dict() for c in CORPORA]
    assert meta["made_by"].startswith("python -m nanohermes_nb.agent.local_summaries make")
    for entry in cache.entries.values():
        assert entry["summary"].strip() and entry["calls"] >= 1 and entry["prompt_tokens"] > 0
        assert entry["seconds"] > 0 and not entry["estimated"]  # the server's own token counts


class _Keys(CachedSummarizer):
    """The cache, remembering which of its summaries were asked for and what the asked ones cost."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.used: set[str] = set()
        self.cost = 0

    def __call__(self, excerpt: str) -> str:
        summary = super().__call__(excerpt)
        self.used.add(excerpt_key(excerpt))
        self.cost += self.entries[excerpt_key(excerpt)]["calls"]
        return summary


def test_the_cache_answers_every_compaction_of_the_vendored_logs_without_a_server(cache):
    fresh = _Keys(cache.path)  # no fallback: a miss could only be the placeholder
    compactions = calls = 0
    for _corpus, _path, row in replay_corpora(fresh, needed_later=False):
        compactions += int(row["compactions"])
        calls += int(row["summarizer_calls"])
    assert compactions > 0 and fresh.misses == 0 and fresh.hits > 0
    # every summary in the file is used, none is stale (the hybrid shares NanoHermes's where its excerpt is the same)
    assert fresh.used == set(fresh.entries)
    assert calls == fresh.cost  # the ledger counts what each summary cost, each time it is used
    assert {c.name for c in CORPORA} and all("mask_then_summarize" in c.policies for c in CORPORA)
    assert check(cache.path) == (fresh.hits, 0)


def test_the_model_summaries_are_not_the_extractive_ones(cache):
    extractive = ExtractiveSummarizer()
    texts = [e["summary"] for e in cache.entries.values()]
    assert not any(t.startswith("Goal:") for t in texts)  # the extractive summary's first line
    table = retention_table({"extractive": extractive, "smollm2": cache})
    assert list(table.columns) == TABLE_COLUMNS
    assert table.index.get_level_values("corpus").unique().tolist() == [c.name for c in CORPORA]
    for corpus in table.index.get_level_values("corpus").unique():
        rows = table.loc[corpus]
        # both compact; not always at the same places, since summaries of other sizes move the next trigger
        assert rows.loc["extractive", "events"] > 0 and rows.loc["smollm2", "events"] > 0


def test_check_is_one_line_for_a_bad_file(tmp_path, capsys):
    bad = tmp_path / "s.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["check", "--file", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "s.json: not a summaries file" in err and err.count("\n") == 1


@pytest.mark.slow
@pytest.mark.local_model
@pytest.mark.skipif(REASON is not None, reason=f"no local model: {REASON}")
@pytest.mark.timeout(600)
def test_regeneration_with_the_server_reproduces_the_file_keys():
    from nanohermes_nb.agent.local import LocalModel

    data = json.loads(DEFAULT_FILE.read_text(encoding="utf-8"))
    committed = CachedSummarizer(DEFAULT_FILE)
    threads = int(data["server"].split(" threads")[0].rsplit(" ", 1)[-1])
    settings = data["settings"]
    live_keys: list[str] = []
    with LocalModel(n_threads=threads) as local:
        live = local.summarizer(timeout=900, max_words=settings["max_words"], reply_tokens=settings["reply_tokens"],
                                context_window=settings["context_window"])

        def regenerate(excerpt: str) -> str:
            """The model again for excerpts up to 4 KB (seconds each), the file for longer ones (minutes each)."""
            key = excerpt_key(excerpt)
            assert key in committed.entries, "an excerpt the file does not hold: an earlier summary changed"
            if len(excerpt.encode("utf-8")) > 4_000:
                return committed(excerpt)
            live_keys.append(key)
            summary = live(excerpt)
            assert summary == committed.entries[key]["summary"]
            return summary

        for _ in replay_corpora(regenerate, CORPORA[:1], needed_later=False):
            pass
    assert len(live_keys) >= 3 and not live.failures
