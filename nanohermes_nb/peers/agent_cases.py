"""The agent rules whose code cannot run here (TypeScript, Rust), pinned by cases from their own tests.

Each case is one assertion of the source's own test file, written in the lab's
terms: a function of the port and its arguments (``options["fn"]``, the input in
``history``) and what the source's test expects (``expected``). Whole-context
cases go through ``apply_policy``. Sources (test file @ commit):

- Cline: ``src/core/context/context-management/__tests__/ContextManager.test.ts`` @9fd2b99b;
- Roo Code: ``src/core/condense/__tests__/index.spec.ts`` and
  ``src/core/context-management/__tests__/context-management.spec.ts`` @d1e74cb3;
- OpenCode: ``packages/opencode/test/session/compaction.test.ts`` @001aa6cc;
- Goose: ``crates/goose/src/context_mgmt/mod.rs`` (its ``mod tests``) @331a8429;
- Claude Code (closed source): the numbers its issues report (anthropics/claude-code#12004,
  Ruya-AI/cozempic#38), not tests;
- Codex CLI: the ``codex`` cases (``peers/codex.py``) run through ``codex_cli_rule``.

Tests are cited by name (``describe`` / ``it`` or ``fn``). ``AGENT_CASES`` holds them; each rule's
row in the agreement table counts its cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..context.sizing import message_size
from ..policies import apply_policy, resolve_policy
from ..policies.agent_windows import ModelWindow
from ..policies.cline import max_allowed_size, next_truncation_range, should_compact
from ..policies.goose import middle_out
from ..policies.opencode import prune_indices, usable
from ..policies.roo_code import allowed_tokens
from . import Pinned, PinnedCase, register_pinned
from .codex import codex_cases

__all__ = ["AGENT_CASES", "FUNCTIONS", "run_agent_case"]

CLINE = "src/core/context/context-management/__tests__/ContextManager.test.ts@9fd2b99b"
ROO_CM = "src/core/context-management/__tests__/context-management.spec.ts@d1e74cb3"
ROO_CONDENSE = "src/core/condense/__tests__/index.spec.ts@d1e74cb3"
OPENCODE = "packages/opencode/test/session/compaction.test.ts@001aa6cc"
GOOSE = "crates/goose/src/context_mgmt/mod.rs (mod tests)@331a8429"
CLAUDE = "anthropics/claude-code#12004, Ruya-AI/cozempic#38 (reported, closed source)"


def _alternating(count: int) -> list[str]:
    """``createMessages(count)``: the task, then assistant/user alternating."""
    return ["user"] + ["assistant" if i % 2 else "user" for i in range(1, count)]


def _range(count: int, keep: str, deleted=None) -> list:
    return list(next_truncation_range(count, _alternating(count), tuple(deleted) if deleted else None, keep))


def _opencode_overflow(context: int, output: int, used: int, input_limit: int | None = None) -> bool:
    return used >= usable(context, output, input_limit) if context else False


def _prune(outputs: list, users_after: int) -> bool:
    """A session: a user message, an assistant with tool outputs ``(tool, chars)``, then ``users_after`` users."""
    history: list = [{"role": "user", "content": "first"},
                     {"role": "assistant", "content": "", "tool_calls": [
                         {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": "{}"}}
                         for i, (tool, _n) in enumerate(outputs)]}]
    history += [{"role": "tool", "tool_call_id": f"c{i}", "content": "x" * n} for i, (_t, n) in enumerate(outputs)]
    history += [{"role": "user", "content": f"turn {k}"} for k in range(users_after)]
    return bool(prune_indices(history, 40_000, 20_000)[0])


def _goose_attempts(tool_responses: int, limit: int) -> int:
    """The removal percentage ``do_compact`` succeeds with when more than ``limit`` tool responses overflow."""
    for pct in (0, 10, 20, 50, 100):
        if tool_responses - len(middle_out(list(range(tool_responses)), pct)) <= limit:
            return pct
    return -1


def _claude_threshold(window: int, max_output: int) -> int:
    return resolve_policy("claude_code_rule").trigger(ModelWindow("m", window, max_output)).threshold  # type: ignore[attr-defined]


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "cline_range": _range,
    "cline_should_compact": should_compact,
    "cline_max_allowed": max_allowed_size,
    "roo_allowed": allowed_tokens,
    "opencode_overflow": _opencode_overflow,
    "opencode_prune": _prune,
    "goose_attempt": _goose_attempts,
    "claude_threshold": _claude_threshold,
}


def _fn(policy: str, name: str, source: str, fn: str, args: list, expected: Any) -> PinnedCase:
    return PinnedCase(name=name, source=source, history=[{"args": args}], expected=[{"result": expected}],
                      options={"fn": fn, "policy": policy})


def _cline() -> list[PinnedCase]:
    c = "cline_rule"
    return [
        _fn(c, "first truncation with half keep", CLINE, "cline_range", [11, "half"], [2, 5]),
        _fn(c, "first truncation with quarter keep", CLINE, "cline_range", [11, "quarter"], [2, 7]),
        _fn(c, "sequential truncation with half keep (first)", CLINE, "cline_range", [21, "half"], [2, 9]),
        _fn(c, "sequential truncation with half keep (second)", CLINE, "cline_range", [21, "half", [2, 9]], [2, 13]),
        _fn(c, "handles small message arrays", CLINE, "cline_range", [3, "half"], [2, 1]),
        _fn(c, "ensures the last message in range is a user message", CLINE, "cline_range", [14, "half"], [2, 7]),
        _fn(c, "does not compact at 33K tokens with default 0.75 threshold on 200K context", CLINE,
            "cline_should_compact", [33_000, 200_000, 0.75], False),
        _fn(c, "compacts when tokens exceed 0.75 threshold on 200K context", CLINE,
            "cline_should_compact", [155_000, 200_000, 0.75], True),
        _fn(c, "compacts at only 10K tokens when threshold is accidentally set to 0.05", CLINE,
            "cline_should_compact", [10_500, 200_000, 0.05], True),
        _fn(c, "falls back to maxAllowedSize when threshold is undefined", CLINE,
            "cline_should_compact", [155_000, 200_000, None], False),
        _fn(c, "falls back to maxAllowedSize when threshold is 0", CLINE, "cline_should_compact",
            [155_000, 200_000, 0], False),
        _fn(c, "includes cacheWrites and cacheReads in total token count", CLINE, "cline_should_compact",
            [155_500, 200_000, 0.75], True),
        _fn(c, "threshold is capped at maxAllowedSize even when percentage is very high", CLINE,
            "cline_should_compact", [165_000, 200_000, 1.0], True),
        _fn(c, "maxAllowedSize of a 200K window (getContextWindowInfo)", CLINE, "cline_max_allowed", [200_000],
            160_000),
    ]


def _roo() -> list[PinnedCase]:
    r = "roo_code_rule"
    return [
        _fn(r, "should use ANTHROPIC_DEFAULT_MAX_TOKENS as buffer when maxTokens is undefined (81808)", ROO_CM,
            "roo_allowed", [100_000, None], 81_808),
        _fn(r, "should use maxTokens as buffer when specified (100000 * 0.9 - 50000)", ROO_CM, "roo_allowed",
            [100_000, 50_000], 40_000),
        PinnedCase("should remove the specified fraction of messages (rounded to even number)", ROO_CM,
                   [_EMPTY, *_roo_five()], [_EMPTY, _roo_five()[0], {"role": "user", "content": _MARKER},
                                            *_roo_five()[3:]], options={"policy": r, "auto_condense_context": False}),
    ]


_EMPTY = {"role": "system", "content": ""}
_MARKER = "[Sliding window truncation: 2 messages hidden to reduce context]"


def _roo_five() -> list:
    names = ("First", "Second", "Third", "Fourth", "Fifth")
    return [{"role": "user" if k % 2 == 0 else "assistant", "content": f"{n} message"} for k, n in enumerate(names)]


def _opencode() -> list[PinnedCase]:
    o = "opencode_rule"
    return [
        _fn(o, "returns true when token count exceeds usable context", OPENCODE, "opencode_overflow",
            [100_000, 32_000, 80_000], True),
        _fn(o, "returns false when token count within usable context", OPENCODE, "opencode_overflow",
            [200_000, 32_000, 110_000], False),
        _fn(o, "includes cache.read in token count", OPENCODE, "opencode_overflow", [100_000, 32_000, 80_000], True),
        _fn(o, "respects input limit for input caps", OPENCODE, "opencode_overflow",
            [400_000, 128_000, 274_000, 272_000], True),
        _fn(o, "returns false when input/output are within input caps", OPENCODE, "opencode_overflow",
            [400_000, 128_000, 230_000, 272_000], False),
        _fn(o, "returns false when output within limit with input caps", OPENCODE, "opencode_overflow",
            [200_000, 10_000, 59_999, 120_000], False),
        _fn(o, "BUG: without limit.input, same token count correctly triggers compaction", OPENCODE,
            "opencode_overflow", [200_000, 32_000, 198_000], True),
        _fn(o, "returns false when model context limit is 0", OPENCODE, "opencode_overflow",
            [0, 32_000, 110_000], False),
        _fn(o, "prune: compacts old completed tool output", OPENCODE, "opencode_prune", [[["bash", 200_000]], 2],
            True),
        _fn(o, "prune: skips protected skill tool output", OPENCODE, "opencode_prune", [[["skill", 200_000]], 2],
            False),
    ]


def _goose() -> list[PinnedCase]:
    return [_fn("goose_rule", "test_progressive_removal_on_context_exceeded (10 responses, 2 fit)", GOOSE,
                "goose_attempt", [10, 2], 100)]


def _claude() -> list[PinnedCase]:
    return [_fn("claude_code_rule", "threshold = 200,000 - 20,000 - 13,000 = 167,000", CLAUDE, "claude_threshold",
                [200_000, 64_000], 167_000)]


def _codex_cli() -> list[PinnedCase]:
    return [PinnedCase(c.name, c.source, c.history, c.expected, c.budget, {**c.options, "policy": "codex_cli_rule"},
                       c.summary) for c in codex_cases()]


def run_agent_case(case: PinnedCase) -> list:
    """The port's answer to one case, in the case's form."""
    fn = case.options.get("fn")
    if fn is not None:
        return [{"result": FUNCTIONS[fn](*case.history[0]["args"])}]
    options = {k: v for k, v in case.options.items() if k != "policy"}
    policy = resolve_policy(case.options["policy"], **options)
    return apply_policy(policy, case.history, budget=case.budget, size=message_size,
                        summarizer=lambda _e: case.summary).messages


AGENT_CASES: dict[str, Callable[[], list[PinnedCase]]] = {
    "cline_rule": _cline, "roo_code_rule": _roo, "opencode_rule": _opencode, "goose_rule": _goose,
    "claude_code_rule": _claude, "codex_cli_rule": _codex_cli,
}
_SOURCES = {"cline_rule": CLINE, "roo_code_rule": f"{ROO_CM}, {ROO_CONDENSE}", "opencode_rule": OPENCODE,
            "goose_rule": GOOSE, "claude_code_rule": CLAUDE, "codex_cli_rule": "codex-rs compaction tests"}

def _version(name: str) -> Callable[[], str]:
    return lambda: _SOURCES[name]


for _name, _cases in AGENT_CASES.items():
    register_pinned(Pinned(_name, _SOURCES[_name], _version(_name), _cases, run_agent_case))
