"""The agent loop, live, against a chat-completions server each test starts on 127.0.0.1.

What the server receives for request k is exactly ``ledger.context(k)``; the tools
are advertised as JSON schemas; tool calls (parallel, malformed, unknown) come back
as tool results; a small budget compacts live and the next request carries the
summary at index 1; 429 is retried; a 500, a body that is not JSON, an empty
reply and ``max_requests`` stop the run with ``.error`` and the session kept; the
replay of the recorded session equals the live ledger; reported usage lands in
the ledger. Every test is bounded in time.
"""

from __future__ import annotations

import json

import pytest
from builders import AGENT_POLICY_CASES, agent_workspace, random_turns
from chat_server import ChatServer, Completion, Raw, tool_message
from clocks import FakeClock

import nanohermes_nb as nh
from nanohermes_nb import Agent, ScriptedModel
from nanohermes_nb.agent.loop import LiveReplayMismatch
from nanohermes_nb.agent.models import ModelError, Usage
from nanohermes_nb.agent.tools.toolbox import TOOL_SPECS
from nanohermes_nb.context.compaction import SUMMARY_HEADER
from nanohermes_nb.context.summarizers import summary_prompt

pytestmark = pytest.mark.timeout(60)

KEY = "sk-agent/TEST+key=42"
SAME = ["request", "turn", "index", "messages", "size", "size_before", "compacted", "dropped", "size_after",
        "cumulative_input", "size_no_compaction", "cumulative_no_compaction", "event", "prefix_reuse",
        "request_bytes", "problems_openai", "problems_anthropic", "problems_gemini"]


@pytest.fixture
def workspace(tmp_path):
    return agent_workspace(tmp_path)


def model_for(server: ChatServer, **options) -> nh.OpenAICompatibleModel:
    return nh.OpenAICompatibleModel(server.url, KEY, "test-model", timeout=10, **options)


def as_sent(messages) -> list:
    """The messages as JSON carries them (what a server parses)."""
    return json.loads(json.dumps(list(messages)))


def reads(*paths):
    return tool_message("Reading.", *[("read_file", {"path": p}) for p in paths])


# ---------------------------------------------------------------- what is sent


def test_each_request_sent_is_exactly_the_ledger_context(workspace):
    script = [reads("src/part0.py"), reads("src/part1.py", "src/part2.py"), reads("src/part3.py"),
              reads("src/part4.py"), reads("notes.txt"), {"role": "assistant", "content": "The answer is 42."}]
    with ChatServer(script, ["summary of the early work"]) as server, \
            Agent(workspace, model_for(server), budget=12_000) as agent:
        result = agent.run("Read the sources, then tell me the answer.")
    assert result.error is None and result.n_compactions >= 1
    ledger = result.ledger
    sent = server.agent_requests
    assert len(sent) == len(ledger.requests) == result.n_requests == 6
    for k, body in enumerate(sent, start=1):
        assert body["messages"] == as_sent(ledger.context(k)), k
        assert body["model"] == "test-model" and body["stream"] is False
    assert ledger.requests["size"].tolist() == [nh.context_size(ledger.context(k)) for k in range(1, 7)]
    assert server.requests[0]["auth"] == f"Bearer {KEY}" and server.requests[0]["path"] == "/v1/chat/completions"
    assert ledger.caveat.startswith("Live run") and ledger.live is True
    # issue 34: the run's settings are one Settings, the same value a replay's ledger carries
    assert isinstance(result.settings, nh.Settings) and ledger.settings == result.settings
    assert (result.settings.budget, result.settings.unit, result.settings.policy) == (12_000, "bytes", agent.policy)
    again = nh.replay(result.messages, result.settings)
    assert isinstance(again.settings, nh.Settings) and again.settings == result.settings and not again.live
    assert list(again.requests["size"]) == list(ledger.requests["size"]) and again.totals.n_compactions >= 1
    with pytest.warns(DeprecationWarning, match="AgentResult.compactions is deprecated since 0.3.0"):
        assert result.compactions == result.n_compactions == len(ledger.compactions)
    with pytest.warns(DeprecationWarning, match="AgentResult.requests is deprecated since 0.3.0"):
        assert result.requests == result.n_requests


