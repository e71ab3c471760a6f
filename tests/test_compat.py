"""Compatibility with the servers people run, each a named behaviour, against chat servers on 127.0.0.1.

The servers here answer as llama-cpp-python 0.3.36's does where it differs from
OpenAI's API: without ``tool_choice`` it ignores ``tools``; it rejects the
``content: null`` its own tool-call reply carried (HTTP 500, pydantic's "Input
should be a valid string"); it reports ``usage`` without ``prompt_tokens_details``.
Also: tool-call arguments that are not JSON come back to the model as an ``error:``
tool result (SPEC 7: a bad call returns an error text, it does not raise), and two
hostile answers (a 503 whose Retry-After is "²", a 307 to ``javascript:``) end the
run with ``.error`` instead of an exception.
"""

from __future__ import annotations

import json

import pytest
from builders import agent_workspace
from chat_server import ChatServer, Completion, Raw, tool_message
from clocks import FakeClock

import nanohermes_nb as nh
from nanohermes_nb import context_size
from nanohermes_nb.agent.loop import Agent
from nanohermes_nb.agent.models import LLAMA_CPP_COMPAT, OPENAI_COMPAT, Compat, CompatWarning, Usage
from nanohermes_nb.agent.transport import HTTPStatusError

pytestmark = pytest.mark.timeout(60)

PYDANTIC_500 = json.dumps({"error": {"message": "[{'type': 'string_type', 'loc': ('body', 'messages', 2, 'content'), "
                                                "'msg': 'Input should be a valid string', 'input': None}]"}})


@pytest.fixture
def workspace(tmp_path):
    return agent_workspace(tmp_path)


def model_for(server: ChatServer, **options) -> nh.OpenAICompatibleModel:
    return nh.OpenAICompatibleModel(server.url, None, "local", timeout=10, **options)


def like_llama_cpp(reply):
    """An answer that refuses, as llama-cpp-python does, any assistant message whose content is null."""

    def answer(body: dict):
        if any(m.get("role") == "assistant" and m.get("content") is None for m in body["messages"]):
            return Raw(500, PYDANTIC_500)
        return reply

    return answer


def grep_call(arguments='{"pattern": "TODO"}') -> dict:
    return tool_message(None, ("grep", arguments), ids=["call_0"])


def as_sent(messages) -> list:
    return json.loads(json.dumps(list(messages)))


def assert_ledger_is_what_was_sent(server: ChatServer, result) -> None:
    ledger = result.ledger
    assert len(server.agent_requests) == len(ledger.requests)
    for k, body in enumerate(server.agent_requests, start=1):
        assert body["messages"] == as_sent(ledger.context(k)), k
    replayed = result.replay()
    assert replayed.requests[["size", "size_before", "size_after", "cumulative_input"]].equals(
        ledger.requests[["size", "size_before", "size_after", "cumulative_input"]])


# ---------------------------------------------------------------- tool_choice


def test_tool_choice_auto_is_sent_with_the_tools_and_never_with_the_summary_request(workspace):
    script = [grep_call(), tool_message(None, ("read_file", {"path": "notes.txt"})), "done"]
    with ChatServer(script, ["the summary"]) as server, Agent(workspace, model_for(server), budget=400,
                                                                 policy=nh.NanoHermesPolicy(keep_recent=2)) as agent:
        result = agent.run("Find the TODOs.")
    assert result.ok and result.compactions >= 1
    assert all(b["tool_choice"] == "auto" and b["tools"] for b in server.agent_requests)
    assert server.summary_requests and all("tool_choice" not in b for b in server.summary_requests)


def test_tool_choice_can_be_left_out(workspace):
    with ChatServer(["hi"]) as server, Agent(workspace, model_for(server, compat=Compat(None))) as a:
        assert a.run("Hello?").ok
    assert "tool_choice" not in server.agent_requests[0] and server.agent_requests[0]["tools"]


# ---------------------------------------------------------------- content null after a tool call


def test_the_default_client_adapts_to_a_server_that_rejects_null_content_and_says_so_once(workspace):
    """Issue 34: OpenAICompatibleModel with its defaults against llama.cpp's server got HTTP 500 at request 2."""
    second = like_llama_cpp(grep_call('{"pattern": "def"}'))  # one script item per request: twice for request 2
    script = [like_llama_cpp(grep_call()), second, second, like_llama_cpp("Two TODOs, one def.")]
    with ChatServer(script) as server, Agent(workspace, model_for(server)) as agent:
        with pytest.warns(CompatWarning, match=r"tool call with content null \(HTTP 500\) and took") as said:
            result = agent.run("Find the TODOs.")
    assert result.ok and result.requests == 3 and len(said) == 1
    assert agent.model.compat == Compat("auto", empty_tool_call_content=True)
    sent = [r["body"]["messages"] for r in server.requests]
    assert len(sent) == 4  # request 2 refused once with null, then accepted with ""
    assert sent[1][2]["content"] is None and sent[2][2]["content"] == "" and sent[1][3:] == sent[2][3:]
    assert [m["content"] for m in sent[3] if m["role"] == "assistant"] == ["", ""]
    # the reply recorded before the switch keeps its null (2 bytes more in the ledger than what was sent)
    assert [m["content"] for m in result.messages if m["role"] == "assistant"] == [None, "", "Two TODOs, one def."]
    ledger = result.ledger
    for k, body in ((2, sent[2]), (3, sent[3])):
        assert body == [{**m, "content": ""} if m.get("tool_calls") and m["content"] is None else m
                        for m in as_sent(ledger.context(k))]
        assert ledger.requests["size"][k - 1] - context_size(body) == 2


