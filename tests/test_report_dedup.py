"""Nothing counted twice: a Codex fork's copied history, a file given twice, two files with the same bytes.

A Codex sub-agent spawned with ``fork_context`` opens its rollout on a copy of its parent's records
(codex-rs ``agent/control.rs``: ``InitialHistory::Forked``). The copied token counts are the parent's
requests; the fork is billed only for its own, and its copied tool results are the parent's. The
forks are built here from the vendored Codex sample, the way Codex writes them; the three real ones
in ``../shared/agentlogs`` are checked against their parent when it is there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nanohermes_nb.engine.bill import session_bill
from nanohermes_nb.engine.usage_report import summarize, tool_outputs, usage_rows
from nanohermes_nb.transcripts import load_transcript

ROOT = Path(__file__).resolve().parents[1]
CODEX = next((ROOT / "data" / "agentlogs" / "codex").glob("*.jsonl"))
SHARED = ROOT.parent / "shared" / "agentlogs" / "codex"
PARENT = "git-sync_codex-cli_gpt-5.4_a9852d56.jsonl"
FORKS = ("git-sync_codex-cli_gpt-5.4_6689b94f.jsonl", "git-sync_codex-cli_gpt-5.4_7aba4b96.jsonl",
         "git-sync_codex-cli_gpt-5.4_ba2254b4.jsonl")


def _uuid7(ms: int, tail: str = "8000-000000000000") -> str:
    """A UUIDv7 made at ``ms`` (its first 48 bits), as Codex's thread and turn ids are."""
    h = f"{ms:012x}"
    return f"{h[:8]}-{h[8:12]}-7000-{tail}"


