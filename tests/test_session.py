"""``Session``: a transcript as the engine takes it, a frozen value with every field typed (issue 34).

The engine used to probe a ``list`` subclass for ``requests``, ``compactions``, ``agent`` and ``path``
with ``getattr``. It now turns what it is given into a ``Session`` once, at its boundary; these tests
hold the conversion exact and the engine's answers the same whichever form it was given.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from agentlog_files import ROOT

import nanohermes_nb as nh
from nanohermes_nb.engine.bill import with_bill
from nanohermes_nb.engine.calibrate import facts_from_transcript
from nanohermes_nb.engine.recorded import RecordedSession
from nanohermes_nb.engine.triggers import trigger_timeline
from nanohermes_nb.transcripts import Session, Transcript

CLAUDE = ROOT / "data" / "agentlogs" / "claude-code" / "oh-my-posh_opus5_windows_compaction_10906611becd.cut329.jsonl"
CODEX = ROOT / "data" / "agentlogs" / "codex" / "agentv_gpt53-codex-spark_2compactions_019f03e0.cut497.jsonl"
PLAIN = ROOT / "data" / "sessions" / "trap_lost_path.json"


@pytest.mark.parametrize("path", [CLAUDE, CODEX, PLAIN], ids=lambda p: p.name[:20])
def test_a_transcript_becomes_a_session_with_everything_it_carries(path: Path) -> None:
    t = nh.load_transcript(path)
    s = Session.of(t)
    assert s.messages == tuple(t) and all(a is b for a, b in zip(s.messages, t, strict=True))
    assert (s.path, s.format, s.agent, s.requests, s.compactions, s.skipped, s.fork) == (
        t.path, t.format, t.agent, t.requests, t.compactions, t.skipped, t.fork)
    assert [x.messages for x in s.sidechains] == [tuple(x) for x in t.sidechains]
    assert Session.of(s) is s and s.name == path.name
    assert s.billed == (bool(t.agent) and any(q.usage is not None for q in t.requests))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.agent = "other"  # type: ignore[misc]


def test_a_plain_list_is_a_session_with_nothing_beside_its_messages() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    s = Session.of(messages)
    assert s == Session(tuple(messages)) and not s.billed and s.name == "" and s.requests == ()
    for bad in ("a path is not a session", Path("x.json"), 12, None):
        with pytest.raises(TypeError, match="a session is a Session, a Transcript or a list of message dicts"):
            Session.of(bad)  # type: ignore[arg-type]


def _replayed(value) -> tuple:
    ledger = nh.replay(value, budget=20_000, unit="o200k", pricing="claude-sonnet-4.5")
    return tuple(ledger.rows["size"]), tuple(ledger.rows.get("usage_cost_usd", ())), ledger.totals


def test_the_engine_answers_the_same_for_a_transcript_and_its_session() -> None:
    t = nh.load_transcript(CLAUDE)
    s = Session.of(t)
    assert _replayed(t) == _replayed(s)
    assert _replayed(s)[1] and not _replayed(list(t))[1]  # the bill's columns come with the log, not with a list
    assert RecordedSession.of(s).reported == RecordedSession.of(t).reported != {}
    assert RecordedSession.of(s).source == s and RecordedSession.of(list(t)).source is None
    assert facts_from_transcript(t) == facts_from_transcript(s)
    a, b = trigger_timeline(t, nanohermes=False), trigger_timeline(s, nanohermes=False)
    assert a.rows() == b.rows() and any(lane.rule == "log" for lane in b.lanes)
    ledger = nh.replay(list(t), budget=20_000)
    assert list(with_bill(ledger, t).requests.columns) == list(with_bill(ledger, s).requests.columns)


def test_whatif_and_the_agents_own_compactions_take_a_session() -> None:
    from nanohermes_nb.engine.own_compactions import own_compactions
    from nanohermes_nb.engine.whatif import whatif

    t = nh.load_transcript(CODEX)
    s = Session.of(t)
    assert [c.at for c in own_compactions(t)] == [c.at for c in own_compactions(s)] and s.compactions
    one = whatif(s, policies=["nanohermes"], budgets=[50_000])
    assert one.equals(whatif(t, policies=["nanohermes"], budgets=[50_000]))


def test_a_session_travels_to_a_sweep_worker_with_its_bill() -> None:
    """A sweep of a ``Session`` in worker processes gives the rows of the sweep in this process."""
    from concurrent.futures import ProcessPoolExecutor

    s = Session.of(nh.load_transcript(CLAUDE))
    here = nh.sweep([("claude", s)], budgets=[30_000], unit="o200k", pricing="claude-sonnet-4.5")
    with ProcessPoolExecutor(1) as pool:
        there = nh.sweep([("claude", RecordedSession.of(s))], budgets=[30_000], unit="o200k",
                         pricing="claude-sonnet-4.5", executor=pool, workers=1)
    assert here.equals(there)


def test_the_engine_no_longer_probes_a_transcript_with_getattr() -> None:
    """No ``getattr(x, "<a Session field>", ...)`` or ``hasattr`` on one in the engine or the CLI."""
    fields = {f.name for f in dataclasses.fields(Session)} | {"usage", "cache_write_1h_tokens", "raw"}
    found = []
    for folder in ("engine", "cli"):
        for path in sorted((ROOT / "nanohermes_nb" / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                        and isinstance(node.args[1], ast.Constant) and node.args[1].value in fields):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


def test_transcript_is_still_the_list_load_transcript_returns() -> None:
    t = nh.load_transcript(PLAIN)
    assert isinstance(t, Transcript) and isinstance(t, list) and nh.Session is Session