def test_the_tools_are_advertised_as_json_schemas(workspace):
    with ChatServer([{"role": "assistant", "content": "hello"}]) as server, Agent(workspace, model_for(server)) as a:
        assert a.run("Say hello.").ok
    tools = server.agent_requests[0]["tools"]
    assert tools == [spec.as_openai() for spec in TOOL_SPECS]
    assert [t["function"]["name"] for t in tools] == ["read_file", "grep", "glob", "run_command", "start_task",
                                                       "task_output", "web_fetch"]
    for t in tools:
        assert t["type"] == "function" and t["function"]["parameters"]["type"] == "object"
        assert set(t["function"]["parameters"]["required"]) <= set(t["function"]["parameters"]["properties"])


def test_the_session_starts_with_the_system_message_then_the_task(workspace):
    (workspace / "AGENTS.md").write_text("Always answer in haiku.", encoding="utf-8")
    with ChatServer([{"role": "assistant", "content": "ok"}]) as server, Agent(workspace, model_for(server)) as a:
        a.run("What is in notes.txt?")
    first = server.agent_requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[0]["content"] == nh.system_content(nh.SystemConfig(workspace))
    assert "Always answer in haiku." in first[0]["content"] and first[1]["content"] == "What is in notes.txt?"


def test_a_memory_block_goes_at_the_very_end_of_the_system_message(workspace, tmp_path):
    store = nh.MemoryStore(tmp_path / "memory.json")
    store.add("fact", "the deploy script lives in tools/deploy.sh")
    store.add("fact", "unrelated: the office plant needs water")
    model = ScriptedModel(["done"])
    with Agent(workspace, model, memory=store, system="You are a test agent.") as agent:
        agent.run("Where is the deploy script?")
    system = model.contexts[0][0]["content"]
    assert system.startswith("You are a test agent.\n\n<nanohermes-memory>")
    assert system.endswith("</nanohermes-memory>") and "tools/deploy.sh" in system


# ---------------------------------------------------------------- tool calls


def test_parallel_tool_calls_are_all_answered_in_order(workspace):
    calls = tool_message("Three at once.", ("read_file", {"path": "notes.txt"}), ("glob", {"pattern": "src/*.py"}),
                         ("grep", {"pattern": "answer"}), ids=["a", "b", "c"])
    with ChatServer([calls, {"role": "assistant", "content": "done"}]) as server, \
            Agent(workspace, model_for(server)) as agent:
        result = agent.run("Look around.")
    tools = result.messages[3:6]
    assert [m["tool_call_id"] for m in tools] == ["a", "b", "c"] and all(m["role"] == "tool" for m in tools)
    with nh.Tools(workspace) as reference:
        assert [m["content"] for m in tools] == [reference.dispatch("read_file", {"path": "notes.txt"}),
                                                 reference.dispatch("glob", {"pattern": "src/*.py"}),
                                                 reference.dispatch("grep", {"pattern": "answer"})]
    assert server.agent_requests[1]["messages"][3:6] == as_sent(tools)
    assert result.ledger.requests["messages"].tolist() == [2, 6]


def test_malformed_arguments_and_unknown_tools_come_back_as_error_results(workspace):
    bad = tool_message("Trying things.", ("read_file", '{"path": "notes.txt"'), ("rm_everything", {}),
                       ("read_file", "[1, 2]"), ("read_file", {"path": "notes.txt", "color": "red"}),
                       ("read_file", {"path": "../outside.txt"}), ids=["m1", "m2", "m3", "m4", "m5"])
    with ChatServer([bad, {"role": "assistant", "content": "I will stop guessing."}]) as server, \
            Agent(workspace, model_for(server)) as agent:
        result = agent.run("Go.")
    assert result.ok
    results = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert len(results) == 5 and all(r.startswith("error:") for r in results)
    assert "not valid JSON" in results[0] and "unknown tool 'rm_everything'" in results[1]
    assert "must be an object" in results[2] and "unknown argument 'color'" in results[3]
    assert result.messages[2]["tool_calls"][0]["function"]["arguments"] == '{"path": "notes.txt"'  # kept as sent
    assert server.agent_requests[1]["messages"][-5:] == as_sent(result.messages[3:8])


