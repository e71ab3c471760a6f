"""History checks: the pairing invariant per provider profile."""

import pytest
from builders import SYSTEM, assistant, tool, user

from nanohermes_nb import check_history
from nanohermes_nb.context.history import HistoryChecker


def codes(msgs, profile="openai"):
    return [(p.index, p.code) for p in check_history(msgs, profile)]


def test_legal_history_has_no_problems():
    msgs = [SYSTEM, user(), assistant("", ["a", "b"]), tool("a"), tool("b"), assistant("done")]
    for profile in ("openai", "anthropic", "gemini"):
        assert check_history(msgs, profile) == []


def test_orphan_tool_result():
    msgs = [SYSTEM, user(), assistant("", ["a"]), tool("a"), tool("zzz"), assistant("x")]
    assert codes(msgs) == [(4, "orphan_tool")]
    p = check_history(msgs)[0]
    assert "'zzz'" in p.reason and "must be a response to a preceding message with 'tool_calls'" in p.api_error
    assert str(p).startswith("message 4: ")


def test_unanswered_call_before_the_next_message_and_at_the_end():
    msgs = [SYSTEM, user(), assistant("", ["a", "b"]), tool("a"), user("next")]
    assert codes(msgs) == [(2, "unanswered_call")]
    assert "'b'" in check_history(msgs)[0].reason
    trailing = [SYSTEM, user(), assistant("", ["a"])]
    assert codes(trailing) == [(2, "unanswered_call")]
    assert "the end" in check_history(trailing)[0].reason


def test_window_starting_with_a_tool_message():
    msgs = [SYSTEM, {"role": "system", "content": "summary"}, tool("a"), tool("b"), user()]
    assert codes(msgs) == [(2, "starts_with_tool"), (3, "orphan_tool")]


def test_reused_call_ids_match_by_position():
    msgs = [SYSTEM, user(), assistant("", ["dup"]), tool("dup"), assistant("", ["dup"]), tool("dup"), assistant("ok")]
    assert check_history(msgs) == []
    # but answering one call twice is an orphan
    twice = [SYSTEM, user(), assistant("", ["dup"]), tool("dup"), tool("dup"), assistant("ok")]
    assert codes(twice) == [(4, "orphan_tool")]


def test_system_notice_between_call_and_result_breaks_pairing():
    msgs = [SYSTEM, user(), assistant("", ["a"]), {"role": "system", "content": "note"}, tool("a")]
    assert codes(msgs) == [(2, "unanswered_call"), (4, "orphan_tool")]


def test_missing_and_unknown_roles():
    assert codes([SYSTEM, {"content": "x"}, {"role": "robot", "content": "y"}]) == [(1, "missing_role"), (2, "unknown_role")]


def test_anthropic_profile():
    late_system = [SYSTEM, {"role": "system", "content": "[Earlier conversation summary]\n..."}, user(), assistant("x")]
    assert codes(late_system, "anthropic") == [(1, "system_not_first")]
    assert codes(late_system, "openai") == []
    first_assistant = [SYSTEM, assistant("hi"), user(), assistant("x")]
    assert codes(first_assistant, "anthropic") == [(1, "first_not_user")]
    two_users = [SYSTEM, user("a"), user("b"), assistant("x")]
    assert codes(two_users, "anthropic") == [(2, "not_alternating")]
    two_assistants = [SYSTEM, user("a"), assistant("x"), assistant("y")]
    assert codes(two_assistants, "anthropic") == [(3, "not_alternating")]
    # tool results and a user message after them form one user turn
    merged = [SYSTEM, user(), assistant("", ["a"]), tool("a"), user("more"), assistant("ok")]
    assert check_history(merged, "anthropic") == []


def test_gemini_profile():
    msgs = [SYSTEM, user(), assistant("x"), {"role": "system", "content": "notice"}, user()]
    assert codes(msgs, "gemini") == [(3, "system_not_first")]
    assert codes(msgs, "openai") == []


def test_unknown_profile():
    with pytest.raises(ValueError, match="unknown profile"):
        check_history([SYSTEM], "mistral")


def test_incremental_checker_matches_one_shot():
    msgs = [SYSTEM, user(), assistant("", ["a", "b"]), tool("a"), user("next"), tool("q"), assistant("", ["c"])]
    for profile in ("openai", "anthropic", "gemini"):
        c = HistoryChecker(profile)
        for k, m in enumerate(msgs):
            c.feed(m)
            assert c.problem_count() == len(check_history(msgs[: k + 1], profile))
