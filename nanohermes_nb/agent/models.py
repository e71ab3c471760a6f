"""The model side of the agent loop: one chat-completions request, live or scripted.

A model is anything with ``complete(messages, *, tools=None, temperature=None)``
returning a ``ModelReply``: the assistant message as the server sent it, and the
token ``usage`` when the server reported one. ``tools`` is the list of JSON
schemas the agent advertises; a request without tools is the compaction's
summary request (SPEC 4).

- ``OpenAICompatibleModel``: ``POST {base_url}/chat/completions`` with ``model``,
  ``messages``, ``tools`` and ``tool_choice`` (``Compat``: what differs between the
  servers people run, each a named behaviour), over ``chat.ChatClient`` (the summarizer's
  transport: one total deadline per request, a bounded reply, the API key checked
  when the model is built and scrubbed from every error and every reply, 429/503
  retried a bounded number of times honouring ``Retry-After``). Configured from
  the same ``NANOHERMES_LLM_*`` variables as ``OpenAICompatibleSummarizer``.
- ``ScriptedModel``: offline. Its replies are a list of assistant messages (or
  texts, or functions of the context), or one function from the context to the
  next message. A summary request is answered by ``summaries`` (by default the
  offline extractive summary of the excerpt), so a scripted run is deterministic.
- ``ModelSummarizer``: the compaction's summary as one extra request to the
  agent's own model (the article's behaviour): the summary prompt as system
  message, the excerpt as user message, no tools, temperature 0.

Every failure is a ``TransportError`` (network, status, not JSON) or a
``ModelError`` (a reply without ``choices[0].message``, a script that ran out),
each with a one-line reason that never contains the key.
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..context.summarizers import ExtractiveSummarizer, SummarizerError, summary_prompt
from .chat import ChatClient
from .endpoint import (
    DEFAULT_MODEL,
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    OpenAICompatibleSummarizer,
    endpoint_from_env,
)
from .transport import DEFAULT_MAX_REPLY_BYTES, HTTPStatusError, TransportError

__all__ = [
    "Compat",
    "CompatWarning",
    "OPENAI_COMPAT",
    "LLAMA_CPP_COMPAT",
    "OpenAICompatibleSummarizer",
    "ENV_BASE_URL",
    "ENV_API_KEY",
    "ENV_MODEL",
    "DEFAULT_MODEL",
    "endpoint_from_env",
    "Model",
    "ModelReply",
    "ModelError",
    "Usage",
    "OpenAICompatibleModel",
    "ScriptedModel",
    "ModelSummarizer",
    "RecordedSummarizer",
    "assistant",
    "DEFAULT_MODEL_TIMEOUT",
]

DEFAULT_MODEL_TIMEOUT = 120.0  # seconds per request: a local model answering a long context can be slow

Message = dict


class ModelError(TransportError):
    """A reply the agent cannot use (no ``choices[0].message``), or a scripted model out of replies."""


@dataclass(frozen=True)
class Usage:
    """Tokens the server reported for one request (None: not reported)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None

    @classmethod
    def of(cls, data: Any) -> Usage | None:
        """From a reply's ``usage`` object: ``prompt_tokens``, ``completion_tokens`` and
        ``prompt_tokens_details.cached_tokens`` (DeepSeek's ``prompt_cache_hit_tokens``
        when that is absent); None when the reply has no usable ``usage``."""
        if not isinstance(data, Mapping):
            return None
        details = data.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
        if cached is None:
            cached = data.get("prompt_cache_hit_tokens")
        usage = cls(_count(data.get("prompt_tokens")), _count(data.get("completion_tokens")), _count(cached))
        return None if usage == cls() else usage


