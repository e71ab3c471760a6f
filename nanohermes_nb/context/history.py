"""Is this history legal? The invariant every compaction must keep.

A provider rejects a request whose tool results do not pair with tool calls. The
rules differ a little by provider, so ``check_history`` takes a profile:

- ``openai``: every tool message answers a call of the latest assistant message
  that is not yet answered; every call is answered before the next non-tool
  message (a trailing unanswered call counts); a window that starts with a tool
  message is reported as such. Call ids reused across turns are matched by
  position, as the API does, not flagged.
- ``anthropic``: OpenAI's pairing, plus: only messages[0] may be a system message,
  the first non-system message must be a user message, and user and assistant
  turns alternate (a run of tool results, and a user message right after them,
  form one user turn).
- ``gemini``: OpenAI's pairing, plus a system message only at the start.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .messages import role_of

__all__ = ["Problem", "check_history", "HistoryChecker", "PROFILES", "KNOWN_ROLES", "is_legal"]

PROFILES = ("openai", "anthropic", "gemini")
KNOWN_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

# The error texts the providers send back, so a learner sees what a broken history costs.
_OPENAI_ORPHAN = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceding "
    "message with 'tool_calls'."
)
_OPENAI_UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
_ANTHROPIC_ALTERNATE = "messages: roles must alternate between \"user\" and \"assistant\""
_ANTHROPIC_FIRST = "messages: first message must use the \"user\" role"
_SYSTEM_LATE = {
    "anthropic": "messages: Unexpected role \"system\". The Messages API accepts a top-level "
    "`system` parameter, not \"system\" as an input message role.",
    "gemini": "Please use a valid role: user, model. (a system instruction is only allowed "
    "once, before the contents)",
}


@dataclass(frozen=True)
class Problem:
    """One reason a provider would reject the history, at a message index."""

    index: int
    code: str
    reason: str
    api_error: str = ""

    def __str__(self) -> str:
        return f"message {self.index}: {self.reason}"


def _call_ids(message: Mapping[str, Any]) -> list[Any]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [c.get("id") if isinstance(c, dict) else None for c in calls]


class HistoryChecker:
    """An incremental checker: feed messages in order, read problems at any point.

    ``replay`` feeds appended messages one by one instead of re-checking the whole
    context for every request; ``check_history`` is the one-shot wrapper.
    """

    def __init__(self, profile: str = "openai") -> None:
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; use one of {', '.join(PROFILES)}")
        self.profile = profile
        self.count = 0
        self.found: list[Problem] = []
        self.pending: list[Any] = []  # call ids of the latest assistant not yet answered
        self.pending_at = -1  # index of that assistant message
        self.seen_conversation = False  # any non-system message yet
        self.last_turn: str | None = None  # 'user' or 'assistant' (anthropic turns)
        self.last_role: str | None = None

    def feed(self, message: Mapping[str, Any]) -> None:
        i = self.count
        self.count = i + 1
        role = role_of(message)
        if role == "assistant" and not self.pending and self.profile == "openai":
            # the common case, kept short: replay feeds every appended message
            self.seen_conversation = True
            calls = message.get("tool_calls")
            if calls:
                self.pending = _call_ids(message)
                self.pending_at = i
            return
        if not isinstance(role, str):
            self._add(i, "missing_role", "message has no role")
            return
        if role not in KNOWN_ROLES:
            self._add(i, "unknown_role", f"unknown role {role!r}")
            return
        if role == "tool":
            self._tool(i, message)
            return
        self._close_pending(i)
        if role in ("system", "developer"):
            if i > 0 and self.profile in _SYSTEM_LATE:
                self._add(i, "system_not_first",
                          f"a {role} message after the start ({self.profile} takes one "
                          "system instruction, before the conversation)",
                          _SYSTEM_LATE[self.profile])
            return
        turn = "assistant" if role == "assistant" else "user"
        if self.profile == "anthropic":
            if not self.seen_conversation and turn != "user":
                self._add(i, "first_not_user",
                          f"the first non-system message is a {role} message, not a user message",
                          _ANTHROPIC_FIRST)
            elif self.last_turn == turn and not (turn == "user" and self.last_role == "tool"):
                self._add(i, "not_alternating",
                          f"two {turn} turns in a row ({role} after {self.last_role})",
                          _ANTHROPIC_ALTERNATE)
        self.seen_conversation = True
        self.last_turn = turn
        self.last_role = role
        if role == "assistant":
            ids = _call_ids(message)
            if ids:
                self.pending = ids
                self.pending_at = i

    @staticmethod
    def reads(message: Any) -> tuple:
        """All that ``feed`` reads of a message: two messages alike here are judged alike."""
        if not isinstance(message, Mapping):
            return (None,)
        return (role_of(message), bool(message.get("tool_calls")), tuple(_call_ids(message)),
                message.get("tool_call_id"))

    def state(self) -> tuple:
        """What decides how the next messages are judged (not where earlier problems were).

        Two checkers in the same state find the same problems in whatever
        follows, which lets the replay reuse one full check of a transcript.
        """
        core = (tuple(self.pending), self.seen_conversation, self.count > 0)
        return core + ((self.last_turn, self.last_role) if self.profile == "anthropic" else ())

    def _tool(self, i: int, message: Mapping[str, Any]) -> None:
        call_id = message.get("tool_call_id")
        if call_id in self.pending:
            self.pending.remove(call_id)  # first match: reused ids pair by position
        elif not self.seen_conversation:
            self._add(i, "starts_with_tool",
                      "the window starts with a tool message whose call is not in the history",
                      _OPENAI_ORPHAN)
        elif call_id is None:
            self._add(i, "orphan_tool", "tool message has no tool_call_id", _OPENAI_ORPHAN)
        else:
            self._add(i, "orphan_tool",
                      f"tool result {call_id!r} answers no pending call of an earlier "
                      "assistant message", _OPENAI_ORPHAN)
        # tool results travel in a user turn (Anthropic's tool_result blocks)
        self.last_turn = "user"
        self.last_role = "tool"
        self.seen_conversation = True

    def _close_pending(self, i: int) -> None:
        if self.pending:
            self.found.append(self._unanswered(self.pending_at, self.pending, f"message {i}"))
        self.pending = []

    @staticmethod
    def _unanswered(at: int, ids: list[Any], before: str) -> Problem:
        shown = ", ".join(repr(x) for x in ids)
        return Problem(at, "unanswered_call",
                       f"tool call(s) {shown} never answered before {before}",
                       _OPENAI_UNANSWERED.format(ids=shown))

    def _add(self, i: int, code: str, reason: str, api_error: str = "") -> None:
        self.found.append(Problem(i, code, reason, api_error))

    def problems(self) -> list[Problem]:
        """Problems so far, counting calls still unanswered at the end."""
        if self.pending:
            return self.found + [self._unanswered(self.pending_at, self.pending, "the end")]
        return list(self.found)

    def problem_count(self) -> int:
        return len(self.found) + (1 if self.pending else 0)


def check_history(messages: Iterable[Mapping[str, Any]], profile: str = "openai") -> list[Problem]:
    """Problems a provider would reject, with message index and a one-line reason; [] when legal."""
    checker = HistoryChecker(profile)
    for m in messages:
        checker.feed(m)
    return checker.problems()


def is_legal(messages: Sequence[Mapping[str, Any]], profile: str = "openai") -> bool:
    return not check_history(messages, profile)
