"""The chat-completions client, and the API key it sends: checked once, scrubbed from everything back.

``ChatClient`` posts to ``{base_url}/chat/completions`` through ``transport.fetch`` (one
total deadline, a bounded reply, same-origin redirects only), tries 429 and 503 again
after ``Retry-After``, and scrubs the key (``Scrubber``, in every form a server may echo
it) from every error and every string of the reply. ``check_api_key`` refuses a key an
HTTP header cannot carry, without showing it. ``transport`` re-exports these names.
"""

from __future__ import annotations

import email.utils
import html
import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from .transport import (
    DEFAULT_MAX_REPLY_BYTES,
    APIKeyError,
    HTTPStatusError,
    MalformedReply,
    Reply,
    TransportError,
    TransportTimeout,
    fetch,
)

__all__ = ["ChatClient", "check_api_key", "Scrubber"]

_RETRY_STATUSES = frozenset({429, 503})
_DELTA_SECONDS = re.compile(r"[0-9]+", re.ASCII)  # Retry-After's delta-seconds (RFC 9110 10.2.3)

# ---------------------------------------------------------------- the key


def _describe(char: str) -> str:
    names = {"\r": "a carriage return (CR)", "\n": "a line feed (LF)", " ": "a space", "\t": "a tab"}
    if char in names:
        return names[char]
    return "a control character" if ord(char) < 0x20 or ord(char) == 0x7F else "a non-ASCII character"


def check_api_key(key: str | None) -> str:
    """The key ready for an ``Authorization`` header ('' for none), or ``APIKeyError``.

    Surrounding whitespace (a trailing newline from a file) is stripped; CR, LF, other
    control characters, inner spaces and non-ASCII characters are refused, naming the
    character and its position, never the key.
    """
    if key is None:
        return ""
    if not isinstance(key, str):
        raise APIKeyError(f"the API key must be a string, not {type(key).__name__}")
    cleaned = key.strip()
    for position, char in enumerate(cleaned):
        if not "\x21" <= char <= "\x7e":
            raise APIKeyError(f"the API key contains {_describe(char)} at position {position + 1} of "
                              f"{len(cleaned)}; an HTTP header cannot carry it (the key is not shown)")
    return cleaned


class Scrubber:
    """Replaces an API key, in every form a server or a library may echo it, with ``***``.

    Each character of the key may appear as itself, percent-encoded (either case),
    as a JSON ``\\uXXXX`` escape, JSON-escaped (``\\/``, ``\\"``) or as an HTML
    entity, in any mix: a partly URL-encoded or HTML-escaped echo is caught as well as
    the raw key inside ``Bearer …``.
    """

    MASK = "***"

    def __init__(self, key: str) -> None:
        pattern = "".join(self._forms(c) for c in key)
        self._rx = re.compile(pattern, re.IGNORECASE) if key else None

    @staticmethod
    def _forms(char: str) -> str:
        forms = {re.escape(char), f"%{ord(char):02x}", re.escape(f"\\u{ord(char):04x}"),
                 re.escape(html.escape(char)), f"&#{ord(char)};", f"&#x{ord(char):x};"}
        if char in '/"\\':
            forms.add(re.escape("\\" + char))
        return "(?:" + "|".join(sorted(forms, key=len, reverse=True)) + ")"

    def __call__(self, text: str) -> str:
        return self._rx.sub(self.MASK, text) if self._rx is not None and isinstance(text, str) else text

    def json(self, value: Any) -> Any:
        """A copy of parsed JSON with every string (keys too) scrubbed; iterative."""
        if self._rx is None:
            return value
        root: list[Any] = [value]
        stack: list[tuple[Any, Any]] = [(root, 0)]
        while stack:
            parent, slot = stack.pop()
            item = parent[slot]
            if isinstance(item, str):
                parent[slot] = self(item)
            elif isinstance(item, list):
                copy = list(item)
                parent[slot] = copy
                stack.extend((copy, k) for k in range(len(copy)))
            elif isinstance(item, dict):
                scrubbed = {self(k): v for k, v in item.items()}
                parent[slot] = scrubbed
                stack.extend((scrubbed, k) for k in scrubbed)
        return root[0]


# ---------------------------------------------------------------- the chat-completions client


