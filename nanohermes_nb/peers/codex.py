"""Codex CLI compaction pinned by cases from codex-rs's own tests (Codex is Rust: nothing to run here).

Each case is one of codex-rs's compaction tests expressed in the lab's OpenAI
form: the history the test builds (Codex's environment/initial context stands
as the system message, which Codex sends outside the history and the lab keeps
first), the summary the test's mocked model answers, and the history the test
expects after compaction (what ``build_compacted_history`` and
``collect_user_messages`` give). Sources, as stored by the code index:

- ``codex-rs/core/tests/suite/compact.rs`` @6dca9c6d (integration tests against
  a mocked model: what the request after a compaction contains);
- ``codex-rs/core/src/compact.rs`` @e06dd0e5 (its unit tests:
  ``collect_user_messages_*``, ``build_token_limited_compacted_history_*``);
- ``codex-rs/core/src/event_mapping.rs`` @e06dd0e5 ``skips_user_instructions_and_env``
  (which user-role messages are not user messages);
- ``codex-rs/core/src/truncate.rs`` as mirrored at zed-industries/codex@04994604
  (``truncate_tokens_over_limit_returns_truncated``): the index's own
  openai/codex copy of that file (b71ed843) predates ``truncate_text``.

Tests are cited by name (unique in each file). The cases are checked by
``check_pinned`` (the agreement table's ``codex`` row: "pinned by N cases") and
by ``tests/test_peers_codex.py``.
"""

from __future__ import annotations

from ..context.sizing import message_size
from ..policies import CodexPolicy, apply_policy
from ..policies.codex import CODEX_SUMMARY_PREFIX
from . import Pinned, PinnedCase, register_pinned

__all__ = ["CODEX_REPO", "COMPACT_COMMIT", "SUITE_COMMIT", "codex_cases", "run_case", "CODEX_PINNED"]

CODEX_REPO = "openai/codex"
COMPACT_COMMIT = "e06dd0e5d5694c24968bf49b62466cdedae04aaa"  # codex-rs/core/src/compact.rs, event_mapping.rs
SUITE_COMMIT = "6dca9c6dd2c5bf76d3e03d08ecb5ed8afd2e4ad5"  # codex-rs/core/tests/suite/compact.rs
SUITE = f"codex-rs/core/tests/suite/compact.rs@{SUITE_COMMIT[:8]}"
UNIT = f"codex-rs/core/src/compact.rs@{COMPACT_COMMIT[:8]}"
MAPPING = f"codex-rs/core/src/event_mapping.rs@{COMPACT_COMMIT[:8]}"
TRUNCATE = "codex-rs/core/src/truncate.rs@zed-industries/codex 04994604"

SYSTEM = {"role": "system", "content": "<environment_context>cwd=/repo</environment_context>"}


def _u(text: str) -> dict:
    return {"role": "user", "content": text}


def _a(text: str) -> dict:
    return {"role": "assistant", "content": text}


