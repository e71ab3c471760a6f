"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as a transcript.

Each line is ``{"timestamp", "type", "payload"}``. What becomes messages:

- ``session_meta``: its ``base_instructions`` text (the system prompt Codex sent) becomes
  messages[0] as a system message, when the log holds it.
- ``response_item``: the Responses API items. ``message`` (user/developer/system: an input
  message; assistant: output text), ``reasoning`` (its summary text becomes the assistant's
  ``reasoning_content``), ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` /
  ``tool_search_call`` (tool calls; a custom tool's free-form ``input`` is kept as the
  arguments text), their ``*_output`` items (tool messages, paired by ``call_id``), and
  ``web_search_call`` (a server-side call with no output item: a ``web_search`` call
  answered by an empty tool message, so the history stays legal). Consecutive output
  items of one response form one assistant message.
- ``event_msg`` / ``token_count``: one per API request, carrying ``last_token_usage``. Codex
  writes some twice; a count whose ``total_token_usage`` equals the previous one's is a
  repeat and is dropped, so summing ``last_token_usage`` gives the session total. Each
  request is attached to the assistant message that response produced.
- ``turn_context``: the model of the requests that follow (a model switch mid-session).
- ``compacted``: a ``ToolCompaction``; ``replacement_history`` (the context Codex went on
  from) converted to messages as its continuation, NOT added to the messages. The token
  count Codex writes right after (zero usage, ``total_tokens`` = the new context size) is
  its ``post_tokens``; the context of the last request before it is its ``pre_tokens``.
- A forked session (a sub-agent spawned with ``fork_context``; its ``session_meta`` names
  ``forked_from_id``) opens on a copy of its parent's records, the parent's ``session_meta``
  first, before its own turns (codex-rs ``agent/control.rs``: the parent's rollout items become
  ``InitialHistory::Forked``, persisted into the new file). The copied messages stay (they are
  the fork's context), but the copied token counts are the parent's requests: they are kept
  with usage None, counted in ``Transcript.fork``. The fork's own part begins at its first turn,
  told by the turn id: Codex's turn and thread ids are UUIDv7, whose first 48 bits are the
  millisecond they were made, so a turn begun after the fork has an id no earlier than the
  fork's own. Where an id is no UUIDv7, the copy cannot be told apart: nothing is set aside,
  and a note says so.

Other ``event_msg`` types repeat what the response items hold (``user_message``,
``agent_message``, ``exec_command_end`` ...) and are not read; an unknown record or item
type is left out and noted.
"""

from __future__ import annotations

import json
from typing import Any

from ..base import AgentRequest, Fork, Message, ReportedUsage, ToolCompaction, Transcript, tool_call
from .records import Counts, Notes, Record, epoch, text_of
from .thread import Thread

__all__ = ["read_codex", "is_codex", "CODEX_TYPES"]

CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted",
                         "world_state", "inter_agent_communication_metadata"})
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output",
                      "local_shell_call_output"})
_IGNORED_ITEMS = frozenset({"ghost_snapshot", "compaction", "compaction_summary"})
_USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")


def is_codex(data: dict) -> bool:
    """A record of a Codex rollout: a known top-level type and a ``payload``."""
    kind = data.get("type")
    return isinstance(kind, str) and kind in CODEX_TYPES and "payload" in data


def read_codex(records: list[Record], notes: Notes, path: str) -> Transcript:
    """One rollout as a Transcript (see the module docstring)."""
    reader = _Reader(notes)
    for r in records:
        reader.record(r)
    reader.finish()
    thread = reader.thread
    return Transcript(thread.messages, path=path, format="codex-rollout", agent="codex_cli",
                      requests=thread.requests, compactions=thread.compactions, fork=reader.fork.result())


class _Reader:
    """One pass over a rollout's records."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.thread = Thread(notes)
        self.group: Message | None = None  # the assistant message being built
        self.group_line = 0
        self.auto: list[str] = []  # web search calls to answer when the group closes
        self.model = ""
        self.last_total: tuple | None = None
        self.last_context: int | None = None
        self.unbilled: list[int] = []  # assistant messages not yet given a request
        self.early: list[tuple[AgentRequest, int]] = []  # counts seen before their response's items
        self.made: dict[int, tuple[float | None, str]] = {}  # assistant message -> (time, model) when it began
        self.open_compaction: int | None = None  # index in compactions awaiting post_tokens
        self.fork = _ForkTracker(notes)
        self.line = 0

    def record(self, r: Record) -> None:
        self.line = r.line
        kind, payload = r.data.get("type"), r.data.get("payload")
        if not isinstance(payload, dict):
            self.notes.add("record without a payload object, left out", r.line)
            return
        if kind == "response_item":
            self.item(payload, r)
        elif kind == "event_msg":
            if payload.get("type") == "token_count":
                self.token_count(payload, r)
            elif payload.get("type") == "task_started":
                self.fork.turn(payload.get("turn_id"), len(self.thread.messages), r.line)
        elif kind == "turn_context":
            self.fork.turn(payload.get("turn_id"), len(self.thread.messages), r.line)
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
        elif kind == "compacted":
            self.compacted(payload, r)
        elif kind == "session_meta":
            self.session_meta(payload)
        elif kind not in CODEX_TYPES:
            self.notes.add(f"record of unknown type {str(kind)[:40]!r} (a newer Codex?), left out", r.line)

    def session_meta(self, payload: dict) -> None:
        self.fork.session_meta(payload)
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else base if isinstance(base, str) else None
        if isinstance(text, str) and text and not self.thread.messages:
            self.thread.add({"role": "system", "content": text})

    # response items

    def item(self, p: dict, r: Record) -> None:
        kind = p.get("type") if isinstance(p.get("type"), str) else ""
        if kind == "message":
            role = p.get("role")
            if role == "assistant":
                group = self._assistant(r)
                group["content"] = _join(group.get("content"), text_of(p.get("content")))
            elif role in ("user", "developer", "system"):
                self.close_group()
                self._flush_compaction_place()
                self.thread.add_after_results({"role": role, "content": _input_content(p.get("content"))})
            else:
                self.notes.add(f"message item with unknown role {str(role)[:20]!r}, left out", r.line)
        elif kind == "reasoning":
            text = text_of(p.get("summary")) or text_of(p.get("content"))
            group = self._assistant(r)
            if text:
                group["reasoning_content"] = _join(group.get("reasoning_content"), text)
        elif kind in _CALLS:
            self._call(p, r)
        elif kind == "web_search_call":
            given = p.get("id")
            call_id = given if isinstance(given, str) and given else f"web_search_{r.line}"
            self._add_call(tool_call(call_id, "web_search", json.dumps(p.get("action") or {}), ""), r)
            self.auto.append(call_id)
        elif kind in _OUTPUTS:
            self.close_group()
            self.thread.add_result(p.get("call_id"), _output(p), r.line)
        elif kind not in _IGNORED_ITEMS:
            self.notes.add(f"response item of unknown type {str(kind)[:40]!r} (a newer Codex?), left out", r.line)

    def _assistant(self, r: Record) -> Message:
        if self.group is None:
            self._flush_compaction_place()
            self.group = {"role": "assistant", "content": None}
            self.group_line = r.line
            index = self.thread.add(self.group)
            self.made[index] = (epoch(r.data.get("timestamp")), self.model)
            if self.early:
                self._bill(index, self.early.pop(0)[0])
            else:
                self.unbilled.append(index)
        return self.group

    def _call(self, p: dict, r: Record) -> None:
        call_id, kind = p.get("call_id"), p.get("type")
        if not isinstance(call_id, str) or not call_id:
            given = p.get("id")
            call_id = given if isinstance(given, str) and given else f"call_line_{r.line}"
        if kind == "function_call":
            name, arguments = p.get("name"), p.get("arguments")
        elif kind == "custom_tool_call":
            name, arguments = p.get("name"), p.get("input")
        elif kind == "local_shell_call":
            name, arguments = "local_shell", json.dumps(p.get("action") or {}, ensure_ascii=False)
        else:
            name, arguments = "tool_search", json.dumps(p.get("arguments") or {}, ensure_ascii=False)
        if not isinstance(name, str) or not name:
            name = str(kind)
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
        self._add_call(tool_call(call_id, name, arguments, ""), r)

    def _add_call(self, call: Message, r: Record) -> None:
        group = self._assistant(r)
        group.setdefault("tool_calls", []).append(call)
        self.thread.pending[call["id"]] = r.line

    def close_group(self) -> None:
        if self.group is None:
            return
        self.group = None
        for call_id in self.auto:
            self.thread.add_result(call_id, "", self.group_line)
        self.auto = []

    # usage and compactions

    def token_count(self, p: dict, r: Record) -> None:
        info = p.get("info")
        if not isinstance(info, dict) or not isinstance(info.get("last_token_usage"), dict):
            return
        last, total = info["last_token_usage"], info.get("total_token_usage")
        if _n(last, "input_tokens") == 0 and _n(last, "output_tokens") == 0:
            if self.open_compaction is not None:  # written right after a compaction: the new context size
                self._set_post(_n(last, "total_tokens"))
            return
        key = tuple(_n(total, k) for k in _USAGE_KEYS) if isinstance(total, dict) else None
        if key is not None and key == self.last_total:
            return  # the same count written twice
        if key is not None and self.last_total is not None:
            unlogged = key[0] - self.last_total[0] - _n(last, "input_tokens")
            if unlogged > 0:  # e.g. the request of an aborted turn: billed in the total, never counted alone
                self.notes.add(f"the session total grew by {unlogged} input tokens more than this request's "
                               "count: a request billed but not logged", r.line)
        self.last_total = key
        self.close_group()
        self.last_context = _n(last, "total_tokens") or None
        request = AgentRequest(message=-1, id=f"line-{r.line}", time=epoch(r.data.get("timestamp")),
                               model=self.model, usage=_usage(last, Counts(self.notes, r.line)))
        if self.fork.copying:  # the parent's request, copied with its history: billed in the parent's file
            self.fork.copied.append(request)
            request = AgentRequest(request.message, request.id, request.time, request.model, None)
        if self.unbilled:
            self._bill(self.unbilled[-1], request)
        else:  # older Codex (0.39) writes the count before the response's items
            self.early.append((request, r.line))
        self.unbilled = []

    def _bill(self, index: int, request: AgentRequest) -> None:
        self.thread.requests.append(AgentRequest(index, request.id, request.time, request.model, request.usage))

    def compacted(self, p: dict, r: Record) -> None:
        self.close_group()
        history = p.get("replacement_history")
        continuation = tuple(_convert_history(history)) if isinstance(history, list) else ()
        message = p.get("message")
        summary = message if isinstance(message, str) else ""
        self.thread.compactions.append(ToolCompaction(
            message=-1, time=epoch(r.data.get("timestamp")), trigger="", pre_tokens=self.last_context,
            post_tokens=None, summary=summary, continuation=continuation))
        self.open_compaction = len(self.thread.compactions) - 1

    def _set_post(self, tokens: int) -> None:
        k = self.open_compaction
        if k is None:  # nothing awaits its size
            return
        c = self.thread.compactions[k]
        self.thread.compactions[k] = ToolCompaction(c.message, c.time, c.trigger, c.pre_tokens, tokens or None,
                                                    c.summary, c.continuation)
        self.open_compaction = None

    def _flush_compaction_place(self) -> None:
        """Compactions recorded since the last message happen where the next message goes."""
        comps = self.thread.compactions
        for k in range(len(comps) - 1, -1, -1):
            if comps[k].message != -1:
                break
            c = comps[k]
            comps[k] = ToolCompaction(len(self.thread.messages), c.time, c.trigger, c.pre_tokens, c.post_tokens,
                                      c.summary, c.continuation)

    def finish(self) -> None:
        """Close what is open; every assistant message gets its request (usage None where none was logged)."""
        self.close_group()
        billed = {q.message for q in self.thread.requests}
        for request, line in self.early:
            last = max((k for k in self.made if k not in billed), default=None)
            if last is None:
                self.notes.add("token count with no assistant output of its own, left out", line)
                continue
            self._bill(last, request)
            billed.add(last)
        self.early = []
        for index, (when, model) in self.made.items():
            if index not in billed:  # e.g. a turn aborted, or the log ends, before Codex wrote the count
                self.thread.requests.append(AgentRequest(index, f"message-{index}", when, model, None))
        self.thread.requests.sort(key=lambda q: q.message)
        self._flush_compaction_place()
        self.thread.close_pending()


def _uuid7_ms(text: Any) -> int | None:
    """The millisecond a UUIDv7 was made (its first 48 bits), None for anything else."""
    if not isinstance(text, str) or len(text) != 36 or text[14:15] != "7":
        return None
    try:
        return int(text[:8] + text[9:13], 16)
    except ValueError:
        return None


class _ForkTracker:
    """Where a forked rollout's copy of its parent's records ends (see the module docstring)."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.metas = 0
        self.parent = ""
        self.own_ms: int | None = None
        self.copying = False
        self.first_own = 0
        self.copied: list[AgentRequest] = []

    def session_meta(self, payload: dict) -> None:
        self.metas += 1
        forked = payload.get("forked_from_id")
        if self.metas == 1 and isinstance(forked, str) and forked:
            self.parent, self.own_ms, self.copying = forked[:80], _uuid7_ms(payload.get("id")), True
            if self.own_ms is None:
                self.copying = False
                self.notes.add(f"forked from {self.parent}, but its ids are no UUIDv7: the copied part of the "
                               "parent's history cannot be told apart, and is counted as this session's", 1)

    def turn(self, turn_id: Any, messages: int, line: int) -> None:
        """A turn starts (``task_started``, ``turn_context``): the fork's own once its id is no older."""
        if not self.copying:
            return
        started = _uuid7_ms(turn_id)
        if started is not None and self.own_ms is not None and started >= self.own_ms:
            self.copying, self.first_own = False, messages

    def result(self) -> Fork | None:
        if not self.parent or self.own_ms is None:
            return None
        return Fork(self.parent, self.first_own, tuple(self.copied))


def _n(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _usage(last: dict, counts: Counts) -> ReportedUsage | None:
    """A request's ``last_token_usage`` (None when a count in it is no count)."""
    raw = {k: counts.get(last, k) for k in _USAGE_KEYS}
    if counts.bad:
        return None
    return ReportedUsage(prompt_tokens=raw["input_tokens"], cached_tokens=raw["cached_input_tokens"],
                         cache_write_tokens=0, completion_tokens=raw["output_tokens"],
                         reasoning_tokens=raw["reasoning_output_tokens"], raw=raw, raw_first=raw)


def _join(a: Any, b: str) -> Any:
    if not b:
        return a
    return b if not a else f"{a}\n{b}"


def _input_content(content: Any) -> Any:
    """Input parts as OpenAI content: text parts joined; images kept as ``image_url`` parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[Message] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "input_image" and isinstance(part.get("image_url"), str):
            parts.append({"type": "image_url", "image_url": {"url": part["image_url"]}})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _output(p: dict) -> Any:
    """A tool output as text: a string, ``{"content": ...}`` or content parts."""
    out = p.get("output")
    if out is None and "tools" in p:  # tool_search_output lists the tools it found
        return json.dumps(p.get("tools"), ensure_ascii=False)
    if isinstance(out, str):
        return out
    if isinstance(out, dict):
        if isinstance(out.get("content"), (str, list)):
            return _input_content(out["content"])
        return _input_content([out])
    if isinstance(out, list):
        return _input_content(out)
    return ""


def _convert_history(items: list) -> list[Message]:
    """A ``replacement_history`` (Responses API input items) as legal OpenAI messages."""
    notes = Notes()
    reader = _Reader(notes)
    for k, item in enumerate(items):
        if isinstance(item, dict):
            reader.item(item, Record(k + 1, {}))
    reader.finish()
    return reader.thread.messages
