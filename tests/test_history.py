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
    found = codes([SYSTEM, {"content": "x"}, {"role": "robot", "content": "y"}])
    assert found == [(1, "missing_role"), (2, "unknown_role")]


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


# ---------------------------------------------------------------- issue 26: duplicate ids, many calls


def test_anthropic_refuses_two_calls_with_one_id_in_one_message():
    msgs = [SYSTEM, user(), assistant("", ["t1", "t1", "t2", "t2"]), tool("t1"), tool("t1"), tool("t2"), tool("t2"),
            assistant("done")]
    assert codes(msgs, "anthropic") == [(2, "duplicate_call_id")]
    p = check_history(msgs, "anthropic")[0]
    assert p.reason == "two tool calls of one message share an id ('t1', 't2')"
    assert "`tool_use` ids must be unique" in p.api_error
    assert check_history(msgs, "openai") == [] and check_history(msgs, "gemini") == []  # paired by position
    across = [SYSTEM, user(), assistant("", ["t1"]), tool("t1"), assistant("", ["t1"]), tool("t1"), assistant("ok")]
    assert check_history(across, "anthropic") == []  # reused across messages: not this rule


def test_answers_in_any_order_pair_by_first_match():
    ids = [f"c{k}" for k in range(300)]
    shuffled = ids[::7] + [i for k, i in enumerate(ids) if k % 7]
    msgs = [SYSTEM, user(), assistant("", ids), *(tool(i) for i in shuffled), assistant("done")]
    for profile in ("openai", "anthropic", "gemini"):
        assert check_history(msgs, profile) == []
    missing = [SYSTEM, user(), assistant("", ids), *(tool(i) for i in shuffled[:-2]), user("next")]
    p = check_history(missing)
    assert [(x.index, x.code) for x in p] == [(2, "unanswered_call")]
    assert p[0].reason == f"tool call(s) {shuffled[-2]!r}, {shuffled[-1]!r} never answered before message 301"


def test_states_agree_exactly_when_the_pending_calls_agree():
    """Two checkers with the same calls answered (in any order) are in the same state, others are not."""
    def state(answers, ids=("a", "b", "c", "d")):
        c = HistoryChecker("openai")
        for m in [SYSTEM, user(), assistant("", list(ids)), *(tool(i) for i in answers)]:
            c.feed(m)
        return c.state()

    assert state(["a", "b"]) == state(["a", "b"]) and state(["c", "a"]) == state(["a", "c"])
    assert state(["a"]) != state(["b"]) and state(["a", "b"]) != state(["a", "c"]) and state([]) != state(["a"])
    assert state(["a", "b", "c", "d"]) == state(["d", "c", "b", "a"]) == state([], ids=())
    assert state(["a"], ids=("a", "b")) != state(["a"], ids=("a", "c"))


_KEPT_BYTES = """
import sys, tracemalloc
sys.path.insert(0, {tests!r})
from builders import SYSTEM, assistant, tool, user
from nanohermes_nb.context.history import HistoryChecker
n = int(sys.argv[1])
ids = [f"call_{{k:06d}}" for k in range(n)]
msgs = [SYSTEM, user(), assistant("", ids), *(tool(i) for i in ids), assistant("done")]
tracemalloc.start()
c = HistoryChecker("anthropic")
states = []
for m in msgs:
    c.feed(m)
    states.append(c.state())
size = tracemalloc.get_traced_memory()[0]
tracemalloc.stop()
assert c.problems() == []
print(size)
"""


def test_a_message_of_many_calls_costs_linear_memory():
    """The states the replay keeps for every message (``fast.HistoryBaseline``): a copy of the pending ids each
    made 20,000 calls cost 4.9 GB; now each state is a few fields whatever the number of calls. Measured in a
    fresh interpreter each time: in a long test session, caches and threads of earlier tests blur the count."""
    import subprocess
    import sys
    from pathlib import Path

    code = _KEPT_BYTES.format(tests=str(Path(__file__).parent))

    def kept_bytes(n: int) -> int:
        out = subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return int(out.stdout)

    small, large = kept_bytes(2_000), kept_bytes(8_000)
    assert large < 5 * small  # linear (4x the calls); a copy per message would be 16x
    unanswered = [SYSTEM, user(), assistant("", [f"c{k}" for k in range(20_000)])]
    reason = check_history(unanswered)[0].reason
    assert len(reason) < 200 and reason.endswith("and 19,990 more never answered before the end")
