"""What a live run leaves behind: its steps, its policy events, its result, and the ledger of it.

``live_ledger_of`` builds a live session's ledger by running the replay loop over
the recorded messages with a policy (``_Replayed``) that hands back the live
events at exactly the points the live loop checked, so every column comes from the
same books as ``replay``'s; a mismatch raises ``LiveReplayMismatch``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .._deprecated import renamed
from ..context.messages import calls_of
from ..engine.ledger import Ledger, Replay, replay
from ..engine.recorded import RecordedSession
from ..engine.settings import Settings
from ..policies import Event, Policy, PolicyEnv
from .models import Usage

if TYPE_CHECKING:  # a Step may point back at its agent; the loop imports this module
    from .loop import Agent

Message = dict
LIVE_CAVEAT = (
    "Live run: each request is what was really sent. Only what is said about other settings is "
    "counterfactual (the 'no compaction' columns, a replay under another budget): it assumes the "
    "recorded future would have been the same."
)
USAGE_COLUMNS = {"usage_prompt_tokens": "prompt_tokens", "usage_cached_tokens": "cached_tokens",
                 "usage_completion_tokens": "completion_tokens"}


class LiveReplayMismatch(RuntimeError):
    """The replay loop checked the trigger where the live loop did not (or with another context)."""



@dataclass(frozen=True)
class LiveEvent:
    """One time the live loop asked the policy to act: after request ``request``'s tool batch."""

    request: int  # 1-based, as in the ledger
    size: int  # what the check measured, over the budget
    before: tuple = field(repr=False)  # the context handed to the policy
    after: tuple = field(repr=False)  # the context it returned (``before`` when it declined)
    event: Event | None = None  # None: the policy declined


@dataclass(frozen=True)
class ModelCall:
    """One model request, an agent request or a compaction's summary request."""

    request: int  # the agent request it was (a summary: the request after whose tool batch it ran)
    kind: str  # "agent" or "summary"
    seconds: float
    usage: Usage | None = None
    error: str | None = None


@dataclass(frozen=True)
class Step:
    """What one request did, as ``on_request`` callbacks receive it."""

    request: int
    messages: int  # how many messages were sent
    size: int  # the context sent, in the trigger's unit
    reply: Message = field(repr=False)
    results: tuple = field(repr=False)
    size_before: int  # the context after the reply and its tool results: what the trigger measured
    size_after: int  # after the policy (equal to size_before when it did not act)
    live_event: LiveEvent | None
    usage: Usage | None
    seconds: float
    unit: str
    error: str | None = None  # the reply was unusable (e.g. neither content nor tool calls)
    agent: Agent | None = field(default=None, repr=False, compare=False)

    @property
    def event(self) -> Event | None:
        return self.live_event.event if self.live_event is not None else None

    def ledger(self) -> Ledger:
        """The ledger of the session so far (rebuilt from the recorded session)."""
        if self.agent is None:
            raise ValueError("this step is not attached to an agent")
        return self.agent.ledger()

    def line(self) -> str:
        """One line for a terminal: what was sent, what came back, what the trigger did."""
        unit = self.unit
        parts = [f"request {self.request}", f"sent {self.messages:,} messages, {self.size:,} {unit}"]
        calls = calls_of(self.reply)
        if calls:
            names = [str((c.get("function") or {}).get("name", "?")) for c in calls]
            counts: dict[str, int] = {}
            for n in names:
                counts[n] = counts.get(n, 0) + 1
            parts.append(", ".join(n if k == 1 else f"{n} \u00d7{k}" for n, k in counts.items()))
            parts.append(f"after the tools {self.size_before:,}")
        elif self.error:
            parts.append(self.error)
        else:
            text = self.reply.get("content")
            parts.append(f"final answer ({len(text) if isinstance(text, str) else 0:,} characters)")
        event = self.event
        if event is not None:
            parts.append(f"over {self._budget():,}: {event.kind}, dropped {event.dropped_count}, "
                         f"{self.size_before:,} \u2192 {self.size_after:,}")
        elif self.live_event is not None:
            parts.append(f"over the budget; the policy declined ({self.size_before:,})")
        if self.usage is not None:
            u = self.usage
            bits = []
            if u.prompt_tokens is not None:
                bits.append(f"{u.prompt_tokens:,} prompt" + (f" ({u.cached_tokens:,} cached)"
                                                            if u.cached_tokens is not None else ""))
            if u.completion_tokens is not None:
                bits.append(f"{u.completion_tokens:,} completion")
            parts.append("usage: " + ", ".join(bits) + " tokens")
        return " \u00b7 ".join(parts)

    def _budget(self) -> int:
        return self.agent.budget if self.agent is not None else 0


# ---------------------------------------------------------------- the ledger of a live session


