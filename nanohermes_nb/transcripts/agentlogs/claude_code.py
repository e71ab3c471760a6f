"""Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``) as a transcript.

Each line is a record: ``user`` / ``assistant`` records carry an Anthropic message,
``system`` records carry events (``compact_boundary`` among them), and many other types
(``summary``, ``file-history-snapshot``, ``progress``, ``attachment``, ``mode`` ...) carry
no message. How the log becomes OpenAI messages:

- The main thread: records link to their parent by ``parentUuid``. The thread is the chain
  from the last message record back to the root, crossing each compaction by the
  boundary's ``logicalParentUuid`` (or, when that parent is not in the file, by the record
  before it), plus the side branches that belong to it: results of parallel tool calls
  hang off their own call. A branch the user abandoned (a prompt edited and sent again)
  is left out and noted. Sidechain records (``isSidechain``, sub-agents) become separate
  transcripts in ``sidechains``, one per sub-agent (``agentId``, else one for all).
- One API response is written as one record per content block, all with the same
  ``message.id``: they are merged into one assistant message, one ``AgentRequest``, whose
  usage takes the input side from the first record and ``output_tokens`` from the last
  (early records hold a streaming placeholder).
- ``tool_use`` / ``tool_result`` blocks become ``tool_calls`` / tool messages (Anthropic
  converter), thinking blocks the assistant's ``reasoning_content``.
- Left out as Claude Code leaves them out of the model's context: ``isMeta`` records,
  slash-command records (``<command-name>``, ``<local-command-stdout>`` ...) and the
  synthetic assistant messages it writes itself (model ``<synthetic>``, no API request).
- ``compact_boundary`` opens a ``ToolCompaction`` (trigger, ``preTokens``/``postTokens``);
  the following ``isCompactSummary`` user message is its summary and continuation, and is
  NOT added to the messages (see ``Transcript``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..anthropic import anthropic_message
from ..base import AgentRequest, Bad, Message, ReportedUsage, ToolCompaction, Transcript
from .records import Counts, Notes, Record, epoch, text_of
from .thread import Thread

__all__ = ["read_claude_code", "is_claude_code", "CLAUDE_TYPES"]

# record types Claude Code writes that carry no message for the model
_NO_MESSAGE = frozenset({
    "summary", "file-history-snapshot", "file-history-delta", "progress", "queue-operation", "attachment",
    "custom-title", "ai-title", "agent-name", "mode", "permission-mode", "last-prompt", "frame-link",
    "pr-link", "started", "result", "relocated", "worktree-state", "bridge-session", "atis-latch",
    "tag", "agent-setting",
})
CLAUDE_TYPES = frozenset({"user", "assistant", "system"}) | _NO_MESSAGE
_COMMAND_TAGS = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
                 "<local-command-stderr>", "<local-command-caveat>")
_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


def is_claude_code(data: dict) -> bool:
    """A record of a Claude Code session (its type, and the ids only Claude Code writes)."""
    kind = data.get("type")
    if not isinstance(kind, str) or "payload" in data:
        return False
    if kind not in CLAUDE_TYPES:  # a type from a newer version: the reader notes it
        return "uuid" in data and "sessionId" in data
    if kind in ("user", "assistant"):
        return isinstance(data.get("message"), dict) and ("uuid" in data or "sessionId" in data)
    return "uuid" in data or "sessionId" in data or "leafUuid" in data or "messageId" in data


def read_claude_code(records: list[Record], notes: Notes, path: str) -> Transcript:
    """The main thread as a Transcript; sidechains apart (see the module docstring)."""
    records = _drop_repeats(records, notes)
    main = [r for r in records if not r.data.get("isSidechain")]
    side = [r for r in records if r.data.get("isSidechain")]
    if not any(r.data.get("type") in ("user", "assistant") for r in main):
        main, side = side, []  # a sub-agent's own file (subagents/agent-*.jsonl): its thread is the main one
    kept = _main_thread(main, notes)
    thread = _Builder(notes).run(r for r in main if id(r) in kept)
    sidechains = [_sidechain(group, path) for group in _by_agent(side)] + _progress_agents(main, path)
    return Transcript(thread.messages, path=path, format="claude-code", agent="claude_code",
                      requests=thread.requests, compactions=thread.compactions,
                      sidechains=sidechains)


def _drop_repeats(records: list[Record], notes: Notes) -> list[Record]:
    """Records written again unchanged under the same uuid (a resumed session copies its last one)."""
    seen: dict[str, list[dict]] = {}  # uuid -> identities seen
    out = []
    for r in records:
        uuid = r.data.get("uuid")
        if isinstance(uuid, str):
            body = _identity(r.data)
            if body in seen.get(uuid, ()):
                notes.add("record repeated under the same uuid (a resumed session), left out", r.line)
                continue
            seen.setdefault(uuid, []).append(body)
        out.append(r)
    return out


def _identity(data: dict) -> dict:
    """What a resumed session's copy of a record keeps: its parent, type and message (an assistant
    message by its response id: a newer version adds fields such as ``context_management``); the
    session id, time, working folder and version may change (seen: a session resumed on another machine)."""
    msg = data.get("message")
    if isinstance(msg, dict) and isinstance(msg.get("id"), str):
        msg = msg["id"]
    return {"type": data.get("type"), "subtype": data.get("subtype"), "parent": data.get("parentUuid"),
            "message": msg, "content": data.get("content")}


def _sidechain(records: list[Record], path: str) -> Transcript:
    notes = Notes()
    thread = _Builder(notes).run(records)
    return Transcript(thread.messages, path=path, format="claude-code", agent="claude_code",
                      requests=thread.requests, compactions=thread.compactions, skipped=notes.lines())


def _progress_agents(records: list[Record], path: str) -> list[Transcript]:
    """Sub-agents Claude Code 2.1.x streams into the parent's log as ``progress`` records (``data.type``
    ``agent_progress``, its ``agentId``, and the sub-agent's own message record in ``data.message``): one
    transcript each, its path ``<log>#agent-<agentId>``. The sub-agent's last response is not streamed
    (its usage is only in the parent's tool result), so these threads miss their final request."""
    groups: dict[str, list[Record]] = {}
    for r in records:
        data = r.data.get("data")
        if r.data.get("type") != "progress" or not isinstance(data, dict) or data.get("type") != "agent_progress":
            continue
        message, agent = data.get("message"), data.get("agentId")
        if isinstance(message, dict) and isinstance(agent, str) and message.get("type") in ("user", "assistant"):
            groups.setdefault(agent, []).append(Record(r.line, message))
    return [_sidechain(_drop_repeats(group, Notes()), f"{path}#agent-{agent}") for agent, group in groups.items()]


def _by_agent(records: list[Record]) -> list[list[Record]]:
    groups: dict[Any, list[Record]] = {}
    for r in records:
        agent = r.data.get("agentId")
        groups.setdefault(agent if isinstance(agent, str) else None, []).append(r)
    return [g for g in groups.values() if any(r.data.get("type") in ("user", "assistant") for r in g)]


# ---------------------------------------------------------------- the main thread


def _parent(data: dict) -> str | None:
    parent = data.get("parentUuid") or data.get("logicalParentUuid")
    return parent if isinstance(parent, str) else None


def _main_thread(records: list[Record], notes: Notes) -> set[int]:
    """ids of the records on the main thread: the leaf's chain plus its side branches."""
    by_uuid = {r.data["uuid"]: k for k, r in enumerate(records) if isinstance(r.data.get("uuid"), str)}
    if len(by_uuid) < sum(isinstance(r.data.get("uuid"), str) for r in records):
        notes.add("uuids repeat (not a tree of records), the thread is taken in file order", records[0].line)
        return {id(r) for r in records}
    chain = _chain(records, by_uuid)
    kept: set[int] = set()
    kept_uuids: set[str] = set()
    for k, r in enumerate(records):
        uuid = r.data.get("uuid")
        if not isinstance(uuid, str):
            kept.add(id(r))  # records without a place in the tree (summaries, snapshots)
            continue
        parent = _parent(r.data)
        if k in chain or parent in kept_uuids and not _starts_branch(r.data):
            kept.add(id(r))
            kept_uuids.add(uuid)
        elif r.data.get("type") in ("user", "assistant"):
            notes.add("record on a branch the conversation left (an edited or retried turn), left out", r.line)
    return kept


def _chain(records: list[Record], by_uuid: dict[str, int]) -> set[int]:
    """Indices from the last message record back to the first (compactions crossed).

    Where the chain stops (a root, or a parent not in this file: a compaction boundary, a
    checkpoint that starts mid-session, conversations appended to one file) it goes on with
    the message record before it in file order.
    """
    messages = [k for k, r in enumerate(records) if r.data.get("type") in ("user", "assistant") and "uuid" in r.data]
    last = messages[-1] if messages else None
    leaf = next((k for k in reversed(messages) if not records[k].data.get("isMeta")), last)
    chain: set[int] = set()
    k = leaf
    while k is not None and k not in chain:
        chain.add(k)
        parent = _parent(records[k].data)
        k = by_uuid[parent] if parent in by_uuid else _previous_message(records, k)
    return chain


def _previous_message(records: list[Record], k: int) -> int | None:
    for j in range(k - 1, -1, -1):
        if records[j].data.get("type") in ("user", "assistant", "system") and "uuid" in records[j].data:
            return j
    return None


def _starts_branch(data: dict) -> bool:
    """A user prompt whose parent is on the thread but which is not: an edited turn.

    A compaction's summary never is, even off the leaf's chain: a partial compaction (Claude Code 2.1.2xx,
    ``compactMetadata.preservedSegment``) hangs the records after it off the preserved segment's tail, so
    the chain from the leaf passes the boundary and its summary by."""
    if data.get("type") != "user" or data.get("isCompactSummary"):
        return False
    content = data.get("message", {}).get("content") if isinstance(data.get("message"), dict) else None
    return not (isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                                  for b in content))


