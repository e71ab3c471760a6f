"""observation_masking against OpenHands' real code: the openhands-ai 1.6.0 wheel.

The module's set-up fetches the wheel with pip into ``.cache/peers/`` (once; the
folder is git-ignored) and imports ``ObservationMaskingCondenser`` and
``ConversationMemory`` from it, with only what they import installed (the
``peers-openhands`` extra). Where it cannot be had, every test that needs it
is skipped with one line saying why.

The differential runs over every tool-batch point of the corpora (every 3rd at
window 5 and every 5th at window 100 with the extended corpus, whose full run
takes minutes: ``bench/bench_peer_openhands.py`` gives every point), in the two
readings ``peers/openhands.py`` defines: ``stand_in`` (the empty system message
SPEC 5 puts first stands in for the agent's prompt) and ``strict`` (OpenHands
sees only what was recorded, and knows no prompt). Each cause the project once
got wrong has a test on a real transcript, run through both sides.
"""

import copy
import inspect
import sys

import pytest

from builders import SYSTEM, assistant, tool, user
from corpus import EXTENDED, corpus_files
from nanohermes_nb.context.messages import role_of
from nanohermes_nb.context.sizing import context_size, message_size
from nanohermes_nb.engine.ledger import replay
from nanohermes_nb.engine.recorded import prepare
from nanohermes_nb.peers import PEERS, agreement, batch_points
from nanohermes_nb.peers.openhands import (
    CLASS_ATTENTION_WINDOW,
    CONFIG_ATTENTION_WINDOW,
    OPENHANDS_VERSION,
    _wire,
    agreement_by_context,
    cache_dir,
    fetch_openhands,
    openhands,
    openhands_real,
    openhands_unavailable,
)
from nanohermes_nb.policies import ObservationMaskingPolicy, apply_policy
from nanohermes_nb.transcripts import load_transcript

STRIDE = 3 if EXTENDED else 1  # every 3rd tool-batch point at the class window (the vendored sample: every one)
BIGCSV = "deerflow_bigcsv_ad76c455.json"  # vendored: the task first, the system message second


@pytest.fixture(scope="module")
def oh():
    """The real classes; the wheel is fetched here when it is not in the cache yet."""
    why = openhands_unavailable(fetch=True)
    if why:
        pytest.skip(f"OpenHands {OPENHANDS_VERSION} cannot run here: {why}")
    return openhands()


@pytest.fixture(scope="module")
def transcripts():
    return [(p.name, load_transcript(p)) for p in corpus_files()]


@pytest.fixture(scope="module")
def bigcsv():
    return load_transcript(next(p for p in corpus_files() if p.name == BIGCSV))


def port(ctx, attention_window=CLASS_ATTENTION_WINDOW, **options):
    """The project's policy once, over budget (budget 1 byte: every context here is over it)."""
    pol = ObservationMaskingPolicy(attention_window=attention_window, **options)
    return apply_policy(pol, ctx, budget=1, size=message_size).messages


def both(ctx, window, mode="stand_in"):
    """(OpenHands, project) in the compared form; the input must come back untouched."""
    before = copy.deepcopy(ctx)
    real = [_wire(m) for m in openhands_real(ctx, window, mode)]
    ours = [_wire(m) for m in port(ctx, window)]
    assert ctx == before
    return real, ours


def wire(messages):
    return [_wire(m) for m in messages]


def recorded_points(messages):
    """The tool-batch points of a transcript as recorded: without the empty system message SPEC 5 prepends."""
    _, notes = prepare(messages)
    return [p[1:] if notes else p for p in batch_points(messages)]


MASKED = {"role": "user", "content": "<MASKED>"}
MASKED_AFTER_USER = {"role": "user", "content": "\n\n<MASKED>"}


# --- the real code, and how it is loaded ---------------------------------------------------------


def test_the_real_side_is_the_wheel_not_a_port(oh):
    condenser, memory = oh.ObservationMaskingCondenser, oh.ConversationMemory
    assert condenser.__module__ == "openhands.memory.condenser.impl.observation_masking_condenser"
    assert memory.__module__ == "openhands.memory.conversation_memory"
    for cls in (condenser, memory, oh.MCPAction, oh.MCPObservation):
        assert inspect.getfile(cls).startswith(str(oh.root)), inspect.getfile(cls)
    assert str(oh.root).startswith(str(cache_dir()))
    # openhands/controller/__init__.py (the agent controller, the runtime) never ran; its folder is a package
    controller = sys.modules["openhands.controller"]
    assert getattr(controller, "__file__", None) is None and "openhands.controller.agent_controller" not in sys.modules
    assert "openhands.controller.state.state" in sys.modules  # imported from that folder, as it is
    assert sys.excepthook.__module__ != "openhands.core.logger"  # the import's side effect undone
    # OpenHands' Message (what it sends) has no reasoning_content: the project must not send it either
    assert "reasoning_content" not in sys.modules["openhands.core.message"].Message.model_fields


