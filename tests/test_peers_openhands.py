"""observation_masking against OpenHands' masking condenser, ported into the harness.

OpenHands cannot be installed here (``openhands-ai`` pulls its whole
application), so the real side is ``nanohermes_nb.peers.openhands``: the
condenser's ``condense`` and the ``ConversationMemory.process_events`` that
turns its view into the LLM's messages, ported line for line with citations.
The differential run samples every 3rd tool-batch point (every 5th at
OpenHands' configured window of 100) of every corpus transcript (the vendored
sample and ``../shared/transcripts``) at three budgets:
the real side's event-to-message loop is quadratic in the number of masked
turns (OpenHands re-checks every never-released tool-call message after every
event), about 35 s of CPU per window for the whole corpus. Each cause the
earlier port got wrong has a small hand-built case below, run through both
sides and checked against the answer worked out by hand.
"""

import copy
import dataclasses

import pytest
from builders import SYSTEM, assistant, tool, user
from corpus import EXTENDED, corpus_files

from nanohermes_nb import replay
from nanohermes_nb.context.sizing import context_size, message_size
from nanohermes_nb.peers import PEERS, agreement, batch_points, compare
from nanohermes_nb.peers.openhands import (
    CLASS_ATTENTION_WINDOW,
    CONFIG_ATTENTION_WINDOW,
    AgentCondensationObservation,
    Observation,
    condense,
    events_from_openai,
    openhands_peer,
    openhands_real,
)
from nanohermes_nb.policies import ObservationMaskingPolicy, apply_policy
from nanohermes_nb.transcripts import load_transcript

STRIDE = 3 if EXTENDED else 1  # every 3rd tool-batch point at the class window; every 5th at the config window
# (the vendored sample alone is small: every point of it)


@pytest.fixture(scope="module")
def transcripts():
    return [(p.name, load_transcript(p)) for p in corpus_files()]


def port(ctx, attention_window=CLASS_ATTENTION_WINDOW, **options):
    """The lab's policy once, over budget (budget 1 byte: every context here is over it)."""
    pol = ObservationMaskingPolicy(attention_window=attention_window, **options)
    return apply_policy(pol, ctx, budget=1, size=message_size).messages


def both(ctx, window):
    """(OpenHands, lab): the two sides on one context; the input must come back untouched."""
    before = copy.deepcopy(ctx)
    real, lab = openhands_real(ctx, window), port(ctx, window)
    assert ctx == before
    return real, lab


MASKED = {"role": "user", "content": "<MASKED>"}
MASKED_AFTER_USER = {"role": "user", "content": "\n\n<MASKED>"}


# --- the differential run ---------------------------------------------------------------------


