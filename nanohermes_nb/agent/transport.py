"""HTTP for ``web_fetch`` and the model clients: one request, bounded in time, bytes and hops.

Everything here answers the ways a server can misbehave against a program that
talks to it for a model:

- **a total deadline per request** (``timeout``), not per read: connecting, every
  socket read and write, TLS, DNS, redirects and the whole body share one clock, so a
  server that drips one byte every half second is cut off on time;
- **a bound on the body after decoding**, enforced while streaming: gzip and deflate
  are decompressed here, a piece at a time with ``max_length``, so a gzip bomb costs
  at most the bound, never the size it would inflate to;
- **redirects** only to http(s), at most ``max_redirects`` (5) hops, and for an API
  request only to the same origin (the key is never sent to another host);
- an optional refusal of **loopback, private, link-local and other non-global
  addresses** (``refuse_private_addresses=True``, off by default), checked after DNS
  resolution on every connection, redirects included, and connecting to the address
  that was checked (no second lookup an attacker could answer differently);
- for ``ChatClient`` (OpenAI-compatible ``POST {base_url}/chat/completions``): the
  API key validated when the client is built, a bounded retry on 429/503 honouring
  ``Retry-After``, and the key **scrubbed** in every form (raw, JSON-escaped,
  URL-encoded, HTML-escaped, ``Bearer …``) from every error and from every string of
  the parsed reply, so a server that echoes the ``Authorization`` header cannot put
  the key into a summary, a note or the messages.

The key rule: surrounding whitespace is stripped (a key read from a file usually ends
with a newline, and HTTP drops surrounding whitespace from a header value anyway);
anything else that cannot travel in a header (CR, LF, other control characters,
spaces inside, non-ASCII) raises ``APIKeyError``, whose message never shows the key.
"""

from __future__ import annotations

import email.utils
import functools
import html
import ipaddress
import json
import re
import socket
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

__all__ = [
    "TransportError",
    "TransportTimeout",
    "ConnectFailed",
    "AddressRefused",
    "RedirectRefused",
    "HTTPStatusError",
    "MalformedReply",
    "APIKeyError",
    "Reply",
    "fetch",
    "ChatClient",
    "check_api_key",
    "Scrubber",
    "is_public_address",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_MAX_REPLY_BYTES",
]

DEFAULT_MAX_REDIRECTS = 5
DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024  # a chat completion is a few KB; 4 MiB is generous
_CHUNK = 1 << 16
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_RETRY_STATUSES = frozenset({429, 503})
_DELTA_SECONDS = re.compile(r"[0-9]+", re.ASCII)  # Retry-After's delta-seconds (RFC 9110 10.2.3)
_ACCEPT_ENCODING = "gzip, deflate"  # only what _BodyDecoder decodes


# ---------------------------------------------------------------- errors


class TransportError(Exception):
    """A request that failed; ``str()`` is the one-line reason (never the API key)."""

    def __init__(self, reason: str, *, status: int | None = None) -> None:
        self.reason = " ".join(str(reason).split())
        self.status = status
        super().__init__(self.reason)


class TransportTimeout(TransportError):
    """The request's total deadline passed."""


class ConnectFailed(TransportError):
    """No connection could be made (refused, unreachable, DNS failure)."""


class AddressRefused(TransportError):
    """``refuse_private_addresses`` is on and the host resolves to a non-global address."""


class RedirectRefused(TransportError):
    """Too many redirects, a redirect to a non-http(s) URL, or (API) to another origin."""


class HTTPStatusError(TransportError):
    """The server answered with an error status (``status`` holds it)."""


class MalformedReply(TransportError):
    """The reply is not what the protocol promises (not JSON, too large, bad encoding)."""


class APIKeyError(TransportError, ValueError):
    """An API key that cannot be sent in an HTTP header; the message never shows it."""


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
                copy = {self(k): v for k, v in item.items()}
                parent[slot] = copy
                stack.extend((copy, k) for k in copy)
        return root[0]


