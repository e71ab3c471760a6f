"""Coding agents' own session logs, read from the real files (data/agentlogs, ../shared/agentlogs).

Every count asserted here is computed from the raw records (or taken from the
manifest of ../shared/agentlogs), never typed from a run of the reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nanohermes_nb.context.history import check_history
from nanohermes_nb.transcripts import load_transcript

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "data" / "agentlogs"
SHARED = ROOT.parent / "shared" / "agentlogs"
FOLDERS = [f for f in (VENDORED, SHARED) if f.is_dir()]


def _files(pattern: str) -> list:
    found = [p for folder in FOLDERS for p in sorted(folder.rglob(pattern)) if p.name != "manifest.json"]
    return [pytest.param(p, id=f"{p.parent.parent.name}/{p.parent.name}/{p.name}") for p in found]


def _raw_records(path: Path) -> list[dict]:
    """Every JSON object of a JSONL file (a raw_decode loop: two may share a line)."""
    decoder = json.JSONDecoder()
    out = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        i = 0
        while i < len(line.strip()):
            line = line.strip()
            value, i = decoder.raw_decode(line, i)
            out.append(value)
            while i < len(line) and line[i].isspace():
                i += 1
    return out


def _kind(path: Path) -> str:
    """Which agent wrote a JSONL log, from its first records (as the manifest's folders say)."""
    head = _raw_records(path)[:20]
    if any("payload" in r for r in head):
        return "codex"
    return "claude" if any("uuid" in r and "sessionId" in r for r in head) else ""


CLAUDE = [p for p in _files("*.jsonl") if _kind(p.values[0]) == "claude"]
CODEX = [p for p in _files("*.jsonl") if _kind(p.values[0]) == "codex"]


@pytest.mark.parametrize("path", CLAUDE)
def test_claude_code_one_request_per_message_id(path: Path) -> None:
    records = _raw_records(path)
    main_ids = {r["message"]["id"] for r in records
                if r.get("type") == "assistant" and not r.get("isSidechain")
                and r["message"].get("model") != "<synthetic>" and isinstance(r["message"].get("id"), str)}
    t = load_transcript(path)
    assert t.agent == "claude_code"
    assert {q.id for q in t.requests} == main_ids
    assert len(t.requests) == len(main_ids)
    for q in t.requests:
        assert t[q.message]["role"] == "assistant"
    assert check_history(t) == []


@pytest.mark.parametrize("path", CODEX)
def test_codex_rollout_reads_legal(path: Path) -> None:
    t = load_transcript(path)
    assert t.agent == "codex_cli"
    assert check_history(t) == []
    for q in t.requests:
        assert t[q.message]["role"] == "assistant"
