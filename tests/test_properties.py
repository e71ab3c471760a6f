"""Hypothesis properties of compaction over generated legal histories."""

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import legal_histories

from nanohermes_nb import check_history, compact, replay
from nanohermes_nb.context.compaction import find_cut
from nanohermes_nb.policies import NanoHermesPolicy


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legal_histories(), st.integers(0, 3000), st.integers(0, 14), st.booleans(),
       st.sampled_from(["forward", "backward"]))
def test_compaction_properties(msgs, budget, keep, force, cut):
    assert check_history(msgs) == []
    before = copy.deepcopy(msgs)
    r = compact(msgs, budget=budget, keep_recent=keep, force=force, cut=cut, summarizer=lambda e: "S")
    assert msgs == before  # never mutates its input
    assert r.messages[0] == msgs[0]  # keeps messages[0]
    assert check_history(r.messages) == []  # leaves an OpenAI-legal history
    if r.compacted:
        tail = msgs[r.cut:]
        assert r.messages[2:] == tail  # the recent suffix is intact
        assert not tail or tail[0]["role"] != "tool"
        if cut == "forward":
            assert r.cut == find_cut(msgs, keep) and len(tail) <= keep
        else:
            assert len(tail) >= min(keep, len(msgs) - 1)
        assert len(r.messages) == len(msgs) - len(r.dropped) + 1
    else:
        assert r.messages == msgs


@settings(max_examples=150, deadline=None)
@given(legal_histories(), st.integers(0, 2000), st.integers(1, 12))
def test_replay_never_breaks_a_legal_history(msgs, budget, keep):
    L = replay(msgs, budget=budget, summarizer=lambda e: "S", policy=NanoHermesPolicy(keep_recent=keep))
    assert (L.requests["problems_openai"] == 0).all()
    assert all(e.problems["openai"] == 0 for e in L.compactions)
