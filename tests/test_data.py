"""The data/ folder: committed files equal what data/make_sessions.py builds, and each
session shows what its lesson needs (the twelve-turn curve, the traps, the byte/char gap)."""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from nanohermes_nb import DEFAULT_BUDGETS, check_history, compact, context_size, replay
from nanohermes_nb.context.sizing import measure

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
BUDGET = DEFAULT_BUDGETS.context_char_budget
ELLIPSIS = "\u2026"


def _load_script():
    spec = importlib.util.spec_from_file_location("make_sessions", DATA / "make_sessions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script():
    return _load_script()


@pytest.fixture(scope="module")
def built(script) -> dict:
    return script.build_all()


def session(name: str) -> list[dict]:
    return json.loads((DATA / "sessions" / name).read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- regeneration


def test_committed_files_are_what_the_script_builds(script, built):
    assert sorted(built) == sorted(
        ["data/article_facts.json", "data/article_ledger.csv"]
        + [f"data/sessions/{p.name}" for p in (DATA / "sessions").glob("*.json")]
    )
    for rel, obj in built.items():
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert text == script.render(rel, obj), f"{rel} is stale: run python data/make_sessions.py"
        if rel.endswith(".json"):
            assert json.loads(text) == obj
    assert script.stale(built) == []


def test_check_names_a_file_that_would_change(script, built):
    rel = "data/article_ledger.csv"
    changed = [dict(row) for row in built[rel]]
    changed[0]["size"] += 1
    assert script.stale({rel: changed}) == [rel]


def test_no_machine_specific_text_in_sessions(built):
    for rel, obj in built.items():
        text = json.dumps(obj, ensure_ascii=False)
        for needle in ("/tmp/", "nanohermes-data-", str(ROOT), "pid "):
            assert needle not in text, (rel, needle)


# --------------------------------------------------------------------------- the twelve-turn session


@pytest.fixture(scope="module")
def twelve() -> list[dict]:
    return session("twelve_turns.json")


def test_twelve_turns_is_a_legal_openai_history(twelve):
    assert check_history(twelve) == []
    assert twelve[0]["role"] == "system" and "Workspace: /workspace" in twelve[0]["content"]
    assert sum(m["role"] == "user" for m in twelve) == 12
    calls = [c for m in twelve for c in m.get("tool_calls", [])]
    assert calls and all(c["type"] == "function" and c["id"].startswith("call_") for c in calls)
    assert all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls)


def test_twelve_turns_first_user_message_names_the_files(twelve):
    goal = next(m["content"] for m in twelve if m["role"] == "user")
    for path in ("logstat/parse.py", "logstat/report.py", "logstat/export.py"):
        assert path in goal


def test_twelve_turns_has_a_read_clamped_at_20000_bytes(twelve):
    clamped = [m["content"] for m in twelve if m["role"] == "tool" and f"{ELLIPSIS} output truncated (" in m["content"]]
    assert clamped
    kept = clamped[0].rsplit("\n" + ELLIPSIS, 1)[0]
    assert 19_996 <= len(kept.encode()) <= 20_000


def test_twelve_turns_compacts_first_around_turn_10(twelve):
    by_turn = replay(twelve).by_turn()
    first = by_turn[by_turn["compacted"]].iloc[0]
    assert first["turn"] in (9, 10, 11)
    assert 120_000 <= first["size"] <= 140_000
    assert first["size_after"] < BUDGET / 2
    assert int(by_turn["compacted"].sum()) == 1
    before = by_turn[by_turn["turn"] < first["turn"]]["size"]
    assert before.is_monotonic_increasing and before.max() <= BUDGET


# --------------------------------------------------------------------------- the traps


def test_pure_chat_passes_the_budget_but_never_compacts():
    msgs = session("trap_pure_chat.json")
    assert check_history(msgs) == []
    assert not any(m.get("tool_calls") for m in msgs)
    assert context_size(msgs) > BUDGET
    ledger = replay(msgs)
    assert ledger.totals.n_compactions == 0
    assert ledger.totals.peak_request > BUDGET


def test_parallel_tail_cut_runs_to_the_end():
    msgs = session("trap_parallel_tail.json")
    assert check_history(msgs) == []
    assert all(m["role"] == "tool" for m in msgs[-10:])
    result = compact(msgs, force=True)
    assert result.cut == len(msgs)
    assert len(result.messages) == 2 and result.messages[0] == msgs[0]
    assert result.messages[1]["role"] == "system"


def test_recent_messages_alone_exceed_the_budget():
    msgs = session("trap_recent_over_budget.json")
    assert check_history(msgs) == []
    ledger = replay(msgs)
    assert ledger.totals.n_compactions >= 1
    assert ledger.totals.ineffective_compactions >= 1
    assert ledger.requests[ledger.requests["compacted"]]["size_after"].iloc[0] > BUDGET


def test_summary_loses_a_path_named_only_in_tool_arguments():
    msgs = session("trap_lost_path.json")
    assert check_history(msgs) == []
    result = compact(msgs, force=True)
    in_args = [c for m in result.dropped for c in m.get("tool_calls", [])
               if "logstat/cli.py" in c["function"]["arguments"]]
    assert in_args
    assert not any("logstat/cli.py" in (m.get("content") or "") for m in result.dropped)
    assert "logstat/cli.py" not in result.note
    assert "logstat/cli.py" in compact(msgs, force=True, excerpt_tool_calls=True).note


def test_chinese_session_is_under_the_budget_in_chars_and_over_in_bytes():
    msgs = session("chinese_session.json")
    assert check_history(msgs) == []
    assert measure(msgs, "chars") < BUDGET < measure(msgs, "bytes")
    reads = "".join(m["content"] for m in msgs if m["role"] == "tool" and "｜" in m["content"])
    assert 2.5 <= len(reads.encode()) / len(reads) <= 3.0  # about 3 bytes per character
    assert replay(msgs).totals.n_compactions >= 1
    assert replay(msgs, unit="chars").totals.n_compactions == 0


# --------------------------------------------------------------------------- the article's numbers


def test_article_ledger_matches_the_article():
    with open(DATA / "article_ledger.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["turn", "messages", "size", "action", "compacted", "size_after"]
    assert [int(r["turn"]) for r in rows] == list(range(1, 13))
    assert [int(r["messages"]) for r in rows] == [3, 6, 10, 14, 20, 24, 30, 36, 42, 48, 54, 60]
    sizes = [4_000, 12_000, 26_000, 38_000, 52_000, 64_000, 78_000, 96_000, 118_000, 132_000, 46_000, 60_000]
    assert [int(r["size"]) for r in rows] == sizes
    assert [r["compacted"] for r in rows] == ["False"] * 9 + ["True"] + ["False"] * 2
    assert [int(r["size_after"]) for r in rows] == sizes[:9] + [32_000] + sizes[10:]


def test_article_facts():
    facts = json.loads((DATA / "article_facts.json").read_text(encoding="utf-8"))
    inflation = {r["content"]: (r["raw_chars"], r["serialized"]) for r in facts["json_inflation"]["rows"]}
    assert inflation == {"1,000-line log": (50_000, 52_000), "2,000-line code": (80_000, 84_000),
                         "quote-heavy JSON": (20_000, 24_000)}
    metrics = facts["twelve_turn_metrics"]
    assert (metrics["peak_request"], metrics["compactions"], metrics["size_after_compaction"],
            metrics["cumulative_input"]) == (132_000, 1, 32_000, 700_000)
    assert len(facts["request_parts"]) == 7
    assert [r["messages"] for r in facts["messages_per_turn"]] == [2, 4, 7, 11]
    assert [r["words"] for r in facts["summary_length"]] == [100, 300, 1_000]
    assert [r["kept_bytes"] for r in facts["clamp"]] == [20_000, 20_000, 19_998]
    fields = {f.name for f in dataclasses.fields(DEFAULT_BUDGETS)}
    for cap in facts["caps"]:
        for name, value in cap["values"].items():
            assert name in fields and getattr(DEFAULT_BUDGETS, name) == value, (cap["layer"], name)