class _Replayed(Policy):
    """The live loop's policy calls handed back, in order, where the replay loop checks the trigger.

    Each call is checked against the recorded one: the same size and the very
    same message objects, or ``LiveReplayMismatch``.
    """

    def __init__(self, live: Policy, events: Sequence[LiveEvent]) -> None:
        self.live = live
        self.events = list(events)
        self.used = 0
        vars(self)["name"] = live.name  # this instance answers with the live policy's name (a ClassVar elsewhere)

    @property
    def label(self) -> str:
        return self.live.label

    def option(self, name: str, default: Any = None) -> Any:
        """The live policy's options (keep_recent, ...), which this stand-in replays."""
        return self.live.option(name, default)

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        if self.used >= len(self.events):
            raise LiveReplayMismatch(f"the replay checked the trigger over budget ({size:,}) where the live loop "
                                     f"did not (after its last recorded check, {len(self.events)} in all)")
        rec = self.events[self.used]
        self.used += 1
        same = size == rec.size and len(context) == len(rec.before) and all(
            a is b for a, b in zip(context, rec.before, strict=False))
        if not same:
            raise LiveReplayMismatch(f"the replay's check number {self.used} ({len(context)} messages, size "
                                     f"{size:,}) is not the live loop's check after request {rec.request} "
                                     f"({len(rec.before)} messages, size {rec.size:,})")
        return list(rec.after), rec.event

    def finish(self) -> None:
        if self.used != len(self.events):
            rec = self.events[self.used]
            raise LiveReplayMismatch(f"the live loop checked the trigger after request {rec.request} "
                                     f"(size {rec.size:,}) where the replay did not")


def live_ledger_of(messages: Sequence[Message], events: Sequence[LiveEvent], usage: Sequence[Usage | None],
                   settings: Settings, *, meters: dict | None = None, model: str = "") -> Ledger:
    """The ledger of a live session: the replay loop over it, with the live events at the live points.

    ``settings`` are the run's (its policy is the live one; the replay stands the recorded events in
    for it). ``usage`` has one entry per request (None where the endpoint reported none); it becomes
    the ``usage_*`` columns, empty where not reported. The ledger's ``settings`` are ``settings``,
    ``live`` is true and ``model`` names the run's model.
    """
    import pandas as pd

    session = RecordedSession.of(messages, meters)
    if session.notes and messages:
        raise ValueError("a live session starts with its system message")
    session.notes = []  # an empty session (before the first run) has nothing to note
    replayed = _Replayed(settings.policy, events)
    ledger = Replay(session, dataclasses.replace(settings, policy=replayed)).ledger()
    replayed.finish()
    if len(usage) != session.n_requests:
        raise LiveReplayMismatch(f"{len(usage)} usage records for {session.n_requests} requests")
    columns = {name: pd.array([getattr(u, attr) if u is not None else None for u in usage], dtype="Int64")
               for name, attr in USAGE_COLUMNS.items()}
    return dataclasses.replace(ledger.with_columns(**columns), settings=settings, caveat=LIVE_CAVEAT, live=True,
                               model=model)


# ---------------------------------------------------------------- the result


@dataclass(frozen=True)
class AgentResult:
    """What ``Agent.run`` returns: the session so far, why it stopped, and its ledger.

    ``messages``: the whole session as recorded, uncompacted (``load_transcript``
    reads it back; ``to_json`` adds the run's details). ``error``: None, or one
    line saying why the run stopped early. ``ledger``: the same ``Ledger`` type
    ``replay`` returns, plus the ``usage_*`` columns. ``settings``: the run's ``Settings`` (budget,
    unit, the live policy, and as ``summarizer`` the summaries the run received, replayed offline),
    the same value a ``Ledger`` carries, so ``nh.replay(result.messages, result.settings)``
    reproduces the run.
    """

    messages: list = field(repr=False)
    error: str | None
    events: tuple = field(repr=False)
    usage: tuple = field(repr=False)
    calls: tuple = field(repr=False)
    settings: Settings = field(repr=False)
    model: str = ""
    meters: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def n_requests(self) -> int:
        """How many model requests the run made."""
        return len(self.usage)

    @property
    def requests(self) -> int:
        """Deprecated since 0.3.0: ``n_requests`` (``ledger.requests`` is the request table)."""
        return renamed(self, "requests", "n_requests")

    @property
    def summarizer(self) -> Any:
        """The run's summarizer as ``settings`` hold it: the summaries the run received, replayed offline."""
        return self.settings.summarizer

    @cached_property
    def ledger(self) -> Ledger:
        return live_ledger_of(self.messages, self.events, self.usage, self.settings, meters=self.meters,
                              model=self.model)

    @property
    def n_compactions(self) -> int:
        """How many times the policy acted (``ledger.compactions`` lists the events)."""
        return sum(1 for e in self.events if e.event is not None)

    @property
    def compactions(self) -> int:
        """Deprecated since 0.3.0: ``n_compactions`` (``ledger.compactions`` is the list of events)."""
        return renamed(self, "compactions", "n_compactions")

    def replay(self, **changes: Any) -> Ledger:
        """``nh.replay`` of this session with the run's settings (``changes`` override them)."""
        return replay(self.messages, self.settings, **changes)

    def to_json(self) -> dict:
        """The session for a file: ``messages`` (what ``load_transcript`` reads) and the run's details."""
        def usage(u: Usage | None) -> dict | None:
            return None if u is None else dataclasses.asdict(u)

        return {
            "messages": self.messages,
            "nanohermes_run": {
                "error": self.error, "model": self.model, "budget": self.settings.budget,
                "unit": self.settings.unit, "policy": self.settings.policy.label,
                "requests": self.n_requests, "compactions": self.n_compactions,
                "usage": [usage(u) for u in self.usage],
                "calls": [{"request": c.request, "kind": c.kind, "seconds": round(c.seconds, 3),
                           "usage": usage(c.usage), "error": c.error} for c in self.calls],
            },
        }

    def summary(self) -> str:
        state = "done" if self.ok else f"stopped: {self.error}"
        return (f"{self.n_requests} requests, {len(self.messages)} messages, {self.n_compactions} compactions; "
                f"{state}")

    def __repr__(self) -> str:
        return f"AgentResult({self.summary()})"


