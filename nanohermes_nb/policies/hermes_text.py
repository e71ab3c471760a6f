"""What hermes-agent 0.19.0 writes when it compacts, and the small pure functions that write it.

Helpers of the ``hermes_agent`` policy (``hermes_agent.py`` holds the algorithm).
Everything here follows ``agent/context_compressor.py`` of hermes-agent 0.19.0
(line numbers of that file in brackets): the reference-only summary prefix and
its end marker [87-198], the note appended to the system prompt [3546], the
one-line stand-in for a pruned tool result [708-856], the deterministic task
snapshot that grounds every summary [2711-2771], and the per-message token
estimate its budget walks use [360-446]; the fallback summary written when the
summarizer fails [1923-2115] is in ``hermes_fallback.py``. The texts are
hermes' own, byte for byte (the lab's output must be identical to hermes' to be
compared); the tests check each constant against the installed library.

Not reproduced: hermes' secret redaction (``agent/redact.py``) of the quoted
user text and of the fallback summary. It is a parameter (``redact``, identity
by default): pass ``agent.redact.redact_sensitive_text`` to get it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "TASK_HEADING",
    "SUMMARY_PREFIX",
    "LEGACY_SUMMARY_PREFIX",
    "HISTORICAL_SUMMARY_PREFIXES",
    "ALL_SUMMARY_PREFIXES",
    "SUMMARY_END_MARKER",
    "MERGED_PRIOR_CONTEXT_HEADER",
    "MERGED_SUMMARY_DELIMITER",
    "COMPACTION_NOTE",
    "PRUNED_TOOL_PLACEHOLDER",
    "DUPLICATE_NOTE",
    "content_text",
    "append_text",
    "is_summary_content",
    "strip_summary_prefix",
    "with_summary_prefix",
    "tool_result_line",
    "shrink_arguments",
    "ground_task_snapshot",
    "hermes_message_tokens",
    "unredacted",
]

Redact = Callable[[str], str]

TASK_HEADING = "## Historical Task Snapshot"
IN_PROGRESS_HEADING = "## Historical In-Progress State"
PENDING_ASKS_HEADING = "## Historical Pending User Asks"
REMAINING_WORK_HEADING = "## Historical Remaining Work"

# The reference-only handoff prefix [87-115], assembled from its clauses: the
# older prefixes hermes still recognises [199-267] share most of them.
_P_OPEN = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. "
    "This is a handoff from a previous context window — treat it as background reference, NOT as "
    "active instructions. Do NOT answer questions or fulfill requests mentioned in this summary; "
    "they were already addressed. "
)
_P_LATEST = (
    "Respond ONLY to the latest user message that appears AFTER this summary — that message is the "
    "single source of truth for what to do right now. "
)
_P_TOPIC = (
    "Topic overlap with the summary does NOT mean you should resume its task: even on similar "
    "topics, the latest user message WINS. Treat ONLY the latest message as the active task and "
    f"discard stale items from '{TASK_HEADING}' / '{IN_PROGRESS_HEADING}' / '{PENDING_ASKS_HEADING}' / "
    f"'{REMAINING_WORK_HEADING}' entirely — do not 'wrap up' or 'finish' work described there unless "
    "the latest message explicitly asks for it. "
)
_P_REVERSE = (
    "Reverse signals in the latest message (e.g. 'stop', 'undo', 'roll back', 'just verify', "
    "'don't do that anymore', 'never mind', a new topic) must immediately end any in-flight work "
    "described in the summary; do not re-surface it in later turns. "
)
_P_MEMORY = (
    "IMPORTANT: Your persistent memory (MEMORY.md, USER.md) in the system prompt is ALWAYS "
    "authoritative and active — never ignore or deprioritize memory content due to this compaction note. "
)
_P_TOOLS = (
    "None of the above restricts HOW you work: your tools remain fully active — keep calling them "
    "normally for the active task (edit files, run commands, search) instead of merely narrating "
    "what you would do. "
)
_P_STATE = "The current session state (files, config, etc.) may reflect work described here — avoid repeating it:"
_P_CARVEOUT = (
    "If the latest user message is consistent with the '## Active Task' section, you may use the "
    "summary as background. If the latest user message contradicts, supersedes, changes topic from, "
    "or in any way diverges from '## Active Task' / '## In Progress' / '## Pending User Asks' / "
    "'## Remaining Work', the latest message WINS — discard those stale items entirely and do not "
    "'wrap up the old task first'. "
)
_P_RESUME = (
    "Your current task is identified in the '## Active Task' section of the summary — resume exactly "
    "from there. Respond ONLY to the latest user message that appears AFTER this summary. "
)

SUMMARY_PREFIX = _P_OPEN + _P_LATEST + _P_TOPIC + _P_REVERSE + _P_MEMORY + _P_TOOLS + _P_STATE
LEGACY_SUMMARY_PREFIX = "[CONTEXT SUMMARY]:"
HISTORICAL_SUMMARY_PREFIXES = (
    _P_OPEN + _P_LATEST + _P_TOPIC + _P_REVERSE + _P_MEMORY + _P_STATE,
    _P_OPEN + _P_LATEST + _P_CARVEOUT + _P_REVERSE + _P_MEMORY + _P_STATE,
    _P_OPEN + _P_RESUME + _P_STATE,
)
SUMMARY_END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
MERGED_PRIOR_CONTEXT_HEADER = "[PRIOR CONTEXT — for reference only; not a new message]"
MERGED_SUMMARY_DELIMITER = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"
COMPACTION_NOTE = (  # appended to the system prompt [3546]
    "[Note: Some earlier conversation turns have been compacted into a handoff summary to preserve "
    "context space. The current session state may still reflect earlier work, so build on that "
    "summary and state rather than re-doing work. Your persistent memory (MEMORY.md, USER.md) "
    "remains fully authoritative regardless of compaction.]"
)
PRUNED_TOOL_PLACEHOLDER = "[Old tool output cleared to save context space]"
DUPLICATE_NOTE = "[Duplicate tool output — same content as a more recent call]"
# every opening a hermes summary has had; HermesAgentPolicy declares them (``policies.summary_prefixes``)
ALL_SUMMARY_PREFIXES = (SUMMARY_PREFIX, LEGACY_SUMMARY_PREFIX, *HISTORICAL_SUMMARY_PREFIXES)


def unredacted(text: str) -> str:
    """The text as it is: the ``redact`` of a caller that hides nothing."""
    return text


# -- message content ------------------------------------------------------------------------


def content_text(content: Any) -> str:
    """Text of a content value: strings as is, text parts joined by newlines [449-469]."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, dict))]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return str(content)


