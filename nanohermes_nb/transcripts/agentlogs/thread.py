"""Building a legal history from an agent's log, message by message.

Real logs break the chat-completions pairing now and then: a tool call whose result
was never written (the user interrupted, the session ended mid-call), a result whose
call is not on the thread. A provider would refuse such a history, and a replay would
report it on every request, so the reader repairs it at the one place it can, and says
so: an unanswered call gets a tool message ``[no result recorded]`` right where the
next non-tool message would start (counted in the notes), and a result that answers no
pending call is left out (noted with its line).
"""

from __future__ import annotations

from typing import Any

from ..base import AgentRequest, Message, ToolCompaction
from .records import Notes

__all__ = ["Thread", "NO_RESULT"]

NO_RESULT = "[no result recorded]"


class Thread:
    """Messages, requests and compactions of one thread, kept legal as they are added."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.messages: list[Message] = []
        self.requests: list[AgentRequest] = []
        self.compactions: list[ToolCompaction] = []
        self.pending: dict[str, int] = {}  # call id -> line of the call
        self.answered: set[str] = set()
        self.deferred: list[Message] = []  # messages logged between calls and their results

    def add_after_results(self, message: Message) -> None:
        """A message the log wrote while calls were still running (Codex writes an approval note between a
        call and its output): it goes after their results, as the next request sent it."""
        if self.pending:
            self.deferred.append(message)
        else:
            self.add(message)

    def add(self, message: Message) -> int:
        """Append a non-tool message (closing unanswered calls first); returns its index."""
        self.close_pending()
        self.messages.append(message)
        return len(self.messages) - 1

    def add_calls(self, message: Message, line: int) -> None:
        """Register the tool calls of an assistant message already added (or just extended)."""
        for call in message.get("tool_calls") or ():
            self.pending[call["id"]] = line

    def add_result(self, call_id: Any, content: Any, line: int, extra: Message | None = None) -> bool:
        """Append the tool message answering ``call_id``; an orphan is left out and noted."""
        if not isinstance(call_id, str) or call_id not in self.pending:
            self.notes.add("tool result answering no pending call of the thread, left out", line)
            return False
        del self.pending[call_id]
        message: Message = {"role": "tool", "tool_call_id": call_id, "content": content}
        if extra:
            message.update(extra)
        self.messages.append(message)
        if not self.pending:
            self._flush_deferred()
        return True

    def _flush_deferred(self) -> None:
        deferred, self.deferred = self.deferred, []
        self.messages.extend(deferred)

    def close_pending(self) -> None:
        """Answer every call still pending with ``NO_RESULT`` (noted once per call)."""
        if not self.pending:
            self._flush_deferred()
            return
        for call_id, line in self.pending.items():
            self.notes.add(f"tool call without a recorded result, answered with {NO_RESULT!r}", line)
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": NO_RESULT})
        self.pending = {}
        self._flush_deferred()