def test_calls_without_ids_or_with_object_arguments_are_normalized(workspace):
    raw = {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "read_file", "arguments": {"path": "notes.txt"}}}],
        "reasoning_content": "hidden thoughts", "refusal": None}
    model = ScriptedModel([raw, "done"])
    with Agent(workspace, model) as agent:
        result = agent.run("Read it.")
    reply = result.messages[2]
    assert reply == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1_1", "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}}]}
    assert result.messages[3]["tool_call_id"] == "call_1_1" and "the answer is 42" in result.messages[3]["content"]


# ---------------------------------------------------------------- compaction, live


def test_a_small_budget_compacts_live_and_the_next_request_carries_the_summary(workspace):
    script = [reads(f"src/part{k}.py") for k in range(6)] + [{"role": "assistant", "content": "All read."}]
    with ChatServer(script, ["SUMMARY: parts 0-2 read, nothing wrong"], repeat=False) as server, \
            Agent(workspace, model_for(server), budget=10_000, policy=nh.NanoHermesPolicy(keep_recent=4)) as agent:
        result = agent.run("Read every part.")
    assert result.ok
    first = result.ledger.compactions[0]
    summary_request = server.summary_requests[0]
    assert [m["role"] for m in summary_request["messages"]] == ["system", "user"]
    assert summary_request["messages"][0]["content"] == summary_prompt(300)
    assert "tools" not in summary_request and summary_request["temperature"] == 0
    assert summary_request["messages"][1]["content"] == nh.build_excerpt(first.dropped)
    order = [("tools" in r["body"]) for r in server.requests]
    k = first.request  # the summary request comes right after request k's tool batch, before request k + 1
    assert order[:k] == [True] * k and order[k] is False and order[k + 1] is True
    after = server.agent_requests[k]["messages"]
    assert after[1] == {"role": "system", "content": f"{SUMMARY_HEADER}\nSUMMARY: parts 0-2 read, nothing wrong"}
    assert after == as_sent(result.ledger.context(k + 1))
    assert len(after) < len(server.agent_requests[k - 1]["messages"]) + 2
    calls = [c for c in result.calls if c.kind == "summary"]
    assert len(calls) == len(server.summary_requests) == result.ledger.totals.summarizer_calls and calls[0].request == k


def test_a_failed_summary_request_inserts_the_placeholder_and_the_run_goes_on(workspace):
    script = [reads(f"src/part{k}.py") for k in range(6)] + [{"role": "assistant", "content": "done"}]
    with ChatServer(script, [Raw(500, '{"error": "down"}')], repeat=True) as server, \
            Agent(workspace, model_for(server), budget=10_000, policy=nh.NanoHermesPolicy(keep_recent=4)) as agent:
        result = agent.run("Read every part.")
    assert result.ok and result.n_compactions >= 1
    first = result.ledger.compactions[0]
    assert first.kind == "placeholder" and "HTTP 500" in first.failure
    assert server.agent_requests[first.request]["messages"][1]["content"] == nh.context.compaction.PLACEHOLDER_NOTE
    assert any(c.kind == "summary" and "HTTP 500" in c.error for c in result.calls)


# ---------------------------------------------------------------- failures


def test_429_is_retried_honouring_retry_after(workspace):
    script = [Raw(429, '{"error": "slow down"}', {"Retry-After": "1"}), {"role": "assistant", "content": "hi"}]
    clock = FakeClock()
    with ChatServer(script) as server, Agent(workspace, model_for(server, clock=clock, sleep=clock.sleep)) as agent:
        result = agent.run("Hello?")
    assert result.ok and result.messages[-1]["content"] == "hi"
    assert len(server.agent_requests) == 2 and server.agent_requests[0] == server.agent_requests[1]
    assert clock.sleeps == [1.0] and len(result.ledger.requests) == 1