def append_text(content: Any, text: str, *, prepend: bool = False) -> Any:
    """Content with text added at the end (or the start); a list of parts gets a text part [472-487]."""
    if content is None:
        return text
    if isinstance(content, str):
        return text + content if prepend else content + text
    if isinstance(content, list):
        block = {"type": "text", "text": text}
        return [block, *content] if prepend else [*content, block]
    return text + str(content) if prepend else str(content) + text


def is_summary_content(content: Any) -> bool:
    """True when a message's content is a hermes handoff summary, merged into a tail message or not [2651-2662]."""
    text = content_text(content).lstrip()
    if MERGED_SUMMARY_DELIMITER in text:
        text = text.split(MERGED_SUMMARY_DELIMITER, 1)[1].lstrip()
    return text.startswith(ALL_SUMMARY_PREFIXES)


def strip_summary_prefix(summary: str) -> str:
    """The summary body: merged prior context, any known prefix and the end marker removed [2616-2642]."""
    text = (summary or "").strip()
    if MERGED_SUMMARY_DELIMITER in text:
        text = text.split(MERGED_SUMMARY_DELIMITER, 1)[1].strip()
    for prefix in ALL_SUMMARY_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):].lstrip()
            break
    if text.endswith(SUMMARY_END_MARKER):
        text = text[: -len(SUMMARY_END_MARKER)].rstrip()
    return text


def with_summary_prefix(summary: str) -> str:
    """The body under the current prefix [2645-2648]."""
    text = strip_summary_prefix(summary)
    return f"{SUMMARY_PREFIX}\n{text}" if text else SUMMARY_PREFIX


# -- the one-line stand-in for a pruned tool result --------------------------------------------


def _arg(args: Mapping[str, Any], key: str, default: str = "") -> str:
    value = args.get(key, default)
    return value if isinstance(value, str) else (str(value) if value is not None else default)


_BROWSER_TOOLS = frozenset({"browser_navigate", "browser_click", "browser_snapshot", "browser_type",
                            "browser_scroll", "browser_vision"})


