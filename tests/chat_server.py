"""A chat-completions endpoint on 127.0.0.1 that answers the agent loop from a script.

``ChatServer(agent=[...], summaries=[...])`` answers ``POST /chat/completions``:
a request that carries ``tools`` takes the next item of ``agent``, one without
tools (the compaction's summary request) the next item of ``summaries``. An item
is an assistant message (a dict, sent as ``choices[0].message``; a string is its
content), ``Raw(status,
body, headers)`` for any other answer, ``Completion(message, usage=...,
finish_reason=...)``, or a function of the request body returning one of these.
With ``repeat=True`` the last item answers every later request; otherwise a
request past the script gets a 500 naming it. Every request is kept in
``requests`` (the parsed body, the path, the Authorization header).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from servers import completion_body, send, start_server


@dataclass(frozen=True)
class Raw:
    status: int
    body: str
    headers: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    message: dict
    usage: dict | None = None
    finish_reason: str = "stop"


def tool_message(content: str | None, *calls: tuple, ids: list[str] | None = None) -> dict:
    """An assistant message with OpenAI tool calls ``(name, arguments)``; arguments given as text are sent as is."""
    tool_calls = []
    for k, (name, args) in enumerate(calls):
        tool_calls.append({"id": ids[k] if ids else f"srv_{name}_{k}", "type": "function",
                           "function": {"name": name,
                                        "arguments": args if isinstance(args, str) else json.dumps(args)}})
    out: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        out["tool_calls"] = tool_calls
    return out


class ChatServer:
    def __init__(self, agent: list | None = None, summaries: list | None = None, *, repeat: bool = False,
                 host: str = "127.0.0.1") -> None:
        self.agent = list(agent or [])
        self.summaries = list(summaries or [])
        self.repeat = repeat
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self.httpd = start_server(host, post=self._answer)
        self.url = f"http://{host}:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def agent_requests(self) -> list[dict]:
        """The bodies of the requests that advertised tools (the agent's), in order."""
        return [r["body"] for r in self.requests if r["body"].get("tools")]

    @property
    def summary_requests(self) -> list[dict]:
        return [r["body"] for r in self.requests if not r["body"].get("tools")]

    def _next(self, body: dict) -> Any:
        with self._lock:
            queue = self.agent if body.get("tools") else self.summaries
            kind = "agent" if body.get("tools") else "summary"
            if not queue:
                return Raw(500, json.dumps({"error": f"the test script has no {kind} reply left"}))
            item = queue[0] if (self.repeat and len(queue) == 1) else queue.pop(0)
        return item(body) if callable(item) else item

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length", 0)))
        body = json.loads(raw or b"null")
        self.requests.append({"path": h.path, "auth": h.headers.get("Authorization", ""), "body": body})
        item = self._next(body)
        if isinstance(item, Raw):
            status, text, headers = item.status, item.body, item.headers
        elif isinstance(item, Completion):
            status, text, headers = 200, completion_body(item.message, item.usage, item.finish_reason), {}
        elif isinstance(item, str):
            status, text, headers = 200, completion_body({"role": "assistant", "content": item}), {}
        else:
            status, text, headers = 200, completion_body(item), {}
        text = text.replace("{auth}", h.headers.get("Authorization", ""))
        send(h, status, text.encode("utf-8"), headers, content_type="application/json")
