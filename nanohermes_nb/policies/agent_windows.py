"""What the agent rules share: each model's context window, a rule's trigger, Anthropic-style turns.

The eight agent rules (``codex_cli_rule``, ``claude_code_rule``, ``aider_rule``,
``cline_rule``, ``roo_code_rule``, ``opencode_rule``, ``goose_rule``,
``swe_agent_rule``) each say *when* their agent compacts as a function of the
model's window (``trigger(window)``), apart from *what* they do to the context
(``compact``), as hermes-agent's ``context_engine.py`` keeps ``should_compress``
apart from ``compress``. The windows are data
(``nanohermes_nb/resources/context_windows.csv``: one row per model-name prefix,
the longest prefix wins, each with where its numbers come from), so every rule
and the trigger timeline (``engine/triggers.py``) read the same numbers.

Cline and Roo Code keep Anthropic-form histories, where a user turn carries the
tool results of the assistant turn before it; ``anthropic_turns`` groups an
OpenAI-form context the same way (consecutive user and tool messages are one
user turn, consecutive assistant messages one assistant turn), so their
"messages" can be counted as they count them.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from ..context.messages import Message, role_of
from ..resources import resource_path

__all__ = ["ModelWindow", "Trigger", "window_for", "model_windows", "anthropic_turns", "split_system",
           "DEFAULT_WINDOW", "ONE_MILLION_SUFFIX", "check_window", "AgentRule"]

ONE_MILLION_SUFFIX = "[1m]"  # Claude Code's model id for the 1M-token window (e.g. ``claude-opus-4-8[1m]``)
ONE_MILLION = 1_000_000


@dataclass(frozen=True)
class ModelWindow:
    """A model's context window and largest reply, in tokens, and where the numbers come from."""

    model: str
    context_window: int
    max_output_tokens: int
    source: str = ""


DEFAULT_WINDOW = ModelWindow("", 128_000, 8_192, "unknown model: Cline's and Codex's 128K default")


@dataclass(frozen=True)
class Trigger:
    """When a rule fires on a model's window: at ``threshold`` tokens of the request (``inclusive``: at or
    over, else strictly over); ``reserve`` is the window left above it; ``basis`` what is counted:
    ``"prompt"`` (the whole request, as the agents read it from their bill), ``"history"`` (the chat
    history only, system prompt excluded: Aider), ``"every_request"`` (no threshold: the rule runs on
    every request and fires when what it sends changes: SWE-agent, OpenCode's prune)."""

    rule: str
    window: int
    threshold: int
    inclusive: bool = False
    basis: str = "prompt"
    note: str = ""

    @property
    def reserve(self) -> int:
        return self.window - self.threshold

    def fires(self, tokens: int) -> bool:
        return tokens >= self.threshold if self.inclusive else tokens > self.threshold


class AgentRule:
    """Mixin of the agent rules: ``agent`` names the agent (as its log rows are named), ``trigger``
    says when it fires, ``model_options`` the options an agent derives from the model's window."""

    agent: ClassVar[str] = ""

    def trigger(self, window: ModelWindow) -> Trigger:
        raise NotImplementedError

    def model_options(self, window: ModelWindow) -> dict:
        """Options the agent sets from the session's model (none by default)."""
        return {}


@lru_cache(maxsize=1)
def model_windows() -> tuple[ModelWindow, ...]:
    """Every row of ``context_windows.csv``, longest prefix first."""
    with open(resource_path("context_windows.csv"), encoding="utf-8", newline="") as fh:
        rows = [ModelWindow(r["prefix"], int(r["context_window"]), int(r["max_output_tokens"]), r["source"])
                for r in csv.DictReader(fh)]
    return tuple(sorted(rows, key=lambda w: -len(w.model)))


def window_for(model: str | None) -> ModelWindow:
    """The window of ``model`` (longest matching prefix, case-insensitive; ``[1m]`` means 1,000,000 tokens);
    an unknown or empty name gets ``DEFAULT_WINDOW`` under its own name."""
    name = (model or "").strip()
    low = name.lower()
    for row in model_windows():
        if low.startswith(row.model):
            window = ONE_MILLION if low.endswith(ONE_MILLION_SUFFIX) else row.context_window
            return ModelWindow(name, window, row.max_output_tokens, row.source)
    return ModelWindow(name, DEFAULT_WINDOW.context_window, DEFAULT_WINDOW.max_output_tokens, DEFAULT_WINDOW.source)


def check_window(window: int, name: str = "context_window", *, reserve: int = 0) -> None:
    """Raise ``ValueError`` (one line) unless ``window`` is a positive int larger than ``reserve``."""
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise ValueError(f"{name} must be a positive number of tokens, got {window!r}")
    if reserve >= window:
        raise ValueError(f"{name} {window:,} leaves no room: its reserve is {reserve:,} tokens")


def split_system(context: Sequence[Message]) -> tuple[list, list]:
    """The leading system/developer messages (the agent's prompt, sent outside its history) and the rest."""
    k = 0
    while k < len(context) and role_of(context[k]) in ("system", "developer"):
        k += 1
    return list(context[:k]), list(context[k:])


def anthropic_turns(history: Sequence[Message]) -> list[tuple[str, int, int]]:
    """``(role, start, stop)`` of each Anthropic-form turn: runs of user/tool messages are one user turn,
    runs of assistant messages one assistant turn (system messages inside the history join the user turn)."""
    turns: list[tuple[str, int, int]] = []
    for i, m in enumerate(history):
        role = "assistant" if role_of(m) == "assistant" else "user"
        if turns and turns[-1][0] == role:
            turns[-1] = (role, turns[-1][1], i + 1)
        else:
            turns.append((role, i, i + 1))
    return turns