def _records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _fork_of(parent: Path, out: Path, own_id: str, turn: str, copy: bool = True) -> Path:
    """A fork of ``parent`` written as Codex writes one: its own session_meta, the parent's records, then one
    turn of its own (a user message, an answer and its token count)."""
    records = _records(parent)
    meta = next(r for r in records if r["type"] == "session_meta")
    counts = [r for r in records if r["type"] == "event_msg" and r["payload"].get("type") == "token_count"
              and r["payload"].get("info")]
    total = dict(counts[-1]["payload"]["info"]["total_token_usage"])
    last = {"input_tokens": 5000, "cached_input_tokens": 1000, "output_tokens": 70, "reasoning_output_tokens": 20,
            "total_tokens": 5070}
    total = {k: total[k] + last[k] for k in last}
    stamp = "2026-06-26T13:00:00.000Z"
    own = [
        {"timestamp": stamp, "type": "session_meta",
         "payload": {**{k: v for k, v in meta["payload"].items() if k != "base_instructions"}, "id": own_id,
                     "forked_from_id": meta["payload"]["id"],
                     "source": {"subagent": {"thread_spawn": {"parent_thread_id": meta["payload"]["id"]}}}}},
        *(records if copy else []),
        {"timestamp": stamp, "type": "event_msg", "payload": {"type": "task_started", "turn_id": turn}},
        {"timestamp": stamp, "type": "turn_context", "payload": {"turn_id": turn, "model": "gpt-5.4-mini"}},
        {"timestamp": stamp, "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "review it"}]}},
        {"timestamp": stamp, "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}},
        {"timestamp": stamp, "type": "event_msg",
         "payload": {"type": "token_count", "info": {"total_token_usage": total, "last_token_usage": last}}},
    ]
    out.write_text("".join(json.dumps(r) + "\n" for r in own), encoding="utf-8")
    return out


def _later_than_every_turn(path: Path) -> int:
    turns = [r["payload"]["turn_id"] for r in _records(path) if isinstance(r.get("payload"), dict)
             and isinstance(r["payload"].get("turn_id"), str)]
    return max(int(t[:8] + t[9:13], 16) for t in turns) + 60_000


def test_a_fork_is_billed_only_for_its_own_requests(tmp_path: Path) -> None:
    parent = load_transcript(CODEX)
    ms = _later_than_every_turn(CODEX)
    fork = load_transcript(_fork_of(CODEX, tmp_path / "fork.jsonl", _uuid7(ms), _uuid7(ms + 5)))
    billed = [q for q in parent.requests if q.usage is not None]
    assert fork.fork is not None and fork.fork.parent == parent_id()
    assert fork.fork.n_requests == len(billed), "every copied count is the parent's request"
    assert [dict(q.usage.raw) for q in fork.fork.copied] == [dict(q.usage.raw) for q in billed]
    own = [q for q in fork.requests if q.usage is not None]
    assert len(own) == 1 and own[0].usage.prompt_tokens == 5000 and own[0].model == "gpt-5.4-mini"
    assert fork.fork.messages == len(parent), "the fork's own part begins where the parent's copy ends"
    assert list(fork)[:len(parent)] == list(parent), "the copied history stays: it is the fork's context"
    assert session_bill(fork.requests).prompt_tokens == 5000


def parent_id() -> str:
    return next(r for r in _records(CODEX) if r["type"] == "session_meta")["payload"]["id"]


def test_the_report_counts_a_parent_and_its_fork_once(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copyfile(CODEX, folder / "parent.jsonl")
    ms = _later_than_every_turn(CODEX)
    _fork_of(CODEX, folder / "fork.jsonl", _uuid7(ms), _uuid7(ms + 5))
    found = usage_rows(folder, keep_sessions=True)
    alone = usage_rows(CODEX, keep_sessions=True)
    assert len(found.rows) == len(alone.rows) + 1, "the copied requests are the parent's, counted there once"
    assert sum(r.tokens[0] for r in found.rows) == sum(r.tokens[0] for r in alone.rows) + 4000
    assert any("forked session" in n and f"{len(alone.rows):,} copied requests" in n for n in found.notes)
    tools = {r["tool"]: r["results"] for r in tool_outputs(found.sessions)}
    assert tools == {r["tool"]: r["results"] for r in tool_outputs(alone.sessions)}, \
        "a fork's copied tool results are its parent's, not counted again"


def test_a_fork_whose_ids_are_no_uuid7_is_counted_whole_and_says_so(tmp_path: Path) -> None:
    path = _fork_of(CODEX, tmp_path / "fork.jsonl", "not-a-uuid", "turn-1")
    t = load_transcript(path)
    assert t.fork is None
    assert sum(q.usage is not None for q in t.requests) == sum(q.usage is not None for q in
                                                                load_transcript(CODEX).requests) + 1
    assert any("cannot be told apart" in s for s in t.skipped)


def test_a_fork_with_nothing_copied_is_all_its_own(tmp_path: Path) -> None:
    ms = _later_than_every_turn(CODEX)
    t = load_transcript(_fork_of(CODEX, tmp_path / "fork.jsonl", _uuid7(ms), _uuid7(ms + 5), copy=False))
    assert t.fork is not None and t.fork.n_requests == 0 and t.fork.messages == 0
    assert [q.usage is not None for q in t.requests] == [True]


def test_identical_files_are_counted_once_with_a_note(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    (folder / "a").mkdir(parents=True)
    (folder / "b").mkdir()
    shutil.copyfile(CODEX, folder / "a" / "one.jsonl")
    shutil.copyfile(CODEX, folder / "b" / "backup.jsonl")
    once = usage_rows(CODEX)
    found = usage_rows(folder)
    assert len(found.rows) == len(once.rows)
    assert found.notes == [f"{folder / 'b' / 'backup.jsonl'}: the same bytes as {folder / 'a' / 'one.jsonl'}, "
                           "counted once"]
    twice = usage_rows([CODEX, CODEX])
    assert len(twice.rows) == len(once.rows) and twice.notes == [f"{CODEX.resolve()}: given 2 times, counted once"]


def test_same_size_different_bytes_are_both_counted(tmp_path: Path) -> None:
    text = CODEX.read_text(encoding="utf-8")
    assert "agentv" in text
    (tmp_path / "a.jsonl").write_text(text, encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(text.replace("agentv", "agenty", 1), encoding="utf-8")
    found = usage_rows(tmp_path)
    assert len(found.rows) == 2 * len(usage_rows(CODEX).rows) and found.notes == []


@pytest.mark.skipif(not (SHARED / PARENT).is_file(), reason="needs ../shared/agentlogs")
def test_the_real_git_sync_forks_copy_their_parent_and_are_counted_once() -> None:
    parent = load_transcript(SHARED / PARENT)
    billed = [dict(q.usage.raw) for q in parent.requests if q.usage is not None]
    own = 0
    for name in FORKS:
        t = load_transcript(SHARED / name)
        assert t.fork is not None and t.fork.parent == "019d7d08-46c9-7f73-affe-4e6ca9852d56"
        n = t.fork.n_requests
        assert 0 < n < len(billed) and [dict(q.usage.raw) for q in t.fork.copied] == billed[:n], \
            f"{name}: the copied counts are the parent's first {n} requests, in order"
        assert list(t)[:100] == list(parent)[:100], "the copy opens on the parent's history"
        own += sum(q.usage is not None for q in t.requests)
    found = usage_rows([SHARED / PARENT, *(SHARED / f for f in FORKS)])
    assert len(found.rows) == len(billed) + own
    sessions = summarize(found.rows, "session")
    assert len(sessions) == 4
