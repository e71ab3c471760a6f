"""The OpenAI-compatible endpoint named by the environment, and the summarizer that calls it.

``endpoint_from_env`` is the one reading of ``NANOHERMES_LLM_BASE_URL``, ``_API_KEY`` and
``_MODEL`` that the summarizer, the agent's model and the CLI share;
``OpenAICompatibleSummarizer`` asks that endpoint for the compaction summary (one request
per excerpt, fitted to the model's window). ``models`` re-exports every name here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..context.chunked import SummaryCost, WindowExceeded, fit_summary, window_exceeded
from ..context.summarizers import SummarizerError, summary_prompt
from .chat import ChatClient
from .transport import DEFAULT_MAX_REPLY_BYTES, APIKeyError, TransportError

ENV_BASE_URL = "NANOHERMES_LLM_BASE_URL"
ENV_API_KEY = "NANOHERMES_LLM_API_KEY"
ENV_MODEL = "NANOHERMES_LLM_MODEL"
DEFAULT_MODEL = "gpt-4o-mini"


def endpoint_from_env(env: Mapping[str, str] | None = None) -> tuple[str, str | None, str] | None:
    """``(base_url, api_key or None, model)`` from the NANOHERMES_LLM_* variables; None when no URL is set.

    The one reading of the environment that the summarizer, the agent's model and the CLI share.
    """
    env = os.environ if env is None else env
    base_url = env.get(ENV_BASE_URL, "").strip()
    if not base_url:
        return None
    return base_url, env.get(ENV_API_KEY) or None, env.get(ENV_MODEL, "").strip() or DEFAULT_MODEL


@dataclass(frozen=True)
class _Outcome:
    text: str | None
    failure: str | None


class OpenAICompatibleSummarizer:
    """Summaries from any OpenAI-compatible ``/chat/completions`` endpoint.

    The request goes through ``chat.ChatClient``: a total deadline of ``timeout``
    seconds, a reply read as a stream and refused past ``max_reply_bytes``, redirects
    only within the endpoint's origin, and the API key checked when the summarizer is
    built (``SummarizerError`` for a key with CR, LF, inner spaces or non-ASCII
    characters; surrounding whitespace such as a file's trailing newline is stripped)
    and scrubbed from every failure reason and from the summary itself, even when a
    server echoes it. ``max_tries=1`` (default) is SPEC 4's single request; a larger
    value retries 429/503 honouring ``Retry-After``.

    ``context_window`` (tokens; None by default, the article's one request whatever
    the excerpt's length) is the named option that fits the excerpt to a small
    model's window: each request carries at most ``context_window - reply_tokens``
    tokens (``max_tokens`` asks for at most ``reply_tokens`` back), a longer excerpt
    is summarized in chunks and then the chunks' summaries (``context.chunked.fit_summary``).
    ``last_cost`` says what the last summary cost (requests, tokens, seconds); a
    replay's ledger counts those requests and tokens. ``clock`` and ``sleep``
    (``time.monotonic``, ``time.sleep``) go to the ``ChatClient``: a test's fake clock.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        model: str = "gpt-4o-mini",
        *,
        temperature: float = 0.0,
        timeout: float = 30.0,
        max_words: int = 300,
        transport: Any = None,
        max_tries: int = 1,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        refuse_private_addresses: bool = False,
        context_window: int | None = None,
        reply_tokens: int = 512,
        bytes_per_token: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url:
            raise ValueError("OpenAICompatibleSummarizer needs a base_url")
        try:
            self._client = ChatClient(base_url, api_key, timeout=timeout, max_reply_bytes=max_reply_bytes,
                                      max_tries=max_tries, refuse_private_addresses=refuse_private_addresses,
                                      transport=transport, clock=clock, sleep=sleep)
        except APIKeyError as exc:
            raise SummarizerError(str(exc)) from None
        self.base_url = self._client.base_url
        self.model = model
        self.temperature = temperature
        self.timeout = timeout
        self.max_words = max_words
        self.calls = 0
        self.failures: list[str] = []
        if context_window is not None and (isinstance(context_window, bool) or not isinstance(context_window, int)
                                           or context_window <= reply_tokens + 64):
            raise ValueError(f"context_window must be an integer of tokens above reply_tokens + 64 "
                             f"({reply_tokens + 64}), got {context_window!r}")
        self.context_window = context_window
        self.reply_tokens = reply_tokens
        self.bytes_per_token = bytes_per_token
        self.last_cost: SummaryCost | None = None
        self.answers: dict[str, tuple[str | None, SummaryCost | None]] = {}

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **options: Any) -> OpenAICompatibleSummarizer | None:
        """Configured from NANOHERMES_LLM_BASE_URL / _API_KEY / _MODEL; None when no URL is set."""
        found = endpoint_from_env(env)
        return None if found is None else cls(*found, **options)

    def __repr__(self) -> str:
        key = "set" if self._client.has_key else "none"
        return (
            f"OpenAICompatibleSummarizer(base_url={self._scrub(self.base_url)!r}, model={self.model!r}, "
            f"temperature={self.temperature}, timeout={self.timeout}, api_key=<{key}>"
            + (f", context_window={self.context_window}" if self.context_window else "") + ")"
        )

    @property
    def endpoint(self) -> str:
        return self._client.endpoint

    def request_body(self, excerpt: str, max_tokens: int | None = None) -> dict[str, Any]:
        """The exact JSON sent: two messages, no tools, not streamed (``max_tokens`` only when fitting)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": summary_prompt(self.max_words)},
                {"role": "user", "content": excerpt},
            ],
            "temperature": self.temperature,
            "stream": False,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return body

    def _scrub(self, text: str) -> str:
        return self._client.scrub(text)

    def _post(self, excerpt: str) -> str:
        return self._ask(excerpt, None)[0]

    def _ask(self, excerpt: str, max_tokens: int | None) -> tuple[str, int | None, int | None]:
        """One request: the summary and the server's prompt and completion token counts (None: not reported)."""
        try:
            data = self._client.post(self.request_body(excerpt, max_tokens))
        except TransportError as exc:
            over = window_exceeded(str(exc)) if exc.status == 400 or exc.status == 413 else None
            if over is not None and max_tokens is not None:
                raise over from None
            raise SummarizerError(str(exc)) from None
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise SummarizerError(
                f"malformed response from {self.endpoint}: {type(exc).__name__}: {self._scrub(str(exc))[:120]}"
            ) from None
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise SummarizerError(f"malformed response from {self.endpoint}: content is {type(content).__name__}")
        text = content.strip()
        if not text:
            raise SummarizerError(f"empty reply from {self.endpoint}")
        usage = data.get("usage") if isinstance(data, Mapping) else None
        usage = usage if isinstance(usage, Mapping) else {}
        return text, _tokens(usage.get("prompt_tokens")), _tokens(usage.get("completion_tokens"))

    def __call__(self, excerpt: str) -> str:
        """The trimmed summary; raises ``SummarizerError`` (reason recorded) on any failure."""
        self.calls += 1
        self.last_cost = None
        try:
            if self.context_window is None:
                text = self._post(excerpt)
            else:
                text, self.last_cost = self._fit(excerpt)
        except SummarizerError as exc:
            self.failures.append(str(exc))
            self.answers[excerpt] = (None, self.last_cost)
            raise
        self.answers[excerpt] = (text, self.last_cost)
        return text

    def _fit(self, excerpt: str) -> tuple[str, SummaryCost]:
        try:
            return fit_summary(excerpt, self._ask, window=self.context_window or 0,
                               prompt=summary_prompt(self.max_words), reply_tokens=self.reply_tokens,
                               bytes_per_token=self.bytes_per_token)
        except WindowExceeded as exc:
            self.last_cost = getattr(exc, "cost", None)
            raise SummarizerError(str(exc)) from None
        except (SummarizerError, ValueError) as exc:
            self.last_cost = getattr(exc, "cost", None)
            raise SummarizerError(str(exc)) from None

    def recorded(self) -> Any:
        """The summaries made so far, replayed offline with their cost (a ``CachedSummarizer`` in memory)."""
        from ..context.cached import CachedSummarizer

        cache = CachedSummarizer(None, meta={"model": self.model, "prompt": summary_prompt(self.max_words)})
        for excerpt, (text, cost) in self.answers.items():
            if text is not None:
                cache.record(excerpt, text, cost)
        return cache


def _tokens(value: Any) -> int | None:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

