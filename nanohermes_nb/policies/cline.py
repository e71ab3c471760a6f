"""Cline's context truncation as a policy: repeated file reads deduplicated first, then half (or 3/4) of the rest."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.messages import Message, call_ids, role_of, text_of
from .agent_windows import AgentRule, ModelWindow, Trigger, anthropic_turns, split_system
from .base import Event, Policy, PolicyEnv, PolicyError, make_event, register

__all__ = ["ClinePolicy", "next_truncation_range", "max_allowed_size", "should_compact", "KEEPS",
           "DUPLICATE_FILE_READ_NOTICE", "TRUNCATION_NOTICE", "RESULT_MISSING", "dedupe_file_reads"]

KEEPS = ("none", "lastTwo", "half", "quarter")
FIRST_KEPT = 2  # ContextManager.ts L305: "index 0 and 1 are kept" (the first user-assistant pair)
MIN_SAVED_SHARE = 0.3  # ContextManager.ts L654: ``needToTruncate: percentSaved < 0.3``
DEFAULT_WINDOW = 128_000  # context-window-utils.ts L11: ``contextWindow || 128_000``
# context-window-utils.ts L20-32: the buffer each known window keeps free
BUFFERS = {64_000: 27_000, 128_000: 30_000, 200_000: 40_000}
OTHER_BUFFER, OTHER_SHARE = 40_000, 0.8
# src/core/prompts/responses.ts L10-14 @9fd2b99b (byte for byte)
DUPLICATE_FILE_READ_NOTICE = ("[[NOTE] This file read has been removed to save space in the context window. "
                              "Refer to the latest file read for the most up to date version of this file.]")
TRUNCATION_NOTICE = ("[NOTE] Some previous conversation history with the user has been removed to maintain optimal "
                     "context window length. The initial user task has been retained for continuity, while "
                     "intermediate conversation history has been removed. Keep this in mind as you continue "
                     "assisting the user. Pay special attention to the user's latest messages.")
RESULT_MISSING = "result missing"  # ContextManager.ts ``ensureToolResultsFollowToolUse``
_TOOL_HEADER = re.compile(r"^\[([^\s]+) for '([^']+)'\] Result:")
_MENTION = re.compile(r'<file_content path="([^"]*)">([\s\S]*?)</file_content>')
_FINAL = re.compile(r'(<final_file_content path="[^"]*">)[\s\S]*?(</final_file_content>)')


def max_allowed_size(context_window: int) -> int:
    """``getContextWindowInfo`` (context-window-utils.ts L10-35): the window less a buffer by window size."""
    if context_window in BUFFERS:
        return context_window - BUFFERS[context_window]
    return int(max(context_window - OTHER_BUFFER, context_window * OTHER_SHARE))


def should_compact(total_tokens: int, context_window: int, threshold: float | None = None) -> bool:
    """``shouldCompactContextWindow`` (ContextManager.ts L150-174): the previous request's tokens (in, out,
    cache writes and reads) at or over ``min(floor(window * threshold), maxAllowedSize)``; a threshold of
    None or 0 falls back to ``maxAllowedSize``."""
    allowed = max_allowed_size(context_window)
    rounded = int(context_window * threshold) if threshold else allowed
    return total_tokens >= min(rounded, allowed)


def next_truncation_range(n: int, roles: list[str], deleted: tuple[int, int] | None, keep: str) -> tuple[int, int]:
    """``getNextTruncationRange`` (ContextManager.ts L299-341) on ``n`` messages of Anthropic ``roles``: the
    inclusive range to delete, always from index 2, an even number of messages, ending on an assistant."""
    start_of_rest = deleted[1] + 1 if deleted else FIRST_KEPT
    rest = n - start_of_rest
    if keep == "none":
        remove = max(rest, 0)
    elif keep == "lastTwo":
        remove = max(rest - 2, 0)
    elif keep == "half":
        remove = (rest // 4) * 2
    else:
        remove = (rest * 3 // 4 // 2) * 2
    end = start_of_rest + remove - 1
    if 0 <= end < n and roles[end] != "assistant":
        end -= 1
    return FIRST_KEPT, end


def _first_text(message: Message) -> str | None:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and isinstance(content[0], dict) and content[0].get("type") == "text":
        return content[0].get("text")
    return None


def _with_text(message: Message, text: str) -> dict:
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [{**content[0], "text": text}, *content[1:]]}
    return {**message, "content": text}


def _read_edits(history: list, turns: list) -> tuple[dict[str, list[tuple[int, str]]], dict[int, str]]:
    """``getPossibleDuplicateFileReads`` (L809-946): per path, ``(message index, replacement text)`` of
    each read, in order; the first message of each user turn from index 2 is parsed."""
    reads: dict[str, list[tuple[int, str]]] = {}
    originals: dict[int, str] = {}
    for role, start, _stop in turns[FIRST_KEPT:]:
        text = _first_text(history[start]) if role == "user" else None
        if not text or DUPLICATE_FILE_READ_NOTICE in text:
            continue
        originals[start] = text
        found = _TOOL_HEADER.match(text)
        if found and found.group(1) == "read_file":
            header = found.group(0)
            new = header + "\n" + DUPLICATE_FILE_READ_NOTICE if len(text) > len(header) else DUPLICATE_FILE_READ_NOTICE
            reads.setdefault(found.group(2), []).append((start, new))
        elif found and found.group(1) in ("replace_in_file", "write_to_file") and _FINAL.search(text):
            new = _FINAL.sub(lambda m: f"{m.group(1)} {DUPLICATE_FILE_READ_NOTICE} {m.group(2)}", text, count=1)
            reads.setdefault(found.group(2), []).append((start, new))
        elif not found:
            for mention in _MENTION.finditer(text):
                path = mention.group(1)
                repl = f'<file_content path="{path}">{DUPLICATE_FILE_READ_NOTICE}</file_content>'
                reads.setdefault(path, []).append((start, ("mention", mention.group(0), repl)))  # type: ignore[arg-type]
    return reads, originals


def dedupe_file_reads(history: list, turns: list) -> tuple[list, float]:
    """``applyContextOptimizations`` then ``calculateContextOptimizationMetrics`` (L606-656, L1064-1293):
    every read of a file but its last replaced by the notice; the share of characters that saved."""
    reads, originals = _read_edits(history, turns)
    changed: dict[int, str] = {}
    for occurrences in reads.values():
        for index, new in occurrences[:-1]:
            if isinstance(new, tuple):  # a file mention: replace it inside the (possibly already edited) text
                changed[index] = changed.get(index, originals[index]).replace(new[1], new[2], 1)
            else:
                changed[index] = new
    if not changed:
        return history, 0.0
    total = sum(len(text_of(m)) for m in history)
    saved = sum(len(originals[i]) - len(t) for i, t in changed.items())
    out = [(_with_text(m, changed[i]) if i in changed else m) for i, m in enumerate(history)]
    return out, (saved / total if total else 0.0)


def _fix_results(turns: list[list]) -> list:
    """``ensureToolResultsFollowToolUse`` (L375-480) over Anthropic turns: after an assistant turn with calls,
    the next user turn opens with its results in call order (a missing one reads ``result missing``) and
    results of other ids are dropped. An emptied user turn (its results stripped) takes the missing results;
    one left empty is not sent."""
    out: list = []
    for k, block in enumerate(turns):
        prev = turns[k - 1] if k else []
        if k and prev and role_of(prev[0]) == "assistant" and (not block or role_of(block[0]) != "assistant"):
            ids = [c for m in prev for c in call_ids(m)]
            results = [m for m in block if role_of(m) == "tool"]
            if ids and ([m.get("tool_call_id") for m in results] != ids or role_of(block[0]) != "tool"):
                by_id = {m.get("tool_call_id"): m for m in results}
                fixed = [by_id.get(c) or {"role": "tool", "tool_call_id": c, "content": RESULT_MISSING} for c in ids]
                block = fixed + [m for m in block if role_of(m) != "tool"]
        out.extend(block)
    return out


@register
@dataclass(frozen=True)
class ClinePolicy(Policy, AgentRule):
    """Cline's context truncation: dedupe repeated file reads; if that saves under 30%, drop half the rest in pairs.

    Source: cline/cline ``src/core/context/context-management/ContextManager.ts`` @9fd2b99b (the
    last version before Cline moved to its SDK): ``getNewContextMessagesAndMetadata`` L227-296,
    ``getNextTruncationRange`` L299-341, ``applyContextHistoryUpdates`` L482-550 (orphaned results of
    the first kept user turn removed), ``ensureToolResultsFollowToolUse`` L375-480,
    ``attemptFileReadOptimizationCore`` L626-656 and the file-read deduplication L796-1293,
    ``applyStandardContextTruncationNoticeChange`` L745-757; ``context-window-utils.ts`` L10-35
    (``maxAllowedSize``); the notices in ``src/core/prompts/responses.ts`` L10-14. Pinned by cases
    from ``__tests__/ContextManager.test.ts`` (``peers/agent_cases.py``).

    Messages are counted as Cline counts them, Anthropic turns (``anthropic_turns``: a user turn carries
    the results of the assistant turn before it). One call: (1) every read of a file but the last
    (``[read_file for 'path'] Result:``, ``<final_file_content>`` of an edit, ``<file_content>``
    mentions, in the first message of each user turn from index 2) becomes the duplicate notice;
    if that saved at least 30% of the characters, nothing else happens; (2) else the turns from index 2
    on lose half (``keep="half"``) or, when the size is over twice the budget, three quarters
    (``"quarter"``), an even number ending on an assistant turn; the first assistant message's text
    becomes the truncation notice; the results opening the first kept user turn are dropped (their calls
    are gone) and every assistant turn's results are put in call order, a missing one reading
    ``result missing``.

    Lab mapping: the budget is ``maxAllowedSize``; the size is the previous request's total. The
    ``keep`` choice compares the size with twice the budget, as Cline does (L251-252). Trigger
    (``trigger``): the previous request's tokens at or over ``maxAllowedSize`` of the window (a 200K
    window keeps 40,000 free). Options: ``keep`` (None: Cline's choice; or one of ``KEEPS``),
    ``threshold_percentage`` (the auto-condense threshold, capped at ``maxAllowedSize``; None).
    A history with no user message is an error (Cline keeps the user's task first). Not reproduced:
    Cline's auto-condense path (``useAutoCondense``), where the model itself writes a summary through
    its condense tool; the first-user-message replacement that path makes.
    """

    keep: str | None = None
    threshold_percentage: float | None = None
    name: ClassVar[str] = "cline_rule"
    agent: ClassVar[str] = "cline"

    def __post_init__(self) -> None:
        if self.keep is not None and self.keep not in KEEPS:
            raise ValueError(f"keep must be one of {KEEPS}, got {self.keep!r}")
        if self.threshold_percentage is not None and not 0 <= self.threshold_percentage <= 1:
            raise ValueError(f"threshold_percentage must be >= 0 and <= 1, got {self.threshold_percentage!r}")

    def trigger(self, window: ModelWindow) -> Trigger:
        allowed = max_allowed_size(window.context_window)
        pct = self.threshold_percentage
        threshold = min(int(window.context_window * pct), allowed) if pct else allowed
        return Trigger(self.name, window.context_window, threshold, inclusive=True,
                       note=f"previous request >= maxAllowedSize (window - {window.context_window - allowed:,})")

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        system, history = split_system(context)
        turns = anthropic_turns(history)
        if not any(role == "user" for role, _a, _b in turns):
            raise PolicyError("cline_rule: the history has no user message (Cline keeps the user's task first)")
        deduped, saved = dedupe_file_reads(history, turns)
        keep = self.keep or ("quarter" if size / 2 > env.budget else "half")
        detail = f"cline_rule: deduplicated file reads saved {saved:.0%}"
        if deduped is not history and saved >= MIN_SAVED_SHARE:
            new = system + deduped
        else:
            new, removed = self._truncate(deduped, keep)
            if not removed and deduped is history:
                return context, None
            new = system + new
            detail += f"; removed {removed} of {len(turns)} turns ({keep})"
        ev = make_event(self, "trim", context, new, env, size)
        return new, replace(ev, detail=detail + f"; {size:,} -> {ev.size_after:,}")

    def _truncate(self, history: list, keep: str) -> tuple[list, int]:
        turns = anthropic_turns(history)
        first, end = next_truncation_range(len(turns), [t[0] for t in turns], None, keep)
        if end < first:
            return history, 0
        kept = [history[a:b] for _role, a, b in turns[:first] + turns[end + 1:]]
        if len(kept) > 1 and (text := _first_text(kept[1][0])) and text != TRUNCATION_NOTICE:
            kept[1] = [_with_text(kept[1][0], TRUNCATION_NOTICE), *kept[1][1:]]
        if len(kept) > first and role_of(kept[first][0]) != "assistant":  # L501-514: its results lost their calls
            kept[first] = [m for m in kept[first] if role_of(m) != "tool"]
        return _fix_results(kept), end - first + 1