@pytest.mark.parametrize("window, stride", [(CLASS_ATTENTION_WINDOW, STRIDE), (CONFIG_ATTENTION_WINDOW, 5 if EXTENDED else 1)])
def test_agrees_with_openhands_on_the_corpus(transcripts, window, stride):
    result = compare(openhands_peer(window), transcripts, stride=stride)
    # ~880 tool-batch points with the extended corpus (every 3rd or 5th taken), 3 budgets each; every point
    # of the vendored sample alone gives about 190 comparisons
    assert result.compared >= (1500 // stride if EXTENDED else 150), result.compared
    assert result.share >= 0.99, result.mismatches[:5]


def test_the_corpus_run_can_fail_the_earlier_port_agreed_on_13_percent(transcripts):
    """The lab's earlier reading (last 5 tool results, masked in place) against the same real side."""
    earlier = ObservationMaskingPolicy(window="tool_results", render="in_place")
    peer = dataclasses.replace(openhands_peer(), port=lambda c, b: apply_policy(
        earlier, c, budget=b, size=message_size).messages)
    sample = [(n, m) for n, m in transcripts if "tau_" in n or "openhands_" in n or "deerflow" in n]
    result = compare(peer, sample, stride=STRIDE)
    assert result.compared > 50 and result.share < 0.3
    # and OpenHands does change what is sent on most of the sampled points at window 5
    points = [c for _, m in sample for c in list(batch_points(m))[::STRIDE]]
    assert sum(openhands_real(c, 5) != c for c in points) > len(points) // 2


def test_the_agreement_table_has_both_windows(transcripts):
    table = agreement(transcripts[:1], policies=["observation_masking", "observation_masking(attention_window=100)"])
    assert list(table["policy"]) == ["observation_masking", "observation_masking(attention_window=100)"]
    assert (table["agreement"] >= 0.99).all() and "ported" in table["version"][0]
    assert set(PEERS) >= {"observation_masking", "observation_masking(attention_window=100)"}


# --- the ported condenser itself --------------------------------------------------------------


def test_condense_masks_observations_by_view_index_and_keeps_every_action():
    ctx = [dict(SYSTEM), user("go"), assistant("", ["a", "b"]), tool("a", "A"), tool("b", "B")]
    view = events_from_openai(ctx)
    assert len(view) == 6  # system, user, two actions (one per call), two observations
    out = condense(view, 1)  # i < 6 - 1: only the observation at index 4 is outside
    assert [type(e).__name__ for e in out] == [
        "SystemMessageAction", "MessageAction", "ToolAction", "ToolAction",
        "AgentCondensationObservation", "ToolObservation"]
    assert out[4].content == "<MASKED>" and out[5] is view[5]
    assert all(o is v for o, v in zip(out, view) if not isinstance(v, Observation))
    assert not any(isinstance(e, AgentCondensationObservation) for e in condense(view, 6))


# --- each fixed cause, by hand, on both sides -------------------------------------------------


def test_parallel_calls_are_several_events():
    """One message with three calls is three events: the old result falls outside a window of 5.

    Events: system 0, user 1, call x 2, result x 3, calls p q r 4-6, results 7-9 (10 in all);
    3 < 10 - 5 masks result x. Counting messages (8, so 3 < 3) or tool results (4 <= 5)
    would mask nothing.
    """
    a1, a2 = assistant("look", ["x"]), assistant("three at once", ["p", "q", "r"])
    ctx = [dict(SYSTEM), user("go"), a1, tool("x", "X" * 50), a2, tool("p"), tool("q"), tool("r")]
    real, lab = both(ctx, 5)
    assert real == lab == [ctx[0], ctx[1], MASKED_AFTER_USER, a2, ctx[5], ctx[6], ctx[7]]
    assert port(ctx, 5, window="tool_results") == port(ctx, 5, window="tool_results", render="in_place") == ctx


def test_the_window_counts_every_event_not_tool_results():
    """User and call-less assistant messages are events too (a tau-style dialogue).

    Events: system 0, user 1, call 2, result 3, reply 4, user 5, call 6, result 7 (8);
    3 < 8 - 4 masks the first result although only two tool results exist.
    """
    ctx = [dict(SYSTEM), user("book it"), assistant("", ["x"]), tool("x", "flights..."),
           assistant("Which one?"), user("the first"), assistant("", ["y"]), tool("y", "booked")]
    real, lab = both(ctx, 4)
    assert real == lab == [ctx[0], ctx[1], MASKED_AFTER_USER, ctx[4], ctx[5], ctx[6], ctx[7]]
    assert port(ctx, 4, window="tool_results", render="in_place") == ctx  # 2 results <= 4


def test_a_masked_result_takes_its_call_message_and_unmasked_siblings_with_it():
    """OpenHands releases an assistant message only once every call of it has a tool result.

    Events: system 0, user 1, calls x y 2-3, results 4-5, call z 6, result 7 (8); with a
    window of 3, result x (4 < 5) is masked and result y (5) is not: the message with both
    calls never reaches the LLM, nor does result y.
    """
    a1, a2 = assistant("two reads", ["x", "y"]), assistant("", ["z"])
    ctx = [dict(SYSTEM), user("go"), a1, tool("x", "X"), tool("y", "Y"), a2, tool("z", "Z")]
    real, lab = both(ctx, 3)
    assert real == lab == [ctx[0], ctx[1], MASKED_AFTER_USER, a2, ctx[6]]


def test_user_messages_after_a_user_message_get_two_newlines():
    ctx = [dict(SYSTEM), user("go"), assistant("", ["x"]), tool("x"), assistant("", ["w"]), tool("w"),
           user("now the tests"), assistant("", ["y"]), tool("y")]
    real, lab = both(ctx, 3)  # events 0-8: the results at 3 and 5 are < 9 - 3
    assert real == lab == [ctx[0], ctx[1], MASKED_AFTER_USER, MASKED_AFTER_USER,
                           {"role": "user", "content": "\n\nnow the tests"}, ctx[7], ctx[8]]
    after_reply = [dict(SYSTEM), user("go"), assistant("ok"), assistant("", ["x"]), tool("x"),
                   assistant("", ["y"]), tool("y")]
    real, lab = both(after_reply, 2)
    assert real == lab and real[3] == MASKED  # after an assistant message: no newlines


def test_results_follow_their_call_message_in_call_order_released_by_id():
    """A result is matched by id, not position: two call messages then their two results
    (as in the deerflow transcript) come out as call, result, call, result; results written
    in another order than the calls come out in call order."""
    a0, a1, a2 = assistant("", ["m"]), assistant("", ["a"]), assistant("", ["b"])
    ctx = [dict(SYSTEM), user("go"), a0, tool("m"), a1, a2, tool("a", "A"), tool("b", "B")]
    real, lab = both(ctx, 4)  # events 0-7: result m (3) < 8 - 4
    assert real == lab == [ctx[0], ctx[1], MASKED_AFTER_USER, a1, ctx[6], a2, ctx[7]]
    a3 = assistant("", ["c1", "c2"])
    ctx = [dict(SYSTEM), user("go"), a0, tool("m"), a3, tool("c2", "two"), tool("c1", "one"), assistant("ok")]
    real, lab = both(ctx, 4)  # events 0-8 (two calls, two events): result m (3) < 9 - 4
    assert real == lab == [ctx[0], ctx[1], MASKED_AFTER_USER, a3, ctx[6], ctx[5], ctx[7]]


def test_a_call_still_waiting_for_its_result_is_not_sent():
    """The context at the last tool batch of many transcripts ends on a call with no result yet."""
    ctx = [dict(SYSTEM), user("go"), assistant("", ["x"]), tool("x"), assistant("", ["y"]), tool("y"),
           assistant("finishing", ["z"])]
    real, lab = both(ctx, 2)  # events 0-6: the result at 3 is < 7 - 2, the one at 5 is not
    assert real == lab == [ctx[0], ctx[1], MASKED_AFTER_USER, ctx[4], ctx[5]]


def test_nothing_outside_the_window_leaves_the_context_alone():
    ctx = [dict(SYSTEM), user("go"), assistant("", ["x"]), tool("x")]
    done = apply_policy(ObservationMaskingPolicy(), ctx, budget=1, size=message_size)
    assert done.event is None and done.messages == ctx and openhands_real(ctx, 5) == ctx


# --- the lab's side: events, options, repeated passes --------------------------------------------


def test_the_event_says_what_was_lost_and_sizes_add_up():
    a1, a2 = assistant("look", ["x"]), assistant("three", ["p", "q", "r"])
    ctx = [dict(SYSTEM), user("go"), a1, tool("x", "X" * 500), a2, tool("p"), tool("q"), tool("r")]
    done = apply_policy(ObservationMaskingPolicy(), ctx, budget=10, size=message_size)
    ev = done.event
    assert ev.kind == "mask" and ev.size_after == context_size(done.messages) < ev.size_before
    assert {id(m) for m in ev.removed} == {id(a1), id(ctx[3])} and ev.inserted == (MASKED_AFTER_USER,)
    assert "masked 1 tool results outside the last 5 events" in ev.detail and "1 tool-call messages" in ev.detail


def test_masking_again_is_stable_and_counts_placeholders_as_events():
    """The lab applies the policy to its own output: placeholders stay one event each and no
    newline is added twice; only results newly outside the window are masked."""
    ctx = [dict(SYSTEM), user("go")]
    for k in range(4):
        ctx += [assistant("", [f"c{k}"]), tool(f"c{k}", f"out {k}")]
    ctx += [user("and more")]
    first = port(ctx, 3)  # events 0-10: the results at 3, 5, 7 are < 11 - 3
    assert first == [ctx[0], ctx[1], MASKED_AFTER_USER, MASKED_AFTER_USER, MASKED_AFTER_USER, ctx[8], ctx[9], ctx[10]]
    assert apply_policy(ObservationMaskingPolicy(attention_window=3), first, budget=1).event is None
    grown = first + [assistant("", ["d"]), tool("d", "D"), assistant("", ["e"]), tool("e", "E")]
    second = port(grown, 3)  # events 0-11: the result at 6 is < 12 - 3; placeholders are events too
    assert second[:5] == first[:5] and all(a is b for a, b in zip(second[2:5], first[2:5]))
    assert second[5] == MASKED_AFTER_USER and second[6] == {"role": "user", "content": "\n\nand more"}
    assert second[7:] == grown[-4:]
    third = port(second + [assistant("", ["f"]), tool("f"), assistant("", ["g"]), tool("g")], 3)
    assert third[6] is second[6]  # already formatted: no second pair of newlines
    assert third[7:9] == [MASKED_AFTER_USER, MASKED_AFTER_USER] and len(third) == 13


def test_the_earlier_reading_is_kept_as_options():
    ctx = [dict(SYSTEM), user("go")]
    for k in range(7):
        ctx += [assistant("", [f"c{k}"]), tool(f"c{k}", f"out {k}")]
    earlier = port(ctx, 5, window="tool_results", render="in_place")
    results = [m for m in earlier if m["role"] == "tool"]
    assert [m["content"] for m in results] == ["<MASKED>"] * 2 + [f"out {k}" for k in range(2, 7)]
    assert len(earlier) == len(ctx) and all(a is b for a, b in zip(earlier[2:], ctx[2:]) if a["role"] != "tool")
    with pytest.raises(ValueError, match="window"):
        ObservationMaskingPolicy(window="messages")
    with pytest.raises(ValueError, match="render"):
        ObservationMaskingPolicy(render="elsewhere")


def test_replay_runs_with_the_faithful_default(transcripts):
    # a tau-bench run when the extended corpus is there, else the vendored OpenHands run
    name, msgs = next((n, m) for n, m in transcripts if "tau_gpt4o_airline_idx33" in n or not EXTENDED and "openhands_v1" in n)
    ledger = replay(msgs, budget=context_size(msgs) // 3, policy="observation_masking", retention=False)
    assert len(ledger.compactions) > 0
    assert any("tool-call messages no longer sent" in ev.detail for ev in ledger.compactions)