def test_repeated_500_stops_the_run_with_error_and_keeps_the_session(workspace, tmp_path):
    script = [reads("notes.txt"), Raw(500, '{"error": "internal"}')]
    with ChatServer(script, repeat=True) as server, Agent(workspace, model_for(server)) as agent:
        result = agent.run("Read the notes.")
    assert result.error.startswith("request 2 failed: HTTP 500")
    assert "\n" not in result.error and KEY not in result.error
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "tool"]
    assert len(server.agent_requests) == 2  # a 500 is not retried
    assert len(result.ledger.requests) == 1 and result.calls[-1].error == result.error.split(": ", 1)[1]
    path = tmp_path / "session.json"
    path.write_text(json.dumps(result.to_json()), encoding="utf-8")
    assert nh.load_transcript(path) == result.messages
    assert json.loads(path.read_text())["nanohermes_run"]["error"] == result.error


def test_a_body_that_is_not_json_stops_the_run(workspace):
    with ChatServer([Raw(200, "<html>gateway says hi</html>")]) as server, Agent(workspace, model_for(server)) as a:
        result = a.run("Hello?")
    assert "request 1 failed: malformed response" in result.error and "not JSON" in result.error
    assert [m["role"] for m in result.messages] == ["system", "user"] and len(result.ledger.requests) == 0


def test_a_body_without_choices_stops_the_run(workspace):
    with ChatServer([Raw(200, '{"object": "chat.completion", "choices": []}')]) as server, \
            Agent(workspace, model_for(server)) as agent:
        result = agent.run("Hello?")
    assert "no choices[0].message" in result.error


def test_a_reply_with_neither_content_nor_tool_calls_stops_the_run(workspace):
    script = [reads("notes.txt"), Completion({"role": "assistant", "content": ""}, finish_reason="length")]
    with ChatServer(script) as server, Agent(workspace, model_for(server)) as agent:
        result = agent.run("Read the notes.")
    assert result.error == "request 2: the reply has neither content nor tool calls (finish_reason: length)"
    assert result.messages[-1] == {"role": "assistant", "content": ""}
    assert len(result.ledger.requests) == 2  # the request was made and paid for


def test_max_requests_stops_a_model_that_never_finishes(workspace):
    with ChatServer([reads("notes.txt")], repeat=True) as server, Agent(workspace, model_for(server)) as agent:
        result = agent.run("Read forever.", max_requests=4)
    assert result.error.startswith("stopped after max_requests=4 requests")
    assert len(server.agent_requests) == 4 and result.messages[-1]["role"] == "tool"
    assert len(result.ledger.requests) == 4


def test_a_stopped_run_can_be_resumed(workspace):
    script = [reads("notes.txt"), Raw(500, "down"), {"role": "assistant", "content": "It says 42."}]
    with ChatServer(script) as server, Agent(workspace, model_for(server)) as agent:
        stopped = agent.run("Read the notes.")
        resumed = agent.resume()
    assert "HTTP 500" in stopped.error and resumed.ok
    assert resumed.messages[:4] == stopped.messages and resumed.messages[-1]["content"] == "It says 42."
    assert server.agent_requests[2]["messages"] == server.agent_requests[1]["messages"]
    assert len(resumed.ledger.requests) == 2


def test_the_api_key_never_reaches_the_session(workspace):
    with ChatServer([{"role": "assistant", "content": "your header was {auth}"}]) as server, \
            Agent(workspace, model_for(server)) as agent:
        result = agent.run("Echo.")
    text = json.dumps(result.to_json())
    assert KEY not in text and "Bearer ***" in result.messages[-1]["content"] and KEY not in repr(agent.model)


def test_the_model_is_configured_from_the_environment():
    assert nh.OpenAICompatibleModel.from_env({}) is None
    model = nh.OpenAICompatibleModel.from_env({"NANOHERMES_LLM_BASE_URL": "http://127.0.0.1:9/v1",
                                               "NANOHERMES_LLM_API_KEY": KEY + "\n",
                                               "NANOHERMES_LLM_MODEL": "local-7b"})
    assert model.model == "local-7b" and model.endpoint == "http://127.0.0.1:9/v1/chat/completions"
    with pytest.raises(nh.agent.transport.APIKeyError) as info:
        nh.OpenAICompatibleModel("http://127.0.0.1:9", "bad key", "m")
    assert "bad key" not in str(info.value)