def _count(value: Any) -> int | None:
    if isinstance(value, float) and value.is_integer():  # some servers send 12.0
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@dataclass(frozen=True)
class Compat:
    """How the requests are shaped for a given server; each field is one named, tested behaviour.

    ``tool_choice`` ("auto"): sent with every request that advertises tools. It is what
    OpenAI's API assumes when tools are given, made explicit, because llama-cpp-python's
    ``chatml-function-calling`` format ignores ``tools`` without it (the model never calls
    one). None: not sent.

    ``empty_tool_call_content`` (off): an assistant reply that only calls tools comes back
    with ``content: null``; on, the session records it, and so sends it, with content
    ``""``, because llama-cpp-python's request schema rejects the null its own reply
    carried (HTTP 500, "Input should be a valid string"). The change is made when the
    reply is recorded, so the ledger holds exactly what was sent and its replay equals the
    live ledger. ``OpenAICompatibleModel.detect_compat()`` finds out which one a server needs.

    ``retry_null_content`` (on): the documented client pointed at such a server with its
    defaults. When a request whose history holds a null-content tool call is refused
    (HTTP 400, 422 or 500), it is sent once more with ``""`` there; if that is accepted,
    the model switches to ``empty_tool_call_content`` for good and says so once
    (``CompatWarning``). A server that takes null (OpenAI's API) never sees ``""``: the
    faithful null is sent as long as it costs nothing. The replies recorded before the
    switch keep their null in the session (2 bytes more per such reply in the ledger than
    the ``""`` then sent); ``LLAMA_CPP_COMPAT`` or ``detect_compat()`` avoid even that.
    """

    tool_choice: str | None = "auto"
    empty_tool_call_content: bool = False
    retry_null_content: bool = True

    def record(self, message: Message) -> Message:
        """The assistant message as it will be sent from now on (a new dict when changed)."""
        if self.empty_tool_call_content and _null_tool_call(message):
            return {**message, "content": ""}
        return message


class CompatWarning(UserWarning):
    """A server needed a request shaped differently from the defaults, and the model adapted (said once)."""


def _null_tool_call(message: Any) -> bool:
    """An assistant message that calls tools with ``content: null`` (what llama.cpp's server refuses)."""
    return (isinstance(message, Mapping) and message.get("role", "assistant") == "assistant"
            and "content" in message and message["content"] is None and bool(message.get("tool_calls")))


_NULL_REFUSED = frozenset({400, 422, 500})  # how the servers that refuse a null content answer it


OPENAI_COMPAT = Compat()
LLAMA_CPP_COMPAT = Compat(tool_choice="auto", empty_tool_call_content=True)


@dataclass(frozen=True)
class ModelReply:
    """One answer: the assistant message (as sent, not yet checked), usage and finish reason."""

    message: Any
    usage: Usage | None = None
    finish_reason: str | None = None


class Model(Protocol):
    def complete(self, messages: Sequence[Message], *, tools: Sequence[Mapping[str, Any]] | None = None,
                 temperature: float | None = None) -> ModelReply: ...


# ---------------------------------------------------------------- a real endpoint


