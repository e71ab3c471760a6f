"""Is this history legal? The invariant every compaction must keep.

A provider rejects a request whose tool results do not pair with tool calls. The
rules differ a little by provider, so ``check_history`` takes a profile:

- ``openai``: every tool message answers a call of the latest assistant message
  that is not yet answered; every call is answered before the next non-tool
  message (a trailing unanswered call counts); a window that starts with a tool
  message is reported as such. Call ids reused across turns, or within one
  message, are matched by position, as the API does, not flagged.
- ``anthropic``: OpenAI's pairing, plus: only messages[0] may be a system message,
  the first non-system message must be a user message, user and assistant
  turns alternate (a run of tool results, and a user message right after them,
  form one user turn), and the calls of one message have distinct ids (the
  Messages API answers 400 "``tool_use`` ids must be unique").
- ``gemini``: OpenAI's pairing, plus a system message only at the start.
"""

from __future__ import annotations

import itertools
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
_ANTHROPIC_DUPLICATE = "messages: `tool_use` ids must be unique"
_SHOWN_IDS = 10  # an unanswered-calls problem names this many ids, then says how many in all
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


def _a(word: str) -> str:
    """``an assistant``, ``a user``: the article a role name takes."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _key(value: Any) -> Any:
    """A call id as a dict key: itself, or (for a list or dict id in a malformed log) its repr, tagged."""
    try:
        hash(value)
    except TypeError:
        return ("\0unhashable", repr(value))
    return value


def _mix(position: int) -> int:
    """A 64-bit scramble of a position (splitmix64): order-free sums of these fingerprint a set."""
    z = (position + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


_EXACT_SKIPS = 64  # up to this many calls answered out of order, the state names them exactly


class _Pending:
    """The calls of one assistant message not answered yet, each answer and each state O(1).

    A plain list copied for every message made a message of n calls cost n^2 (20,000
    calls: 4.9 GB). Here the ids are kept once; answered calls are a prefix ``done``
    (answers in call order, the usual case) plus a set ``skipped`` of later positions
    answered early. ``state`` is exact while at most ``_EXACT_SKIPS`` calls are answered
    out of order, and a 64-bit fingerprint of that set beyond.
    """

    __slots__ = ("ids", "keys", "sig", "where", "answered", "done", "skipped", "fingerprint")

    def __init__(self, ids: list[Any]) -> None:
        self.ids = ids
        self.keys = tuple(_key(x) for x in ids)
        self.sig = hash(self.keys)
        self.where: dict[Any, list[int]] = {}  # id -> its positions not answered yet, latest first
        for position in range(len(ids) - 1, -1, -1):
            self.where.setdefault(self.keys[position], []).append(position)
        self.answered = bytearray(len(ids))
        self.done = 0
        self.skipped: set[int] = set()
        self.fingerprint = 0

    def __len__(self) -> int:
        return len(self.ids) - self.done - len(self.skipped)

    def __contains__(self, call_id: Any) -> bool:
        return bool(self.where.get(_key(call_id)))

    def __iter__(self):
        return (self.ids[p] for p in range(self.done, len(self.ids)) if not self.answered[p])

    def answer(self, call_id: Any) -> bool:
        """Mark the first unanswered call with this id answered; False when there is none."""
        positions = self.where.get(_key(call_id))
        if not positions:
            return False
        position = positions.pop()
        self.answered[position] = 1
        if position == self.done:
            self.done += 1
            while self.done < len(self.ids) and self.answered[self.done]:  # skipped ones now in the prefix
                self.skipped.discard(self.done)
                self.fingerprint = (self.fingerprint - _mix(self.done)) & 0xFFFFFFFFFFFFFFFF
                self.done += 1
        else:
            self.skipped.add(position)
            self.fingerprint = (self.fingerprint + _mix(position)) & 0xFFFFFFFFFFFFFFFF
        return True

    def state(self) -> tuple:
        """Equal for two checkers whose unanswered calls are the same list (cheap to compare when not)."""
        skips: Any = tuple(sorted(self.skipped)) if len(self.skipped) <= _EXACT_SKIPS else self.fingerprint
        return (len(self), self.done, self.sig, skips, self.keys)


_NOTHING = _Pending([])  # no calls pending (never changed: it has no call to answer)


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
        self.pending: _Pending = _NOTHING  # calls of the latest assistant not yet answered
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
            if message.get("tool_calls"):
                self._calls(i, message)
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
                          f"{_a(role)} message after the start ({self.profile} takes one "
                          "system instruction, before the conversation)",
                          _SYSTEM_LATE[self.profile])
            return
        turn = "assistant" if role == "assistant" else "user"
        if self.profile == "anthropic":
            if not self.seen_conversation and turn != "user":
                self._add(i, "first_not_user",
                          f"the first non-system message is {_a(role)} message, not a user message",
                          _ANTHROPIC_FIRST)
            elif self.last_turn == turn and not (turn == "user" and self.last_role == "tool"):
                self._add(i, "not_alternating",
                          f"two {turn} turns in a row ({role} after {self.last_role})",
                          _ANTHROPIC_ALTERNATE)
        self.seen_conversation = True
        self.last_turn = turn
        self.last_role = role
        if role == "assistant" and message.get("tool_calls"):
            self._calls(i, message)

    def _calls(self, i: int, message: Mapping[str, Any]) -> None:
        """The calls of assistant message ``i`` become the pending ones (Anthropic: ids must differ)."""
        pending = _Pending(_call_ids(message))
        if not pending:
            return
        self.pending = pending
        self.pending_at = i
        if self.profile == "anthropic":
            repeated = [pending.ids[at] for at in sorted(p[-1] for p in pending.where.values() if len(p) > 1)]
            if repeated:
                shown = ", ".join(repr(x) for x in repeated[:_SHOWN_IDS])
                more = f" and {len(repeated) - _SHOWN_IDS:,} more" if len(repeated) > _SHOWN_IDS else ""
                self._add(i, "duplicate_call_id", f"two tool calls of one message share an id ({shown}{more})",
                          _ANTHROPIC_DUPLICATE)

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
        core = (self.pending.state() if self.pending else (), self.seen_conversation, self.count > 0)
        return core + ((self.last_turn, self.last_role) if self.profile == "anthropic" else ())

    def _tool(self, i: int, message: Mapping[str, Any]) -> None:
        call_id = message.get("tool_call_id")
        if self.pending.answer(call_id):  # first match: reused ids pair by position
            pass
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
        self.pending = _NOTHING

    @staticmethod
    def _unanswered(at: int, pending: _Pending, before: str) -> Problem:
        ids = list(itertools.islice(pending, _SHOWN_IDS + 1))
        shown = ", ".join(repr(x) for x in ids[:_SHOWN_IDS])
        if len(ids) > _SHOWN_IDS:
            shown += f" and {len(pending) - _SHOWN_IDS:,} more"
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