def test_a_connection_failure_is_one_line(workspace):
    with ChatServer() as server:
        url = server.url
    model = nh.OpenAICompatibleModel(url, None, "m", timeout=5)
    with Agent(workspace, model) as agent:
        result = agent.run("Anyone there?")
    assert result.error.startswith("request 1 failed: connection failed") and "\n" not in result.error


# ---------------------------------------------------------------- the ledger of a live run


def test_usage_is_recorded_when_the_server_reports_it(workspace):
    usage = {"prompt_tokens": 1200, "completion_tokens": 30, "prompt_tokens_details": {"cached_tokens": 1024}}
    script = [Completion(reads("notes.txt"), usage=usage), {"role": "assistant", "content": "42"}]
    with ChatServer(script) as server, Agent(workspace, model_for(server)) as agent:
        result = agent.run("Read the notes.")
    req = result.ledger.requests
    assert req["usage_prompt_tokens"].tolist()[0] == 1200 and req["usage_cached_tokens"].tolist()[0] == 1024
    assert req["usage_completion_tokens"].tolist()[0] == 30
    assert req["usage_prompt_tokens"].isna().tolist() == [False, True]
    assert result.usage == (Usage(1200, 30, 1024), None)
    assert result.to_json()["nanohermes_run"]["usage"][0] == {"prompt_tokens": 1200, "completion_tokens": 30,
                                                              "cached_tokens": 1024}
    assert Usage.of({"prompt_tokens": 10, "prompt_cache_hit_tokens": 4}) == Usage(10, None, 4)  # DeepSeek's name
    assert Usage.of({"total_tokens": 5}) is None and Usage.of(None) is None


def test_the_replay_of_the_recorded_session_equals_the_live_ledger(workspace):
    script = [reads(f"src/part{k}.py") for k in range(6)] + [reads("notes.txt", "src/part0.py"),
                                                              {"role": "assistant", "content": "done"}]
    with ChatServer(script, [lambda body: {"role": "assistant", "content": nh.ExtractiveSummarizer()(
            body["messages"][1]["content"])}], repeat=True) as server, \
            Agent(workspace, model_for(server), budget=9_000, policy=nh.NanoHermesPolicy(keep_recent=4)) as agent:
        result = agent.run("Read every part.")
    assert result.ok and result.n_compactions >= 2
    live = result.ledger
    again = nh.replay(result.messages, budget=9_000, policy=nh.NanoHermesPolicy(keep_recent=4),
                      summarizer=nh.ExtractiveSummarizer())
    assert again.requests[SAME].equals(live.requests[SAME])
    assert [e.request for e in again.compactions] == [e.request for e in live.compactions]
    assert again.totals == live.totals
    assert result.replay().requests[SAME].equals(live.requests[SAME])  # the recorded summaries, as given


POLICY_CASES = AGENT_POLICY_CASES


def scripted_session(seed: int, workspace, policy, budget: int, unit: str = "bytes"):
    """A random scripted session (``random_turns``) run by the agent under ``policy``."""
    turns = random_turns(seed)
    model = ScriptedModel([item for t in turns for item in t])
    with Agent(workspace, model, budget=budget, policy=policy, unit=unit, system="You are a test agent.") as agent:
        for k in range(len(turns)):
            result = agent.run(f"Task part {k}: read what you need.")
            assert result.ok, result.error
    return model, result


