"""Claude Code's auto-compaction rule: when it fires, and what it puts back after its summary.

Claude Code's source is not public. Everything here is read from its own logs,
documentation, changelog and issues, and each constant says which:

- read in this project's Claude Code logs (``../shared/agentlogs/claude-code``, Claude
  Code 2.1.x): the summary message's opening and closing sentences, the
  ``compact_boundary`` records (``compactMetadata.trigger`` / ``preTokens``);
- *reported* (read by users in the minified ``cli.js`` and quoted in issues, not
  read here): the 13,000-token buffer and the 20,000-token reserve for the summary's
  output, anthropics/claude-code#12004 (``nx1 = 13000``, ``tyI = 20000``, threshold
  = available input - 13,000) and #8136 (``maxOutputTokensOverride: lx1`` = 20,000);
  the threshold formula ``context_window - min(max_output_tokens, 20_000) - 13_000``
  (= 167,000 on a 200K window) as Ruya-AI/cozempic#38 quotes ``autoCompact.ts``;
  ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` as a fraction (jundot/omlx#2400);
- *documented / reported behaviour*: after a compaction the memory files (CLAUDE.md)
  are loaded again with the system prompt (docs: "Manage Claude's memory"; the
  complaints of #4017, #5731, #17175 predate it), and recently read files are read back
  in (#43603, #43600, #15426: "Read ... (16 lines)" right after "Conversation
  compacted"); the counts of files and tokens re-read are *reported* from the
  ``services/compact`` constants quoted in dust-tt/dust#23767
  (``POST_COMPACT_MAX_FILES_TO_RESTORE`` 5, ``POST_COMPACT_MAX_TOKENS_PER_FILE`` 5,000,
  ``POST_COMPACT_TOKEN_BUDGET`` 50,000) and were not read here.

Checked against the logs (tests/test_triggers.py): every real auto compaction with a reported
``preTokens`` came at or just past 167,000 on a 200K window (Claude Code 2.1.32-2.1.49: the reserve
of 20,000, this rule's default) or 155,000 (2.1.2-2.1.17: a reserve of 32,000,
``ClaudeCodePolicy(compact_max_output_tokens=32_000)``), never between; the 1M-window session past
967,000.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar

from ..context.compaction import SUMMARY_HEADER, summarize_dropped
from ..context.messages import Message, call_arguments, call_id, call_name, calls_of, role_of, text_of
from .agent_windows import AgentRule, ModelWindow, Trigger, check_window, split_system
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register

__all__ = ["ClaudeCodePolicy", "SUMMARY_OPENING", "SUMMARY_CLOSING", "AUTOCOMPACT_BUFFER_TOKENS",
           "COMPACT_MAX_OUTPUT_TOKENS", "reinjected_files"]

# read in the corpus's Claude Code 2.1.x logs (the compact summary user message), byte for byte
SUMMARY_OPENING = ("This session is being continued from a previous conversation that ran out of context. "
                   "The summary below covers the earlier portion of the conversation.\n\n")
SUMMARY_CLOSING = ("\nPlease continue the conversation from where we left off without asking the user any further "
                   "questions. Continue with the last task that you were asked to work on.")
AUTOCOMPACT_BUFFER_TOKENS = 13_000  # reported: anthropics/claude-code#12004 (nx1)
COMPACT_MAX_OUTPUT_TOKENS = 20_000  # reported: #12004 (tyI), #8136 (lx1)
POST_COMPACT_MAX_FILES_TO_RESTORE = 5  # reported: dust-tt/dust#23767
POST_COMPACT_MAX_TOKENS_PER_FILE = 5_000  # reported: dust-tt/dust#23767
POST_COMPACT_TOKEN_BUDGET = 50_000  # reported: dust-tt/dust#23767
READ_TOOLS = ("Read",)  # Claude Code's file tools, as its logs name them
EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
PLAN_TOOLS = ("TodoWrite", "ExitPlanMode")
CLAUDE_MD = "CLAUDE.md"


def _path_of(call) -> str | None:
    try:
        args = json.loads(call_arguments(call) or "{}")
    except ValueError:
        return None
    path = args.get("file_path") or args.get("notebook_path") if isinstance(args, dict) else None
    return path if isinstance(path, str) and path else None


def _file_events(history: list) -> list[tuple[str, str, int]]:
    """``(path, tool, index of the call)`` for every Read/Edit/Write call, oldest first."""
    out = []
    for i, m in enumerate(history):
        for c in calls_of(m) if role_of(m) == "assistant" else ():
            if call_name(c) in READ_TOOLS + EDIT_TOOLS and (path := _path_of(c)):
                out.append((path, call_name(c), i))
    return out


def reinjected_files(history: list, tokens: Callable[[Message], int], *, max_files: int, per_file: int,
                     budget: int) -> list[dict]:
    """The most recently read or edited files, newest first: each the last Read result of that path (its
    text cut to ``per_file`` tokens at 4 characters a token), while the total stays within ``budget``."""
    results = {m.get("tool_call_id"): m for m in history if role_of(m) == "tool"}
    reads: dict[str, str] = {}
    for m in history:
        for c in calls_of(m) if role_of(m) == "assistant" else ():
            if call_name(c) in READ_TOOLS and (path := _path_of(c)) and call_id(c) in results:
                reads[path] = text_of(results[call_id(c)])
    out: list[dict] = []
    used, seen = 0, set()
    for path, _tool, _i in reversed(_file_events(history)):
        if path in seen or path not in reads or len(out) >= max_files:
            continue
        seen.add(path)
        text = reads[path][: per_file * 4]
        msg = {"role": "user", "content": f"<system-reminder>\nCalled the Read tool with the following input: "
                                          f"{json.dumps({'file_path': path})}\nResult of calling the Read tool:\n"
                                          f"{text}\n</system-reminder>"}
        cost = tokens(msg)
        if used + cost > budget:
            break
        out.append(msg)
        used += cost
    return out


def _plan(history: list) -> list[dict]:
    """The last TodoWrite / ExitPlanMode call's arguments, as the reminder Claude Code attaches."""
    for m in reversed(history):
        for c in reversed(calls_of(m)) if role_of(m) == "assistant" else ():
            if call_name(c) in PLAN_TOOLS:
                return [{"role": "user", "content": f"<system-reminder>\nThe plan and task list before the "
                                                    f"compaction ({call_name(c)}):\n{call_arguments(c)}\n"
                                                    f"</system-reminder>"}]
    return []


