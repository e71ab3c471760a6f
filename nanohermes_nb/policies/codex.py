"""Codex CLI compaction as a policy: the user messages and one summary, no tool traffic."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..context.compaction import SUMMARY_HEADER, is_summary_message, summarize_dropped
from ..context.messages import Message, role_of, text_of
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register, summary_prefixes

# Codex's summary_prefix.md (openai/codex codex-rs/core/templates/compact/summary_prefix.md @50a53333,
# byte for byte, its double space included): the ``codex`` policy's summaries start with it and a newline.
CODEX_SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking process. "
    "You also have access to the state of the tools that were used by that language model. Use this to build "
    "on the work that has already been done and avoid duplicating work. Here is the summary produced by the "
    "other language model, use the information in this summary to  assist with your own analysis:"
)

APPROX_BYTES_PER_TOKEN = 4
TOKEN_COUNTS = ("codex", "meter")
# codex-rs: UserInstructions / SkillInstructions (instructions/user_instructions.rs), case-sensitive, no trim
_INSTRUCTION_PREFIXES = ("# AGENTS.md instructions for ", "<user_instructions>", "<skill")
# session-state markers and shell commands in user-role messages: trimmed, case-insensitive
_SESSION_TAGS = ("<environment_context>", "<turn_aborted>", "<subagent_notification>", "<user_shell_command>")


def approx_token_count(text: str) -> int:
    """codex-rs ``truncate.rs`` ``approx_token_count``: UTF-8 bytes / 4, rounded up."""
    return -(-len(text.encode("utf-8")) // APPROX_BYTES_PER_TOKEN)


def _split_string(data: bytes, left: int, right: int) -> tuple[str, str]:
    """``split_string``: the longest head within ``left`` bytes and tail within ``right``, on char boundaries."""
    text = data.decode("utf-8")
    head_end, tail_start, pos = 0, len(data), 0
    tail_from = max(len(data) - right, 0)
    for ch in text:
        end = pos + len(ch.encode("utf-8"))
        if end <= left:
            head_end = end
        elif pos >= tail_from and tail_start == len(data):
            tail_start = pos
        pos = end
    tail_start = max(tail_start, head_end)
    return data[:head_end].decode("utf-8"), data[tail_start:].decode("utf-8")


def truncate_text(text: str, max_tokens: int) -> str:
    """codex-rs ``truncate_text(text, TruncationPolicy::Tokens(max_tokens))``: head and tail kept
    within ``4 * max_tokens`` bytes around ``…N tokens truncated…`` (N: removed bytes / 4, rounded up)."""
    data = text.encode("utf-8")
    max_bytes = max_tokens * APPROX_BYTES_PER_TOKEN
    if not data or (max_tokens > 0 and len(data) <= max_bytes):
        return text
    removed = -(-(len(data) - max_bytes) // APPROX_BYTES_PER_TOKEN)
    if max_bytes == 0:
        return f"…{removed} tokens truncated…"
    head, tail = _split_string(data, max_bytes // 2, max_bytes - max_bytes // 2)
    return f"{head}…{removed} tokens truncated…{tail}"


def is_contextual_user_text(text: str) -> bool:
    """Codex's ``is_contextual_user_message_content`` on one text: instructions and session markers
    stored as user messages that are not the user's words (never kept as user messages)."""
    if text.startswith(_INSTRUCTION_PREFIXES):
        return True
    lowered = text.lstrip().lower()
    return lowered.startswith(_SESSION_TAGS)


def collect_user_messages(history: list) -> list[tuple[Message, str]]:
    """codex-rs ``collect_user_messages``: real user messages (not contextual, not a summary), with their text.

    A summary is Codex's own (its prefix) or one any registered policy writes (``summary_prefixes``).
    """
    prefixes = summary_prefixes()
    out = []
    for m in history:
        if role_of(m) != "user":
            continue
        text = text_of(m)
        if is_contextual_user_text(text) or is_summary_message(m, prefixes):  # Codex's own prefix is one of them
            continue
        out.append((m, text))
    return out


def select_user_messages(users: list[tuple[Message, str]], max_tokens: int,
                         count: Callable[[Message, str], int]) -> tuple[list[str], bool]:
    """``build_compacted_history_with_limit``: newest first while they fit ``max_tokens``; the one that
    overflows is truncated to the tokens left and selection stops. Returns texts (oldest first), truncated?"""
    selected: list[str] = []
    truncated = False
    remaining = max_tokens
    if max_tokens > 0:
        for m, text in reversed(users):
            if remaining == 0:
                break
            tokens = count(m, text)
            if tokens <= remaining:
                selected.append(text)
                remaining -= tokens
            else:
                selected.append(truncate_text(text, remaining))
                truncated = True
                break
    selected.reverse()
    return selected, truncated


