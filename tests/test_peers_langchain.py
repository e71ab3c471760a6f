"""LangChain's real code beside the three ports: langchain_trim, clear_tool_uses, langchain_summarize.

The real side is the installed library (langchain-core 1.7.2, langchain 1.4.7),
run on LangChain messages converted from the lab's OpenAI-form dicts by
LangChain's own converter (nanohermes_nb/peers/langchain.py); the port side is
``apply_policy``. Same per-message size on both sides; the summary model stubbed.
Every tool-batch point of every corpus transcript, at three budgets below its size.
"""

from __future__ import annotations

import copy
import json

import pytest
from builders import SYSTEM, assistant, tool, tool_round, user
from corpus import EXTENDED, corpus_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import legal_histories

from nanohermes_nb import check_history, load_transcript
from nanohermes_nb.peers import (
    PEERS,
    STUB_SUMMARY,
    Peer,
    batch_points,
    budgets_below,
    canonical,
    compare,
)
from nanohermes_nb.peers import langchain as lc_peer
from nanohermes_nb.peers.langchain import (
    BRIDGE,
    BYTES,
    TOKENS,
    clear_port,
    clear_real,
    stub_chat_model,
    summarize_port,
    summarize_real,
    trim_port,
    trim_real,
)
from nanohermes_nb.policies import LangChainSummarizePolicy, PolicyEnv, apply_policy
from nanohermes_nb.policies.langchain_summarize import SUMMARY_PREFIX, TOO_LONG

LANGCHAIN = ("langchain_trim", "clear_tool_uses", "langchain_summarize")
HYPO = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def transcripts():
    files = corpus_files()
    assert len(files) >= (18 if EXTENDED else 4)
    return [(f.name, load_transcript(f)) for f in files]


def test_langchain_is_installed_at_the_versions_the_ports_name():
    assert lc_peer.available() is None
    assert lc_peer.version() == "langchain-core 1.7.2, langchain 1.4.7"
    for policy in LANGCHAIN:
        assert PEERS[policy].version is lc_peer.version


# --- the converters ----------------------------------------------------------------------------------


def _lossy(original: dict, back: dict, converted) -> set[str]:
    """How LangChain's own round trip changed one message (names of the documented losses; else 'other:...')."""
    kinds = set()
    for key in set(original) | set(back):
        a, b = original.get(key, "<missing>"), back.get(key, "<missing>")
        if a == b:
            continue
        if key == "content" and a is None and b == "":
            kinds.add("content None -> ''")
        elif key == "tool_calls" and [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                                      for c in a] == [(c["id"], c["function"]["name"],
                                                       json.loads(c["function"]["arguments"])) for c in b]:
            kinds.add("arguments re-serialized")
        elif b == "<missing>" and converted.additional_kwargs.get(key) == a:
            kinds.add(f"{key} kept in additional_kwargs, dropped on the way back")
        else:
            kinds.add(f"other: {key}")
    return kinds


def test_langchain_round_trip_is_lossy_only_where_the_bridge_says(transcripts):
    from langchain_core.messages import convert_to_messages, convert_to_openai_messages

    seen: dict[str, int] = {}
    for _, messages in transcripts:
        for m in messages:
            converted = convert_to_messages([m])[0]
            for kind in _lossy(m, convert_to_openai_messages(converted), converted):
                seen[kind] = seen.get(kind, 0) + 1
    assert set(seen) == {"content None -> ''", "arguments re-serialized",
                         "reasoning_content kept in additional_kwargs, dropped on the way back"}, seen
    assert all(n > (10 if EXTENDED else 0) for n in seen.values())  # each loss really occurs in the corpus


def test_the_bridge_round_trips_every_corpus_message_exactly(transcripts):
    for _, messages in transcripts:
        converted = BRIDGE.to_langchain(messages)
        for m, c in zip(messages, converted, strict=False):
            assert BRIDGE.to_openai(c) is m
            # a copy goes through the "changed" path: with nothing changed it must give the same dict
            assert canonical([BRIDGE.to_openai(c.model_copy(deep=True))]) == canonical([m])
            assert BRIDGE.to_openai(c.model_copy(update={"response_metadata": {"x": 1}})) == m