@pytest.mark.parametrize("name, options", POLICY_CASES, ids=[f"{n}{'+' if o else ''}" for n, o in POLICY_CASES])
def test_live_and_replayed_ledgers_agree_for_every_policy(workspace, name, options):
    checked = acted = 0
    for seed in range(4):
        policy = nh.resolve_policy(name, **options)
        budget = 2_500 + 1_500 * seed
        model, result = scripted_session(seed, workspace, policy, budget)
        live = result.ledger
        assert [as_sent(live.context(k)) for k in range(1, result.n_requests + 1)] == as_sent(model.contexts)
        again = nh.replay(result.messages, budget=budget, policy=policy, summarizer=nh.ExtractiveSummarizer())
        assert again.requests[SAME].equals(live.requests[SAME]), (name, seed)
        assert [as_sent(again.context(k)) for k in range(1, result.n_requests + 1)] == as_sent(model.contexts)
        checked += result.n_requests
        acted += sum(e.event is not None for e in result.events)
    assert checked > 0 and acted > 0, "the policy should have acted in these sessions"


def test_the_live_checks_are_exactly_the_checks_the_replay_loop_makes(workspace):
    policy = nh.NanoHermesPolicy(keep_recent=4)
    model, result = scripted_session(7, workspace, policy, 3_000)
    assert result.events, "the session should have crossed the budget"
    session = nh.engine.recorded.RecordedSession.of(result.messages)
    checked = [r + 1 for r in session.checked_requests()]  # the requests whose tool batch is checked
    live = {e.request for e in result.events}
    assert live <= set(checked)
    for e in result.events:  # each live check saw the same size the replay measures at that point
        assert e.size == nh.context_size(e.before) and e.size > 3_000
    # a check the live loop made that the replay does not find, or the other way round, is refused
    tampered = dict(result.__dict__)
    tampered.pop("ledger", None)
    missing = nh.agent.loop.AgentResult(**{**tampered, "events": result.events[1:]})
    with pytest.raises(LiveReplayMismatch):
        _ = missing.ledger
    doubled = result.events[:1] + (result.events[0],) + result.events[1:]
    moved = nh.agent.loop.AgentResult(**{**tampered, "events": doubled})
    with pytest.raises(LiveReplayMismatch):
        _ = moved.ledger


def test_a_declined_check_and_a_token_trigger_stay_consistent(workspace):
    model, result = scripted_session(3, workspace, nh.NanoHermesPolicy(keep_recent=40), 1_000)
    assert result.events and all(e.event is None for e in result.events)  # too few messages: declined each time
    assert result.ledger.totals.n_compactions == 0
    model, result = scripted_session(4, workspace, nh.NanoHermesPolicy(keep_recent=4), 900, unit="tokens_approx")
    again = nh.replay(result.messages, budget=900, unit="tokens_approx", policy=nh.NanoHermesPolicy(keep_recent=4),
                      summarizer=nh.ExtractiveSummarizer())
    assert result.n_compactions and again.requests[SAME].equals(result.ledger.requests[SAME])