# ---------------------------------------------------------------- addresses


def is_public_address(ip: str) -> bool:
    """True for a globally routable unicast address (IPv4-mapped and NAT64 forms unwrapped)."""
    address = ipaddress.ip_address(ip.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address in ipaddress.ip_network("64:ff9b::/96"):
            address = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.is_global and not address.is_multicast


def _resolve(host: str, port: int, seconds: float) -> list[str]:
    """The addresses of ``host``, looked up within ``seconds`` (a lookup cannot be
    interrupted, so it runs in a daemon thread that is left behind on timeout)."""
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        return [host]
    except ValueError:
        pass
    found: dict[str, Any] = {}

    def lookup() -> None:
        try:
            found["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            found["error"] = exc

    worker = threading.Thread(target=lookup, daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        raise httpcore.ConnectTimeout(f"DNS lookup of {host} timed out")
    if "error" in found:
        raise httpcore.ConnectError(f"cannot resolve {host}: {found['error']}")
    return list(dict.fromkeys(info[4][0] for info in found["infos"]))


# ---------------------------------------------------------------- the guarded network backend


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self, error: type[Exception] = httpcore.ReadTimeout) -> float:
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise error(f"deadline of {self.seconds:g} s passed")
        return remaining

    def cap(self, timeout: float | None, error: type[Exception]) -> float:
        remaining = self.left(error)
        return remaining if timeout is None else min(timeout, remaining)


class _Stream(httpcore.NetworkStream):
    """A socket stream whose every operation ends by the request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._inner, self._deadline = inner, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.cap(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.cap(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        cap = self._deadline.cap(timeout, httpcore.ConnectTimeout)
        inner = self._inner.start_tls(ssl_context, server_hostname, cap)
        return _Stream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """Resolves, checks the address when asked to, and connects to the checked address."""

    def __init__(self, deadline: _Deadline, refuse_private: bool) -> None:
        self._deadline, self._refuse_private = deadline, refuse_private
        self._sync = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        addresses = _resolve(host, port, self._deadline.left(httpcore.ConnectTimeout))
        if self._refuse_private:
            for ip in addresses:
                if not is_public_address(ip):
                    raise AddressRefused(f"{host} resolves to {ip}, a loopback, private or link-local address "
                                         "(refuse_private_addresses is on)")
        error: Exception = httpcore.ConnectError(f"no address for {host}")
        for ip in addresses:
            try:
                stream = self._sync.connect_tcp(ip, port, self._deadline.cap(timeout, httpcore.ConnectTimeout),
                                                local_address, socket_options)
            except httpcore.ConnectError as exc:
                error = exc
                continue
            return _Stream(stream, self._deadline)
        raise error

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        raise httpcore.ConnectError("unix sockets are not used here")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


_HTTPCORE_TO_HTTPX = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout), (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout), (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.ConnectError, httpx.ConnectError), (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError), (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError), (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.NetworkError, httpx.NetworkError), (httpcore.TimeoutException, httpx.TimeoutException),
)


def _as_httpx(exc: Exception, request: httpx.Request) -> Exception:
    for source, target in _HTTPCORE_TO_HTTPX:
        if isinstance(exc, source):
            return target(str(exc), request=request)
    return exc


class _BodyStream(httpx.SyncByteStream):
    def __init__(self, inner: Any, request: httpx.Request) -> None:
        self._inner, self._request = inner, request

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._inner
        except httpcore.TimeoutException as exc:
            raise _as_httpx(exc, self._request) from None
        except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise _as_httpx(exc, self._request) from None

    def close(self) -> None:
        self._inner.close()


class _GuardedTransport(httpx.BaseTransport):
    """An httpx transport over an httpcore pool that uses the guarded backend."""

    def __init__(self, deadline: _Deadline, refuse_private: bool) -> None:
        self._pool = httpcore.ConnectionPool(ssl_context=_ssl_context(), max_connections=4,
                                             network_backend=_Backend(deadline, refuse_private))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                             port=request.url.port, target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        try:
            response = self._pool.handle_request(core)
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise _as_httpx(exc, request) from None
        return httpx.Response(status_code=response.status, headers=response.headers,
                              stream=_BodyStream(response.stream, request), extensions=response.extensions)

    def close(self) -> None:
        self._pool.close()


@functools.lru_cache(maxsize=1)
def _ssl_context() -> Any:
    """One TLS context for every request: building one loads the CA bundle (about 20 ms, far more on a busy
    machine), which a local model answering over plain HTTP would otherwise pay on every request."""
    return httpx.create_ssl_context()


# ---------------------------------------------------------------- bodies


class _BodyDecoder:
    """Content-Encoding removed piece by piece, never producing more than asked for."""

    def __init__(self, header: str) -> None:
        codings = [c.strip().lower() for c in header.split(",") if c.strip() and c.strip().lower() != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise MalformedReply(f"unsupported Content-Encoding {header!r} (only gzip and deflate are decoded)")
        self._mode = codings[0] if codings else ""
        self._z = self._new()
        self._started = False

    def _new(self, raw_deflate: bool = False) -> Any:
        if self._mode in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return zlib.decompressobj(-zlib.MAX_WBITS if raw_deflate else zlib.MAX_WBITS)

    def feed(self, data: bytes, limit: int) -> bytes:
        """At most ``limit`` decoded bytes of ``data`` (input past them is dropped: the
        caller stops once the body reached its bound)."""
        if not self._mode:
            return data[:limit]
        out = bytearray()
        while data and len(out) < limit:
            try:
                piece = self._z.decompress(data, limit - len(out))
            except zlib.error as exc:
                if self._mode == "deflate" and not self._started:  # servers send raw deflate too
                    self._z, self._started = self._new(raw_deflate=True), True
                    continue
                raise MalformedReply(f"corrupt {self._mode} body ({exc})") from None
            self._started = True
            out += piece
            if self._z.eof:  # concatenated gzip members: go on with the next one
                data = self._z.unused_data
                self._z = self._new() if data else self._z
            else:
                data = self._z.unconsumed_tail
        return bytes(out)


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, headers, the decoded body (at most ``max_bytes``)."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes
    truncated: bool  # the body went on past max_bytes (it was not read further)
    url: str  # after redirects

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def charset(self) -> str | None:
        match = re.search(r"charset\s*=\s*\"?([\w.:-]+)", self.headers.get("content-type", ""), re.I)
        return match.group(1) if match else None


def _read_body(response: httpx.Response, max_bytes: int, deadline: _Deadline) -> tuple[bytes, bool]:
    decoder = _BodyDecoder(response.headers.get("content-encoding", ""))
    body = bytearray()
    raw_total, raw_limit = 0, max_bytes + (1 << 20)
    for chunk in response.iter_raw(_CHUNK):
        deadline.left(httpcore.ReadTimeout)
        raw_total += len(chunk)
        body += decoder.feed(chunk, max_bytes + 1 - len(body))
        if len(body) > max_bytes or raw_total > raw_limit:
            return bytes(body[:max_bytes]), True
    return bytes(body), False


# ---------------------------------------------------------------- one request


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _next_hop(response: httpx.Response, url: httpx.URL, hops: int, max_redirects: int,
              same_origin: bool) -> httpx.URL:
    location = response.headers.get("location", "")
    try:
        target = url.join(location)
    except (httpx.InvalidURL, ValueError) as exc:
        raise RedirectRefused(f"redirect to an invalid URL ({exc})") from None
    if target.scheme not in ("http", "https") or not target.host:
        raise RedirectRefused(f"redirect to {str(target)[:200]!r} refused: only http(s) URLs are followed")
    if hops >= max_redirects:
        raise RedirectRefused(f"more than {max_redirects} redirects (the last one to {str(target)[:200]})")
    if same_origin and _origin(target) != _origin(url):
        raise RedirectRefused(f"redirect to another origin ({str(target)[:200]}) not followed: "
                              "the API key is only sent to the configured server")
    return target


def fetch(method: str, url: str, *, headers: Mapping[str, str] | None = None, content: bytes | None = None,
          timeout: float, max_bytes: int, max_redirects: int = DEFAULT_MAX_REDIRECTS,
          refuse_private_addresses: bool = False, same_origin_redirects: bool = False,
          transport: httpx.BaseTransport | None = None) -> Reply:
    """One request within ``timeout`` seconds in total, its body decoded up to ``max_bytes``.

    Redirects are followed by hand (http(s) only, at most ``max_redirects``; with
    ``same_origin_redirects`` only within the first URL's origin). A 303, or a 301/302
    after a POST, continues as a GET without a body, as browsers do. Raises a
    ``TransportError`` subclass with a one-line reason; an error status is a ``Reply``.
    A given ``transport`` (e.g. ``httpx.MockTransport``) replaces the guarded one; the
    deadline is then checked between body chunks only.
    """
    deadline = _Deadline(timeout)
    guarded = transport is None
    client = httpx.Client(transport=transport or _GuardedTransport(deadline, refuse_private_addresses),
                          timeout=httpx.Timeout(timeout), follow_redirects=False,
                          trust_env=not (guarded and refuse_private_addresses))
    try:
        current = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise TransportError(f"invalid URL {str(url)[:200]!r}: {exc}") from None
    if current.scheme not in ("http", "https") or not current.host:
        raise TransportError(f"invalid URL {str(url)[:200]!r}: only http(s) URLs with a host are fetched")
    send_headers = {"Accept-Encoding": _ACCEPT_ENCODING, **(headers or {})}
    try:
        with client:
            for hops in range(max_redirects + 1):
                request = client.build_request(method, current, headers=send_headers, content=content)
                try:
                    response = client.send(request, stream=True)
                except httpx.InvalidURL as exc:  # httpx builds the next request of any redirect, followed or not
                    raise RedirectRefused(f"redirect refused: its Location is no http(s) URL ({exc})") from None
                try:
                    if response.status_code in _REDIRECTS and response.headers.get("location"):
                        current = _next_hop(response, current, hops, max_redirects, same_origin_redirects)
                        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                            method, content = "GET", None
                        continue
                    body, truncated = _read_body(response, max_bytes, deadline)
                    return Reply(response.status_code, response.reason_phrase, response.headers, body, truncated,
                                 str(current))
                finally:
                    response.close()
    except httpx.TimeoutException:
        raise TransportTimeout(f"timed out after {timeout:g} s") from None
    except httpcore.TimeoutException:  # the deadline passed between body chunks
        raise TransportTimeout(f"timed out after {timeout:g} s") from None
    except (httpx.ConnectError, httpcore.ConnectError) as exc:
        raise ConnectFailed(f"connection failed: {exc}") from None
    except httpx.HTTPError as exc:
        raise TransportError(f"{type(exc).__name__}: {exc}") from None
    raise RedirectRefused("redirect loop")  # pragma: no cover -- the loop returns or raises


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
    construction for a key that cannot be sent.
    """

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES, max_tries: int = 3, max_retry_wait: float = 10.0,
                 refuse_private_addresses: bool = False, transport: httpx.BaseTransport | None = None,
                 user_agent: str = "nanohermes_nb") -> None:
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
                    time.sleep(wait)
                    continue
            return self._parse(reply)
        raise AssertionError("unreachable")  # pragma: no cover

    def _once(self, payload: bytes) -> Reply:
        try:
            return fetch("POST", self.endpoint, headers=self._headers(), content=payload, timeout=self.timeout,
                         max_bytes=self.max_reply_bytes, refuse_private_addresses=self.refuse_private_addresses,
                         same_origin_redirects=True, transport=self._transport)
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