class OpenAICompatibleModel:
    """Chat completions from any OpenAI-compatible endpoint (llama.cpp, Ollama, vLLM, a hosted API).

    ``complete`` sends ``{"model", "messages", "tools", "stream": false}`` (plus
    ``temperature`` when one is given; the agent's requests leave it to the
    server, the summary request asks for 0) and returns the first choice's
    message. ``max_tries`` (3) bounds the retries of 429 and 503, each after
    ``Retry-After`` seconds (at most ``max_retry_wait``). ``compat`` (``Compat()``:
    ``tool_choice: "auto"`` with tools, null content kept) shapes requests for the
    server; ``LLAMA_CPP_COMPAT`` is llama-cpp-python's. ``clock`` and ``sleep``
    (``time.monotonic``, ``time.sleep``) go to the ``ChatClient``: a test's fake clock.
    """

    def __init__(self, base_url: str, api_key: str | None = None, model: str = "gpt-4o-mini", *,
                 timeout: float = DEFAULT_MODEL_TIMEOUT, max_tries: int = 3, max_retry_wait: float = 10.0,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES, refuse_private_addresses: bool = False,
                 transport: Any = None, compat: Compat = OPENAI_COMPAT,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("OpenAICompatibleModel needs a model name")
        if not isinstance(compat, Compat):
            raise TypeError(f"compat must be a Compat, got {type(compat).__name__}")
        self.compat = compat
        self._client = ChatClient(base_url, api_key, timeout=timeout, max_reply_bytes=max_reply_bytes,
                                  max_tries=max_tries, max_retry_wait=max_retry_wait,
                                  refuse_private_addresses=refuse_private_addresses, transport=transport,
                                  clock=clock, sleep=sleep)
        self.base_url = self._client.base_url
        self.model = model.strip()
        self.timeout = float(timeout)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **options: Any) -> OpenAICompatibleModel | None:
        """Configured from NANOHERMES_LLM_BASE_URL / _API_KEY / _MODEL; None when no URL is set."""
        found = endpoint_from_env(env)
        return None if found is None else cls(*found, **options)

    @property
    def endpoint(self) -> str:
        return self._client.endpoint

    def __repr__(self) -> str:
        compat = "" if self.compat == OPENAI_COMPAT else f", compat={self.compat}"
        return (f"OpenAICompatibleModel(base_url={self._client.scrub(self.base_url)!r}, model={self.model!r}, "
                f"timeout={self.timeout:g}, api_key=<{'set' if self._client.has_key else 'none'}>{compat})")

    def request_body(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None = None,
                     temperature: float | None = None) -> dict[str, Any]:
        """The exact JSON sent for one request."""
        sent = list(messages)
        if self.compat.empty_tool_call_content:  # replies recorded before the model switched (retry_null_content)
            sent = [self.compat.record(m) if _null_tool_call(m) else m for m in sent]
        body: dict[str, Any] = {"model": self.model, "messages": sent}
        if tools:
            body["tools"] = list(tools)
            if self.compat.tool_choice is not None:
                body["tool_choice"] = self.compat.tool_choice
        if temperature is not None:
            body["temperature"] = temperature
        body["stream"] = False
        return body

    def complete(self, messages: Sequence[Message], *, tools: Sequence[Mapping[str, Any]] | None = None,
                 temperature: float | None = None) -> ModelReply:
        try:
            data = self._client.post(self.request_body(messages, tools, temperature))
        except HTTPStatusError as refused:
            data = self._without_null(refused, messages, tools, temperature)
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"malformed response from {self.endpoint}: no choices[0].message "
                             f"({type(exc).__name__})") from None
        finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
        return ModelReply(message, Usage.of(data.get("usage") if isinstance(data, Mapping) else None),
                          finish if isinstance(finish, str) else None)

    def _without_null(self, refused: HTTPStatusError, messages: Sequence[Message],
                      tools: Sequence[Mapping[str, Any]] | None, temperature: float | None) -> Any:
        """The request sent again with ``""`` for a refused null content (``Compat.retry_null_content``); when
        that is accepted, the model keeps sending ``""`` and says so once. Else the first refusal is raised."""
        compat = self.compat
        if (not compat.retry_null_content or compat.empty_tool_call_content or refused.status not in _NULL_REFUSED
                or not any(_null_tool_call(m) for m in messages)):
            raise refused
        self.compat = dataclasses.replace(compat, empty_tool_call_content=True)
        try:
            data = self._client.post(self.request_body(messages, tools, temperature))
        except TransportError:
            self.compat = dataclasses.replace(compat, retry_null_content=False)  # not the null: never again
            raise refused from None
        warnings.warn(CompatWarning(
            f"{self.endpoint} refused an assistant tool call with content null (HTTP {refused.status}) and took "
            "content \"\": sending \"\" from now on (compat=LLAMA_CPP_COMPAT, or detect_compat(), starts that way)"),
            stacklevel=3)
        return data

    def detect_compat(self) -> Compat:
        """Ask the server whether it takes an assistant tool call with ``content: null``; set and return ``compat``.

        Two tiny requests at most (``max_tokens: 1``, no tools): a history whose
        assistant message calls a tool with null content, then, if that is refused
        with an error status, the same with ``""``. When only the second is accepted
        the model switches to ``empty_tool_call_content``; a server that refuses both
        (or cannot be reached) raises the ``TransportError`` of the second request.
        """
        call = {"id": "call_probe", "type": "function", "function": {"name": "glob", "arguments": '{"pattern":"*"}'}}

        def probe(content: str | None) -> None:
            history = [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "List."},
                       {"role": "assistant", "content": content, "tool_calls": [call]},
                       {"role": "tool", "tool_call_id": "call_probe", "content": "a.py"}]
            self._client.post({"model": self.model, "messages": history, "max_tokens": 1, "stream": False})

        try:
            probe(None)
        except HTTPStatusError:
            probe("")
            self.compat = dataclasses.replace(self.compat, empty_tool_call_content=True)
        return self.compat