def test_a_server_that_accepts_null_gets_null_and_no_second_request(workspace):
    script = [grep_call(), "done"]
    with ChatServer(script) as server, Agent(workspace, model_for(server)) as agent:
        result = agent.run("Find the TODOs.")
    assert result.ok and len(server.requests) == 2 and server.agent_requests[1]["messages"][2]["content"] is None
    assert agent.model.compat == OPENAI_COMPAT
    assert_ledger_is_what_was_sent(server, result)


def test_a_refusal_that_is_not_about_null_is_reported_as_it_came_and_not_retried_again(workspace):
    script = [grep_call(), Raw(500, "the server is broken"), Raw(500, "still broken")]
    with ChatServer(script) as server, Agent(workspace, model_for(server)) as agent:
        result = agent.run("Find the TODOs.")
    assert result.error.startswith("request 2 failed: HTTP 500") and "the server is broken" in result.error
    assert len(server.requests) == 3 and not agent.model.compat.retry_null_content
    assert not agent.model.compat.empty_tool_call_content


def test_retry_null_content_off_keeps_the_old_behaviour(workspace):
    script = [like_llama_cpp(grep_call()), like_llama_cpp("done")]
    with ChatServer(script) as server, \
            Agent(workspace, model_for(server, compat=Compat(retry_null_content=False))) as agent:
        result = agent.run("Find the TODOs.")
    assert result.error.startswith("request 2 failed: HTTP 500") and "Input should be a valid string" in result.error
    assert len(server.requests) == 2


def test_empty_tool_call_content_records_and_sends_an_empty_string(workspace):
    script = [like_llama_cpp(grep_call()), like_llama_cpp(grep_call('{"pattern": "def"}')),
              like_llama_cpp("Two TODOs, one def.")]
    with ChatServer(script) as server, Agent(workspace, model_for(server, compat=LLAMA_CPP_COMPAT)) as agent:
        result = agent.run("Find the TODOs.")
    assert result.ok and result.requests == 3
    assistants = [m for m in result.messages if m["role"] == "assistant"]
    assert [m["content"] for m in assistants] == ["", "", "Two TODOs, one def."]
    assert server.agent_requests[2]["messages"][2] == {**grep_call(), "content": ""}
    assert_ledger_is_what_was_sent(server, result)


def test_a_reply_with_text_and_tool_calls_keeps_its_text(workspace):
    script = [tool_message("Let me look.", ("grep", {"pattern": "TODO"})), "done"]
    with ChatServer(script) as server, Agent(workspace, model_for(server, compat=LLAMA_CPP_COMPAT)) as agent:
        result = agent.run("Find the TODOs.")
    assert result.ok and result.messages[2]["content"] == "Let me look."


def test_detect_compat_finds_what_the_server_accepts():
    probe_ok = {"role": "assistant", "content": "ok"}
    with ChatServer([], [like_llama_cpp(probe_ok), like_llama_cpp(probe_ok)]) as strict:  # no tools: "summaries"
        model = model_for(strict)
        assert model.compat == OPENAI_COMPAT
        assert model.detect_compat() == Compat("auto", True) and model.compat.empty_tool_call_content
        assert [b["messages"][2]["content"] for b in strict.summary_requests] == [None, ""]
        assert all(b["max_tokens"] == 1 and "tools" not in b for b in strict.summary_requests)
    with ChatServer([], [probe_ok]) as lenient:
        model = model_for(lenient)
        assert model.detect_compat() == OPENAI_COMPAT and len(lenient.requests) == 1
    with ChatServer([], [Raw(500, "down"), Raw(500, "down")]) as broken:
        with pytest.raises(HTTPStatusError, match="HTTP 500"):
            model_for(broken).detect_compat()


def test_compat_is_checked():
    with pytest.raises(TypeError, match="compat must be a Compat"):
        nh.OpenAICompatibleModel("http://127.0.0.1:9/v1", None, "m", compat={"tool_choice": "auto"})
    assert "empty_tool_call_content=True" in repr(nh.OpenAICompatibleModel("http://127.0.0.1:9/v1", None, "m",
                                                                            compat=LLAMA_CPP_COMPAT))


# ---------------------------------------------------------------- arguments that are not JSON