@register
@dataclass(frozen=True)
class CodexPolicy(Policy):
    """Codex CLI compaction: every real user message (20,000 tokens, newest first) plus one user-role summary.

    Source: openai/codex ``codex-rs/core/src/compact.rs`` (read at e06dd0e5:
    ``collect_user_messages``, ``build_compacted_history``,
    ``COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000``, ``summary_text =
    format!("{SUMMARY_PREFIX}\\n{summary_suffix}")``), pinned by cases taken from
    ``codex-rs/core/tests/suite/compact.rs`` (6dca9c6d) and the module's own
    tests (``nanohermes_nb/peers/codex.py``); provenance in ``docs/policies.md``.

    After the summary turn Codex rebuilds the history as the user messages it
    collected (earlier summaries and contextual messages such as
    ``# AGENTS.md instructions``, ``<environment_context>`` excluded), selected
    newest first while they fit 20,000 tokens counted as UTF-8 bytes / 4 (the
    message that overflows is cut to the tokens left by ``truncate_text``, head
    and tail around ``…N tokens truncated…``, and selection stops), in
    chronological order, then one user message ``SUMMARY_PREFIX + "\\n" +
    summary`` with Codex's own ``summary_prefix.md`` text. Assistant messages,
    tool calls and results are all dropped; the result is trivially legal. A
    rebuilt user message carries only its text (images and extra keys go).

    Lab mapping: the system message stands for Codex's base instructions and
    initial context, which Codex sends outside the history, so ``messages[0]``
    stays first; the summarizer sees the whole history (Codex sends it with its
    compact prompt). A failed summarizer gives the lab's placeholder (Codex
    would fail the compaction turn and keep the history). Codex's trigger (the
    auto-compact token limit) is replaced by the lab trigger.

    Constants as options: ``user_message_max_tokens`` (the 20,000),
    ``summary_role`` (``"user"``, as Codex sends it) and ``excerpt_tool_calls``
    (calls rendered in the summarizer's excerpt, as Codex's history shows them).

    Options (off by default): ``token_count="meter"`` counts the 20,000 with
    ``env.tokens()`` (cl100k by default: the lab's earlier reading).
    """

    user_message_max_tokens: int = 20_000
    summary_role: str = "user"
    excerpt_tool_calls: bool = True
    token_count: str = "codex"
    name: ClassVar[str] = "codex"
    summary_prefixes: ClassVar[tuple[str, ...]] = (CODEX_SUMMARY_PREFIX + "\n",)

    def __post_init__(self) -> None:
        check_positive(self.user_message_max_tokens, "user_message_max_tokens", zero=True)
        if self.token_count not in TOKEN_COUNTS:
            raise ValueError(f"token_count must be one of {TOKEN_COUNTS}, got {self.token_count!r}")

    def _counter(self, env: PolicyEnv) -> Callable[[Message, str], int]:
        if self.token_count == "codex":
            return lambda _m, text: approx_token_count(text)
        tokens = env.tokens()
        return lambda m, text: tokens({"role": "user", "content": text})

    def summarized(self, history: list, env: PolicyEnv) -> list:
        """What the summarizer is shown: the whole history (``codex_cli_rule`` trims it to the window)."""
        return history

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        if len(context) < 2:
            return context, None
        initial = list(context[:1]) if role_of(context[0]) == "system" else []
        history = list(context[len(initial):])
        summary = summarize_dropped(self.summarized(history, env), env.summarizer,
                                    excerpt_tool_calls=self.excerpt_tool_calls, excerpts=env.excerpts)
        note = summary.note
        if summary.failure is None:
            note = CODEX_SUMMARY_PREFIX + "\n" + note[len(SUMMARY_HEADER) + 1:]
        users = collect_user_messages(history)
        texts, truncated = select_user_messages(users, self.user_message_max_tokens, self._counter(env))
        by_text: dict[str, Any] = {}
        for m, text in users:
            by_text.setdefault(text, m)
        kept = []
        for text in texts:
            rebuilt = {"role": "user", "content": text}
            original = by_text.get(text)
            kept.append(original if original == rebuilt else rebuilt)
        new = initial + kept + [{"role": self.summary_role, "content": note}]
        ev = make_event(self, "placeholder" if summary.failure else "summary", context, new, env, size)
        detail = (
            f"codex: kept {len(kept)} of {len(users)} user messages"
            f"{' (the oldest kept one truncated)' if truncated else ''} within "
            f"{self.user_message_max_tokens:,} tokens, removed {len(ev.removed)} "
            f"messages incl. all tool traffic, summary as a {self.summary_role} message; {size:,} -> {ev.size_after:,}"
        )
        if summary.failure:
            detail += f"; summarizer failed: {summary.failure}"
        return new, replace(ev, note=note, failure=summary.failure, summarizer_calls=int(summary.called),
                            detail=detail)
