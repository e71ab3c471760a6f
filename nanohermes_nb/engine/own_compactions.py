"""The agent's own compactions, read from its log, asked the same probes as the policies (issue 36).

A coding agent's log records where it compacted and what it went on from (``ToolCompaction``:
Claude Code's summary message, Codex's replacement history). Here each real compaction gets
the probes of the part it compacted (the messages since the previous compaction, or since the
log's start) and a survival ledger against what the agent actually carried on with:

- Claude Code: the summary is the summary; the records a newer boundary says it kept verbatim
  (``compactMetadata.preservedSegment``, head to tail) are kept; the files it re-attached right
  after the boundary (``attachment`` records of type ``file`` in versions that log them) and the rules files it
  re-read (``nested_memory``) are re-injected; a ``compact_file_reference`` (a file too large to
  re-attach, named for the model) counts as named in the summary;
- Codex: the replacement history's user and assistant messages are kept verbatim, its
  AGENTS.md, permissions and environment messages are re-injected (Codex rebuilds its initial
  context), and its summary is the readable summary text when the log has one. Newer Codex
  versions compact on the server and log the summary encrypted: then nothing is summarized, as
  far as the log can tell, and the compaction says so.

A compaction with nothing before it in the log (a session that continues a compacted one) is a
row with no probes and a note, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..context.messages import role_of, text_of
from ..context.probes import ProbeIndex, is_instructions_doc
from ..context.survival import Compacted, Fate, ledger_rows, survival, tally
from ..policies.base import summary_prefixes
from ..transcripts.base import ToolCompaction
from ..transcripts.session import Session, SessionLike

__all__ = ["OwnCompaction", "Reinjected", "reinjected_by_boundary", "own_compactions", "own_ledger",
           "own_probe_rows"]

_INJECTED_OPENINGS = ("<permissions instructions>", "<environment_context>", "<user_instructions>")


@dataclass(frozen=True)
class Reinjected:
    """What Claude Code put back after one compaction boundary, as its log records it."""

    time: float | None
    files: tuple[str, ...] = ()  # re-attached with their content
    texts: tuple[str, ...] = ()  # their content, and the rules files re-read
    referenced: tuple[str, ...] = ()  # named only (too large to re-attach)
    preserved: tuple[str, ...] = ()  # the text of the records it kept verbatim (``preservedSegment``)


@dataclass(frozen=True)
class OwnCompaction:
    """One of the agent's own compactions and the fate of the probes of what it compacted."""

    transcript: str
    agent: str
    number: int  # 1-based, in the session
    start: int  # first message of the compacted part (the previous compaction's place, or 0)
    at: int  # where it happened: the first message recorded after it
    trigger: str
    pre_tokens: int | None
    post_tokens: int | None
    fates: tuple[Fate, ...]
    summary: str
    reinjected_files: tuple[str, ...]
    note: str = ""

    @property
    def counts(self) -> dict[str, Any]:
        return tally(self.fates)


def _attachment(data: Mapping[str, Any], found: dict[str, Any]) -> None:
    att = data.get("attachment")
    if not isinstance(att, Mapping):
        return
    kind, name = att.get("type"), att.get("filename") or att.get("path")
    content = att.get("content")
    if kind == "file" and isinstance(name, str):
        inner = content.get("file", {}) if isinstance(content, Mapping) else {}
        found["files"].append(name)
        found["texts"].append(str(inner.get("content", "")) if isinstance(inner, Mapping) else "")
    elif kind == "nested_memory" and isinstance(content, Mapping):
        found["texts"].append(str(content.get("content", "")))
    elif kind == "compact_file_reference" and isinstance(name, str):
        found["referenced"].append(name)


def reinjected_by_boundary(path: str | Path) -> list[Reinjected]:
    """For each ``compact_boundary`` of a Claude Code log (main thread, in file order), what followed it.

    The attachment records between the boundary and the next assistant message; an unreadable
    file gives an empty list (the loader reports it).
    """
    from ..transcripts.agentlogs.records import Notes, epoch, iter_records

    try:
        raw = Path(path).read_bytes()
    except OSError:
        return []
    out: list[Reinjected] = []
    found: dict[str, Any] | None = None
    records = [r.data for r in iter_records(raw, Notes()) if not r.data.get("isSidechain")]
    for data in records:
        if data.get("type") == "system" and data.get("subtype") == "compact_boundary":
            if found is not None:
                out.append(_reinjected(found))
            found = {"time": epoch(data.get("timestamp")), "files": [], "texts": [], "referenced": [],
                     "preserved": _preserved(records, data)}
        elif found is not None and data.get("type") == "attachment":
            _attachment(data, found)
        elif found is not None and data.get("type") == "assistant":
            out.append(_reinjected(found))
            found = None
    if found is not None:
        out.append(_reinjected(found))
    return out


def _reinjected(found: dict[str, Any]) -> Reinjected:
    return Reinjected(found["time"], tuple(found["files"]), tuple(found["texts"]), tuple(found["referenced"]),
                      tuple(found["preserved"]))


