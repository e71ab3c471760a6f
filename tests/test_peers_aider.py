"""aider_rule against aider's real ``ChatSummary`` (the aider-chat 0.86.2 wheel), and SWE-agent's when at hand.

The wheel is fetched with pip into ``.cache/peers/`` once; only ``aider/history.py``,
``prompts.py`` and ``dump.py`` are loaded from it (``peers/aider.py``). Both sides get
each tool-batch point of the corpora in aider's form, the same per-message size and
the same fixed answer from the weak model; the contexts are compared on exact text.
"""

import copy

import pytest
from builders import SYSTEM, session, user
from corpus import EXTENDED, corpus_files

from nanohermes_nb.peers import PEERS, STUB_SUMMARY, _load_all, canonical, compare
from nanohermes_nb.peers.aider import (
    AIDER_VERSION,
    aider_form,
    aider_port,
    aider_real,
    aider_unavailable,
)
from nanohermes_nb.peers.swe_agent import sweagent_real, sweagent_unavailable
from nanohermes_nb.policies import AiderPolicy, apply_policy
from nanohermes_nb.policies.aider import OK_REPLY, SUMMARY_PREFIX, max_chat_history_tokens
from nanohermes_nb.transcripts import load_transcript

STRIDE = 4 if EXTENDED else 1


@pytest.fixture(scope="module")
def history():
    why = aider_unavailable(fetch=True)
    if why:
        pytest.skip(f"aider-chat {AIDER_VERSION} cannot run here: {why}")
    _load_all()
    return PEERS["aider_rule"]


@pytest.fixture(scope="module")
def transcripts():
    return [(p.name, load_transcript(p)) for p in corpus_files()]


@pytest.mark.slow
def test_aider_rule_agrees_with_chat_summary_on_the_corpora(history, transcripts):
    result = compare(history, transcripts, stride=STRIDE)
    assert result.compared >= 150 and result.identical == result.compared, result.mismatches


def both(ctx, budget, window=4096):
    before = copy.deepcopy(ctx)
    real, port = aider_real(aider_form(ctx), budget, window=window), aider_port(aider_form(ctx), budget, window=window)
    assert ctx == before
    return canonical(real), canonical(port), real


def test_the_head_is_summarized_the_tail_kept_and_ok_appended(history):
    ctx = [SYSTEM] + [m for k in range(8)
                      for m in (user(f"ask {k} " * 30), {"role": "assistant", "content": "done " * 40})]
    ctx.append(user("last question"))
    real, port, raw = both(ctx, 900)
    assert real == port
    assert raw[1]["content"] == SUMMARY_PREFIX + STUB_SUMMARY and raw[-1] == {"role": "assistant", "content": OK_REPLY}


def test_recursion_and_the_head_cut_by_the_weak_model_window(history):
    ctx = [SYSTEM] + [m for k in range(30) for m in (user("u" * 300), {"role": "assistant", "content": "a" * 300})]
    for budget, window in ((400, 4096), (2_000, 1_000), (50, 10**6)):
        real, port, _ = both(ctx, budget, window)
        assert real == port, (budget, window)


def test_tool_transcripts_in_aider_form_and_the_pair_rule(history):
    ctx = session(10, body="r" * 500)
    real, port, _ = both(ctx, 2_000)
    assert real == port
    ours = apply_policy(AiderPolicy(), ctx, budget=4_000, summarizer=lambda _e: "S").messages
    from nanohermes_nb.context.history import check_history

    assert check_history(ours) == []  # keep_pairs: no result orphaned on the lab's own form


def test_the_differential_can_fail(history):
    """A port whose head need not end on an assistant message (aider's L59-61 left out) is caught."""
    import nanohermes_nb.policies.aider as mod

    ctx = [SYSTEM] + [m for k in range(8)
                      for m in (user(f"ask {k} " * 30), {"role": "assistant", "content": "ok " * 9})]
    original = mod.AiderRun._ends_head
    mod.AiderRun._ends_head = lambda self, messages, split: True
    try:
        real, port, _ = both(ctx, 900)
    finally:
        mod.AiderRun._ends_head = original
    assert real != port


def test_a_failed_summary_drops_the_whole_history_as_aider_does():
    ctx = session(8, body="z" * 400)
    out = apply_policy(AiderPolicy(), ctx, budget=2_000, summarizer=lambda _e: None)
    assert out.messages == [ctx[0]] and out.event.failure and "drops the whole history" in out.event.detail


def test_aider_constants():
    assert [max_chat_history_tokens(w) for w in (8_000, 128_000, 200_000)] == [1024, 8000, 8192]
    with pytest.raises(ValueError, match="max_tokens"):
        AiderPolicy(max_tokens=-1)


def test_swe_agent_rule_against_sweagent_when_a_checkout_is_given():
    why = sweagent_unavailable()
    if why:
        pytest.skip(f"SWE-agent cannot run here: {why}")
    for path in corpus_files()[:2]:
        msgs = load_transcript(path)
        from nanohermes_nb.peers import batch_points
        from nanohermes_nb.peers.swe_agent import sweagent_port

        for ctx in list(batch_points(msgs))[::3]:
            assert canonical(sweagent_real(ctx)) == canonical(sweagent_port(ctx))