def _retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent or bad."""
    if not value:
        return None
    value = value.strip()
    if _DELTA_SECONDS.fullmatch(value):  # ASCII digits only: "²".isdigit() is true, float("²") fails
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when is None:
            return None
        return max(when.timestamp() - (time.time() if now is None else now), 0.0)
    except (TypeError, ValueError, IndexError, OverflowError, OSError):  # a date no clock can hold
        return None


def _json_bytes(body: Mapping[str, Any]) -> bytes:
    """The request body as UTF-8 JSON; text with a lone surrogate (from a log) is sent
    \\u-escaped, since UTF-8 cannot carry it."""
    try:
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, ensure_ascii=True).encode("ascii")


class ChatClient:
    """``POST {base_url}/chat/completions`` for the summarizer and the agent loop.

    ``post(body)`` returns the parsed JSON of a 2xx reply with the key scrubbed from
    every string, or raises a ``TransportError`` subclass with a one-line reason from
    which the key is scrubbed too: ``TransportTimeout``, ``ConnectFailed``,
    ``AddressRefused``, ``RedirectRefused``, ``HTTPStatusError`` (``.status``) or
    ``MalformedReply``. 429 and 503 are tried again (``max_tries`` in all) after
    ``Retry-After`` seconds, or 0.5 s, 1 s, … without one; a server asking for more
    than ``max_retry_wait`` seconds gets no retry. ``APIKeyError`` is raised at
    construction for a key that cannot be sent. ``clock`` (``time.monotonic``, what each
    request's deadline is read on) and ``sleep`` (``time.sleep``, the wait before a retry)
    are injected so that a test runs the retries and deadlines on a fake clock.
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES, max_tries: int = 3, max_retry_wait: float = 10.0,
                 refuse_private_addresses: bool = False, transport: httpx.BaseTransport | None = None,
                 user_agent: str = "nanohermes_nb", clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not isinstance(base_url, str) or not base_url.strip():
            raise ValueError("a chat client needs a base_url")
        self.base_url = base_url.strip().rstrip("/")
        self._key = check_api_key(api_key)
        self.scrub = Scrubber(self._key)
        parsed = httpx.URL(self.endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ValueError(f"base_url must be an http(s) URL, got {self.scrub(self.base_url)!r}")
        self.timeout = float(timeout)
        self.max_reply_bytes = int(max_reply_bytes)
        self.max_tries = max(int(max_tries), 1)
        self.max_retry_wait = float(max_retry_wait)
        self.refuse_private_addresses = refuse_private_addresses
        self._transport = transport
        self._user_agent = user_agent
        self._clock, self._sleep = clock, sleep

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def has_key(self) -> bool:
        return bool(self._key)

    def __repr__(self) -> str:
        return (f"ChatClient(base_url={self.scrub(self.base_url)!r}, timeout={self.timeout:g}, "
                f"api_key=<{'set' if self._key else 'none'}>)")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": self._user_agent}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def post(self, body: Mapping[str, Any]) -> Any:
        """The scrubbed parsed JSON of the reply; raises ``TransportError`` (scrubbed) on failure."""
        try:
            return self.scrub.json(self._post(_json_bytes(body)))
        except TransportError as exc:
            raise type(exc)(self.scrub(exc.reason), status=exc.status) from None

    def _post(self, payload: bytes) -> Any:
        for attempt in range(1, self.max_tries + 1):
            reply = self._once(payload)
            if reply.status in _RETRY_STATUSES and attempt < self.max_tries:
                wait = _retry_after(reply.headers.get("retry-after"))
                wait = 0.5 * 2 ** (attempt - 1) if wait is None else wait
                if wait <= self.max_retry_wait:
                    self._sleep(wait)
                    continue
            return self._parse(reply)
        raise AssertionError("unreachable")  # pragma: no cover

    def _once(self, payload: bytes) -> Reply:
        try:
            return fetch("POST", self.endpoint, headers=self._headers(), content=payload, timeout=self.timeout,
                         max_bytes=self.max_reply_bytes, refuse_private_addresses=self.refuse_private_addresses,
                         same_origin_redirects=True, transport=self._transport, clock=self._clock)
        except TransportTimeout:
            raise TransportTimeout(f"timed out after {self.timeout:g} s ({self.endpoint})") from None
        except TransportError as exc:
            raise type(exc)(f"{exc.reason} ({self.endpoint})", status=exc.status) from None

    def _parse(self, reply: Reply) -> Any:
        text = reply.body.decode("utf-8", "replace")
        if reply.status >= 400:
            snippet = " ".join(text.split())[:200]
            retry = reply.headers.get("retry-after")
            extra = f" (Retry-After: {retry[:40]})" if retry and reply.status in _RETRY_STATUSES else ""
            raise HTTPStatusError(f"HTTP {reply.status} from {self.endpoint}{extra}: {snippet}", status=reply.status)
        if reply.truncated:
            raise MalformedReply(f"malformed response from {self.endpoint}: reply larger than "
                                 f"{self.max_reply_bytes} bytes (not read further)", status=reply.status)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise MalformedReply(f"malformed response from {self.endpoint}: not JSON ({exc.msg} at line "
                                 f"{exc.lineno} column {exc.colno})", status=reply.status) from None
        except (ValueError, RecursionError) as exc:
            raise MalformedReply(f"malformed response from {self.endpoint}: {type(exc).__name__}",
                                 status=reply.status) from None