def test_a_wheel_that_cannot_be_fetched_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip then looks only in an empty folder: nothing to find
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(RuntimeError) as err:
        fetch_openhands(tmp_path / "cache")
    assert f"openhands-ai=={OPENHANDS_VERSION}" in str(err.value) and "\n" not in str(err.value)
    assert not list((tmp_path / "cache").glob("openhands-ai-*"))  # nothing half-unpacked left behind


# --- the differential run ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("window, stride", [(CLASS_ATTENTION_WINDOW, STRIDE),
                                            (CONFIG_ATTENTION_WINDOW, 5 if EXTENDED else 1)])
def test_agrees_with_openhands_on_the_corpus(oh, transcripts, window, stride):
    compared, diffs = agreement_by_context(transcripts, window, "stand_in", stride=stride)
    # 882 tool-batch points with the extended corpus (every 3rd or 5th taken); 59 in the vendored sample
    assert compared >= (882 // stride if EXTENDED else 59), compared
    assert (compared - len(diffs)) / compared >= 0.99, diffs[:5]


@pytest.mark.slow
def test_strictly_only_transcripts_without_a_system_message_first_differ(oh, transcripts):
    """OpenHands told only what was recorded, with no prompt to add: where the first recorded message is
    not a system message it sends no system message and repeats the task at index 1, while the
    project's replay has SPEC 5's empty system message first. Every other context agrees."""
    compared, diffs = agreement_by_context(transcripts, CLASS_ATTENTION_WINDOW, "strict", stride=STRIDE)
    no_system = {name for name, msgs in transcripts if role_of(msgs[0]) != "system"}
    assert no_system and {d.transcript for d in diffs} == no_system
    assert all(d.index == 0 for d in diffs)  # the first message, nothing in the masking
    points = sum(len(range(0, len(list(batch_points(m))), STRIDE)) for n, m in transcripts if n in no_system)
    assert len(diffs) == points and compared - len(diffs) > 0


def test_the_corpus_run_can_fail_the_earlier_reading_agrees_rarely(oh, transcripts):
    """The project's earlier reading (last 5 tool results, masked in place) against the same real side."""
    earlier = ObservationMaskingPolicy(window="tool_results", render="in_place")
    sample = [(n, m) for n, m in transcripts if "tau_" in n or "openhands_" in n or "deerflow" in n]
    compared, diffs = agreement_by_context(sample, CLASS_ATTENTION_WINDOW, "stand_in", stride=STRIDE,
                                           port=lambda c: apply_policy(earlier, c, budget=1).messages)
    assert compared > 20 and len(diffs) / compared > 0.7


def test_the_agreement_table_has_both_windows(oh, transcripts):
    table = agreement(transcripts[:1], stride=3,
                      policies=["observation_masking", "observation_masking(attention_window=100)"])
    assert list(table["policy"]) == ["observation_masking", "observation_masking(attention_window=100)"]
    assert (table["agreement"] >= 0.99).all() and f"openhands-ai {OPENHANDS_VERSION}" in table["version"][0]
    assert set(PEERS) >= {"observation_masking", "observation_masking(attention_window=100)"}


# --- each cause fixed, on a real transcript ------------------------------------------------------


def test_the_task_is_repeated_whenever_message_1_is_not_a_user_message(oh, bigcsv):
    """deerflow_bigcsv records the task first and a system message second. OpenHands'
    ``_ensure_initial_user_message`` looks at index 1 only: it puts the task there again (after
    ``"\\n\\n"``, a user message after a user message). The project once did so only after a system
    message at index 0, and sent this history as it was."""
    points = recorded_points(bigcsv)
    assert role_of(points[0][0]) == "user" and role_of(points[0][1]) == "system"
    for k, ctx in enumerate(points):
        real, ours = both(ctx, CLASS_ATTENTION_WINDOW, "strict")
        assert real == ours, k
        assert real[0] == wire([ctx[0]])[0] and real[1]["content"] == "\n\n" + ctx[0]["content"]
        assert real[2]["role"] == "system"


def test_a_context_with_nothing_masked_is_still_sent_as_openhands_sends_it(oh, bigcsv):
    """At OpenHands' configured window (100) nothing of deerflow_bigcsv is masked, yet OpenHands renders
    the history on every step (CodeActAgent.step): the project once declined here and sent the
    transcript's messages as they were."""
    for k, ctx in enumerate(recorded_points(bigcsv)):
        real, ours = both(ctx, CONFIG_ATTENTION_WINDOW, "strict")
        assert real == ours and not any("<MASKED>" in m["content"] for m in real), k
        assert wire(ctx) != real  # the rendering changed something: the task repeated, reasoning dropped
    done = apply_policy(ObservationMaskingPolicy(attention_window=100), recorded_points(bigcsv)[0], budget=1)
    assert done.event is not None and "masked 0 tool results" in done.event.detail
    assert "the task repeated at index 1" in done.event.detail


def test_reasoning_content_is_not_sent(oh, bigcsv):
    """OpenHands rebuilds an assistant message from its role, text and calls: DeepSeek's
    ``reasoning_content`` (on 10 of deerflow_bigcsv's messages) never reaches the LLM."""
    ctx = list(batch_points(bigcsv))[-1]
    assert sum(1 for m in ctx if m.get("reasoning_content")) >= 5
    real, ours = both(ctx, CLASS_ATTENTION_WINDOW)
    assert real == ours and not any("reasoning_content" in m for m in port(ctx))
    early = list(batch_points(bigcsv))[0]  # nothing masked: only the reasoning goes
    done = apply_policy(ObservationMaskingPolicy(), early, budget=1, size=message_size)
    assert done.event is not None and done.event.size_after < done.event.size_before
    assert [m.get("content") for m in done.messages] == [m.get("content") for m in early]
    assert "fields OpenHands does not send dropped from 1 messages" in done.event.detail


# --- hand-built cases, each worked out by hand and run through both sides -----------------------


def test_parallel_calls_are_several_events(oh):
    """One message with three calls is three events: the old result falls outside a window of 5.

    Events: system 0, user 1, call x 2, result x 3, calls p q r 4-6, results 7-9 (10 in all);
    3 < 10 - 5 masks result x. Counting messages (8, so 3 < 3) or tool results (4 <= 5)
    would mask nothing.
    """
    a1, a2 = assistant("look", ["x"]), assistant("three at once", ["p", "q", "r"])
    ctx = [dict(SYSTEM), user("go"), a1, tool("x", "X" * 50), a2, tool("p"), tool("q"), tool("r")]
    real, ours = both(ctx, 5)
    assert real == ours == wire([ctx[0], ctx[1], MASKED_AFTER_USER, a2, ctx[5], ctx[6], ctx[7]])
    assert port(ctx, 5, window="tool_results") == ctx


def test_the_window_counts_every_event_not_tool_results(oh):
    """Events: system 0, user 1, call 2, result 3, reply 4, user 5, call 6, result 7 (8);
    3 < 8 - 4 masks the first result although only two tool results exist."""
    ctx = [dict(SYSTEM), user("book it"), assistant("", ["x"]), tool("x", "flights..."),
           assistant("Which one?"), user("the first"), assistant("", ["y"]), tool("y", "booked")]
    real, ours = both(ctx, 4)
    assert real == ours == wire([ctx[0], ctx[1], MASKED_AFTER_USER, ctx[4], ctx[5], ctx[6], ctx[7]])
    assert port(ctx, 4, window="tool_results", render="in_place") == ctx  # 2 results <= 4


def test_a_masked_result_takes_its_call_message_and_unmasked_siblings_with_it(oh):
    """Events: system 0, user 1, calls x y 2-3, results 4-5, call z 6, result 7 (8); window 3 masks
    result x (4 < 5), not result y: the message with both calls never reaches the LLM, nor does y."""
    a1, a2 = assistant("two reads", ["x", "y"]), assistant("", ["z"])
    ctx = [dict(SYSTEM), user("go"), a1, tool("x", "X"), tool("y", "Y"), a2, tool("z", "Z")]
    real, ours = both(ctx, 3)
    assert real == ours == wire([ctx[0], ctx[1], MASKED_AFTER_USER, a2, ctx[6]])


def test_user_messages_after_a_user_message_get_two_newlines(oh):
    ctx = [dict(SYSTEM), user("go"), assistant("", ["x"]), tool("x"), assistant("", ["w"]), tool("w"),
           user("now the tests"), assistant("", ["y"]), tool("y")]
    real, ours = both(ctx, 3)  # events 0-8: the results at 3 and 5 are < 9 - 3
    assert real == ours == wire([ctx[0], ctx[1], MASKED_AFTER_USER, MASKED_AFTER_USER,
                                 {"role": "user", "content": "\n\nnow the tests"}, ctx[7], ctx[8]])
    after_reply = [dict(SYSTEM), user("go"), assistant("ok"), assistant("", ["x"]), tool("x"),
                   assistant("", ["y"]), tool("y")]
    real, ours = both(after_reply, 2)
    assert real == ours and real[3] == MASKED  # after an assistant message: no newlines


def test_results_follow_their_call_message_in_call_order_released_by_id(oh):
    """Two call messages then their two results come out call, result, call, result; results
    written in another order than the calls come out in call order. Nothing masked at window 100:
    the order is OpenHands' all the same."""
    a0, a1, a2 = assistant("", ["m"]), assistant("", ["a"]), assistant("", ["b"])
    ctx = [dict(SYSTEM), user("go"), a0, tool("m"), a1, a2, tool("a", "A"), tool("b", "B")]
    real, ours = both(ctx, 4)  # events 0-7: result m (3) < 8 - 4
    assert real == ours == wire([ctx[0], ctx[1], MASKED_AFTER_USER, a1, ctx[6], a2, ctx[7]])
    real, ours = both(ctx, 100)
    assert real == ours == wire([*ctx[:5], ctx[6], a2, ctx[7]])
    a3 = assistant("", ["c1", "c2"])
    ctx = [dict(SYSTEM), user("go"), a0, tool("m"), a3, tool("c2", "two"), tool("c1", "one"), assistant("ok")]
    real, ours = both(ctx, 4)  # events 0-8 (two calls, two events): result m (3) < 9 - 4
    assert real == ours == wire([ctx[0], ctx[1], MASKED_AFTER_USER, a3, ctx[6], ctx[5], ctx[7]])


def test_a_call_still_waiting_for_its_result_is_not_sent(oh):
    ctx = [dict(SYSTEM), user("go"), assistant("", ["x"]), tool("x"), assistant("", ["y"]), tool("y"),
           assistant("finishing", ["z"])]
    real, ours = both(ctx, 2)  # events 0-6: the result at 3 is < 7 - 2, the one at 5 is not
    assert real == ours == wire([ctx[0], ctx[1], MASKED_AFTER_USER, ctx[4], ctx[5]])


def test_what_openhands_would_send_unchanged_leaves_the_context_alone(oh):
    ctx = [dict(SYSTEM), user("go"), assistant("", ["x"]), tool("x")]
    done = apply_policy(ObservationMaskingPolicy(), ctx, budget=1, size=message_size)
    assert done.event is None and done.messages == ctx and both(ctx, 5)[0] == wire(ctx)


# --- the project's side: events, options, repeated passes ----------------------------------------


def test_the_event_says_what_was_lost_and_sizes_add_up():
    a1, a2 = assistant("look", ["x"]), assistant("three", ["p", "q", "r"])
    ctx = [dict(SYSTEM), user("go"), a1, tool("x", "X" * 500), a2, tool("p"), tool("q"), tool("r")]
    done = apply_policy(ObservationMaskingPolicy(), ctx, budget=10, size=message_size)
    ev = done.event
    assert ev.kind == "mask" and ev.size_after == context_size(done.messages) < ev.size_before
    assert {id(m) for m in ev.removed} == {id(a1), id(ctx[3])} and ev.inserted == (MASKED_AFTER_USER,)
    assert "masked 1 tool results outside the last 5 events" in ev.detail and "1 tool-call messages" in ev.detail


def test_masking_again_is_stable_and_counts_placeholders_as_events():
    """The project applies the policy to its own output: placeholders stay one event each, no newline
    is added twice, the task is not repeated twice; only results newly outside the window are masked."""
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
    task_first = [user("go"), dict(SYSTEM), assistant("", ["x"]), tool("x")]
    once = port(task_first, 100)
    assert [m["content"] for m in once[:3]] == ["go", "\n\ngo", SYSTEM["content"]]
    assert apply_policy(ObservationMaskingPolicy(attention_window=100), once, budget=1).event is None


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
