"""``report`` and ``sessions`` on real logs: per day/project/model/session, where the money went, sub-agents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nanohermes_nb.cli import main
from nanohermes_nb.engine.bill import session_bill
from nanohermes_nb.engine.usage_report import context_series, money_parts, rows_of, summarize, usage_rows
from nanohermes_nb.transcripts import load_transcript

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "agentlogs"
SMALL = SAMPLE / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl"
SHARED = ROOT.parent / "shared" / "agentlogs"


def _home(tmp_path: Path) -> Path:
    """A backed-up home: the sample where Claude Code and Codex keep their sessions, with a sub-agent file."""
    home = tmp_path / "backup"
    project = home / ".claude" / "projects" / "-work-demo"
    (project / "abc123" / "subagents").mkdir(parents=True)
    shutil.copyfile(SMALL, project / "abc123.jsonl")
    sub = [json.loads(x) for x in SMALL.read_text(encoding="utf-8").splitlines() if x.strip()]
    for r in sub:  # the same conversation, re-identified as a sub-agent's own file
        r["isSidechain"], r["agentId"] = True, "a1"
        if isinstance(r.get("message"), dict) and isinstance(r["message"].get("id"), str):
            r["message"]["id"] += "-sub"
    (project / "abc123" / "subagents" / "agent-a1.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in sub), encoding="utf-8")
    codex = home / ".codex" / "sessions" / "2026" / "06" / "26"
    codex.mkdir(parents=True)
    for p in (SAMPLE / "codex").glob("*.jsonl"):
        shutil.copyfile(p, codex / f"rollout-{p.name}")
    return home


def test_the_rows_add_up_to_the_bill() -> None:
    t = load_transcript(SMALL)
    rows = rows_of(t)
    bill = session_bill(t.requests)
    assert len(rows) == bill.reported
    assert sum(sum(r.dollars) for r in rows) == pytest.approx(bill.cost_usd, rel=1e-12)
    assert sum(r.tokens[0] for r in rows) == bill.input_tokens
    assert sum(r.tokens[1] + r.tokens[2] for r in rows) == bill.cache_write_tokens
    assert sum(r.tokens[3] for r in rows) == bill.cached_tokens
    parts = money_parts(rows)
    assert sum(p["cost_usd"] for p in parts) == pytest.approx(bill.cost_usd)
    assert sum(p["share"] for p in parts) == pytest.approx(1.0)


def test_a_backed_up_home_is_searched_and_a_sub_agent_is_counted_with_its_session(tmp_path: Path) -> None:
    found = usage_rows(_home(tmp_path))
    sessions = summarize(found.rows, "session")
    assert len(sessions) == 2 and {s["agent"] for s in sessions} == {"claude_code", "codex_cli"}
    claude = next(s for s in sessions if s["agent"] == "claude_code")
    main_only = session_bill(load_transcript(SMALL).requests)
    assert claude["sub_agent_requests"] == main_only.reported
    assert claude["requests"] == 2 * main_only.reported
    assert claude["cost_usd"] == pytest.approx(2 * main_only.cost_usd)
    days = summarize(found.rows, "day")
    assert sum(d["requests"] for d in days) == len(found.rows)


def test_an_unpriced_model_is_unpriced_in_every_group(tmp_path: Path) -> None:
    lines = SMALL.read_text(encoding="utf-8").replace("claude-opus-4-5-20251101", "acme-x\u202e-1")
    path = tmp_path / "odd.jsonl"
    path.write_text(lines, encoding="utf-8")
    rows = rows_of(load_transcript(path))
    for by in ("day", "model", "session", "project"):
        for g in summarize(rows, by):
            assert g["cost_usd"] is None and g["unpriced"] == "acme-x\u202e-1"


def test_cli_report_prints_every_table_and_json(tmp_path: Path, capsys) -> None:
    home = _home(tmp_path)
    before = sorted((p, p.stat().st_mtime_ns) for p in home.rglob("*"))
    assert main(["report", str(home), "--tables", "parts,day,project,model,session,tools"]) == 0
    out = capsys.readouterr().out
    for title in ("where the money went", "per day", "per project", "per model", "dearest sessions", "tool outputs"):
        assert title in out
    assert "cache_write_1h" in out and "sub-agent" in out
    assert main(["report", str(home), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"agents", "parts", "day", "project", "model", "session"}
    assert sorted((p, p.stat().st_mtime_ns) for p in home.rglob("*")) == before  # nothing written beside the logs


def test_cli_report_with_nothing_usable_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "no agent log with reported usage" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--tables", "nope"]) == 2


def test_sessions_fits_columns_and_finds_a_home(tmp_path: Path, capsys, monkeypatch) -> None:
    home = _home(tmp_path)
    monkeypatch.setenv("COLUMNS", "70")
    assert main(["sessions", str(home)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# 2 sessions found") and all(len(x) <= 70 for x in lines)
    assert main(["sessions", str(home), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    claude = next(r for r in rows if r["agent"] == "claude_code")
    assert claude["sub_agents"] == 1 and claude["usage"] == "reported"


def test_the_context_series_marks_the_agent_s_compactions() -> None:
    path = next((SAMPLE / "claude-code").glob("oh-my-posh*.jsonl"))
    t = load_transcript(path)
    s = context_series(t)
    assert len(s["request"]) == len(t.requests) == len(s["context"]) == len(s["prompt_tokens"])
    assert len(s["compactions"]) == len(t.compactions) >= 1
    assert all(c >= 0 for c in s["context"])


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/agentlogs is not beside this checkout")
@pytest.mark.corpus_extended
def test_every_model_of_the_real_logs_is_priced_in_the_report() -> None:
    found = usage_rows(SHARED)
    assert found.rows and all(r.dollars is not None for r in found.rows)
    assert any(r.sub_agent for r in found.rows)  # Claude Code 2.1.x's streamed sub-agents
