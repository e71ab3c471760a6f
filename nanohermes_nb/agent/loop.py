"""The agent loop itself, live: NanoHermes's loop over any model, and its ledger.

``Agent.run(task)`` does what the article describes, in its order:

1. the system message built from the configuration at index 0 (the built-in
   prompt, the AGENTS.md chain, NANOHERMES.md, the skills; the memory block at
   its very end when a store is given), then the user's task;
2. a **request**: the context as it is, with the seven tools advertised as JSON
   schemas;
3. the assistant's reply appended; every tool call dispatched through
   ``Tools.dispatch`` (caps, clamp; a malformed argument string or an unknown
   tool comes back to the model as an ``error:`` result); the results appended;
4. the **trigger**, ``over_budget(size, budget)`` with the ledger's per-message
   meter, checked after the tool batch; over budget, the policy acts (by default
   NanoHermes's compaction, whose summary is one more request to the same model);
5. again from 2, until a reply calls no tool or ``max_requests`` is reached.

The run records the whole session, uncompacted (``.messages``), and each time
the policy was asked to act (``LiveEvent``). Its ``.ledger`` is the ledger
``replay`` builds, made by running the replay loop (``ledger.walk``) over the
recorded session with a policy that hands back the live events, checked at
exactly the points the live loop checked: every column comes from the same
books, and ``ledger.context(k)`` is exactly the list request ``k`` sent. A
mismatch between the two loops raises ``LiveReplayMismatch`` instead of giving
a ledger that is not the run's.

A model failure never loses the session: the run stops with ``.error`` (one
line) and everything recorded so far stays in ``.messages``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..context.budgets import DEFAULT_BUDGETS, Budgets, over_budget
from ..context.messages import calls_of
from ..context.sizing import Meter
from ..context.summarizers import Summarizer
from ..engine.ledger import Ledger, Replay, replay
from ..engine.recorded import RecordedSession
from ..engine.settings import Settings, check_settings
from ..policies import Event, NanoHermesPolicy, Policy, PolicyEnv, resolve_policy
from .memory import inject
from .models import Model, ModelError, ModelReply, ModelSummarizer, Usage
from .prompt import SystemConfig, system_content
from .tools.toolbox import Tools, tool_specs
from .transport import TransportError

__all__ = ["Agent", "AgentResult", "Step", "LiveEvent", "ModelCall", "LiveReplayMismatch", "live_ledger_of",
           "USAGE_COLUMNS", "LIVE_CAVEAT"]

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


class _Failed(Exception):
    """A request that failed: the run stops with this one-line reason."""


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
        self.name = live.name

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


def live_ledger_of(messages: Sequence[Message], events: Sequence[LiveEvent], usage: Sequence[Usage | None], *,
                   policy: Policy, budget: int, unit: str = "bytes", summarizer: Any = None,
                   meters: dict | None = None, extra: Mapping[str, Any] | None = None) -> Ledger:
    """The ledger of a live session: the replay loop over it, with the live events at the live points.

    ``usage`` has one entry per request (None where the endpoint reported none);
    it becomes the ``usage_*`` columns, empty where not reported.
    """
    import pandas as pd

    session = RecordedSession.of(messages, meters)
    if session.notes and messages:
        raise ValueError("a live session starts with its system message")
    session.notes = []  # an empty session (before the first run) has nothing to note
    replayed = _Replayed(policy, events)
    ledger = Replay(session, Settings(budget=budget, unit=unit, policy=replayed, summarizer=summarizer)).ledger()
    replayed.finish()
    if len(usage) != session.requests:
        raise LiveReplayMismatch(f"{len(usage)} usage records for {session.requests} requests")
    columns = {name: pd.array([getattr(u, attr) if u is not None else None for u in usage], dtype="Int64")
               for name, attr in USAGE_COLUMNS.items()}
    settings = {**ledger.settings, "policy_object": policy, "live": True, **(extra or {})}
    return dataclasses.replace(ledger.with_columns(**columns), settings=settings, caveat=LIVE_CAVEAT)


# ---------------------------------------------------------------- the result


@dataclass(frozen=True)
class AgentResult:
    """What ``Agent.run`` returns: the session so far, why it stopped, and its ledger.

    ``messages``: the whole session as recorded, uncompacted (``load_transcript``
    reads it back; ``to_json`` adds the run's details). ``error``: None, or one
    line saying why the run stopped early. ``ledger``: the same ``Ledger`` type
    ``replay`` returns, plus the ``usage_*`` columns. ``settings`` and
    ``summarizer`` reproduce it: ``nh.replay(result.messages, **result.settings,
    summarizer=result.summarizer)``.
    """

    messages: list = field(repr=False)
    error: str | None
    events: tuple = field(repr=False)
    usage: tuple = field(repr=False)
    calls: tuple = field(repr=False)
    settings: dict = field(repr=False)
    summarizer: Any = field(repr=False)
    model: str = ""
    meters: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def requests(self) -> int:
        return len(self.usage)

    @cached_property
    def ledger(self) -> Ledger:
        return live_ledger_of(self.messages, self.events, self.usage, policy=self.settings["policy"],
                              budget=self.settings["budget"], unit=self.settings["unit"],
                              summarizer=self.summarizer, meters=self.meters, extra={"model": self.model})

    @property
    def compactions(self) -> int:
        return sum(1 for e in self.events if e.event is not None)

    def replay(self, **changes: Any) -> Ledger:
        """``nh.replay`` of this session with the run's settings (``changes`` override them)."""
        return replay(self.messages, **{**self.settings, "summarizer": self.summarizer, **changes})

    def to_json(self) -> dict:
        """The session for a file: ``messages`` (what ``load_transcript`` reads) and the run's details."""
        def usage(u: Usage | None) -> dict | None:
            return None if u is None else dataclasses.asdict(u)

        return {
            "messages": self.messages,
            "nanohermes_run": {
                "error": self.error, "model": self.model, "budget": self.settings["budget"],
                "unit": self.settings["unit"], "policy": self.settings["policy"].label,
                "requests": self.requests, "compactions": self.compactions,
                "usage": [usage(u) for u in self.usage],
                "calls": [{"request": c.request, "kind": c.kind, "seconds": round(c.seconds, 3),
                           "usage": usage(c.usage), "error": c.error} for c in self.calls],
            },
        }

    def summary(self) -> str:
        state = "done" if self.ok else f"stopped: {self.error}"
        return (f"{self.requests} requests, {len(self.messages)} messages, {self.compactions} compactions; "
                f"{state}")

    def __repr__(self) -> str:
        return f"AgentResult({self.summary()})"


# ---------------------------------------------------------------- the loop


class Agent:
    """NanoHermes's agent loop over a model, in a workspace, under a budget and a policy.

    ``model``: an ``OpenAICompatibleModel`` (a real endpoint) or a ``ScriptedModel``
    (offline). ``budget`` (default ``budgets.context_char_budget``, 120,000) is in
    ``unit`` (bytes of compact JSON, as in the article). ``policy``: a name from
    ``POLICIES``, a class or an instance (default NanoHermes, keeping
    ``budgets.keep_recent`` messages). ``summarizer`` (default: one request to the
    same model, ``ModelSummarizer``). ``config`` builds the system message
    (default ``SystemConfig(workspace)``); ``system`` replaces it with a given
    text (a recording that must not depend on the machine). ``memory``: a
    ``MemoryStore`` (or anything with ``search``), retrieved for the session's
    first task and appended at the end of the system message.

    The tools run **shell commands in the workspace with your rights** (see
    docs/safety.md). Use the agent as a context manager, or call ``close``, to end
    whatever background task the model started.

    ``run`` starts the session with a task, or continues it with the next user
    message; ``resume`` continues a session that stopped early (after an
    error or ``max_requests``) without a new message. ``listeners`` (and each
    run's ``on_request``) are called with a ``Step`` after every request.
    """

    def __init__(self, workspace: Any, model: Model, *, budget: int | None = None,
                 policy: str | type[Policy] | Policy | None = None, summarizer: Summarizer | None = None,
                 budgets: Budgets = DEFAULT_BUDGETS, config: SystemConfig | None = None, memory: Any = None,
                 system: str | None = None, unit: str = "bytes", settings: Settings | None = None) -> None:
        if not callable(getattr(model, "complete", None)):
            raise TypeError(f"model must have a complete(messages, tools=...) method, got {type(model).__name__}")
        if settings is not None:  # one Settings instead of budget / policy / summarizer / unit
            if budget is not None or policy is not None or summarizer is not None or unit != "bytes":
                raise TypeError("Agent: give settings or budget/policy/summarizer/unit, not both")
            budget, policy, summarizer, unit = settings.budget, settings.policy, settings.summarizer, settings.unit
        self.budgets = budgets
        self.budget = budgets.context_char_budget if budget is None else budget
        check_settings(unit, (), (), [self.budget])
        self.unit = unit
        self.policy = (NanoHermesPolicy(keep_recent=budgets.keep_recent) if policy is None
                       else resolve_policy(policy))
        self.tools = Tools(workspace, budgets)
        self.workspace = self.tools.workspace
        self.config = config if config is not None else SystemConfig(self.workspace, budgets=budgets)
        self.memory = memory
        self.system = system
        self.model = model
        self.summarizer = summarizer if summarizer is not None else ModelSummarizer(
            model, budgets.summary_max_words, on_reply=self._summary_reply)
        self.specs = [spec.as_openai() for spec in tool_specs(budgets)]
        self.meter = Meter(unit)
        self.meters = {unit: self.meter}
        self.env = PolicyEnv(self.budget, self.meter, self.summarizer, unit, None, {})
        self.listeners: list[Callable[[Step], Any]] = []
        self.reset()

    def reset(self) -> None:
        """Forget the session (the next ``run`` starts a new one); background tasks keep running."""
        self.messages: list[Message] = []  # the session, uncompacted
        self.context: list[Message] = []  # what the next request sends
        self.events: list[LiveEvent] = []
        self.usage: list[Usage | None] = []  # one per request
        self.calls: list[ModelCall] = []
        self._checking = 0  # the request whose tool batch the trigger is checking (summary calls belong to it)

    def __repr__(self) -> str:
        return (f"Agent({str(self.workspace)!r}, {self.model!r}, budget={self.budget:,} {self.unit}, "
                f"policy={self.policy.label})")

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End every background task the model started (and everything it started)."""
        self.tools.close()

    # ---- the run

    def run(self, task: str, *, max_requests: int = 50, on_request: Callable[[Step], Any] | None = None
            ) -> AgentResult:
        """Add ``task`` as the next user message and run the loop until a reply calls no tool."""
        if not isinstance(task, str) or not task.strip():
            raise ValueError("the task must be a non-empty string")
        _check_max(max_requests)
        self._start(task)
        return self._loop(max_requests, on_request)

    def resume(self, *, max_requests: int = 50, on_request: Callable[[Step], Any] | None = None) -> AgentResult:
        """Continue the session without a new user message (after an error or ``max_requests``)."""
        if not self.messages:
            raise ValueError("nothing to resume: start a session with run(task)")
        _check_max(max_requests)
        return self._loop(max_requests, on_request)

    def _start(self, task: str) -> None:
        user = {"role": "user", "content": task}
        if self.messages:
            self._append(user)
            return
        text = self.system if self.system is not None else system_content(self.config)
        first: list[Message] = [{"role": "system", "content": text}, user]
        if self.memory is not None:
            first = inject(first, task, self.memory, self.budgets)
        self._append(*first)

    def _append(self, *messages: Message) -> None:
        self.messages.extend(messages)
        self.context.extend(messages)

    def _loop(self, max_requests: int, on_request: Callable[[Step], Any] | None) -> AgentResult:
        error = None
        try:
            for _ in range(max_requests):
                step = self._step()
                for listener in [*self.listeners, *([on_request] if on_request else [])]:
                    listener(step)
                if step.error:
                    error = step.error
                    break
                if not calls_of(step.reply):
                    break
            else:
                error = (f"stopped after max_requests={max_requests} requests: the last reply still called tools")
        except _Failed as exc:
            error = str(exc)
        except KeyboardInterrupt:
            error = "interrupted (KeyboardInterrupt); the session so far is kept"
        return self.result(error)

    def _step(self) -> Step:
        """One request, its reply, its tool calls, the trigger."""
        request = len(self.usage) + 1
        sent = list(self.context)
        size = self.meter.total(sent)
        started = time.perf_counter()
        try:
            reply = self.model.complete(sent, tools=self.specs)
            message = _assistant_message(reply.message, request)
            compat = getattr(self.model, "compat", None)
            if compat is not None:  # recorded as it will be sent (e.g. content "" for llama.cpp)
                message = compat.record(message)
        except Exception as exc:  # TransportError, ModelError, and whatever a client lets escape: never lost
            text = str(exc) if isinstance(exc, TransportError) else f"{type(exc).__name__}: {exc}"
            self.calls.append(ModelCall(request, "agent", time.perf_counter() - started, None, text))
            raise _Failed(f"request {request} failed: {text}") from None
        seconds = time.perf_counter() - started
        self.calls.append(ModelCall(request, "agent", seconds, reply.usage))
        self.usage.append(reply.usage)
        self._append(message)
        results = self._dispatch(message)
        size_before = self.meter.total(self.context)
        live = self._check(request, size_before) if results else None
        error = None if results or _has_content(message) else (
            f"request {request}: the reply has neither content nor tool calls"
            + (f" (finish_reason: {reply.finish_reason})" if reply.finish_reason else ""))
        return Step(request, len(sent), size, message, tuple(results), size_before, self.meter.total(self.context),
                    live, reply.usage, seconds, self.unit, error, self)

    def _dispatch(self, message: Message) -> list[Message]:
        """Every tool call through the one door, results appended in call order."""
        results: list[Message] = []
        calls = calls_of(message)
        try:
            for call in calls:
                fn = call["function"]
                result = {"role": "tool", "tool_call_id": call["id"],
                          "content": self.tools.dispatch(fn["name"], fn["arguments"])}
                self._append(result)
                results.append(result)
        except KeyboardInterrupt:  # answer the calls left, so the history stays legal, then stop
            for call in calls[len(results):]:
                result = {"role": "tool", "tool_call_id": call["id"],
                          "content": "error: interrupted before this tool ran"}
                self._append(result)
                results.append(result)
            size = self.meter.total(self.context)
            if over_budget(size, self.budget):
                before = tuple(self.context)
                self.events.append(LiveEvent(len(self.usage), size, before, before, None))
            raise
        return results

    def _check(self, request: int, size: int) -> LiveEvent | None:
        """The one trigger after the tool batch; over budget, the policy acts on the context."""
        if not over_budget(size, self.budget):
            return None
        before = tuple(self.context)
        self._checking = request
        try:
            new, event = self.policy.compact(list(before), self.env, size)
        except BaseException:
            self.events.append(LiveEvent(request, size, before, before, None))
            raise
        after = tuple(new) if event is not None else before
        live = LiveEvent(request, size, before, after, event)
        self.events.append(live)
        self.context = list(after)
        return live

    def _summary_reply(self, reply: ModelReply | None, seconds: float, error: str | None) -> None:
        request = getattr(self, "_checking", len(self.usage))
        self.calls.append(ModelCall(request, "summary", seconds, reply.usage if reply else None, error))

    # ---- what the run gives

    def result(self, error: str | None = None) -> AgentResult:
        """The session so far as a result (its ledger is built when first asked for)."""
        recorded = getattr(self.summarizer, "recorded", None)  # the answers received, replayed offline
        summarizer = recorded() if callable(recorded) else self.summarizer
        return AgentResult(list(self.messages), error, tuple(self.events), tuple(self.usage), tuple(self.calls),
                           {"budget": self.budget, "policy": self.policy, "unit": self.unit}, summarizer,
                           repr(self.model), self.meters)

    def ledger(self) -> Ledger:
        """The ledger of the session so far."""
        return live_ledger_of(self.messages, self.events, self.usage, policy=self.policy, budget=self.budget,
                              unit=self.unit, summarizer=self.summarizer, meters=self.meters,
                              extra={"model": repr(self.model)})


def _check_max(max_requests: int) -> None:
    if isinstance(max_requests, bool) or not isinstance(max_requests, int) or max_requests < 1:
        raise ValueError(f"max_requests must be a positive integer, got {max_requests!r}")


def _has_content(message: Message) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return bool(content)


def _assistant_message(raw: Any, request: int) -> Message:
    """The reply as the session records it: role, content, and the tool calls in OpenAI form.

    A call without an id gets ``call_<request>_<k>``; arguments sent as an object
    become JSON text (a malformed string is kept as sent: the tool answers it
    with an ``error:`` result). Other fields (reasoning, refusal, annotations)
    are not kept: the next request sends only what the protocol needs.
    """
    if not isinstance(raw, Mapping):
        raise ModelError(f"the reply's message is {type(raw).__name__}, not an object")
    content = raw.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise ModelError(f"the reply's content is {type(content).__name__}, not text")
    calls = raw.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise ModelError(f"the reply's tool_calls is {type(calls).__name__}, not a list")
    out: Message = {"role": "assistant", "content": content}
    normalized = [_tool_call(call, request, k) for k, call in enumerate(calls or [], start=1)]
    if normalized:
        out["tool_calls"] = normalized
    return out


def _tool_call(call: Any, request: int, k: int) -> dict:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        raise ModelError(f"tool call {k} of the reply has no function object")
    fn = call["function"]
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"tool call {k} of the reply has no function name")
    arguments = fn.get("arguments")
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = f"call_{request}_{k}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