def test_the_bridge_translates_each_change_and_refuses_what_it_cannot():
    m = {"role": "assistant", "content": None, "reasoning_content": "hmm",
         "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}},
                        {"id": "b", "type": "function", "function": {"name": "g", "arguments": '{"y":"é"}'}}]}
    c = BRIDGE.to_langchain([m])[0]
    calls = [dict(c.tool_calls[0]), {**c.tool_calls[1], "args": {"y": "ü"}}]
    assert BRIDGE.to_openai(c.model_copy(update={"tool_calls": calls})) == {
        **m, "tool_calls": [m["tool_calls"][0], {**m["tool_calls"][1], "function": {"name": "g",
                                                                                     "arguments": '{"y": "ü"}'}}]}
    assert BRIDGE.to_openai(c.model_copy(update={"content": "hi"})) == {**m, "content": "hi"}
    kw = {**c.additional_kwargs, "reasoning_content": "other"}
    assert BRIDGE.to_openai(c.model_copy(update={"additional_kwargs": kw}))["reasoning_content"] == "other"
    t = {"role": "tool", "tool_call_id": "a", "content": "r"}
    with pytest.raises(ValueError, match="tool_call_id"):
        BRIDGE.to_openai(BRIDGE.to_langchain([t])[0].model_copy(update={"tool_call_id": "z"}))


# --- the differential tests (the acceptance) ---------------------------------------------------------


@pytest.mark.parametrize("policy", LANGCHAIN)
def test_port_equals_the_real_code_on_every_corpus_point(transcripts, policy):
    result = compare(PEERS[policy], transcripts)
    points = sum(1 for _, msgs in transcripts for _ in batch_points(msgs))
    assert result.compared >= 3 * points - 10 and result.unavailable is None
    assert result.share >= 0.99, result.mismatches
    # the real code never mutated the LangChain messages the bridge hands out (they are converted once)
    from langchain_core.messages import convert_to_messages

    for tag, (original, converted) in list(BRIDGE._by_tag.items())[::97]:
        assert converted == convert_to_messages([{**original, "id": tag}])[0]


def test_the_comparison_fails_when_the_port_differs(transcripts):
    """A port at other options than the real code is caught: the harness is not vacuous."""
    name, messages = next((n, m) for n, m in transcripts if 25 < len(m) < 60)  # a short log keeps this quick
    cases = [
        (lambda c, b: trim_real(c, b), lambda c, b: trim_port(c, b, start_on="assistant")),
        (lambda c, b: clear_real(c, b), lambda c, b: clear_port(c, b, keep=4)),
        (lambda c, b: summarize_real(c, b), lambda c, b: summarize_port(c, b, keep=("messages", 19))),
    ]
    for real, port in cases:
        peer = Peer("x", "x", lambda: "x", real, port, TOKENS)
        result = compare(peer, [(name, messages)])
        assert result.compared > 0 and result.identical < result.compared


# --- langchain_trim ----------------------------------------------------------------------------------


def _both_trim(ctx, budget, **options):
    real, port = trim_real(ctx, budget, **options), trim_port(ctx, budget, **options)
    assert canonical(real) == canonical(port)
    return port


def test_trim_keeps_the_system_message_when_no_user_message_fits():
    ctx = [dict(SYSTEM), user("go"), *tool_round(0, "y" * 3000)]
    assert _both_trim(ctx, 1_000) == [ctx[0]]  # LangChain 1.x: _last_max_tokens re-adds the system message
    assert _both_trim(ctx[1:], 1_000) == []  # no system message: nothing is left
    assert _both_trim(ctx, 10) == [ctx[0]]  # system alone over the budget: still kept (room clamps at 0)
    dev = [{"role": "developer", "content": "be brief"}] + ctx[1:]  # a developer message is a SystemMessage
    assert _both_trim(dev, 1_000) == [dev[0]]