# ---------------------------------------------------------------- records to messages


class _Builder:
    """One pass over a thread's records in file order."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.thread = Thread(notes)
        self.open_ids: dict[str, int] = {}  # message.id -> index of its merged assistant message
        self.first_usage: dict[str, dict] = {}
        self.compaction: dict | None = None  # a compact_boundary waiting for its summary

    def run(self, records: Iterable[Record]) -> Thread:
        for r in records:
            kind = r.data.get("type")
            if kind == "assistant":
                self._assistant(r)
            elif kind == "user":
                self._user(r)
            elif kind == "system":
                self._system(r)
            elif kind not in _NO_MESSAGE:
                self.notes.add(f"record of unknown type {str(kind)[:40]!r} (a newer Claude Code?), left out", r.line)
        self._flush_compaction(None)
        self.thread.close_pending()
        return self.thread

    # assistant records: merged by message.id

    def _assistant(self, r: Record) -> None:
        msg = r.data.get("message")
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), (list, str)):
            self.notes.add("assistant record without a message, left out", r.line)
            return
        if msg.get("model") == "<synthetic>":
            return
        given = msg.get("id")
        message_id = given if isinstance(given, str) else f"line-{r.line}"
        content = msg["content"] if isinstance(msg["content"], list) else [{"type": "text", "text": msg["content"]}]
        try:
            converted = anthropic_message({"role": "assistant", "content": content}, "assistant", f"line {r.line}")[0]
        except Bad as bad:
            self.notes.add(f"assistant record not readable ({bad.reason}), left out", r.line)
            return
        reasoning = _thinking(content)
        index = self.open_ids.get(message_id)
        if index is None:
            index = self._new_assistant(r, msg, message_id, converted, reasoning)
        else:
            _merge(self.thread.messages[index], converted, reasoning)
            self._update_usage(index, message_id, msg, r.line)
        self.thread.add_calls(converted, r.line)

    def _new_assistant(self, r: Record, msg: dict, message_id: str, converted: Message, reasoning: str) -> int:
        self._flush_compaction(len(self.thread.messages))
        if reasoning:
            converted["reasoning_content"] = reasoning
        index = self.thread.add(converted)
        # calls registered by add_calls after; pending closes only at the next non-tool message
        self.open_ids[message_id] = index
        given, model = msg.get("usage"), msg.get("model")
        usage = given if isinstance(given, dict) else None
        self.first_usage[message_id] = usage or {}
        self.thread.requests.append(AgentRequest(
            message=index, id=message_id, time=epoch(r.data.get("timestamp")),
            model=model if isinstance(model, str) else "",
            usage=_usage(usage, usage, Counts(self.notes, r.line)) if usage else None))
        return index

    def _update_usage(self, index: int, message_id: str, msg: dict, line: int) -> None:
        usage = msg.get("usage")
        if not isinstance(usage, dict):
            return
        for k in range(len(self.thread.requests) - 1, -1, -1):
            request = self.thread.requests[k]
            if request.message == index:
                first = self.first_usage.get(message_id) or usage
                if request.usage is None and first:  # the first record's usage was refused: stays refused
                    return
                self.thread.requests[k] = AgentRequest(request.message, request.id, request.time, request.model,
                                                       _usage(first, usage, Counts(self.notes, line)))
                return

    # user records: prompts, tool results, the compact summary

    def _user(self, r: Record) -> None:
        data = r.data
        msg = data.get("message")
        if not isinstance(msg, dict):
            self.notes.add("user record without a message, left out", r.line)
            return
        content = msg.get("content")
        if data.get("isCompactSummary"):
            self._summary(r, content)
            return
        if data.get("isMeta") or _is_command(content):
            return
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self.notes.add("user record whose content is not text or blocks, left out", r.line)
            return
        try:
            converted = anthropic_message({"role": "user", "content": content}, "user", f"line {r.line}")
        except Bad as bad:
            self.notes.add(f"user record not readable ({bad.reason}), left out", r.line)
            return
        for m in converted:
            if m["role"] == "tool":
                extra: dict[str, Any] = {}
                self.thread.add_result(m["tool_call_id"], m["content"], r.line, extra)
            else:
                self._flush_compaction(len(self.thread.messages))
                self.thread.add(m)

    def _summary(self, r: Record, content: Any) -> None:
        text = text_of(content)
        if self.compaction is None:  # a summary without its boundary (older versions)
            self.compaction = {"time": epoch(r.data.get("timestamp")), "meta": {}}
        self.compaction["summary"] = text
        self.compaction["continuation"] = ({"role": "user", "content": text},)

    # system records: only the compaction boundary matters to the context

    def _system(self, r: Record) -> None:
        if r.data.get("subtype") != "compact_boundary":
            return
        self._flush_compaction(len(self.thread.messages))
        meta = r.data.get("compactMetadata")
        self.compaction = {"time": epoch(r.data.get("timestamp")), "meta": meta if isinstance(meta, dict) else {}}

    def _flush_compaction(self, index: int | None) -> None:
        """Record the open compaction as happening at ``index`` (the next message)."""
        if self.compaction is None:
            return
        c, self.compaction = self.compaction, None
        meta = c["meta"]
        self.thread.compactions.append(ToolCompaction(
            message=len(self.thread.messages) if index is None else index, time=c["time"],
            trigger=meta.get("trigger") if meta.get("trigger") in ("auto", "manual") else "",
            pre_tokens=_int_or_none(meta.get("preTokens")), post_tokens=_int_or_none(meta.get("postTokens")),
            summary=c.get("summary", ""), continuation=c.get("continuation", ())))


def _thinking(content: list) -> str:
    texts = [b["thinking"] for b in content
             if isinstance(b, dict) and b.get("type") == "thinking" and isinstance(b.get("thinking"), str)]
    return "\n".join(t for t in texts if t)


def _merge(target: Message, more: Message, reasoning: str) -> None:
    """Add one more content-block record of the same response to its assistant message."""
    if reasoning:
        target["reasoning_content"] = "\n".join(t for t in (target.get("reasoning_content"), reasoning) if t)
    if more.get("content") is not None:
        target["content"] = _join_content(target.get("content"), more["content"])
    if more.get("tool_calls"):
        target["tool_calls"] = [*(target.get("tool_calls") or []), *more["tool_calls"]]


def _join_content(a: Any, b: Any) -> Any:
    if a is None or a == "":
        return b
    if isinstance(a, str) and isinstance(b, str):
        return a + "\n" + b
    parts = lambda x: [{"type": "text", "text": x}] if isinstance(x, str) else list(x)  # noqa: E731
    return parts(a) + parts(b)


def _is_command(content: Any) -> bool:
    text = content if isinstance(content, str) else text_of(content) if isinstance(content, list) else ""
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") != "text" for b in content):
        return False
    return text.lstrip().startswith(_COMMAND_TAGS)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _usage(first: dict, last: dict, counts: Counts) -> ReportedUsage | None:
    """Anthropic usage: input side from the first record, output from the last (None when a count is bad)."""
    fresh, write, read = (counts.get(first, k) for k in _USAGE_KEYS[:3])
    raw, raw_first = ({k: counts.get(u, k) for k in _USAGE_KEYS} for u in (last, first))
    creation = first.get("cache_creation")
    hour = counts.get(creation, "ephemeral_1h_input_tokens") if isinstance(creation, dict) else 0
    if counts.bad:
        return None
    return ReportedUsage(
        prompt_tokens=fresh + write + read, cached_tokens=read, cache_write_tokens=write,
        completion_tokens=raw["output_tokens"], reasoning_tokens=0, raw=raw, raw_first=raw_first,
        cache_write_1h_tokens=min(hour, write))