# ---------------------------------------------------------------- offline


def assistant(content: str | None = "", *calls: tuple[str, Mapping[str, Any]] | Mapping[str, Any],
              ids: Sequence[str] | None = None) -> Message:
    """An assistant message for a script: its text and, optionally, tool calls.

    Each call is ``(name, arguments)`` (a dict, sent as JSON text) or a ready
    ``tool_calls`` entry. Calls without ``ids`` get theirs from the agent
    (``call_<request>_<k>``).
    """
    out: Message = {"role": "assistant", "content": content}
    tool_calls = []
    for k, call in enumerate(calls):
        if isinstance(call, Mapping):
            tool_calls.append(dict(call))
            continue
        name, args = call
        entry: dict[str, Any] = {}
        if ids is not None:
            entry["id"] = ids[k]
        entry["type"] = "function"
        entry["function"] = {"name": name, "arguments": args if isinstance(args, str)
                             else json.dumps(args, ensure_ascii=False)}
        tool_calls.append(entry)
    if tool_calls:
        out["tool_calls"] = tool_calls
    return out


Reply = Message | str | Callable[[list], Any]


class ScriptedModel:
    """A model that answers from a script: offline, deterministic, for the course and the tests.

    ``replies`` is either a list, whose items answer the agent's requests in
    order (an assistant message, a text for a final answer, or a function of
    the context returning one of those), or one function from the context to
    the next reply. A request after the last item is a ``ModelError`` (the run
    stops with it, nothing lost). ``summaries`` answers the summary requests
    (requests without tools): a list of texts, a function of the excerpt, or by
    default the offline ``ExtractiveSummarizer``'s summary of the excerpt.
    ``usage`` optionally reports token usage: a function of (context, reply).

    Every request is kept in ``received`` (the messages as sent, and the tools);
    ``contexts`` lists the agent requests' messages only.
    """

    def __init__(self, replies: Sequence[Reply] | Callable[[list], Any],
                 summaries: Sequence[str] | Callable[[str], str | None] | None = None, *,
                 usage: Callable[[list, Message], Usage | None] | None = None) -> None:
        if callable(replies):
            self._next: Callable[[list], Any] = replies
            self.length: int | None = None
        else:
            items = list(replies)
            self.length = len(items)
            self._items = items
            self._next = self._from_list
        self.summaries = summaries
        self.usage = usage
        self._extractive = ExtractiveSummarizer()
        self.received: list[dict] = []
        self.replies = 0
        self.summary_requests = 0

    def __repr__(self) -> str:
        script = "a function" if self.length is None else f"{self.length} replies"
        return f"ScriptedModel({script})"

    @property
    def contexts(self) -> list[list]:
        """The messages of each agent request received (summary requests left out), in order."""
        return [r["messages"] for r in self.received if r["tools"] is not None]

    def _from_list(self, context: list) -> Any:
        if self.replies >= len(self._items):
            raise ModelError(f"the scripted model has no reply left (its script has {len(self._items)})")
        item = self._items[self.replies]
        return item(context) if callable(item) else item

    def complete(self, messages: Sequence[Message], *, tools: Sequence[Mapping[str, Any]] | None = None,
                 temperature: float | None = None) -> ModelReply:
        context = list(messages)
        self.received.append({"messages": context, "tools": list(tools) if tools else None})
        if not tools:
            return ModelReply({"role": "assistant", "content": self._summary(context)})
        item = self._next(context)
        self.replies += 1
        message = {"role": "assistant", "content": item} if isinstance(item, str) else item
        report = self.usage(context, message) if self.usage is not None else None
        return ModelReply(message, report)

    def _summary(self, context: list) -> str | None:
        excerpt = context[-1].get("content", "") if context else ""
        k = self.summary_requests
        self.summary_requests += 1
        if self.summaries is None:
            return self._extractive(excerpt)
        if callable(self.summaries):
            return self.summaries(excerpt)
        if k >= len(self.summaries):
            raise ModelError(f"the scripted model has no summary left (its script has {len(self.summaries)})")
        return self.summaries[k]