def test_trim_allow_partial_keeps_the_newest_lines_like_langchain():
    lines = "\n".join(f"line {k} of the task" for k in range(40))
    ctx = [dict(SYSTEM), user(lines), *tool_round(0, "z" * 200)]
    for budget in (600, 800, 1_000):  # the newest two messages and the system message take 476 bytes
        new = _both_trim(ctx, budget, allow_partial=True)
        assert new[1]["role"] == "user" and new[1]["content"] != lines and lines.endswith(new[1]["content"])
    blocks = {"role": "user", "content": [{"type": "text", "text": f"block {k} " + "w" * 60} for k in range(6)]}
    ctx = [dict(SYSTEM), blocks, assistant("done")]
    new = _both_trim(ctx, 400, allow_partial=True)
    assert new[1]["content"] == blocks["content"][-len(new[1]["content"]):]


@HYPO
@given(legal_histories(), st.floats(0.05, 0.95), st.booleans())
def test_trim_port_equals_trim_messages_on_legal_histories(msgs, share, partial):
    budget = int(sum(BYTES(m) for m in msgs) * share)
    new = _both_trim(msgs, budget, allow_partial=partial)
    assert check_history(new) == []


# --- clear_tool_uses ---------------------------------------------------------------------------------


def _both_clear(ctx, budget, **options):
    real, port = clear_real(ctx, budget, **options), clear_port(ctx, budget, **options)
    assert canonical(real) == canonical(port)
    return port


def _cleared(ctx):
    return [m["content"] == "[cleared]" for m in ctx if m["role"] == "tool"]


def test_clear_keep_and_placeholder_match_langchain():
    ctx = [dict(SYSTEM), user()] + [m for k in range(4) for m in tool_round(k, "r" * 300, n_calls=2)]
    assert _cleared(_both_clear(ctx, 100)) == [True] * 5 + [False] * 3
    assert _cleared(_both_clear(ctx, 100, keep=0)) == [True] * 8
    assert _cleared(_both_clear(ctx, 100, keep=7)) == [True] + [False] * 7
    assert _both_clear(ctx, 100, keep=8) == ctx
    new = _both_clear(ctx, 100, placeholder="<gone>")
    assert [m["content"] for m in new if m["role"] == "tool"][:5] == ["<gone>"] * 5


def test_clear_exclude_tools_uses_the_results_own_name_first():
    ctx = [dict(SYSTEM), user(), *tool_round(0, "r" * 300), *tool_round(1, "r" * 300), *tool_round(2, "r" * 300)]
    ctx[3] = {**ctx[3], "name": "keep_me"}  # the result names its tool; the call says read_file
    ctx[6]["tool_calls"][0]["function"]["name"] = "keep_me"  # the call says keep_me, the result says read_file
    ctx[7] = {**ctx[7], "name": "read_file"}
    new = _both_clear(ctx, 100, keep=0, exclude_tools=("keep_me",))
    assert _cleared(new) == [False, True, True]


def test_clear_tool_inputs_empties_every_call_with_that_id():
    calls = assistant("", ["a", "b", "a"], args=[{"p": 1}, {"p": 2}, {"p": 3}])
    ctx = [dict(SYSTEM), user(), calls, tool("a", "r" * 300), tool("b", "r" * 300), *tool_round(1, "s" * 300)]
    new = _both_clear(ctx, 100, keep=1, clear_tool_inputs=True)
    args = [c["function"]["arguments"] for c in new[2]["tool_calls"]]
    assert args == ["{}", "{}", "{}"] and _cleared(new) == [True, True, False]
    new = _both_clear(ctx, 100, keep=2, clear_tool_inputs=True)
    assert [c["function"]["arguments"] for c in new[2]["tool_calls"]] == ["{}", '{"p": 2}', "{}"]


def test_clear_at_least_counts_the_emptied_arguments_too():
    long_args = [{"command": "x" * 400}]
    ctx = [dict(SYSTEM), user()]
    for k in range(5):
        ctx += [assistant("", [f"c{k}"], args=long_args), tool(f"c{k}", "r" * 100)]
    for at_least in (100, 450, 600, 1500, 10**6):
        for inputs in (False, True):
            _both_clear(ctx, 100, keep=1, clear_at_least=at_least, clear_tool_inputs=inputs)
    # with inputs cleared the first clear reclaims ~500 bytes: one result is enough for 450
    assert _cleared(_both_clear(ctx, 100, keep=1, clear_at_least=450, clear_tool_inputs=True)) == [True] + [False] * 4
    assert _cleared(_both_clear(ctx, 100, keep=1, clear_at_least=450)) == [True] * 4 + [False]


