"""Probes from the session itself and their survival (issue 36): derivation, scoring, the probe book."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import ClassVar

import pytest
from builders import SYSTEM

import nanohermes_nb as nh
from nanohermes_nb.context.probes import CATEGORIES, OUTPUT_CAP, ProbeIndex, derive_probes, key_terms, shell_files
from nanohermes_nb.context.survival import Compacted, has_terms, survival, tally
from nanohermes_nb.policies import POLICIES, Policy, make_event, register

CC_LOG = str(Path(__file__).resolve().parents[1] / "data" / "compactions" / "claude-code"
             / "entire-cli_opus45_fe0600aa.cut95.jsonl")


def call(cid: str, name: str, **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def turn(text: str, *calls: dict) -> dict:
    m: dict = {"role": "assistant", "content": text}
    if calls:
        m["tool_calls"] = list(calls)
    return m


def result(cid: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def history() -> list[dict]:
    """A short session touching every category."""
    return [
        SYSTEM,
        {"role": "user", "content": "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n- Never commit to main.\n"
                                    "- Use ruff before every commit.\n</INSTRUCTIONS>"},
        {"role": "user", "content": "Fix the failing parser test. Do not change the public API."},
        turn("Let me read the file.", call("c1", "Read", file_path="/repo/src/parser.py")),
        result("c1", "     1→import re\n     2→def parse_header_line(text: str) -> dict:\n     3→    return {}\n"),
        turn("I'll use a regular expression instead of split because headers may hold colons.",
             call("c2", "Bash", command="pytest -q tests/test_parser.py")),
        result("c2", "Exit code 1\nE   TypeError: parse_header_line() missing 1 required positional argument\n"
                     "FAILED tests/test_parser.py::test_header - TypeError"),
        turn("", call("c3", "Edit", file_path="/repo/src/parser.py", old_string="return {}",
                      new_string="return dict(HEADER_PATTERN.findall(text))")),
        result("c3", "The file /repo/src/parser.py has been updated."),
        turn("", call("c4", "exec_command", cmd="sed -n '1,40p' src/lexer.py")),
        result("c4", "Process exited with code 0\nOutput:\nclass Lexer:\n    def tokens_of_the_header(self): pass\n"),
    ]


def by_category(probes) -> dict:
    out: dict = {}
    for p in probes:
        out.setdefault(p.category, []).append(p)
    return out


def test_every_category_from_a_hand_made_session():
    probes = by_category(derive_probes(history()))
    assert set(probes) == set(CATEGORIES)
    files = {p.key: p for p in probes["file"]}
    assert files["/repo/src/parser.py"].answer == "edited" and files["/repo/src/parser.py"].count == 2
    assert files["/repo/src/parser.py"].evidence == ("return dict(HEADER_PATTERN.findall(text))",)
    assert files["src/lexer.py"].answer == "read" and files["src/lexer.py"].terms == ("lexer.py",)
    commands = {p.key: p for p in probes["command"]}
    assert commands["pytest -q tests/test_parser.py"].answer == "exit 1 (failed)"
    assert commands["sed -n '1,40p' src/lexer.py"].answer == "exit 0"
    assert any("TypeError" in p.terms for p in probes["error"])
    instructions = [p.key for p in probes["instruction"]]
    assert "Never commit to main." in instructions and "Do not change the public API." in instructions
    assert {p.source for p in probes["instruction"]} == {"AGENTS.md", "user"}
    assert [p.key for p in probes["decision"]] == [
        "I'll use a regular expression instead of split because headers may hold colons."]  # not "Let me read"
    assert probes["task"][0].key.startswith("Fix the failing parser test")


def test_the_open_task_is_only_the_unanswered_request():
    msgs = history() + [turn("Done: the parser test passes.")]
    assert "task" not in by_category(derive_probes(msgs))  # answered: no open task
    msgs.append({"role": "user", "content": "Now add a changelog entry."})
    index = ProbeIndex(msgs)
    assert index.open_request(len(msgs)) == len(msgs) - 1
    assert index.task(len(msgs)).key == "Now add a changelog entry."


def test_shell_readers_and_writers():
    reads, writes = shell_files("cd /r && sed -n '1,200p' pkg/a.ts | head -5; cat b.md > out.txt; tee c.log < x")
    assert reads == ("pkg/a.ts", "b.md") and set(writes) == {"out.txt", "c.log"}
    assert shell_files("sed -i 's/a/b/' cfg.toml")[1] == ("cfg.toml",)
    assert key_terms("ValueError: bad value in src/app/config.py") [:2] == ("ValueError", "config.py")


def test_binary_and_enormous_outputs_are_capped_not_fatal():
    binary = [SYSTEM, {"role": "user", "content": "look at the image"},
              turn("", call("b1", "Read", file_path="logo.png")), result("b1", "\x89PNG\x00\x00\x00" * 500)]
    probes = derive_probes(binary)
    file = [p for p in probes if p.category == "file"][0]
    assert file.answer == "read (binary)" and file.evidence == ("logo.png",)
    assert not [p for p in probes if p.category == "error"]  # a binary is never read for error lines
    late = "x" * (OUTPUT_CAP + 10) + "\nRuntimeError: after the cap\n"
    huge = [SYSTEM, {"role": "user", "content": "run it"}, turn("", call("h1", "Bash", command="make")),
            result("h1", "y\n" * 10 + late)]
    probes = derive_probes(huge)
    assert not [p for p in probes if p.category == "error"]  # the error past the cap is not read
    assert all(len(e) <= 160 for p in probes for e in p.evidence)


def test_a_history_with_nothing_to_ask_gives_no_probe():
    assert derive_probes([]) == [] and derive_probes([SYSTEM]) == []
    assert derive_probes(history(), start=3, stop=3) == []


def test_survival_statuses():
    probes = derive_probes(history())
    kept = survival(probes, Compacted.of(history(), lambda m: False))
    assert {f.status for f in kept} == {"kept"}
    summary = "Goal: fix the parser test. Edited parser.py; pytest tests/test_parser.py failed with TypeError."
    fates = {f.probe.key: f.status for f in survival(probes, Compacted("", summary))}
    assert fates["/repo/src/parser.py"] == "summarized" and fates["src/lexer.py"] == "lost"
    reinjected = Compacted("", summary, "Never commit to main.", frozenset({"lexer.py"}))
    fates = {f.probe.key: f.status for f in survival(probes, reinjected)}
    assert fates["src/lexer.py"] == "re-injected" and fates["Never commit to main."] == "re-injected"
    counts = tally(survival(probes, Compacted("", "")))
    assert counts["items"] == len(probes) == counts["lost"]


def test_key_terms_match_on_six_letter_stems():
    assert has_terms(("validation", "schema"), "we validate the schema")
    assert not has_terms(("validation", "schema"), "we check the table")
    assert not has_terms((), "anything")


def _plain_fates(session, event, prefixes):
    from nanohermes_nb.context.compaction import is_summary_message

    position = session.end[event.request - 1]  # where the replay loop compacted
    probes = ProbeIndex(session.messages, prefixes).probes(event.removed, position)
    ctx = Compacted.of(list(event.context_after), lambda m: is_summary_message(m, prefixes))
    return [(f.probe.key, f.status) for f in survival(probes, ctx)]


@pytest.mark.parametrize("policy", ["nanohermes", "observation_masking", "mask_then_summarize", "codex"])
def test_the_book_agrees_with_a_plain_recomputation(policy):
    from nanohermes_nb.engine.recorded import RecordedSession
    from nanohermes_nb.policies import summary_prefixes

    session = RecordedSession.of(nh.load_transcript(CC_LOG))
    ledger = nh.replay(session, policy=policy, budget=60_000, probes=True)
    assert ledger.compactions
    for event in ledger.compactions:
        book = [(f.probe.key, f.status) for f in event.probes]
        assert book == _plain_fates(session, event, summary_prefixes())


def test_a_sweep_row_equals_the_replay_totals(corpus):
    for path in corpus.files[:3]:
        msgs = nh.load_transcript(path)
        row = nh.sweep([path], policies=["nanohermes"], budget=20_000, probes=True).iloc[0]
        totals = nh.replay(msgs, budget=20_000, probes=True).totals.as_dict()
        for name, value in totals.items():
            if name.startswith("probe_"):
                assert (value is None and row[name] != row[name]) or row[name] == value, (path.name, name)


def test_no_event_gives_a_clear_row():
    row = nh.sweep([("quiet", history())], probes=True).iloc[0]
    assert row["compactions"] == 0 and row["probe_items"] == 0 and row["probe_survival"] != row["probe_survival"]


def test_compare_policies_scores_every_registered_policy_and_the_agent():
    frame = nh.compare_policies([CC_LOG], probes=True, budget=60_000)
    assert set(POLICIES) <= set(frame.index) and "claude_code" in frame.index
    assert {f"probe_{c}" for c in CATEGORIES} <= set(frame.columns)
    assert frame.loc["claude_code", "probe_items"] > 0
    assert 0 <= frame.loc["nanohermes", "probe_survival"] <= 1


@dataclasses.dataclass(frozen=True)
class _DropAll(Policy):
    """A test policy registered at run time: drops every message but the first and the last."""

    name: ClassVar[str] = "_test_drop_all"

    def compact(self, context, env, size):
        new = [context[0], context[-1]] if len(context) > 2 else context
        return (context, None) if new is context else (new, make_event(self, "trim", context, new, env, size))


def test_a_policy_registered_later_gets_the_columns():
    register(_DropAll)
    try:
        frame = nh.compare_policies([CC_LOG], probes=True, budget=60_000, policies=list(POLICIES))
        assert frame.loc["_test_drop_all", "probe_items"] > 0
        assert frame.loc["_test_drop_all", "probe_kept"] < 0.5
    finally:
        POLICIES.pop("_test_drop_all", None)
