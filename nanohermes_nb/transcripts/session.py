"""One recorded session as a typed value: the messages, and what its log says beside them.

A ``Transcript`` (what ``load_transcript`` returns) is a list of messages that carries
the file, the format and, for a coding agent's own log, its requests with their usage and
its own compactions. The engine used to probe a list for those attributes
(``getattr(transcript, "requests", ())``); it now takes a ``Session``, a frozen value with
every field typed, and a public function that takes a transcript (``replay``, ``whatif``,
``calibrate``, ``own_compactions`` ...) turns what it is given into one, once, with
``Session.of``: a ``Session`` as it is, a ``Transcript`` with all it carries, and a plain
list of message dicts with nothing beside its messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import AgentRequest, Fork, ToolCompaction, Transcript

__all__ = ["Session", "SessionLike"]

Message = Mapping[str, Any]


@dataclass(frozen=True)
class Session:
    """A recorded session: its messages (OpenAI form, in order) and what its log reports beside them.

    - ``messages``: the full recorded trajectory, the agent's own compaction summaries not mixed in;
    - ``path``, ``format``: the file it was read from and its format (``""`` and ``"openai"`` for a list);
    - ``agent``: the coding agent whose own log it is (``transcripts.base.AGENTS``), ``""`` otherwise;
    - ``requests``: one ``AgentRequest`` per assistant message, with the usage the provider reported;
    - ``compactions``: the agent's own compactions (``ToolCompaction``), each with where it happened;
    - ``skipped``: one-line notes of what the reader left out; ``sidechains``: sub-agent threads;
    - ``fork``: where a forked session's own part begins (``Fork``), None otherwise.

    For a format other than an agent log, everything but ``messages``, ``path`` and ``format`` is empty.
    """

    messages: tuple[Message, ...]
    path: str = ""
    format: str = "openai"
    agent: str = ""
    requests: tuple[AgentRequest, ...] = ()
    compactions: tuple[ToolCompaction, ...] = ()
    skipped: tuple[str, ...] = ()
    sidechains: tuple[Session, ...] = ()
    fork: Fork | None = None

    @classmethod
    def of(cls, value: SessionLike) -> Session:
        """``value`` as a ``Session``: itself, a ``Transcript`` with all it carries, or a list of messages."""
        if isinstance(value, Session):
            return value
        if isinstance(value, Transcript):
            return cls(tuple(value), value.path, value.format, value.agent, value.requests, value.compactions,
                       value.skipped, tuple(cls.of(s) for s in value.sidechains), value.fork)
        if isinstance(value, (str, bytes, Path)) or not isinstance(value, Sequence):
            raise TypeError(f"a session is a Session, a Transcript or a list of message dicts, got "
                            f"{type(value).__name__}")
        return cls(tuple(value))

    @property
    def name(self) -> str:
        """The file's name (``""`` for a session that was not read from a file)."""
        return Path(self.path).name if self.path else ""

    @property
    def billed(self) -> bool:
        """Whether it is an agent log that reports what at least one request was billed."""
        return bool(self.agent) and any(q.usage is not None for q in self.requests)

    @property
    def n_messages(self) -> int:
        return len(self.messages)

    def __repr__(self) -> str:
        what = f"{self.agent} log" if self.agent else self.format
        return (f"Session({self.name or 'in memory'!r}, {what}, {len(self.messages):,} messages, "
                f"{len(self.requests):,} requests reported, {len(self.compactions):,} compactions)")


# what a function of the engine accepts where it needs a session: it calls ``Session.of`` once
SessionLike = Session | Sequence[Message]
