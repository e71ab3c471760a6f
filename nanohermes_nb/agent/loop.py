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

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..context.budgets import DEFAULT_BUDGETS, Budgets, over_budget
from ..context.messages import calls_of
from ..context.sizing import DEFAULT_UNIT, Meter
from ..context.summarizers import Summarizer
from ..engine.ledger import Ledger
from ..engine.settings import Settings, check_settings
from ..policies import NanoHermesPolicy, Policy, PolicyEnv, resolve_policy
from .memory import inject
from .models import Model, ModelError, ModelReply, ModelSummarizer, Usage
from .prompt import SystemConfig, system_content
from .session import (
    LIVE_CAVEAT,
    USAGE_COLUMNS,
    AgentResult,
    LiveEvent,
    LiveReplayMismatch,
    Message,
    ModelCall,
    Step,
    live_ledger_of,
)
from .tools.toolbox import Tools, tool_specs
from .transport import TransportError

__all__ = ["Agent", "AgentResult", "Step", "LiveEvent", "ModelCall", "LiveReplayMismatch", "live_ledger_of",
           "USAGE_COLUMNS", "LIVE_CAVEAT"]

class _Failed(Exception):
    """A request that failed: the run stops with this one-line reason."""

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
                 system: str | None = None, unit: str | None = None, settings: Settings | None = None) -> None:
        if not callable(getattr(model, "complete", None)):
            raise TypeError(f"model must have a complete(messages, tools=...) method, got {type(model).__name__}")
        if settings is not None:  # one Settings instead of budget / policy / summarizer / unit
            if budget is not None or policy is not None or summarizer is not None or unit is not None:
                raise TypeError("Agent: give settings or budget/policy/summarizer/unit, not both")
            budget, policy, summarizer, unit = settings.budget, settings.policy, settings.summarizer, settings.unit
        self.budgets = budgets
        self.budget = budgets.context_char_budget if budget is None else budget
        self.unit = DEFAULT_UNIT if unit is None else unit
        check_settings(self.unit, (), (), [self.budget])
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
        self.meter = Meter(self.unit)
        self.meters = {self.unit: self.meter}
        self.env = PolicyEnv(self.budget, self.meter, self.summarizer, self.unit)
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
                           self.settings(summarizer), repr(self.model), self.meters)

    def settings(self, summarizer: Summarizer | None = None) -> Settings:
        """The run's ``Settings`` (budget, unit, policy), with ``summarizer`` (default: the live one)."""
        return Settings(budget=self.budget, unit=self.unit, policy=self.policy,
                        summarizer=self.summarizer if summarizer is None else summarizer)

    def ledger(self) -> Ledger:
        """The ledger of the session so far."""
        return live_ledger_of(self.messages, self.events, self.usage, self.settings(), meters=self.meters,
                              model=repr(self.model))


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