def test_clear_pairs_a_result_with_the_nearest_assistant_message_only():
    ctx = [dict(SYSTEM), user(), assistant("", ["a"]), user("wait"), tool("a", "r" * 300),  # nearest AI has 'a'
           assistant("", ["b"]), assistant("thinking"), tool("b", "r" * 300),  # nearest AI has no call 'b'
           *tool_round(9, "s" * 300)]
    assert _cleared(_both_clear(ctx, 100, keep=1)) == [True, False, False]
    # a result already holding the placeholder counts as cleared: applying again changes nothing
    once = _both_clear(ctx, 100, keep=1)
    assert _both_clear(once, 100, keep=1) == once


@HYPO
@given(legal_histories(), st.floats(0.05, 0.95), st.integers(0, 4), st.sampled_from([0, 50, 400]), st.booleans(),
       st.sampled_from([(), ("read_file",)]))
def test_clear_port_equals_clear_tool_uses_edit_on_legal_histories(msgs, share, keep, at_least, inputs, exclude):
    budget = int(sum(BYTES(m) for m in msgs) * share)
    new = _both_clear(msgs, budget, keep=keep, clear_at_least=at_least, clear_tool_inputs=inputs,
                      exclude_tools=exclude)
    assert check_history(new) == []


# --- langchain_summarize -----------------------------------------------------------------------------


def _both_summarize(ctx, budget, size=TOKENS, model=None, **options):
    """Real and port on one context; also checks the model was sent exactly what the port would send."""
    from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
    from langchain_core.messages.utils import get_buffer_string

    model = model or stub_chat_model()
    real = summarize_real(ctx, budget, size=size, model=model, **options)
    port = summarize_port(ctx, budget, size=size, **options)
    assert canonical(real) == canonical(port)
    policy = LangChainSummarizePolicy(**options)
    env = PolicyEnv(budget, size, None, "custom", size)
    history = ctx[1:] if ctx and ctx[0]["role"] in ("system", "developer") else ctx
    cut = policy.cutoff(history, env)
    sent = policy.to_summarize(history[:cut], env) if cut > 0 else []
    if not sent:
        assert model.prompts == []
    else:
        text = get_buffer_string(BRIDGE.to_langchain(sent), format="xml")
        assert model.prompts == [DEFAULT_SUMMARY_PROMPT.format(messages=text).rstrip()]
    return port


def _long_task(rounds: int, body: str = "r" * 200, task: str = "Goal: fix the parser.") -> list:
    return [dict(SYSTEM), user(task)] + [m for k in range(rounds) for m in tool_round(k, body)]


def test_summarize_defaults_keep_20_messages_and_nothing_while_there_are_20_or_fewer():
    ctx = _long_task(9)  # 1 user + 18 = 19 messages after the system prompt
    assert _both_summarize(ctx, 10) == ctx
    ctx = _long_task(15)
    new = _both_summarize(ctx, 10)
    assert new[0] is ctx[0] and new[1]["role"] == "user" and new[1]["content"].startswith(SUMMARY_PREFIX)
    assert new[2:] == ctx[-20:] and check_history(new) == []


def test_summarize_acts_exactly_when_the_lab_trigger_fires():
    ctx = _long_task(15)
    size = sum(TOKENS(m) for m in ctx)
    assert summarize_real(ctx, size) == ctx and summarize_port(ctx, size) == ctx
    assert summarize_real(ctx, size - 1) != ctx
    assert _both_summarize(ctx, size - 1)[1]["content"] == SUMMARY_PREFIX + STUB_SUMMARY


def test_summarize_cut_on_parallel_results_moves_back_to_the_call():
    ctx = [dict(SYSTEM), user("task")] + [m for k in range(8) for m in tool_round(k, "r" * 50, n_calls=3)]
    for keep in range(2, 12):
        new = _both_summarize(ctx, 10, keep=("messages", keep))
        assert new[2]["role"] != "tool" and len(new) - 2 >= keep and check_history(new) == []


