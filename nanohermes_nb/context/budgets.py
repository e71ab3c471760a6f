"""The four layers of caps, as one tunable object.

Every number the article gives (SPEC section 2) is a field here, so a notebook or a
sweep can change one cap and see what moves. ``DEFAULT_BUDGETS`` reproduces
NanoHermes exactly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields

__all__ = ["Budgets", "DEFAULT_BUDGETS", "CapRow", "caps_table", "over_budget"]


def over_budget(size: int, budget: int) -> bool:
    """The one trigger: a context is over its budget when its size exceeds it (SPEC 3.1).

    A size equal to the budget is still within it. Every check in the project
    (``compact``, the replay loop, the live agent loop, ``apply_policy``) asks
    this function, so the rule is written once.
    """
    return size > budget


@dataclass(frozen=True)
class Budgets:
    """Every cap of NanoHermes's context layer (SPEC section 2), in its own unit."""

    # layer 1: where tool output is produced
    max_file_bytes: int = 4_194_304  # read_file refuses larger files
    read_max_lines: int = 2_000  # read_file default `limit`
    grep_max_file_bytes: int = 1_048_576  # grep skips larger files
    grep_max_matches: int = 200
    grep_max_line_chars: int = 240
    glob_max_paths: int = 500
    command_capture_bytes: int = 262_144  # run_command, stdout and stderr each
    task_capture_bytes: int = 524_288  # background task output
    web_max_response_bytes: int = 2_097_152
    web_max_chars: int = 20_000  # web_fetch `max_chars` default
    # layer 2: every tool result, at the dispatch door
    max_output: int = 20_000  # bytes, through clamp()
    # layer 3: the system message
    max_project_docs: int = 20_000  # bytes of the joined AGENTS.md chain
    skill_max_body_chars: int = 20_000
    memory_inject_top_k: int = 4
    memory_inject_char_budget: int = 2_400
    memory_max_text_chars: int = 400
    memory_max_entries: int = 500
    # layer 4: the session
    context_char_budget: int = 120_000  # bytes of compact JSON, despite the name
    keep_recent: int = 10  # messages, not turns
    summary_max_words: int = 300

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"Budgets.{f.name} must be an int, got {value!r}")
            if value < 0:
                raise ValueError(f"Budgets.{f.name} must be >= 0, got {value}")

    def replace(self, **changes: int) -> Budgets:
        """A copy with some caps changed (the object itself is frozen)."""
        return dataclasses.replace(self, **changes)

    def changed(self) -> dict[str, int]:
        """The caps that differ from the article's defaults."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != f.default
        }


DEFAULT_BUDGETS = Budgets()


@dataclass(frozen=True)
class CapRow:
    layer: str
    cap: str
    field: str
    value: int
    unit: str
    over_the_cap: str
    note: str


# (layer, what is capped, field, unit, what happens over the cap, visible note)
_CAPS = (
    ("1 tool", "read_file: file size", "max_file_bytes", "bytes", "refuse, nothing read",
     "<path> is N bytes (> {max_file_bytes}); read it in chunks with offset/limit"),
    ("1 tool", "read_file: lines per call", "read_max_lines", "lines", "stop",
     "… N more lines (total M)"),
    ("1 tool", "grep: file size", "grep_max_file_bytes", "bytes", "file skipped silently", ""),
    ("1 tool", "grep: matches", "grep_max_matches", "matches", "stop scanning",
     "… stopped after {grep_max_matches} matches"),
    ("1 tool", "grep: line width", "grep_max_line_chars", "chars", "line cut", "…"),
    ("1 tool", "glob: paths", "glob_max_paths", "paths", "stop",
     "… capped at {glob_max_paths} files"),
    ("1 tool", "run_command: stdout, stderr", "command_capture_bytes", "bytes each",
     "keep reading, discard", "… stdout truncated (N bytes not shown)"),
    ("1 tool", "background task output", "task_capture_bytes", "bytes", "keep first part",
     "… output truncated (N bytes not shown)"),
    ("1 tool", "web_fetch: response body", "web_max_response_bytes", "bytes", "stop reading",
     "[response truncated at {web_max_response_bytes} bytes]"),
    ("1 tool", "web_fetch: extracted text", "web_max_chars", "chars", "cut",
     "… N chars omitted"),
    ("2 dispatch", "every tool result", "max_output", "bytes", "clamp",
     "… output truncated (N chars omitted)"),
    ("3 system", "project docs (AGENTS.md chain)", "max_project_docs", "bytes", "cut tail",
     "… project guidance truncated"),
    ("3 system", "skill body", "skill_max_body_chars", "chars", "cut", "… skill body truncated"),
    ("3 system", "memory injection: entries", "memory_inject_top_k", "entries",
     "only the top entries", ""),
    ("3 system", "memory injection: block", "memory_inject_char_budget", "chars",
     "stop at the first entry that does not fit", ""),
    ("3 system", "memory entry text", "memory_max_text_chars", "chars", "cut on write", ""),
    ("3 system", "memory store", "memory_max_entries", "entries", "evict the oldest", ""),
    ("4 session", "session", "context_char_budget", "bytes of compact JSON", "compaction",
     "summary or placeholder message"),
    ("4 session", "kept after compaction", "keep_recent", "messages (not turns)", "", ""),
    ("4 session", "summary", "summary_max_words", "words (asked in the prompt)", "", ""),
)


def caps_table(budgets: Budgets = DEFAULT_BUDGETS) -> list[CapRow]:
    """One row per cap, with the value and note as the given budgets make them."""
    values = dataclasses.asdict(budgets)
    return [
        CapRow(layer, cap, field, values[field], unit, over, note.format(**values))
        for layer, cap, field, unit, over, note in _CAPS
    ]