def _call(call_id: str, name: str, arguments: str, say: str = "") -> dict:
    return {"role": "assistant", "content": say,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def _result(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _summary(text: str) -> dict:
    """``summary_with_prefix`` (suite helper): ``format!("{SUMMARY_PREFIX}\\n{summary}")``."""
    return _u(f"{CODEX_SUMMARY_PREFIX}\n{text}")


def _case(name: str, source: str, history: list, expected: list, summary: str, **options) -> PinnedCase:
    return PinnedCase(name=name, source=source, history=history, expected=expected, budget=1,
                      options=options, summary=summary)


def _suite_cases() -> list[PinnedCase]:
    first = [SYSTEM, _u("first manual turn"), _a("FIRST_REPLY")]
    after_first = [SYSTEM, _u("first manual turn"), _summary("FIRST_MANUAL_SUMMARY")]
    react = [SYSTEM, _u("create an app"), _call("r1-shell", "local_shell", '{"command":["echo","make-react"]}'),
             _result("r1-shell", "execution error: Io(Os { code: 2, kind: NotFound })")]
    first_summary = "The task is to create an app. I started to create a react app."
    second_summary = first_summary + " then I realized that I need to create a node app."
    after_react = [SYSTEM, _u("create an app"), _summary(first_summary)]
    node = after_react + [_call("r3-shell", "local_shell", '{"command":["echo","make-node"]}'),
                          _result("r3-shell", "execution error: Io(Os { code: 2, kind: NotFound })")]
    return [
        _case("summarize_context_three_requests_and_instructions", SUITE,
              [SYSTEM, _u("hello world"), _a("FIRST_REPLY")],
              [SYSTEM, _u("hello world"), _summary("SUMMARY_ONLY_CONTEXT")], "SUMMARY_ONLY_CONTEXT"),
        _case("manual_compact_twice_preserves_latest_user_messages (first /compact)", SUITE,
              first, after_first, "FIRST_MANUAL_SUMMARY"),
        _case("manual_compact_twice_preserves_latest_user_messages (second /compact)", SUITE,
              after_first + [_u("second manual turn"), _a("SECOND_LARGE_REPLY")],
              [SYSTEM, _u("first manual turn"), _u("second manual turn"), _summary("SECOND_MANUAL_SUMMARY")],
              "SECOND_MANUAL_SUMMARY"),
        _case("multiple_auto_compact_per_task_runs_after_token_limit_hit (first)", SUITE,
              react, after_react, first_summary),
        _case("multiple_auto_compact_per_task_runs_after_token_limit_hit (second)", SUITE,
              node, [SYSTEM, _u("create an app"), _summary(second_summary)], second_summary),
        _case("auto_compact_runs_after_token_limit_hit", SUITE,
              [SYSTEM, _u("token limit start"), _a("FIRST_REPLY"), _u("token limit push"), _a("SECOND_REPLY")],
              [SYSTEM, _u("token limit start"), _u("token limit push"), _summary("AUTO_SUMMARY")], "AUTO_SUMMARY"),
        _case("snapshot_request_shape_mid_turn_continuation_compaction", SUITE,
              [SYSTEM, _u("USER_ONE"), _call("call-multi-auto", "test_tool", "{}"),
               _result("call-multi-auto", "unsupported call: test_tool")],
              [SYSTEM, _u("USER_ONE"), _summary("MID_TURN_SUMMARY")], "MID_TURN_SUMMARY"),
        _case("snapshot_request_shape_manual_compact_without_previous_user_messages", SUITE,
              [SYSTEM, _a("nothing asked yet")], [SYSTEM, _summary("MANUAL_EMPTY_SUMMARY")], "MANUAL_EMPTY_SUMMARY"),
        _case("snapshot_request_shape_manual_compact_with_previous_user_messages", SUITE,
              [SYSTEM, _u("USER_ONE"), _a("FIRST_REPLY")],
              [SYSTEM, _u("USER_ONE"), _summary("MANUAL_SUMMARY")], "MANUAL_SUMMARY"),
    ]


def _unit_cases() -> list[PinnedCase]:
    big = "word " * 200  # 1,000 bytes: 250 tokens
    # 16 tokens = 64 bytes: 32 of head, 32 of tail; (1,000 - 64) / 4 = 234 tokens removed
    big_cut = "word " * 6 + "wo" + "\u2026234 tokens truncated\u2026" + "d " + "word " * 6
    long = "this is an example of a long output that should be truncated"  # 60 bytes: 15 tokens
    return [
        _case("collect_user_messages_extracts_user_text_only", UNIT,
              [SYSTEM, _a("ignored"), _u("first")], [SYSTEM, _u("first"), _summary("S")], "S"),
        _case("collect_user_messages_filters_session_prefix_entries", UNIT,
              [SYSTEM, _u("# AGENTS.md instructions for project\n\n<INSTRUCTIONS>\ndo things\n</INSTRUCTIONS>"),
               _u("<ENVIRONMENT_CONTEXT>cwd=/tmp</ENVIRONMENT_CONTEXT>"), _u("real user message"), _a("ok")],
              [SYSTEM, _u("real user message"), _summary("S")], "S"),
        _case("skips_user_instructions_and_env", MAPPING,
              [SYSTEM, _u("<user_instructions>test_text</user_instructions>"),
               _u("<environment_context>test_text</environment_context>"),
               _u("<skill>\n<name>demo</name>\n<path>skills/demo/SKILL.md</path>\nbody\n</skill>"),
               _u("<user_shell_command>echo 42</user_shell_command>"), _u("the task"), _a("ok")],
              [SYSTEM, _u("the task"), _summary("S")], "S"),
        _case("build_token_limited_compacted_history_truncates_overlong_user_messages", UNIT,
              [SYSTEM, _u(big), _a("ok")], [SYSTEM, _u(big_cut), _summary("SUMMARY")], "SUMMARY",
              user_message_max_tokens=16),
        _case("build_token_limited_compacted_history_appends_summary_message", UNIT,
              [SYSTEM, _u("first user message"), _a("ok")],
              [SYSTEM, _u("first user message"), _summary("summary text")], "summary text"),
        # a summary is a user message but not a real one (is_summary_message)
        _case("insert_initial_context_before_last_real_user_or_summary_keeps_summary_last", UNIT,
              [SYSTEM, _u("older user"), _summary("summary text"), _u("latest user"), _a("ok")],
              [SYSTEM, _u("older user"), _u("latest user"), _summary("S2")], "S2"),
        # build_compacted_history_with_limit's loop, with truncate.rs's own expected cut:
        # 10 tokens: the newest (5) fits, 5 are left for the 15-token one, cut as in the truncate test
        _case("truncate_tokens_over_limit_returns_truncated + build_compacted_history_with_limit", TRUNCATE,
              [SYSTEM, _u("the oldest, never reached"), _u(long), _a("ok"), _u("0123456789abcdefghij")],
              [SYSTEM, _u("this is an\u202610 tokens truncated\u2026 truncated"), _u("0123456789abcdefghij"),
               _summary("S")], "S", user_message_max_tokens=10),
        # remaining reaches 0 exactly: selection stops before any truncation marker
        _case("build_compacted_history_with_limit (remaining == 0 stops)", UNIT,
              [SYSTEM, _u("older"), _a("ok"), _u("0123456789abcdefghij")],
              [SYSTEM, _u("0123456789abcdefghij"), _summary("S")], "S", user_message_max_tokens=5),
        # a rebuilt user message is its text only (UserMessageItem::message, ContentItem::InputText)
        _case("parses_user_message_with_text_and_two_images + build_compacted_history_with_limit", MAPPING,
              [SYSTEM, {"role": "user", "name": "me", "content": [
                  {"type": "text", "text": "look at this"}, {"type": "image_url", "image_url": {"url": "x"}}]},
               _a("ok")],
              [SYSTEM, _u("look at this"), _summary("S")], "S"),
    ]


def codex_cases() -> list[PinnedCase]:
    """Every pinned case: the integration tests first, then the module's unit tests."""
    return _suite_cases() + _unit_cases()


def run_case(case: PinnedCase) -> list:
    """The lab's ``codex`` policy on a case's history, its model answering the case's summary."""
    policy = CodexPolicy(**case.options)
    return apply_policy(policy, case.history, budget=case.budget, size=message_size,
                        summarizer=lambda _excerpt: case.summary).messages


CODEX_PINNED = register_pinned(Pinned(
    policy="codex",
    source="Codex CLI compaction (codex-rs/core/src/compact.rs), Rust: pinned by its own tests",
    version=lambda: f"{CODEX_REPO} compact.rs@{COMPACT_COMMIT[:8]}, tests/suite/compact.rs@{SUITE_COMMIT[:8]}",
    cases=codex_cases,
    run=run_case,
))