def test_summarize_cut_on_unmatched_results_moves_past_them():
    ctx = [dict(SYSTEM), user("task"), assistant("", ["a"]), tool("a"), assistant("note"),
           tool("ghost", "x"), tool("ghost2", "y"), assistant("after"), user("more"), assistant("ok")]
    new = _both_summarize(ctx, 10, keep=("messages", 5))  # cut 5 lands on 'ghost': no call anywhere before
    assert new[2:] == ctx[7:]


def test_summarize_says_too_long_without_calling_the_model_when_no_user_message_fits():
    ctx = _long_task(30, body="r" * 2000)  # the task is far more than 4,000 tokens before the cut
    new = _both_summarize(ctx, 10)
    assert new[1]["content"] == SUMMARY_PREFIX + TOO_LONG
    seen = []
    done = apply_policy("langchain_summarize", ctx, budget=10, size=TOKENS, tokens=TOKENS,
                        summarizer=lambda e: seen.append(e) or "S")
    assert seen == [] and done.event.summarizer_calls == 0


def test_summarize_sends_the_newest_lines_of_a_user_message_that_half_fits():
    task = "\n".join(f"step {k}: do something about module_{k}.py" for k in range(600))
    ctx = _long_task(22, body="r" * 300, task=task)
    new = _both_summarize(ctx, 10)  # the prompt check inside compares the partial user message line by line
    assert new[1]["content"] == SUMMARY_PREFIX + STUB_SUMMARY


def test_summarize_keep_in_tokens_and_as_a_fraction_of_the_budget():
    ctx = _long_task(20, body="r" * 400)
    for tokens in (50, 300, 1_000, 2_500):
        _both_summarize(ctx, 10, keep=("tokens", tokens))
    budget = 2_000
    for fraction in (0.1, 0.3, 0.9):
        model = stub_chat_model(profile={"max_input_tokens": budget})  # the lab's budget stands for the window
        _both_summarize(ctx, budget, model=model, keep=("fraction", fraction))


def test_summarize_again_summarizes_the_summary():
    ctx = _long_task(20)
    once = _both_summarize(ctx, 10)
    more = once + [m for k in range(20, 30) for m in tool_round(k, "r" * 200)]
    twice = _both_summarize(more, 10)
    assert twice[1]["content"].startswith(SUMMARY_PREFIX) and all(m is not once[1] for m in twice)


def test_summarize_failure_is_recorded_with_the_placeholder():
    ctx = _long_task(15)

    def broken(excerpt):
        raise RuntimeError("no model")

    done = apply_policy("langchain_summarize", ctx, budget=10, size=TOKENS, tokens=TOKENS, summarizer=broken)
    assert done.event.failure == "RuntimeError: no model" and done.event.kind == "placeholder"
    assert done.messages[2:] == ctx[-20:]


@HYPO
@given(legal_histories(), st.floats(0.05, 0.95), st.sampled_from([("messages", 20), ("messages", 2),
                                                                    ("messages", 5), ("tokens", 60)]),
       st.sampled_from([4000, 40, None]))
def test_summarize_never_leaves_an_orphan_result_and_equals_the_middleware(msgs, share, keep, trim):
    before = copy.deepcopy(msgs)
    budget = int(sum(TOKENS(m) for m in msgs) * share)
    new = _both_summarize(msgs, budget, keep=keep, trim_tokens_to_summarize=trim)
    assert msgs == before and check_history(new) == []
    if new != msgs:
        assert new[1]["content"].startswith(SUMMARY_PREFIX) and new[2:] == msgs[len(msgs) - len(new) + 2:]


def test_every_corpus_point_is_exercised_in_each_summary_branch(transcripts):
    """The corpus reaches all three outcomes at defaults: nothing to do, 'too long', a model call."""
    outcomes = set()
    for _, messages in transcripts[:6]:
        for ctx in batch_points(messages):
            for budget in budgets_below(sum(TOKENS(m) for m in ctx)):
                new = summarize_port(ctx, budget)
                outcomes.add("none" if new == ctx else new[1]["content"][len(SUMMARY_PREFIX):])
    assert outcomes == {"none", TOO_LONG, STUB_SUMMARY}
