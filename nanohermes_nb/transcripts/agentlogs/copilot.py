"""GitHub Copilot CLI sessions (``~/.copilot/session-state/<id>/events.jsonl``) as a transcript.

Each line is an event ``{"type", "data", "id", "timestamp", "parentId"}``. Read:
``system.message`` (the system prompt), ``user.message``, ``assistant.message`` (its
``toolRequests`` as tool calls; one ``AgentRequest`` each), ``tool.execution_complete``
(the tool message) and ``system.notification`` (a note the CLI puts in the context, as
a user message). ``session.model_change`` sets the model. The log reports only output
tokens per message; input and cache counts appear only in ``session.shutdown`` per model,
so a request gets a ``ReportedUsage`` only when it is the one request of its model there.
Hooks, permissions, turn markers and other events are not context.
"""

from __future__ import annotations

import json
from typing import Any

from ..base import AgentRequest, Message, ReportedUsage, Transcript, tool_call
from .records import Counts, Notes, Record, epoch, text_of
from .thread import Thread

__all__ = ["read_copilot", "is_copilot"]

_KNOWN_PREFIXES = ("session.", "hook.", "assistant.", "tool.", "user.", "system.", "permission.", "subagent.",
                   "skill.", "abort", "pending_messages.")


def is_copilot(data: dict) -> bool:
    kind = data.get("type")
    return isinstance(kind, str) and "." in kind and isinstance(data.get("data"), dict) and "payload" not in data


def read_copilot(records: list[Record], notes: Notes, path: str) -> Transcript:
    thread = Thread(notes)
    model = ""
    metrics: dict = {}
    metrics_line = 0
    for r in records:
        kind, data = r.data["type"], r.data["data"]
        if kind == "session.start" and isinstance(data.get("selectedModel"), str):
            model = data["selectedModel"]
        elif kind == "session.model_change" and isinstance(data.get("newModel"), str):
            model = data["newModel"]
        elif kind == "system.message":
            thread.add({"role": "system", "content": _text(data.get("content"))})
        elif kind in ("user.message", "system.notification"):
            thread.add({"role": "user", "content": _text(data.get("content"))})
        elif kind == "assistant.message":
            _assistant(thread, r, data, model)
        elif kind == "tool.execution_complete":
            thread.add_result(data.get("toolCallId"), _result(data.get("result")), r.line)
        elif kind == "session.shutdown" and isinstance(data.get("modelMetrics"), dict):
            metrics, metrics_line = data["modelMetrics"], r.line
        elif not kind.startswith(_KNOWN_PREFIXES):
            notes.add(f"event of unknown type {kind[:40]!r}, left out", r.line)
    thread.close_pending()
    requests = _with_shutdown_usage(thread.requests, metrics, Counts(notes, metrics_line))
    return Transcript(thread.messages, path=path, format="copilot-cli", agent="copilot_cli", requests=requests)


def _assistant(thread: Thread, r: Record, data: dict, model: str) -> None:
    message: Message = {"role": "assistant", "content": _text(data.get("content")) or None}
    if isinstance(data.get("reasoningText"), str) and data["reasoningText"]:
        message["reasoning_content"] = data["reasoningText"]
    calls = []
    listed = data.get("toolRequests")
    for j, req in enumerate(listed if isinstance(listed, list) else ()):
        if isinstance(req, dict):
            given = req.get("toolCallId")
            call_id = given if isinstance(given, str) else f"call_{r.line}_{j}"
            arguments = req.get("arguments")
            text = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, ensure_ascii=False)
            calls.append(tool_call(call_id, str(req.get("name") or "tool"), text, ""))
    if calls:
        message["tool_calls"] = calls
    index = thread.add(message)
    thread.add_calls(message, r.line)
    thread.requests.append(AgentRequest(message=index, id=str(data.get("messageId") or f"line-{r.line}"),
                                        time=epoch(r.data.get("timestamp")),
                                        model=str(data.get("model") or model), usage=None))


_COUNTS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


def _with_shutdown_usage(requests: list[AgentRequest], metrics: dict, counts: Counts) -> list[AgentRequest]:
    """Give the shutdown's per-model usage to a request that is the only one of its model."""
    out = []
    for q in requests:
        m = metrics.get(q.model)
        same = sum(1 for other in requests if other.model == q.model)
        usage = m.get("usage") if isinstance(m, dict) else None
        if same == 1 and isinstance(usage, dict):
            counts.bad = False
            raw = {k: counts.get(usage, k) if k in _COUNTS else v for k, v in usage.items()
                   if k in _COUNTS or isinstance(v, int) and not isinstance(v, bool)}
            if counts.bad:
                out.append(q)
                continue
            q = AgentRequest(q.message, q.id, q.time, q.model, ReportedUsage(
                prompt_tokens=raw.get("inputTokens", 0), cached_tokens=raw.get("cacheReadTokens", 0),
                cache_write_tokens=raw.get("cacheWriteTokens", 0), completion_tokens=raw.get("outputTokens", 0),
                reasoning_tokens=raw.get("reasoningTokens", 0), raw=raw, raw_first=raw))
        out.append(q)
    return out


def _result(result: Any) -> str:
    if isinstance(result, dict):
        for key in ("content", "detailedContent"):
            if isinstance(result.get(key), (str, list)):
                return _text(result[key])
        return json.dumps(result, ensure_ascii=False)
    return _text(result)


def _text(content: Any) -> str:
    return content if isinstance(content, str) else text_of(content)