# ---------------------------------------------------------------- the summary request


class ModelSummarizer:
    """The compaction's summary as one request to a model (SPEC 4): prompt, excerpt, no tools.

    Raises ``SummarizerError`` (the compaction then inserts the placeholder) on any
    failure or an empty answer. Every answer is kept in ``answers`` (excerpt ->
    summary, or None for a failure), so ``recorded()`` can replay them exactly.
    """

    def __init__(self, model: Model, max_words: int = 300, *, temperature: float = 0.0,
                 on_reply: Callable[[ModelReply | None, float, str | None], None] | None = None) -> None:
        self.model = model
        self.max_words = max_words
        self.temperature = temperature
        self.on_reply = on_reply
        self.answers: dict[str, str | None] = {}
        self.calls = 0

    def __repr__(self) -> str:
        return f"ModelSummarizer({self.model!r}, max_words={self.max_words})"

    def request(self, excerpt: str) -> list[Message]:
        return [{"role": "system", "content": summary_prompt(self.max_words)}, {"role": "user", "content": excerpt}]

    def __call__(self, excerpt: str) -> str:
        self.calls += 1
        started = time.perf_counter()
        reply: ModelReply | None = None
        try:
            reply = self.model.complete(self.request(excerpt), tools=None, temperature=self.temperature)
            text = _summary_text(reply.message)
        except (TransportError, SummarizerError) as exc:
            self.answers[excerpt] = None
            if self.on_reply is not None:
                self.on_reply(reply, time.perf_counter() - started, str(exc))
            raise SummarizerError(str(exc)) from None
        self.answers[excerpt] = text
        if self.on_reply is not None:
            self.on_reply(reply, time.perf_counter() - started, None)
        return text

    def recorded(self) -> RecordedSummarizer:
        """A summarizer that gives back exactly the answers received so far."""
        return RecordedSummarizer(dict(self.answers))


def _summary_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, Mapping) else None
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise SummarizerError(f"the summary reply's content is {type(content).__name__}, not text")
    if not content.strip():
        raise SummarizerError("the model returned an empty summary")
    return content.strip()


class RecordedSummarizer:
    """Replays recorded summaries by excerpt; an excerpt never seen (or a recorded failure) fails."""

    def __init__(self, answers: Mapping[str, str | None]) -> None:
        self.answers = dict(answers)

    def __repr__(self) -> str:
        return f"RecordedSummarizer({len(self.answers)} summaries)"

    def __call__(self, excerpt: str) -> str:
        if excerpt not in self.answers:
            raise SummarizerError("no recorded summary for this excerpt")
        text = self.answers[excerpt]
        if text is None:
            raise SummarizerError("the recorded summary request failed")
        return text
