"""Real compactions and what the agent did after them (issue 36): own probes, re-reads, the prediction table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from builders import SYSTEM

import nanohermes_nb as nh
from nanohermes_nb.engine.forgetting import aftermath, read_paths, same_path
from nanohermes_nb.engine.forgetting_report import compactions_table, prediction_table, study, wilson
from nanohermes_nb.engine.own_compactions import own_compactions, reinjected_by_boundary
from nanohermes_nb.policies import POLICIES
from nanohermes_nb.transcripts.base import ToolCompaction, Transcript

ROOT = Path(__file__).resolve().parents[1]
CC = ROOT / "data" / "compactions" / "claude-code" / "entire-cli_opus45_fe0600aa.cut95.jsonl"
CC_FIRST = ROOT / "data" / "agentlogs" / "claude-code" / "oh-my-posh_opus5_windows_compaction_10906611becd.cut329.jsonl"
CODEX = ROOT / "data" / "agentlogs" / "codex" / "agentv_gpt53-codex-spark_2compactions_019f03e0.cut497.jsonl"


def call(cid: str, name: str, **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def session() -> list[dict]:
    return [
        SYSTEM,
        {"role": "user", "content": "Rename the helper in src/app.py and update its tests."},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "Read", file_path="/r/src/app.py")]},
        {"role": "tool", "tool_call_id": "a", "content": "def helper():\n    return 1\n"},
        {"role": "assistant", "content": "", "tool_calls": [call("b", "Bash", command="pytest -q")]},
        {"role": "tool", "tool_call_id": "b", "content": "1 passed"},
        {"role": "assistant", "content": "Renamed the helper."},
        # -- the compaction happens here (index 7) --
        {"role": "assistant", "content": "", "tool_calls": [call("c", "Read", file_path="src/app.py"),
                                                            call("d", "Bash", command="pytest   -q")]},
        {"role": "tool", "tool_call_id": "c", "content": "def renamed_helper():\n    return 1\n"},
        {"role": "tool", "tool_call_id": "d", "content": "1 passed"},
    ]


def test_paths_and_reads():
    assert same_path("/r/src/app.py", "src/app.py") and same_path("./src/app.py", "src\\app.py")
    assert not same_path("src/app.py", "app.py.bak")
    assert read_paths(call("x", "exec_command", cmd="nl -ba src/a.py | sed -n '1,40p'")) == ["src/a.py"]
    assert read_paths(call("x", "Edit", file_path="a.py")) == []


def test_aftermath_finds_the_reread_and_the_rerun():
    after = aftermath(session(), 7, tokens=len)
    assert after.calls == 2 and after.reads == 1
    assert after.reread_files == ("src/app.py",) and after.rereads[0].earlier == 2
    assert after.reread_tokens == len("def renamed_helper():\n    return 1\n")
    assert after.reruns == ("pytest -q",)  # whitespace aside, word for word
    assert aftermath(session(), 7, window=0, tokens=len).calls == 0


def test_a_log_without_compaction_and_one_with_nothing_before_it():
    plain = Transcript(session(), agent="claude_code")
    assert own_compactions(plain) == []
    first = Transcript(session(), agent="claude_code", compactions=[ToolCompaction(0, summary="earlier work")])
    (only,) = own_compactions(first)
    assert only.fates == () and "nothing before it" in only.note
    table = compactions_table(study([first], policies=[]))
    assert table.loc[0, "probes"] == 0 and pd.isna(table.loc[0, "survival"])


def test_claude_code_reattached_files_are_reinjected():
    (boundary,) = reinjected_by_boundary(CC_FIRST)
    assert len(boundary.files) == 4 and all(f.startswith("D:\\oh-my-posh") for f in boundary.files)
    assert reinjected_by_boundary(ROOT / "no-such-file.jsonl") == []
    (own,) = own_compactions(nh.load_transcript(CC_FIRST), path=CC_FIRST)
    assert own.reinjected_files == boundary.files


def test_codex_keeps_user_messages_and_reinjects_agents_md():
    (own,) = own_compactions(nh.load_transcript(CODEX), path=CODEX)
    statuses: dict = {}
    for f in own.fates:
        statuses.setdefault((f.probe.category, f.probe.source), set()).add(f.status)
    assert statuses["instruction", "AGENTS.md"] == {"re-injected"}  # back with the replacement history
    assert statuses["instruction", "user"] == {"kept"}  # the user's own messages are kept verbatim
    assert statuses["task", "user"] == {"kept"}
    assert "encrypted" in own.note and not own.summary


@pytest.fixture(scope="module")
def cases():
    return study([CC, CC_FIRST, CODEX])


def test_the_study_of_the_vendored_compactions(cases):
    table = compactions_table(cases)
    assert list(table["agent"]) == ["claude_code", "claude_code", "codex_cli"]
    cc = table.iloc[0]
    assert cc["file_probes"] >= 3 and cc["reread_files"] >= 2  # data.go and strategy/session.go, read again
    assert cc["reread_tokens"] > 1_000 and cc["reread_usd"] > 0 and cc["carried_usd"] > 0
    assert set(cases[0].policy_files) == set(POLICIES)


def test_the_prediction_table(cases):
    table = prediction_table(cases)
    assert list(table["predictor"].unique()) == ["own", *sorted(POLICIES)]
    for _, row in table.iterrows():
        assert row["lost_reread"] + row["lost_not"] + row["survived_reread"] + row["survived_not"] == row["files"]
    own = table[(table["predictor"] == "own") & (table["gone"] == "not verbatim")].iloc[0]
    assert own["files"] == sum(len(c.file_fates) for c in cases if not c.duplicate_of)


def test_wilson_interval():
    lo, hi = wilson(5, 10)
    assert round(lo, 4) == 0.2366 and round(hi, 4) == 0.7634
    assert wilson(0, 0) == (None, None) and wilson(0, 5)[0] == 0.0


def test_a_preserved_segment_is_read_as_kept(tmp_path):
    records = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Keep the public API as it is."}},
        {"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "I'll leave the API alone."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}}]}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "timestamp": "2026-01-01T00:00:00Z",
         "compactMetadata": {"trigger": "manual", "preservedSegment": {"headUuid": "u1", "tailUuid": "a1"}}},
        {"type": "attachment", "uuid": "x1", "attachment": {"type": "compact_file_reference", "filename": "/r/big.py"}},
        {"type": "assistant", "uuid": "a2", "message": {"role": "assistant", "content": "Carrying on."}},
    ]
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    (boundary,) = reinjected_by_boundary(log)
    assert boundary.preserved == ("Keep the public API as it is.", "I'll leave the API alone.\npytest -q")
    assert boundary.referenced == ("/r/big.py",) and boundary.files == ()