def test_extra_columns_join_a_ledger_without_changing_it():
    ledger = nh.replay([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    wider = ledger.with_columns(note=["first"])
    assert wider.requests["note"].tolist() == ["first"] and "note" not in ledger.requests
    assert list(wider.requests.columns[:-1]) == list(ledger.requests.columns) and wider.totals == ledger.totals
    with pytest.raises(ValueError, match="1 requests"):
        ledger.with_columns(note=["a", "b"])


def test_runs_continue_the_session_turn_by_turn(workspace):
    model = ScriptedModel([reads("notes.txt"), "It says 42.", "You are welcome."])
    with Agent(workspace, model) as agent:
        first = agent.run("Read the notes.")
        second = agent.run("Thanks!")
    assert second.messages[:len(first.messages)] == first.messages
    assert second.messages[-2:] == [{"role": "user", "content": "Thanks!"},
                                    {"role": "assistant", "content": "You are welcome."}]
    assert second.ledger.requests["turn"].tolist() == [1, 1, 2]
    assert len(first.ledger.requests) == 2  # a result keeps the session as it was


def test_an_interrupt_keeps_the_session_and_a_consistent_ledger(workspace):
    def stop(context):
        raise KeyboardInterrupt

    model = ScriptedModel([reads("notes.txt", "src/part0.py", "src/part1.py"), stop])
    with Agent(workspace, model, budget=1_000) as agent:
        calls = {"n": 0}
        dispatch = agent.tools.dispatch

        def interrupted(name, args):
            calls["n"] += 1
            if calls["n"] == 2:
                raise KeyboardInterrupt
            return dispatch(name, args)

        agent.tools.dispatch = interrupted
        result = agent.run("Read three files.")
    assert result.error.startswith("interrupted")
    tools = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert len(tools) == 3 and tools[1:] == ["error: interrupted before this tool ran"] * 2
    assert nh.check_history(result.messages) == []
    assert len(result.ledger.requests) == 1 and result.ledger.totals.n_compactions == 0


def test_a_scripted_model_out_of_replies_stops_the_run():
    model = ScriptedModel(["only one"])
    assert model.complete([{"role": "user", "content": "a"}], tools=[{"x": 1}]).message["content"] == "only one"
    with pytest.raises(ModelError, match="no reply left"):
        model.complete([{"role": "user", "content": "b"}], tools=[{"x": 1}])
    summary = model.complete([{"role": "system", "content": "p"}, {"role": "user", "content": "user: fix a.py\n"}])
    assert summary.message["content"] == nh.ExtractiveSummarizer()("user: fix a.py\n")


def test_bad_settings_are_refused_before_anything_runs(workspace):
    model = ScriptedModel(["x"])
    with pytest.raises(ValueError, match="budget"):
        Agent(workspace, model, budget=-1)
    with pytest.raises(ValueError, match="unit"):
        Agent(workspace, model, unit="furlongs")
    with pytest.raises(TypeError, match="keep_recent"):
        Agent(workspace, model, policy=nh.POLICIES["codex"](keep_recent=3))
    with pytest.raises(TypeError, match="complete"):
        Agent(workspace, object())
    with pytest.raises(ValueError, match="not a directory"):
        Agent(workspace / "missing", model)
    with Agent(workspace, model) as agent:
        with pytest.raises(ValueError, match="max_requests"):
            agent.run("x", max_requests=0)
        with pytest.raises(ValueError, match="resume"):
            agent.resume()
        with pytest.raises(ValueError, match="task"):
            agent.run("   ")


# ---------------------------------------------------------------- the live widget


def test_the_live_ledger_redraws_after_every_request(workspace):
    from nanohermes_nb.views.live import EventChange

    script = [reads(f"src/part{k}.py") for k in range(6)] + ["All read."]
    model = ScriptedModel(script)
    with Agent(workspace, model, budget=10_000, policy=nh.NanoHermesPolicy(keep_recent=4)) as agent:
        widget = nh.views.live_ledger(agent)
        assert widget.updates == 1 and widget.table.value == ""
        seen = []
        result = agent.run("Read every part.", on_request=lambda step: seen.append(
            (step.request, len(widget.view.ledger.requests), widget.table.value != "")))
    assert widget.updates == 1 + result.n_requests
    assert [s[:2] for s in seen] == [(k, k) for k in range(1, result.n_requests + 1)]  # redrawn before on_request
    first = result.ledger.compactions[0].request
    assert [s[2] for s in seen] == [k >= first for k in range(1, result.n_requests + 1)]
    assert bytes(widget.image.value).lstrip().startswith(b"<?xml") and "compacted: dropped" in widget.table.value
    change = widget.view.change
    assert isinstance(change, EventChange) and change.request == result.ledger.compactions[-1].request
    rows = change.rows()
    assert [r["status"] for r in rows].count("summary") == 1 and rows[1]["status"] == "summary"
    assert sum(r["status"] == "dropped" for r in rows) == result.ledger.compactions[-1].dropped_count
    bundle = widget._repr_mimebundle_()
    assert "image/png" in bundle and "nanohermes-snapshot" in bundle["text/html"]
    assert "<tr></tr>" not in bundle["text/html"]
    widget.detach()
    assert not agent.listeners


def test_a_widget_that_fails_to_draw_does_not_stop_the_agent(workspace):
    model = ScriptedModel([reads("notes.txt"), "done"])
    with Agent(workspace, model) as agent:
        widget = nh.views.live_ledger(agent)
        widget.update = lambda step=None: 1 / 0
        result = agent.run("Read the notes.")
    assert result.ok and "ZeroDivisionError" in widget.error.value


def test_a_masking_event_shows_as_a_before_after_table(workspace):
    from nanohermes_nb.views.live import event_change

    for seed in range(20):  # the first scripted session where masking acted
        model, result = scripted_session(seed, workspace, nh.POLICIES["observation_masking"](), 2_500)
        events = [e for e in result.events if e.event is not None]
        if events:
            break
    assert events
    frame = nh.views.compaction_table(event_change(events[-1]), as_frame=True)
    assert (frame["status"] == "inserted").sum() == len(events[-1].event.inserted)
    assert (frame["status"] == "dropped").sum() == events[-1].event.dropped_count


# ---------------------------------------------------------------- the data files are recorded by this loop


@pytest.fixture(scope="module")
def make_sessions():
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("make_sessions_live", ROOT / "data" / "make_sessions.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


STORIES = {"twelve_turns": ("twelve_turns", {}), "trap_pure_chat": ("trap_pure_chat", {}),
           "trap_parallel_tail": ("trap_parallel_tail", {"ends_on_tools": True}),
           "trap_recent_over_budget": ("trap_recent_over_budget", {}), "trap_lost_path": ("lost_path", {}),
           "chinese_session": ("chinese_session", {})}


@pytest.mark.parametrize("name", sorted(STORIES))
def test_the_data_sessions_recorded_live_have_the_ledgers_their_replays_have(make_sessions, name):
    from conftest import ROOT

    story, options = STORIES[name]
    result = make_sessions.record(getattr(make_sessions, story), **options)
    committed = json.loads((ROOT / "data" / "sessions" / f"{name}.json").read_text(encoding="utf-8"))
    assert result.messages == committed
    assert result.ok or (options and "no reply left" in result.error)
    live, again = result.ledger, nh.replay(committed)
    assert again.requests[SAME].equals(live.requests[SAME])
    assert [e.request for e in live.compactions] == [e.request for e in again.compactions]
    if name == "twelve_turns":
        assert [e.turn for e in live.compactions] == [10]  # compaction fired live in turn 10, as in the article


@pytest.mark.slow  # executes notebook 18 in a kernel
@pytest.mark.timeout(600)
def test_the_notebook_runs_the_loop_against_an_endpoint_when_one_is_set(tmp_path, monkeypatch):
    """Notebook 18 offline is run by test_notebooks; here its other path, against a local endpoint."""
    from conftest import ROOT

    from nanohermes_nb.course.build import execute_notebook

    usage = {"prompt_tokens": 900, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 0}}
    plan = [tool_message("Files first.", ("glob", {"pattern": "**/*.py"})),
            tool_message("Parser and report.", ("read_file", {"path": "logstat/parse.py"}),
                         ("read_file", {"path": "logstat/report.py"})),
            tool_message("Uses of path.", ("grep", {"pattern": "path"})),
            tool_message("The sample log.", ("read_file", {"path": "samples/access.log"})),
            tool_message("The log again, further on.", ("read_file", {"path": "samples/access.log", "offset": 200})),
            {"role": "assistant", "content": "The query string stays in Record.path."}]
    with ChatServer([Completion(m, usage=usage) for m in plan], ["the goal, the files read, the state"]) as server:
        monkeypatch.setenv("NANOHERMES_LLM_BASE_URL", server.url)
        monkeypatch.setenv("NANOHERMES_LLM_MODEL", "local-test")
        monkeypatch.delenv("NANOHERMES_LLM_API_KEY", raising=False)
        run = execute_notebook(ROOT / "notebooks" / "18_run_the_loop_yourself.ipynb", tmp_path, timeout=180)
        requests = len(server.agent_requests)
    assert run.error is None and run.error_outputs == 0, run.error
    assert requests == len(plan)
    text = json.dumps(json.loads((tmp_path / "18_run_the_loop_yourself.ipynb").read_text(encoding="utf-8")))
    assert "OpenAICompatibleModel(" in text and f"requests with usage reported by the endpoint: {requests} of" in text