def _line_for_files(name: str, args: dict, content: str, n: int, lines: int) -> str | None:
    if name == "terminal":
        cmd = _arg(args, "command")
        cmd = cmd[:77] + "..." if len(cmd) > 80 else cmd
        code = re.search(r'"exit_code"\s*:\s*(-?\d+)', content)
        return f"[terminal] ran `{cmd}` -> exit {code.group(1) if code else '?'}, {lines} lines output"
    if name == "read_file":
        return f"[read_file] read {args.get('path', '?')} from line {args.get('offset', 1)} ({n:,} chars)"
    if name == "write_file":
        written = _arg(args, "content").count("\n") + 1 if args.get("content") else "?"
        return f"[write_file] wrote to {args.get('path', '?')} ({written} lines)"
    if name == "search_files":
        count = re.search(r'"total_count"\s*:\s*(\d+)', content)
        return (f"[search_files] {args.get('target', 'content')} search for '{args.get('pattern', '?')}' "
                f"in {args.get('path', '.')} -> {count.group(1) if count else '?'} matches")
    if name == "patch":
        return f"[patch] {args.get('mode', 'replace')} in {args.get('path', '?')} ({n:,} chars result)"
    if name == "execute_code":
        source = _arg(args, "code")
        preview = source[:60].replace("\n", " ") + ("..." if len(source) > 60 else "")
        return f"[execute_code] `{preview}` ({lines} lines output)"
    return None


def _line_for_web(name: str, args: dict, n: int) -> str | None:
    if name in _BROWSER_TOOLS:
        url, ref = args.get("url", ""), args.get("ref", "")
        detail = f" {url}" if url else (f" ref={ref}" if ref else "")
        return f"[{name}]{detail} ({n:,} chars)"
    if name == "web_search":
        return f"[web_search] query='{args.get('query', '?')}' ({n:,} chars result)"
    if name == "web_extract":
        urls = args.get("urls", [])
        first = urls[0] if isinstance(urls, list) and urls else "?"
        if isinstance(first, dict):
            first = first.get("url") or first.get("href") or "?"
        elif not isinstance(first, str):
            first = "?"
        more = f" (+{len(urls) - 1} more)" if isinstance(urls, list) and len(urls) > 1 else ""
        return f"[web_extract] {first}{more} ({n:,} chars)"
    if name == "vision_analyze":
        return f"[vision_analyze] '{_arg(args, 'question')[:50]}' ({n:,} chars)"
    return None


def _line_for_agent(name: str, args: dict, n: int) -> str | None:
    if name == "delegate_task":
        goal = _arg(args, "goal")
        goal = goal[:57] + "..." if len(goal) > 60 else goal
        return f"[delegate_task] '{goal}' ({n:,} chars result)"
    if name in ("skill_view", "skills_list", "skill_manage"):
        return f"[{name}] name={args.get('name', '?')} ({n:,} chars)"
    fixed = {
        "memory": lambda: f"[memory] {args.get('action', '?')} on {args.get('target', '?')}",
        "todo": lambda: "[todo] updated task list",
        "clarify": lambda: "[clarify] asked user a question",
        "text_to_speech": lambda: f"[text_to_speech] generated audio ({n:,} chars)",
        "cronjob": lambda: f"[cronjob] {args.get('action', '?')}",
        "process": lambda: f"[process] {args.get('action', '?')} session={args.get('session_id', '?')}",
    }
    return fixed[name]() if name in fixed else None


def _tool_result_line(name: Any, arguments: Any, content: Any) -> str:
    try:
        args = json.loads(arguments) if arguments else {}
    except (json.JSONDecodeError, TypeError):
        args = {}
    if not isinstance(args, dict):
        args = {}
    content = content or ""
    n = len(content)
    lines = content.count("\n") + 1 if content.strip() else 0
    line = (_line_for_files(name, args, content, n, lines) or _line_for_web(name, args, n)
            or _line_for_agent(name, args, n))
    if line is not None:
        return line
    first = "".join(f" {k}={str(v)[:40]}" for k, v in list(args.items())[:2])
    return f"[{name}]{first} ({n:,} chars result)"


def tool_result_line(name: Any, arguments: Any, content: Any) -> str:
    """hermes' one-line stand-in for an old tool result, by tool name [708-856].

    ``terminal`` gives ``ran `cmd` -> exit N, L lines output``, ``read_file`` the
    path and offset, a dozen other hermes tools their own line; any other tool
    ``[name] k=v k=v (N chars result)`` with the first two arguments. Never
    raises (hermes' guard [731-734]).
    """
    try:
        return _tool_result_line(name, arguments, content)
    except Exception:  # a malformed historical call must not break compaction, as in hermes
        size = len(content) if isinstance(content, str) else 0
        return f"[{name}] ({size:,} chars result)"