def test_arguments_that_are_not_json_come_back_as_an_error_result_and_the_run_goes_on(workspace):
    script = [grep_call('{"pattern": "TODO"'), grep_call(), "Found them."]
    with ChatServer(script) as server, Agent(workspace, model_for(server, compat=LLAMA_CPP_COMPAT)) as agent:
        result = agent.run("Find the TODOs.")
    assert result.ok and result.requests == 3
    error = result.messages[3]
    assert error["role"] == "tool" and error["tool_call_id"] == "call_0"
    assert error["content"].startswith("error: grep: arguments are not valid JSON (")
    sent_back = server.agent_requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert sent_back == '{"pattern": "TODO"'  # the call is sent back exactly as the model wrote it
    assert not result.messages[5]["content"].startswith("error:")  # the corrected call ran
    assert_ledger_is_what_was_sent(server, result)


# ---------------------------------------------------------------- usage with fields left out


@pytest.mark.parametrize("usage, expected", [
    ({"prompt_tokens": 812, "completion_tokens": 31, "total_tokens": 843}, Usage(812, 31, None)),  # llama.cpp
    ({"prompt_tokens": 812}, Usage(812, None, None)),
    ({"completion_tokens": 31}, Usage(None, 31, None)),
    ({"prompt_tokens": 812.0, "completion_tokens": 31.0}, Usage(812, 31, None)),
    ({"prompt_tokens": 812, "prompt_tokens_details": None}, Usage(812, None, None)),
    ({"prompt_tokens": 812, "prompt_tokens_details": {"cached_tokens": 512}}, Usage(812, None, 512)),
    ({"prompt_tokens": "812", "completion_tokens": -1, "total_tokens": 5}, None),
    (None, None),
])
def test_usage_is_read_whatever_optional_fields_the_server_leaves_out(workspace, usage, expected):
    script = [Completion(grep_call(), usage=usage), Completion({"role": "assistant", "content": "ok"}, usage=usage)]
    with ChatServer(script) as server, Agent(workspace, model_for(server)) as agent:
        result = agent.run("Find the TODOs.")
    assert result.ok and result.usage == (expected, expected)
    column = result.ledger.requests["usage_prompt_tokens"]
    assert column.isna().all() if expected is None or expected.prompt_tokens is None else \
        column.tolist() == [expected.prompt_tokens] * 2


def test_a_usage_that_is_not_an_object_is_no_usage(workspace):
    with ChatServer([Raw(200, json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}],
                                          "usage": [1, 2]}))]) as server, \
            Agent(workspace, model_for(server)) as agent:
        result = agent.run("Hello?")
    assert result.ok and result.usage == (None,)


# ---------------------------------------------------------------- hostile answers end the run, not the program


def test_a_503_whose_retry_after_is_a_superscript_digit_ends_the_run_with_an_error(workspace):
    # "²".isdigit() is True and float("²") raises: the header must read as absent (back off 0.5 s, 1 s)
    clock = FakeClock()
    with ChatServer([Raw(503, "busy", {"Retry-After": "\u00b2"})], repeat=True) as server, \
            Agent(workspace, model_for(server, max_tries=3, clock=clock, sleep=clock.sleep)) as agent:
        result = agent.run("Hello?")
    assert result.error.startswith("request 1 failed: HTTP 503") and len(server.requests) == 3
    assert clock.sleeps == [0.5, 1.0]


def test_a_503_with_a_bad_retry_after_is_still_retried(workspace):
    script = [Raw(503, "busy", {"Retry-After": "\u00b2"}), "fine"]
    clock = FakeClock()
    with ChatServer(script) as server, Agent(workspace, model_for(server, clock=clock, sleep=clock.sleep)) as agent:
        result = agent.run("Hello?")
    assert result.ok and result.messages[-1]["content"] == "fine" and len(server.requests) == 2
    assert clock.sleeps == [0.5]


@pytest.mark.parametrize("location", ["javascript:alert(1)", "javascript:alert(document.cookie)//", "http://[::1"])
def test_a_redirect_to_an_invalid_url_ends_the_run_with_an_error(workspace, location):
    with ChatServer([Raw(307, "", {"Location": location})]) as server, \
            Agent(workspace, model_for(server)) as agent:
        result = agent.run("Hello?")
    assert result.error.startswith("request 1 failed: ") and "\n" not in result.error
    assert "redirect" in result.error.lower() or "location" in result.error.lower()
    assert len(server.requests) == 1


def test_the_cli_run_against_such_a_server_finishes_and_says_it_adapted_in_one_line(workspace, tmp_path, capsys):
    from nanohermes_nb.cli import main

    second = like_llama_cpp("done")
    with ChatServer([like_llama_cpp(grep_call()), second, second]) as server:
        code = main(["run", "Find the TODOs.", "--workspace", str(workspace), "-o", str(tmp_path / "s.json"),
                     "--base-url", server.url, "--model", "local", "--timeout", "10"])
    out = capsys.readouterr()
    assert code == 0, out.err
    notes = [line for line in out.err.splitlines() if line.startswith("nanohermes-nb: note: ")]
    assert len(notes) == 1 and "content null (HTTP 500)" in notes[0]
