"""Conformance on every real transcript of every corpus (data/transcripts/, and the extended one when present)."""

import pandas as pd
import pytest
from conftest import corpus_files

from nanohermes_nb import check_history, compact, context_size, replay
from nanohermes_nb.engine.ledger import reference_replay
from nanohermes_nb.policies import NanoHermesPolicy
from nanohermes_nb.transcripts import load_transcript

FILES = corpus_files()
S = lambda excerpt: "S"  # noqa: E731  (a fixed summary keeps the comparison about sizes)


@pytest.mark.parametrize("path", FILES)
def test_replay_matches_reference_and_keeps_legality(path):
    msgs = load_transcript(path)
    assistants = sum(1 for m in msgs if m.get("role") == "assistant")
    baseline = replay(msgs, budget=10**12, summarizer=S)
    assert baseline.totals.n_requests == assistants and baseline.totals.n_compactions == 0
    for budget, keep in [(120_000, 10), (30_000, 10), (15_000, 4)]:
        L = replay(msgs, budget=budget, summarizer=S, policy=NanoHermesPolicy(keep_recent=keep))
        ref = pd.DataFrame(reference_replay(msgs, budget=budget, keep_recent=keep, summarizer=S))
        pd.testing.assert_frame_equal(L.requests[ref.columns], ref, check_dtype=False)
        assert L.totals.cumulative_input == L.requests["size"].sum()
        if (baseline.requests["problems_openai"] == 0).all():
            # a legal log stays legal under compaction
            assert (L.requests["problems_openai"] == 0).all(), path.name


@pytest.mark.parametrize("path", FILES)
def test_forced_compaction_on_real_logs(path):
    msgs = list(load_transcript(path))
    r = compact(msgs, force=True)
    if r.compacted:
        assert r.messages[2:] == msgs[r.cut:] and r.messages[0] is msgs[0]
        assert r.size_after == context_size(r.messages)
        new_problems = {(p.code) for p in check_history(r.messages)} - {p.code for p in check_history(msgs)}
        assert not new_problems - {"unanswered_call"}, path.name
