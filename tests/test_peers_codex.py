"""The codex policy pinned by cases from codex-rs's own compaction tests.

Codex is Rust with no Python package, so there is no real code to run: each
case in ``nanohermes_nb.peers.codex`` is one codex-rs test (named, with the file
and commit) written as an OpenAI-form history in and the history the test
expects out. Here every case must pass, the pinning must be able to fail, and
the ported helpers (token count, truncation, contextual messages) match the
expectations written in codex-rs's tests.
"""

import pytest

from nanohermes_nb.context.sizing import message_size
from nanohermes_nb.peers import PINNED, agreement, canonical, check_pinned
from nanohermes_nb.peers.codex import CODEX_PINNED, codex_cases, run_case
from nanohermes_nb.policies import CodexPolicy, apply_policy, is_summary_message
from nanohermes_nb.policies.codex import (
    CODEX_SUMMARY_PREFIX,
    _split_string,
    approx_token_count,
    collect_user_messages,
    is_contextual_user_text,
    truncate_text,
)

CASES = codex_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_pinned_case(case):
    before = [dict(m) for m in case.history]
    got = run_case(case)
    assert canonical(got) == canonical(case.expected), case.source
    assert case.history == before  # the input is never touched
    assert case.source.startswith("codex-rs/core/")


def test_the_cases_come_from_codex_rs_tests():
    sources = {c.source.split("@")[0] for c in CASES}
    assert sources == {"codex-rs/core/tests/suite/compact.rs", "codex-rs/core/src/compact.rs",
                       "codex-rs/core/src/event_mapping.rs", "codex-rs/core/src/truncate.rs"}
    assert sum(c.source.startswith("codex-rs/core/tests/suite") for c in CASES) >= 9
    assert len({c.name for c in CASES}) == len(CASES)


def test_the_table_says_pinned_by_n_cases():
    table = agreement([], policies=["codex"])
    row = table.iloc[0]
    assert row["policy"] == "codex" and row["contexts compared"] == len(CASES) == row["identical"]
    assert row["note"] == f"pinned by {len(CASES)} cases from the source's tests (no real code runs here)"
    assert "e06dd0e5" in row["version"] and PINNED["codex"] is CODEX_PINNED


def test_the_pinning_can_fail():
    """The lab's earlier reading (tokens by cl100k) misses the truncation cases; a summary
    without Codex's prefix misses every case."""
    meter = CodexPolicy(token_count="meter")
    failed = [c.name for c in CASES if canonical(apply_policy(
        CodexPolicy(**{**c.options, "token_count": "meter"}), c.history, budget=1, size=message_size,
        summarizer=lambda _e, c=c: c.summary).messages) != canonical(c.expected)]
    assert meter.token_count == "meter" and any("truncat" in name for name in failed)
    wrong = check_pinned(type(CODEX_PINNED)(**{**CODEX_PINNED.__dict__, "run": lambda c: [
        *c.expected[:-1], {"role": "user", "content": "[Earlier conversation summary]\n" + c.summary}]}))
    assert wrong.identical == 0 and wrong.compared == len(CASES) and len(wrong.mismatches) == len(CASES)


# --- the ported helpers, against codex-rs's own expectations ------------------------------------


def test_truncate_text_as_codex_rs_truncate_tests():
    """``truncate.rs`` tests (zed-industries/codex mirror 04994604), through ``truncate_text``."""
    long = "this is an example of a long output that should be truncated"
    assert truncate_text(long, 5) == "this is an\u202610 tokens truncated\u2026 truncated"
    assert truncate_text("example output", 10) == "example output"  # under the limit
    assert truncate_text("abcdef", 0) == "\u20262 tokens truncated\u2026"
    assert truncate_text("", 3) == ""
    # split_string_respects_utf8_boundaries
    emoji = "\U0001F600" * 5
    assert _split_string(emoji.encode(), 7, 7) == ("\U0001F600", "\U0001F600")
    assert _split_string(emoji.encode(), 8, 8) == ("\U0001F600" * 2, "\U0001F600" * 2)
    assert _split_string("\U0001F600abc\U0001F600".encode(), 5, 5) == ("\U0001F600a", "c\U0001F600")
    assert _split_string(b"abcdef", 4, 4) == ("abcd", "ef")


def test_approx_token_count_is_bytes_over_four_rounded_up():
    assert [approx_token_count(t) for t in ("", "a", "abcd", "abcde", "\u00e9\u00e9")] == [0, 1, 1, 2, 1]


def test_contextual_user_messages_and_summaries_are_not_user_messages():
    assert is_contextual_user_text("# AGENTS.md instructions for x\n\n<INSTRUCTIONS>\n</INSTRUCTIONS>")
    assert is_contextual_user_text("  <Environment_Context>cwd</environment_context>")  # trimmed, any case
    assert is_contextual_user_text("<turn_aborted>\n</turn_aborted>")
    assert not is_contextual_user_text(" # AGENTS.md instructions for x")  # instructions: exact start
    assert not is_contextual_user_text("fix <environment_context> handling")
    summary = {"role": "user", "content": CODEX_SUMMARY_PREFIX + "\nwhat was done"}
    assert is_summary_message(summary) and len(CODEX_SUMMARY_PREFIX) == 400  # summary_prefix.md, as stored
    assert collect_user_messages([summary, {"role": "user", "content": "go"}]) == [
        ({"role": "user", "content": "go"}, "go")]


def test_the_default_budget_is_codex_s_20000_tokens():
    users = [{"role": "user", "content": "x" * 40_000}, {"role": "user", "content": "y" * 40_000},
             {"role": "user", "content": "z" * 4}]
    ctx = [{"role": "system", "content": "s"}, *users, {"role": "assistant", "content": "ok"}]
    new = apply_policy(CodexPolicy(), ctx, budget=1, summarizer=lambda _e: "S").messages
    # z (1 token) then y (10,000) fit; 9,999 tokens are left for x: 39,996 bytes kept
    assert new[2] is users[1] and new[3] is users[2] and len(new) == 5
    assert new[1]["content"] == "x" * 19_998 + "\u20261 tokens truncated\u2026" + "x" * 19_998
