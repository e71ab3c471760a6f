"""``nanohermes-nb run``: a real process against a chat-completions server on 127.0.0.1.

One line per request as it happens, the session written (also when the run
stops on an error), exit 1 for a run that stopped early, exit 2 with one line for
bad usage, and the API key read from the environment only, never shown.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys

import pytest
from chat_server import ChatServer, Raw, tool_message
from clocks import FakeClock

from nanohermes_nb import load_transcript
from nanohermes_nb.agent import models
from nanohermes_nb.cli import main

pytestmark = pytest.mark.timeout(120)

KEY = "sk-cli/SECRET+key"


def run(*args, env_extra=None, cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NANOHERMES_LLM_") and "proxy" not in k.lower()}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "nanohermes_nb", "run", *map(str, args)], capture_output=True,
                          encoding="utf-8", timeout=100, env=env, cwd=cwd)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("the answer is 42\n" * 200, encoding="utf-8")
    return ws


def test_run_prints_a_line_per_request_and_writes_the_session(workspace, tmp_path):
    script = [tool_message("Reading.", ("read_file", {"path": "notes.txt"})),
              tool_message("Counting.", ("run_command", {"command": "wc -l notes.txt"})),
              {"role": "assistant", "content": "It says 42, 200 times."}]
    out = tmp_path / "session.json"
    with ChatServer(script, ["short summary", "shorter summary"]) as server:
        p = run("What do the notes say?", "--workspace", workspace, "-o", out, "--budget", "2000", "--keep-recent", "2",
                env_extra={"NANOHERMES_LLM_BASE_URL": server.url, "NANOHERMES_LLM_API_KEY": KEY,
                           "NANOHERMES_LLM_MODEL": "local-test"})
        bodies = server.agent_requests
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    steps = [ln for ln in lines if ln.startswith("request ")]
    assert len(steps) == 3 and "read_file" in steps[0] and "run_command" in steps[1]
    assert "final answer" in steps[2] and "summary, dropped" in steps[1] and "placeholder" not in p.stdout
    assert "with your rights" in p.stdout and KEY not in p.stdout + p.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    compactions = sum("summary, dropped" in ln for ln in steps)
    assert data["nanohermes_run"]["error"] is None and data["nanohermes_run"]["compactions"] == compactions
    messages = load_transcript(out)
    assert messages == data["messages"] and messages[-1]["content"] == "It says 42, 200 times."
    assert all(b["model"] == "local-test" for b in bodies) and len(bodies) == 3
    ledger = subprocess.run([sys.executable, "-m", "nanohermes_nb", "ledger", str(out), "--budget", "2000"],
                            capture_output=True, encoding="utf-8", timeout=60)
    assert ledger.returncode == 0 and "3 requests" in ledger.stdout


def test_run_stopped_by_an_error_exits_1_and_still_writes_the_session(workspace, tmp_path):
    out = tmp_path / "session.json"
    with ChatServer([tool_message("Reading.", ("read_file", {"path": "notes.txt"})), Raw(500, "boom")],
                    repeat=True) as server:
        p = run("Read it.", "--workspace", workspace, "-o", out, "--base-url", server.url)
    assert p.returncode == 1
    assert p.stderr.strip().startswith("nanohermes-nb: run stopped: request 2 failed: HTTP 500")
    assert len(p.stderr.strip().splitlines()) == 1
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [m["role"] for m in data["messages"]] == ["system", "user", "assistant", "tool"]
    assert data["nanohermes_run"]["error"].startswith("request 2 failed")


def test_max_requests_exits_1(workspace, tmp_path, capsys):
    out = tmp_path / "s.json"
    with ChatServer([tool_message("Again.", ("glob", {"pattern": "*"}))], repeat=True) as server:
        code = main(["run", "loop", "--workspace", str(workspace), "-o", str(out), "--base-url", server.url,
                     "--max-requests", "3", "--summarizer", "extractive", "--policy", "codex"])
    captured = capsys.readouterr()
    assert code == 1 and "max_requests=3" in captured.err
    assert len([ln for ln in captured.out.splitlines() if ln.startswith("request ")]) == 3
    assert "policy codex" in captured.out


@pytest.mark.parametrize("args, message", [
    (["--workspace", "{ws}", "-o", "{out}"], "run needs an endpoint: set NANOHERMES_LLM_BASE_URL"),
    (["--workspace", "{ws}/missing", "-o", "{out}", "--base-url", "http://127.0.0.1:9"], "not a folder"),
    (["--workspace", "{ws}", "-o", "{ws}/no/such/dir/s.json", "--base-url", "http://127.0.0.1:9"], "no folder"),
    (["--workspace", "{ws}", "-o", "{out}", "--base-url", "ftp://x"], "base_url must be an http(s) URL"),
    (["--workspace", "{ws}", "-o", "{out}", "--base-url", "http://127.0.0.1:9", "--policy", "codex",
      "--keep-recent", "3"], "does not apply to policy 'codex'"),
])
def test_bad_usage_exits_2_with_one_line(workspace, tmp_path, args, message):
    filled = [a.format(ws=workspace, out=tmp_path / "s.json") for a in args]
    p = run("task", *filled)
    assert p.returncode == 2, p.stdout + p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and message in p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "s.json").exists()


def test_a_bad_key_in_the_environment_is_refused_without_showing_it(workspace, tmp_path):
    p = run("task", "--workspace", workspace, "-o", tmp_path / "s.json", "--base-url", "http://127.0.0.1:9",
            env_extra={"NANOHERMES_LLM_API_KEY": "sk-has a space"})
    assert p.returncode == 2 and "sk-has" not in p.stderr and "space" in p.stderr


# ---------------------------------------------------------------- the session is never lost (issue 26)


@pytest.mark.parametrize("answer", [Raw(503, "busy", {"Retry-After": "\u00b2"}),  # "²".isdigit(), float() fails
                                    Raw(307, "", {"Location": "javascript:alert(1)"})],  # httpx.InvalidURL
                         ids=["retry-after-superscript", "redirect-to-javascript"])
def test_a_reply_the_client_chokes_on_stops_the_run_and_keeps_the_session(workspace, tmp_path, capsys, answer,
                                                                          monkeypatch):
    clock = FakeClock()  # the CLI's model, on a fake clock: its back-off (0.5 s, then 1 s) costs nothing
    monkeypatch.setattr(models, "OpenAICompatibleModel",
                        functools.partial(models.OpenAICompatibleModel, clock=clock, sleep=clock.sleep))
    out = tmp_path / "s.json"
    with ChatServer([tool_message("Reading.", ("read_file", {"path": "notes.txt"})), answer], repeat=True) as server:
        code = main(["run", "Read it.", "--workspace", str(workspace), "-o", str(out), "--base-url", server.url,
                     "--summarizer", "extractive", "--timeout", "5"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("nanohermes-nb: run stopped: request 2 failed: ") and err.count("\n") == 1
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [m["role"] for m in data["messages"]] == ["system", "user", "assistant", "tool"]
    assert data["nanohermes_run"]["error"].startswith("request 2 failed")
    assert clock.sleeps == ([0.5, 1.0] if answer.status == 503 else [])


class _BrokenModel:
    """A model class with a bug (not a transport failure): the agent must still keep the session."""

    def complete(self, messages, tools=None):
        raise RuntimeError("a bug in a model class")


def test_whatever_a_model_raises_the_run_returns_with_error(workspace):
    from nanohermes_nb.agent.loop import Agent

    with Agent(workspace, _BrokenModel()) as agent:
        result = agent.run("task")
    assert result.error == "request 1 failed: RuntimeError: a bug in a model class"
    assert [m["role"] for m in result.messages] == ["system", "user"]


def _session_run(workspace, out, url) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NANOHERMES_LLM_") and "proxy" not in k.lower()}
    return subprocess.Popen([sys.executable, "-m", "nanohermes_nb", "run", "Read everything.", "--workspace",
                             str(workspace), "-o", str(out), "--base-url", url, "--summarizer", "extractive",
                             "--budget", "100000000", "--max-requests", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.slow
def test_sigint_just_as_the_session_file_appears_keeps_the_session(workspace, tmp_path):
    """Before: Ctrl-C while the temporary file was being written deleted it, and no session was left (3 of 3)."""
    (workspace / "big.txt").write_text("".join(f"line {k}: " + "text " * 30 + "\n" for k in range(4000)))
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "session.json"
    caught = 0
    with ChatServer([tool_message("Again.", ("read_file", {"path": "big.txt"}))], repeat=True) as server:
        for _ in range(5):
            out.unlink(missing_ok=True)
            proc = _session_run(workspace, out, server.url)
            while proc.poll() is None:
                if any(n.startswith(".session.json.") for n in os.listdir(folder)):
                    proc.send_signal(signal.SIGINT)
                    caught += 1
                    break
            _, err = proc.communicate(timeout=120)
            if caught:
                break
    assert caught, "the temporary file was never seen"
    assert out.exists(), f"the session is lost: {os.listdir(folder)}, {err[-200:]!r}"
    data = json.loads(out.read_text(encoding="utf-8"))
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == f"nanohermes-nb: interrupted; the session so far is in {out}"
    assert len([m for m in data["messages"] if m["role"] == "assistant"]) == 30
    assert not [n for n in os.listdir(folder) if n != "session.json"]