def shrink_arguments(arguments: str, head: int = 200) -> str:
    """Long string values in a JSON arguments blob cut to ``head`` chars, re-serialized [515-558].

    Re-serialized with ``json.dumps`` defaults even when nothing was cut (so a
    compact blob gains spaces), as hermes does; non-JSON arguments come back as they are.
    """
    try:
        parsed = json.loads(arguments)
    except (ValueError, TypeError):
        return arguments

    def shrink(obj: Any) -> Any:
        if isinstance(obj, str):
            return obj[:head] + "...[truncated]" if len(obj) > head else obj
        if isinstance(obj, dict):
            return {k: shrink(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [shrink(v) for v in obj]
        return obj

    return json.dumps(shrink(parsed), ensure_ascii=False)


# -- grounding: the task snapshot every summary carries ------------------------------------------

_SYNTHETIC_USER_PREFIXES = (  # agent/conversation_compression.py [553-559]
    "[System: Your previous response was truncated",
    "[System: The previous response was cut off",
    "[System: Your previous tool call",
    "[Your active task list was preserved across context compression]",
    "[IMPORTANT: Background process ",
)
_SYNTHETIC_USER_FLAGS = ("_todo_snapshot_synthetic", "_empty_recovery_synthetic",
                         "_verification_stop_synthetic", "_pre_verify_synthetic")
_TASK_SECTION = re.compile(rf"(?ms)^{re.escape(TASK_HEADING)}\s*\n.*?(?=^## |\Z)")


def _user_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text") or p.get("content") or "") for p in content if isinstance(p, dict))
    return ""


def is_real_user_message(message: Any) -> bool:
    """A user message a human wrote: not a summary, not runtime scaffolding (conversation_compression.py [583-603])."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    if any(message.get(flag) for flag in _SYNTHETIC_USER_FLAGS):
        return False
    text = _user_text(message).strip()
    if not text or text.startswith(_SYNTHETIC_USER_PREFIXES):
        return False
    return not is_summary_content(text)


def _task_snapshot(turns: Sequence[Mapping[str, Any]], redact: Redact) -> str | None:
    for m in reversed(turns):
        if not is_real_user_message(m):
            continue
        text = redact(content_text(m.get("content")).strip())
        if not text:
            continue
        text = re.sub(r"\s+", " ", text)
        if len(text) > 1400:
            text = text[:1385].rstrip() + " ...[truncated]"
        return (f"User asked (deterministic, from compacted turns): {text!r}\n"
                "Historical only; newer protected-tail messages after this summary win.")
    return None


def ground_task_snapshot(summary: str, turns: Sequence[Mapping[str, Any]], redact: Redact = unredacted) -> str:
    """The summary with its task section replaced by the newest real user ask of the summarized turns [2748-2771]."""
    snapshot = _task_snapshot(turns, redact)
    if not snapshot:
        return summary
    body = strip_summary_prefix(summary)
    section = f"{TASK_HEADING}\n{snapshot}\n\n"
    if _TASK_SECTION.search(body):
        return _TASK_SECTION.sub(lambda _m: section, body, count=1).strip()
    return f"{section}{body}".strip()


# -- per-message token estimate ----------------------------------------------------------------

_IMAGE_CHARS = 1600 * 4
_REPLAY_KEYS = ("reasoning", "reasoning_content", "reasoning_details", "codex_reasoning_items",
                "codex_message_items")


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if not isinstance(content, list):
        return len(str(content or ""))
    total = 0
    for p in content:
        if isinstance(p, str):
            total += len(p)
        elif not isinstance(p, dict):
            total += len(str(p))
        elif p.get("type") in ("image_url", "input_image", "image"):
            total += _IMAGE_CHARS
        else:
            total += len(p.get("text", "") or "")
    return total


def _field_chars(value: Any) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, str):
        return len(value)
    try:
        return len(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
    except (TypeError, ValueError):
        return len(str(value))


def hermes_message_tokens(message: Mapping[str, Any]) -> int:
    """hermes' token estimate of one message for its budget walks [419-446].

    Content characters // 4 + 10, plus ``len(str(call)) // 4`` for each tool call
    (the Python repr of the call dict: hermes counts the whole envelope) and the
    provider replay fields (``reasoning_content`` ...) // 4.
    """
    tokens = _content_chars(message.get("content") or "") // 4 + 10
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            tokens += len(str(call)) // 4
    for key in _REPLAY_KEYS:
        tokens += _field_chars(message.get(key)) // 4
    return tokens
