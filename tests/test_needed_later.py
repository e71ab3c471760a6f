"""Needed-later retention: what a cut removed that the recorded future mentions again, and what was kept."""

import pytest
from builders import SYSTEM, assistant, tool, user

import nanohermes_nb as nh
from nanohermes_nb.context.needed import (
    IdentifierIndex,
    identifiers,
    message_identifiers,
    needed_later,
)


def run(later: str, summary: str = "S", keep_recent: int = 2):
    """A dropped read of src/old.py; ``later`` is what the agent says after the cut."""
    msgs = [dict(SYSTEM), user("Goal: fix the parser."),
            assistant("reading", ["c1"], args=[{"path": "src/old.py"}]), tool("c1", "x" * 3000),
            assistant("next", ["c2"], args=[{"path": "src/new.py"}]), tool("c2", "y" * 3000),
            assistant("more", ["c3"], args=[{"path": "src/other.py"}]), tool("c3", "z" * 3000),
            assistant(later, ["c4"], args=[{"path": "README.md"}]), tool("c4", "ok"),
            assistant("done")]
    return nh.replay(msgs, budget=6_000, summarizer=lambda e: summary, needed_later=True,
                     policy=nh.NanoHermesPolicy(keep_recent=keep_recent))


def test_dropped_path_mentioned_later_and_not_kept():
    L = run("back to src/old.py")
    ev = L.compactions[0]
    assert "src/old.py" in ev.needed_later.needed and ev.needed_later.kept == ()
    assert ev.needed_later.score == 0.0 and "src/old.py" in ev.needed_later.lost
    assert L.totals.needed_later == 0.0 and L.totals.needed_later_items == 1


def test_dropped_path_mentioned_later_and_kept_in_the_summary():
    L = run("back to src/old.py", summary="Read src/old.py; the bug is in its tokenizer.")
    nl = L.compactions[0].needed_later
    assert nl.needed == ("src/old.py",) and nl.kept == ("src/old.py",) and nl.score == 1.0


def test_dropped_path_not_mentioned_later_is_not_at_stake():
    L = run("all good")
    nl = L.compactions[0].needed_later
    assert nl.needed == () and nl.score is None and nl.removed >= 1
    assert L.totals.needed_later is None and L.totals.needed_later_items == 0


def test_a_mention_before_the_event_point_does_not_count():
    # messages 0 and 1 name src/a.py; an event whose future starts at 2 finds no later mention, one at 1 does
    index = IdentifierIndex([user("see src/a.py"), user("src/a.py again"), user("unrelated")])
    assert needed_later([user("see src/a.py")], [], 2, index).needed == ()
    assert needed_later([user("see src/a.py")], [], 1, index).needed == ("src/a.py",)
    kept = needed_later([user("see src/a.py")], [user("still on src/a.py")], 1, index)
    assert kept.kept == ("src/a.py",) and kept.score == 1.0


def test_identifier_kinds():
    text = ('File "src/app.py", line 3, in parse_config\nKeyError: x; see https://example.com/a/b?x=1. '
            "commit 3f2a9c1d, E501, ENOENT, TS2345; FAILED tests/test_app.py::TestParser::test_dates - "
            "AssertionError; def helper_fn(x): self.build_index(x) print(x) issue #1234 "
            "id 123e4567-e89b-12d3-a456-426614174000")
    got = identifiers(text)
    for want in ("src/app.py", "KeyError", "https://example.com/a/b?x=1", "3f2a9c1d", "E501", "ENOENT", "TS2345",
                 "tests/test_app.py", "TestParser", "test_dates", "AssertionError", "helper_fn", "build_index",
                 "#1234", "123e4567-e89b-12d3-a456-426614174000"):
        assert want in got, want
    # common calls and plain words are not identifiers; a test file is a path, not a test name
    for not_wanted in ("print", "line", "commit", "test_app", "self.build_index", "parse_config"):
        assert not_wanted not in got, not_wanted


def test_message_identifiers_read_arguments_not_tool_names_or_ids():
    m = assistant("", ["call_abc123"], names=["read_file"], args=[{"path": "src/x.py"}])
    assert message_identifiers(m) == frozenset({"src/x.py"})


def test_sweep_and_compare_policies_carry_needed_later(corpus):
    frame = nh.sweep([str(corpus.largest())], budgets=[30_000], needed_later=True)
    assert {"needed_later", "needed_later_items"} <= set(frame.columns)
    L = nh.replay(nh.load_transcript(corpus.largest()), budget=30_000, needed_later=True)
    assert frame["needed_later_items"][0] == L.totals.needed_later_items
    assert frame["needed_later_items"][0] == sum(len(e.needed_later.needed) for e in L.compactions)
    kept = sum(len(e.needed_later.kept) for e in L.compactions)
    assert L.totals.needed_later == (pytest.approx(kept / L.totals.needed_later_items)
                                     if L.totals.needed_later_items else None)


def test_needed_later_is_off_by_default():
    L = run("back to src/old.py")
    plain = nh.replay(L.messages, budget=6_000, summarizer=lambda e: "S", policy=nh.NanoHermesPolicy(keep_recent=2))
    assert plain.compactions[0].needed_later is None and plain.totals.needed_later_items is None
    assert "needed_later" not in plain.totals.as_dict()