def _record_text(data: Mapping[str, Any]) -> str:
    """What a model reads of a user or assistant record: its text, its calls' inputs, its tool results."""
    message = data.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    parts: list[str] = []
    for b in blocks if isinstance(blocks, list) else []:
        if not isinstance(b, Mapping):
            continue
        inner = b.get("text") if b.get("type") == "text" else b.get("input") if b.get("type") == "tool_use" \
            else b.get("content") if b.get("type") == "tool_result" else None
        parts.extend(_strings(inner))
    return "\n".join(parts)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _preserved(records: Sequence[Mapping[str, Any]], boundary: Mapping[str, Any]) -> list[str]:
    """The text of the records a boundary's ``compactMetadata.preservedSegment`` kept (head to tail, in file order)."""
    meta = boundary.get("compactMetadata")
    segment = meta.get("preservedSegment") if isinstance(meta, Mapping) else None
    if not isinstance(segment, Mapping):
        return []
    where = {r.get("uuid"): k for k, r in enumerate(records) if isinstance(r.get("uuid"), str)}
    head, tail = where.get(segment.get("headUuid")), where.get(segment.get("tailUuid"))
    if head is None or tail is None or tail < head:
        return []
    return [_record_text(r) for r in records[head:tail + 1] if r.get("type") in ("user", "assistant")]


def _match(compaction: ToolCompaction, boundaries: Sequence[Reinjected], k: int) -> Reinjected | None:
    """The boundary of a compaction: the one at its time, else the k-th."""
    t = compaction.time
    same = [b for b in boundaries if t is not None and b.time is not None and abs(b.time - t) < 1.0]
    if same:
        return same[0]
    return boundaries[k] if k < len(boundaries) else None


def _is_injected(message: Mapping[str, Any]) -> bool:
    return is_instructions_doc(message) or role_of(message) in ("developer", "system") or \
        text_of(message).lstrip().startswith(_INJECTED_OPENINGS)


def _compacted(compaction: ToolCompaction, agent: str, boundary: Reinjected | None) -> tuple[Compacted, str]:
    """What the agent went on from, as survival reads it, and a note on what the log could not show."""
    summary = compaction.summary or ""
    continuation = list(compaction.continuation or ())
    if agent == "claude_code":
        referenced = "\n".join(boundary.referenced) if boundary is not None else ""
        files = boundary.files if boundary is not None else ()
        texts = boundary.texts if boundary is not None else ()
        preserved = "\n".join(boundary.preserved) if boundary is not None else ""
        ctx = Compacted(preserved, "\n".join(p for p in (summary, referenced) if p), "\n".join(texts), frozenset(
            n.replace("\\", "/").rsplit("/", 1)[-1].lower() for n in files))
        note = "" if boundary is not None and (files or texts) else "the log records no re-attached file"
        return ctx, note
    kept = [m for m in continuation if not _is_injected(m) and text_of(m) != summary]
    injected = [m for m in continuation if _is_injected(m)]
    ctx = Compacted.of(kept, lambda m: False, reinjected=injected)
    ctx = Compacted(ctx.kept, summary, ctx.reinjected, ctx.files)
    return ctx, "" if summary else "no readable summary in the log (the provider's summary is encrypted)"


def own_compactions(transcript: SessionLike, name: str = "", path: str | Path | None = None) -> list[OwnCompaction]:
    """Every compaction the agent's log records, with the probes of what it compacted and their fates.

    ``path``: the log itself, for what Claude Code re-attached after compacting (read from the raw
    records; without it, nothing counts as re-injected). A transcript with no compaction gives [].
    """
    log = Session.of(transcript)
    if not log.compactions:
        return []
    agent = log.agent or "agent"
    path = path if path is not None else (log.path or None)
    boundaries = reinjected_by_boundary(path) if path and agent == "claude_code" else []
    messages = log.messages
    index = ProbeIndex(messages, summary_prefixes())
    out, start = [], 0
    for k, c in enumerate(log.compactions):
        at = min(int(c.message), len(messages))
        boundary = _match(c, boundaries, k) if agent == "claude_code" else None
        ctx, note = _compacted(c, agent, boundary)
        probes = index.probes(messages[start:at], at) if at > start else []
        if at <= start:
            note = "nothing before it in the log (the session continues a compacted one)"
        out.append(OwnCompaction(name or Path(str(path or "")).name, agent, k + 1, start, at, c.trigger,
                                 c.pre_tokens, c.post_tokens, tuple(survival(probes, ctx)), c.summary or "",
                                 boundary.files if boundary is not None else (), note))
        start = max(start, at)
    return out


def own_ledger(compactions: Iterable[OwnCompaction]) -> list[dict[str, Any]]:
    """The survival ledger of the agent's own compactions: one row per probe, after the compaction's place."""
    rows = []
    for c in compactions:
        for row in ledger_rows(c.fates):
            rows.append({"transcript": c.transcript, "policy": c.agent, "compaction": c.number, **row})
    return rows


def own_probe_rows(sources: Iterable[tuple[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per agent (``claude_code``, ``codex_cli``): the probe columns of its own compactions, pooled.

    ``sources`` are ``(name, transcript, session or path)``; a path is read only when it is an agent log.
    """
    from .probebook import probe_totals
    from .toolrows import agent_log

    pooled: dict[str, list[Fate]] = {}
    for name, item in sources:
        path = item if isinstance(item, (str, Path)) else None
        log = agent_log(item)
        if log is None or not log.compactions:
            continue
        for c in own_compactions(log, name, path):
            pooled.setdefault(log.agent, []).extend(c.fates)
    out = {}
    for agent, fates in pooled.items():
        totals = probe_totals(tally(fates))
        per = totals.pop("probes")
        out[agent] = {**totals, **{f"probe_{k}": v for k, v in per.items()}}
    return out
