"""Hypothesis properties of compaction over generated legal histories."""

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanohermes_nb import check_history, compact, replay
from nanohermes_nb.compaction import find_cut

text = st.text(alphabet=st.sampled_from("ab c\n\"\\中文é🙂"), max_size=60)


@st.composite
def legal_histories(draw):
    msgs = [{"role": "system", "content": draw(text)}]
    reuse = draw(st.booleans())  # reused ids across turns, as in tau-bench logs
    for t in range(draw(st.integers(0, 5))):
        msgs.append({"role": "user", "content": draw(text)})
        for r in range(draw(st.integers(0, 4))):
            n = draw(st.integers(1, 4))
            ids = [f"call_{j}" if reuse else f"call_{t}_{r}_{j}" for j in range(n)]
            msgs.append({"role": "assistant", "content": draw(st.one_of(st.none(), text)),
                         "tool_calls": [{"id": i, "type": "function",
                                         "function": {"name": "read_file", "arguments": "{}"}} for i in ids]})
            msgs.extend({"role": "tool", "tool_call_id": i, "content": draw(text)} for i in ids)
        if draw(st.booleans()):
            msgs.append({"role": "assistant", "content": draw(text)})
    return msgs


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
    L = replay(msgs, budget=budget, keep_recent=keep, summarizer=lambda e: "S")
    assert (L.requests["problems_openai"] == 0).all()
    assert all(e.problems["openai"] == 0 for e in L.compactions)