def _memory(history: list) -> list:
    """Messages carrying a memory file (a CLAUDE.md's contents in a system reminder): loaded again."""
    return [m for m in history
            if role_of(m) == "user" and CLAUDE_MD in text_of(m) and "<system-reminder>" in text_of(m)]


@register
@dataclass(frozen=True)
class ClaudeCodePolicy(Policy, AgentRule):
    """Claude Code's auto-compaction: the whole history becomes one summary, then memory, plan and files return.

    Source: Claude Code is closed source; the rule is read from its logs, docs and issues (the module
    docstring says which constant comes from where, and which are *reported* rather than read).

    Trigger (``trigger``): at ``context_window - min(max_output_tokens, compact_max_output_tokens) -
    autocompact_buffer_tokens`` tokens of the request (167,000 on a 200K window); with
    ``autocompact_pct_override`` (``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``, a fraction) at that share of the
    window when it is lower.

    What (``compact``): every message after the system prompt is summarized (Claude Code's compaction
    summarizes the whole conversation and keeps none of it verbatim); the context becomes the system
    message (it stands for Claude Code's system prompt with CLAUDE.md, sent again on every request),
    one user message ``SUMMARY_OPENING + summary + SUMMARY_CLOSING``, then what is re-injected:
    ``reinject_claude_md`` (messages carrying a CLAUDE.md in a system reminder), ``reinject_plan``
    (the last TodoWrite/ExitPlanMode call), and up to ``max_files_to_restore`` of the most recently
    read or edited files (their last Read result, ``max_tokens_per_file`` each, ``file_restore_budget``
    in all, in tokens of ``env.tokens()``). The rule, not a simulation of the model: the summary is the
    lab's summarizer's answer.

    Options: ``autocompact_buffer_tokens`` (13,000), ``compact_max_output_tokens`` (20,000),
    ``max_output_tokens`` (None: the model's), ``autocompact_pct_override`` (None), ``reinject_claude_md``,
    ``reinject_plan``, ``max_files_to_restore`` (5), ``max_tokens_per_file`` (5,000),
    ``file_restore_budget`` (50,000), ``excerpt_tool_calls`` (what the summarizer is shown).
    """

    autocompact_buffer_tokens: int = AUTOCOMPACT_BUFFER_TOKENS
    compact_max_output_tokens: int = COMPACT_MAX_OUTPUT_TOKENS
    max_output_tokens: int | None = None
    autocompact_pct_override: float | None = None
    reinject_claude_md: bool = True
    reinject_plan: bool = True
    max_files_to_restore: int = POST_COMPACT_MAX_FILES_TO_RESTORE
    max_tokens_per_file: int = POST_COMPACT_MAX_TOKENS_PER_FILE
    file_restore_budget: int = POST_COMPACT_TOKEN_BUDGET
    excerpt_tool_calls: bool = True
    name: ClassVar[str] = "claude_code_rule"
    agent: ClassVar[str] = "claude_code"
    summary_prefixes: ClassVar[tuple[str, ...]] = (SUMMARY_OPENING,)

    def __post_init__(self) -> None:
        check_positive(self.autocompact_buffer_tokens, "autocompact_buffer_tokens", zero=True)
        check_positive(self.compact_max_output_tokens, "compact_max_output_tokens", zero=True)
        if self.max_output_tokens is not None:
            check_positive(self.max_output_tokens, "max_output_tokens")
        if self.autocompact_pct_override is not None:
            check_positive(self.autocompact_pct_override, "autocompact_pct_override", upper=1)
        for name in ("max_files_to_restore", "max_tokens_per_file", "file_restore_budget"):
            check_positive(getattr(self, name), name, zero=True)

    def trigger(self, window: ModelWindow) -> Trigger:
        out = min(self.max_output_tokens or window.max_output_tokens, self.compact_max_output_tokens)
        threshold = window.context_window - out - self.autocompact_buffer_tokens
        check_window(window.context_window, reserve=out + self.autocompact_buffer_tokens)
        if self.autocompact_pct_override is not None:
            threshold = min(threshold, int(window.context_window * self.autocompact_pct_override))
        return Trigger(self.name, window.context_window, threshold, inclusive=True,
                       note=f"window - {out:,} reserved for the summary - {self.autocompact_buffer_tokens:,} buffer")

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        system, history = split_system(context)
        summary = summarize_dropped(history, env.summarizer, excerpt_tool_calls=self.excerpt_tool_calls,
                                    excerpts=env.excerpts)
        body = summary.note[len(SUMMARY_HEADER) + 1:] if summary.failure is None else summary.note
        note = SUMMARY_OPENING + body + "\n" + SUMMARY_CLOSING
        back: list = _memory(history) if self.reinject_claude_md else []
        back += _plan(history) if self.reinject_plan else []
        back += reinjected_files(history, env.tokens(), max_files=self.max_files_to_restore,
                                 per_file=self.max_tokens_per_file, budget=self.file_restore_budget)
        new = system + [{"role": "user", "content": note}] + back
        ev = make_event(self, "placeholder" if summary.failure else "summary", context, new, env, size)
        detail = (f"claude_code_rule: summarized {len(history)} messages, re-injected {len(back)} "
                  f"(memory, plan, recent files); {size:,} -> {ev.size_after:,}")
        if summary.failure:
            detail += f"; summarizer failed: {summary.failure}"
        return new, replace(ev, note=note, failure=summary.failure, summarizer_calls=int(summary.called),
                            detail=detail)
