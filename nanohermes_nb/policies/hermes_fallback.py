"""hermes-agent's deterministic summary, written when its summarizer fails (the fallback handoff).

Helpers of the ``hermes_agent`` policy, split from ``hermes_text.py`` (which still exports
``fallback_summary``). Follows ``_build_static_fallback_summary`` in
``agent/context_compressor.py`` of hermes-agent 0.19.0 [1923-2115]: the facts it keeps
of the dropped turns (the user's asks, the actions and tool results, the files named,
the blockers, the last turns) and the sectioned text it writes from them, prefix
included, byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .hermes_text import (
    IN_PROGRESS_HEADING,
    PENDING_ASKS_HEADING,
    REMAINING_WORK_HEADING,
    TASK_HEADING,
    Redact,
    content_text,
    tool_result_line,
    unredacted,
    with_summary_prefix,
)

__all__ = ["fallback_summary"]

_PATH_MENTION = re.compile(r"(?:/|~/?|[A-Za-z]:\\)[^\s`'\")\]}<>]+")
_BLOCKER = re.compile(r"\b(error|failed|exception|traceback|timeout|timed out|fatal)\b", re.I)
_PATH_KEYS = frozenset({"path", "workdir", "file_path", "output_path"})


def _add_unique(items: list[str], value: str, limit: int) -> None:
    value = value.strip()
    if value and value not in items and len(items) < limit:
        items.append(value)


def _add_paths(text: str, files: list[str]) -> None:
    for match in _PATH_MENTION.findall(text):
        _add_unique(files, match.rstrip(".,:;"), 12)


def _add_json_paths(obj: Any, files: list[str]) -> None:
    if isinstance(obj, dict):
        for key, val in obj.items():
            if key in _PATH_KEYS and isinstance(val, str):
                _add_unique(files, val, 12)
            _add_json_paths(val, files)
    elif isinstance(obj, list):
        for val in obj:
            _add_json_paths(val, files)
    elif isinstance(obj, str):
        _add_paths(obj, files)


def _call_name_args(call: Any) -> tuple[str, str]:
    if not isinstance(call, dict):
        return "unknown", ""
    fn = call.get("function") or {}
    return str(fn.get("name") or "unknown"), str(fn.get("arguments") or "")


def _one_line(value: Any, redact: Redact) -> str:
    text = re.sub(r"\bgh[pousr]_[A-Za-z0-9_]{8,}\b", "[REDACTED]", redact(content_text(value)))
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) > 700:
        text = text[:685].rstrip() + " ...[truncated]"
    return re.sub(r"\bgh[pousr]_[A-Za-z0-9_.-]+", "[REDACTED]", text)


def _bullets(items: list[str], limit: int = 8) -> str:
    unique: list[str] = []
    for item in (i.strip() for i in items):
        if item and item not in unique:
            unique.append(item)
            if len(unique) >= limit:
                break
    return "\n".join(f"- {item}" for item in unique) if unique else "None."


def _fallback_facts(turns: Sequence[Mapping[str, Any]], redact: Redact) -> dict[str, list[str]]:
    """What the fallback keeps of the dropped turns: asks, actions, files, blockers, the last turns [1938-2030]."""
    f: dict[str, list[str]] = {k: [] for k in ("asks", "actions", "tools", "files", "blockers", "last")}
    calls: dict[str, tuple[str, str]] = {}
    for m in turns:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            for tc in m.get("tool_calls") or []:
                name, raw = _call_name_args(tc)
                args = redact(raw)
                cid = str(tc.get("id") or "") if isinstance(tc, dict) else ""
                if cid:
                    calls[cid] = (name, args)
                if args:
                    try:
                        parsed = json.loads(args)
                    except Exception:
                        parsed = args
                    _add_json_paths(parsed, f["files"])
    for m in turns:
        role = m.get("role", "unknown")
        text = _one_line(m.get("content"), redact)
        _add_paths(text, f["files"])
        names = [_call_name_args(tc)[0] for tc in (m.get("tool_calls") or [])] if role == "assistant" else []
        turn = text
        if names:
            turn = f"tool calls: {', '.join(names[:6])}; {text}" if text else f"tool calls: {', '.join(names[:6])}"
        if turn.strip():
            f["last"] = (f["last"] + [f"{str(role).upper()}: {turn.strip()}"])[-8:]
        if len(text) > 600:
            text = text[:420].rstrip() + " ... " + text[-160:].lstrip()
        if role == "user" and text:
            f["asks"].append(text)
        elif role == "assistant" and (names or text):
            f["actions"].append("Called tool(s): " + ", ".join(names[:6]) if names else text)
        elif role == "tool":
            name, args = calls.get(str(m.get("tool_call_id") or ""), ("unknown", ""))
            f["tools"].append(tool_result_line(name, args, text or ""))
            if _BLOCKER.search(text):
                f["blockers"].append(text[:500])
    return f


def fallback_summary(turns: Sequence[Mapping[str, Any]], *, previous: bool, reason: str | None,
                     redact: Redact = unredacted) -> str:
    """hermes' deterministic handoff when its summary LLM fails, prefix included [1923-2115]."""
    f = _fallback_facts(turns, redact)
    completed = [f"{i}. {item}" for i, item in enumerate((f["actions"] + f["tools"])[:12], start=1)]
    task = f"User asked: {f['asks'][-1]!r}" if f["asks"] else "Unknown from deterministic fallback."
    prev = ("\n\nPrevious compaction summary was present and should still be treated as background "
            "continuity context, but the latest LLM summary update failed.") if previous else ""
    why = f" Summary failure reason: {reason}." if reason else ""
    unknown = "None recoverable from deterministic fallback."
    body = "\n".join([
        TASK_HEADING, task, "", "## Goal",
        "Recovered from a deterministic fallback because the LLM context summarizer was unavailable. "
        "Continue from the protected recent messages after this summary and use current file/system "
        f"state for exact details.{prev}", "",
        "## Constraints & Preferences", "- This fallback was generated locally without an LLM summary call.",
        "- Secrets and credentials were redacted before preservation.",
        "- The summary may be incomplete; prefer verifying current files, git state, processes, and test "
        "results instead of assuming omitted details.", "",
        "## Completed Actions", "\n".join(completed) if completed else "None recoverable from compacted turns.", "",
        "## Active State",
        "Unknown from deterministic fallback. Inspect current repository/session state if needed.", "",
        IN_PROGRESS_HEADING, "Unknown from deterministic fallback — the latest user ask is recorded once under",
        f'"{TASK_HEADING}" above as historical context only. Do NOT treat it as an',
        "unfulfilled instruction to re-answer; verify current state and continue from the",
        "protected recent messages after this summary.", "",
        "## Blocked", _bullets(f["blockers"], 5), "", "## Key Decisions", unknown, "",
        "## Resolved Questions", unknown, "", PENDING_ASKS_HEADING,
        "None recoverable from deterministic fallback. (The latest user ask is preserved once",
        f'under "{TASK_HEADING}" as historical context — it is NOT necessarily', "outstanding.)", "",
        "## Relevant Files", _bullets(f["files"], 12), "", REMAINING_WORK_HEADING,
        "Continue from the most recent unfulfilled user ask and protected tail messages. Verify state "
        "with tools before making claims.", "",
        "## Last Dropped Turns", _bullets(f["last"], 8), "", "## Critical Context",
        "Summary generation was unavailable, so this is a best-effort deterministic fallback for "
        f"{len(turns)} compacted message(s).{why}",
    ])
    summary = with_summary_prefix(redact(body.strip()))
    if len(summary) > 8000:
        summary = summary[:7958].rstrip() + "\n...[fallback summary truncated]"
    return summary
