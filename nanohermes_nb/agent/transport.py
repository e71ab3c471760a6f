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
- for ``ChatClient`` (in ``chat``, re-exported here; OpenAI-compatible ``POST {base_url}/chat/completions``): the
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

import functools
import ipaddress
import re
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
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
    "is_public_address",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_MAX_REPLY_BYTES",
]

DEFAULT_MAX_REDIRECTS = 5
DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024  # a chat completion is a few KB; 4 MiB is generous
_CHUNK = 1 << 16
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
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
    """``seconds`` from now on ``clock`` (``time.monotonic`` unless a test gives its own)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.end = clock() + seconds

    def left(self, error: type[Exception] = httpcore.ReadTimeout) -> float:
        remaining = self.end - self.clock()
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
          transport: httpx.BaseTransport | None = None, clock: Callable[[], float] = time.monotonic) -> Reply:
    """One request within ``timeout`` seconds in total, its body decoded up to ``max_bytes``.

    Redirects are followed by hand (http(s) only, at most ``max_redirects``; with
    ``same_origin_redirects`` only within the first URL's origin). A 303, or a 301/302
    after a POST, continues as a GET without a body, as browsers do. Raises a
    ``TransportError`` subclass with a one-line reason; an error status is a ``Reply``.
    A given ``transport`` (e.g. ``httpx.MockTransport``) replaces the guarded one; the
    deadline is then checked between body chunks only. ``clock`` (``time.monotonic``) is
    what the deadline is read on: a test passes a fake one instead of waiting for real.
    """
    deadline = _Deadline(timeout, clock)
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
