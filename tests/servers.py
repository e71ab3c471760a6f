"""HTTP servers that misbehave on purpose, started by the tests on 127.0.0.1.

``Hostile(host)`` serves, by path:

- ``/drip``: a 200 whose body is one byte every ``drip_every`` seconds (0.5), for ever;
- ``/drip-headers``: the status line, then one header byte every ``drip_every`` seconds;
- ``/endless``: a body with no length that never ends (bytes sent are counted);
  ``finished(route)`` is an event set when a trickled route's handler has stopped
  sending (the client hung up), for a test to wait on instead of sleeping;
- ``/bomb``: a gzip body that inflates to ``BOMB_BYTES`` (``Content-Encoding: gzip``);
- ``/loop``: a redirect to itself; ``/to?<url>``: a redirect to ``<url>``;
- ``/text``, ``/nul``, ``/nul-gzip``, ``/utf16``: small bodies for the text rules;
- ``POST`` (any path): with ``chat_mode`` "drip" or "endless" behaves as those routes;
  with "script" (default) answers from ``script`` (a list of (status, headers,
  body) popped in order; the last one repeats), where ``{auth}`` in a body is
  replaced by the ``Authorization`` header received and ``{auth_json}`` /
  ``{auth_url}`` / ``{auth_u}`` by its JSON-escaped, URL-encoded and ``\\uXXXX``
  forms: a server echoing the key.
"""

from __future__ import annotations

import gzip
import io
import json
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

BOMB_BYTES = 256 * 1024 * 1024
POLL_SECONDS = 0.01  # how often a server's loop checks whether it was asked to stop


def start_server(host: str, *, get=None, post=None) -> ThreadingHTTPServer:
    """A quiet ThreadingHTTPServer on a free port of ``host``, serving in a daemon thread.

    ``get`` and ``post`` take the request handler; a method without one is HTTP's 501.
    """

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

    if get is not None:
        Handler.do_GET = lambda h: get(h)
    if post is not None:
        Handler.do_POST = lambda h: post(h)
    httpd = ThreadingHTTPServer((host, 0), Handler)
    httpd.daemon_threads = True
    # a short poll: shutdown() waits for the loop to look (0.5 s by default, paid by every test that stops a server)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True).start()
    return httpd


def send(h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict | None = None,
         content_type: str = "text/plain") -> None:
    """One whole response; a client that has hung up is not an error here."""
    h.send_response(status)
    for name, value in {"Content-Type": content_type, "Content-Length": str(len(body)), **(headers or {})}.items():
        h.send_header(name, value)
    h.end_headers()
    try:
        h.wfile.write(body)
    except OSError:
        pass


def _bomb() -> bytes:
    """gzip of BOMB_BYTES zero bytes (about 250 KB), built a MiB at a time."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as f:
        block = bytes(1 << 20)
        for _ in range(BOMB_BYTES >> 20):
            f.write(block)
    return out.getvalue()


_BOMB: list[bytes] = []


def bomb() -> bytes:
    if not _BOMB:
        _BOMB.append(_bomb())
    return _BOMB[0]


class Hostile:
    def __init__(self, host: str = "127.0.0.1", drip_every: float = 0.5) -> None:
        self.hits: dict[str, int] = {}
        self.sent: dict[str, int] = {}
        self.drip_every = drip_every
        self._finished: dict[str, threading.Event] = {}
        self.script: list[tuple[int, dict, str]] = []
        self.requests: list[dict] = []
        self.chat_mode = "script"  # or "drip" / "endless": the chat endpoint misbehaves like those routes
        self.stop = threading.Event()
        self.httpd = start_server(host, get=self._get, post=self._chat)
        self.httpd.handle_error = lambda request, address: None  # clients hanging up is the point here
        self.url = f"http://{host}:{self.httpd.server_address[1]}"

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        route = h.path.split("?", 1)[0]
        self.hits[route] = self.hits.get(route, 0) + 1
        getattr(self, "_" + route.strip("/").replace("-", "_"), self._missing)(h)

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    # ---- helpers

    def finished(self, route: str) -> threading.Event:
        """Set when the handler trickling ``route`` has stopped (the client hung up, or the server closed)."""
        return self._finished.setdefault(route, threading.Event())

    def _trickle(self, h: BaseHTTPRequestHandler, route: str, pieces) -> None:
        done = self.finished(route)
        done.clear()
        try:
            for piece in pieces:
                if self.stop.is_set():
                    return
                h.wfile.write(piece)
                h.wfile.flush()
                self.sent[route] = self.sent.get(route, 0) + len(piece)
        except OSError:
            pass  # the client hung up
        finally:
            h.close_connection = True
            done.set()

    # ---- routes

    def _missing(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 404, b"missing")

    def _drip(self, h: BaseHTTPRequestHandler) -> None:
        def pieces():
            yield b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n"
            while True:
                yield b"x"
                self.stop.wait(self.drip_every)
        self._trickle(h, "/drip", pieces())

    def _drip_headers(self, h: BaseHTTPRequestHandler) -> None:
        def pieces():
            yield b"HTTP/1.1 200 OK\r\n"
            while True:
                yield b"X"
                self.stop.wait(self.drip_every)
        self._trickle(h, "/drip-headers", pieces())

    def _endless(self, h: BaseHTTPRequestHandler) -> None:
        def pieces():
            yield b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
            chunk = b"a" * 65536
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                yield chunk
        self._trickle(h, "/endless", pieces())

    def _bomb(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 200, bomb(), {"Content-Encoding": "gzip", "Content-Type": "text/plain"})

    def _loop(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 302, b"", {"Location": "/loop"})

    def _to(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 302, b"", {"Location": h.path.split("?", 1)[1]})

    def _text(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 200, b"plain text from " + self.url.encode())

    def _nul(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 200, b"\x00" * 20_000)

    def _nul_gzip(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 200, gzip.compress(b"hello" + b"\x00" * 20_000), {"Content-Encoding": "gzip"})

    def _deflate(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 200, zlib.compress(b"deflated text " * 100), {"Content-Encoding": "deflate"})

    def _utf16(self, h: BaseHTTPRequestHandler) -> None:
        send(h, 200, "caf\u00e9 \u6587\u4ef6".encode("utf-16"), {"Content-Type": "text/plain; charset=utf-16"})

    def _chat(self, h: BaseHTTPRequestHandler) -> None:
        body = h.rfile.read(int(h.headers.get("Content-Length", 0)))
        auth = h.headers.get("Authorization", "")
        self.requests.append({"path": h.path, "auth": auth, "body": json.loads(body or b"null"),
                              "at": time.monotonic()})
        if self.chat_mode != "script":
            return getattr(self, "_" + self.chat_mode)(h)
        status, headers, text = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        text = (text.replace("{auth}", auth).replace("{auth_json}", json.dumps(auth)[1:-1])
                .replace("{auth_url}", quote(auth, safe=""))
                .replace("{auth_u}", "".join(f"\\u{ord(c):04x}" for c in auth)))
        send(h, status, text.encode(), {"Content-Type": "application/json", **headers})


def completion_body(message: dict, usage: dict | None = None, finish_reason: str | None = None) -> str:
    """A chat-completions body around ``message``."""
    reason = finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
    body: dict = {"id": "chatcmpl-test", "object": "chat.completion", "model": "test",
                  "choices": [{"index": 0, "finish_reason": reason, "message": message}]}
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body)


def chat_reply(content: str) -> str:
    """A chat-completions body whose message content is ``content`` (placeholders kept)."""
    return completion_body({"role": "assistant", "content": content})
