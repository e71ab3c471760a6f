"""Aider's real ``ChatSummary``, run from the released ``aider-chat`` wheel, against the ``aider_rule`` policy.

The package is not installed (its dependencies are a whole application:
litellm, PIL, tree-sitter grammars...): the wheel is fetched with ``pip download
--no-deps`` into ``.cache/peers/`` (as OpenHands' is) and only the three modules
``aider/history.py`` needs are loaded from it: ``aider/history.py`` itself,
``aider/prompts.py`` and ``aider/dump.py``. ``aider/models.py`` is used by
``history.py`` only in its ``main()``: an empty module stands in for it, and the
package's ``__init__`` (which imports ``packaging`` to check its version) is not
run. No aider source is changed.

The model ``ChatSummary`` is given is the harness's: ``token_count`` is the
harness's per-message size (a list: the sum over its messages, as aider counts
the summary it got back), ``info["max_input_tokens"]`` the weak model's window,
and ``simple_send_with_retries`` answers ``STUB_SUMMARY``; the port's summarizer
answers the same. Contexts are given to both sides in aider's own form: aider
has no tool messages, so a tool call is rendered in its assistant message's text
and a tool result is a user message (aider's command output is one), every
content a string. The comparison is on exact text.
"""

from __future__ import annotations

import importlib
import sys
import types
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..context.messages import Message, calls_of, render_call, role_of, text_of
from ..context.sizing import message_size
from ..policies import apply_policy
from ..policies.aider import AiderPolicy
from . import STUB_SUMMARY, Peer, register_peer
from .openhands import cache_dir

__all__ = ["AIDER_VERSION", "WEAK_MODEL_WINDOW", "fetch_aider", "aider_history", "aider_unavailable",
           "aider_form", "aider_real", "aider_port", "aider_peer", "StubModel"]

AIDER_VERSION = "0.86.2"
REQUIREMENT = f"aider-chat=={AIDER_VERSION}"
MODULES = ("aider/history.py", "aider/prompts.py", "aider/dump.py")
WEAK_MODEL_WINDOW = 32_768  # the stub weak model's max_input_tokens: heads over it minus 512 are cut, as aider does
FETCH_TIMEOUT = 300


def fetch_aider(cache: Path | None = None) -> Path:
    """The three modules unpacked under ``cache`` (the wheel downloaded with pip on first use)."""
    import subprocess
    import tempfile

    cache = cache or cache_dir()
    target = cache / f"aider-chat-{AIDER_VERSION}"
    if all((target / m).is_file() for m in MODULES):
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
               REQUIREMENT, "-d", tmp]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=FETCH_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"pip download {REQUIREMENT} failed: {exc}") from None
        wheels = sorted(Path(tmp).glob("aider_chat-*.whl"))
        if done.returncode or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise RuntimeError(f"pip download {REQUIREMENT} failed: {last}")
        staging = Path(tmp) / "unpacked"
        with zipfile.ZipFile(wheels[0]) as wheel:
            for name in MODULES:
                wheel.extract(name, staging)
        try:
            staging.rename(target)
        except OSError:
            if not all((target / m).is_file() for m in MODULES):
                raise
    return target


@lru_cache(maxsize=1)
def _load(fetch: bool) -> Any:
    """``aider.history`` imported from the unpacked modules, or why it cannot be (a string)."""
    try:
        root = fetch_aider() if fetch else cache_dir() / f"aider-chat-{AIDER_VERSION}"
        if not (root / "aider" / "history.py").is_file():
            return "the aider-chat wheel is not in the cache"
        if "aider" not in sys.modules:
            package = types.ModuleType("aider")
            package.__path__ = [str(root / "aider")]
            package.__version__ = AIDER_VERSION  # type: ignore[attr-defined]
            sys.modules["aider"] = package
            models = types.ModuleType("aider.models")  # used only by history.main()
            sys.modules["aider.models"] = models
            package.models = models  # type: ignore[attr-defined]
        return importlib.import_module("aider.history")
    except Exception as exc:  # a missing wheel, no network: one line, the tests skip
        return f"{type(exc).__name__}: {exc}"


def aider_history(fetch: bool = True) -> Any:
    got = _load(fetch)
    if isinstance(got, str):
        raise RuntimeError(got)
    return got


def aider_unavailable(fetch: bool = True) -> str | None:
    got = _load(fetch)
    return got if isinstance(got, str) else None


@dataclass
class StubModel:
    """The model aider's ``ChatSummary`` calls: the harness's size, a window, a fixed answer."""

    size: Any
    max_input_tokens: int | None
    name: str = "stub-weak-model"

    @property
    def info(self) -> dict:
        return {"max_input_tokens": self.max_input_tokens}

    def token_count(self, messages: Any) -> int:
        if isinstance(messages, list):
            return sum(self.size(m) for m in messages)
        return self.size(messages)

    def simple_send_with_retries(self, messages: list) -> str:
        return STUB_SUMMARY


def aider_form(context: Sequence[Message]) -> list:
    """The context as aider holds it: string contents, calls in the assistant's text, results as user messages."""
    out = []
    for m in context:
        role = role_of(m)
        text = text_of(m)
        if role == "assistant" and calls_of(m):
            text = "\n".join([t for t in (text,) if t] + [render_call(c) for c in calls_of(m)])
        out.append({"role": "user" if role == "tool" else role, "content": text})
    return out


def _split(context: list) -> tuple[list, list]:
    k = 0
    while k < len(context) and context[k]["role"] in ("system", "developer"):
        k += 1
    return context[:k], context[k:]


def aider_real(context: list, budget: int, *, size=message_size, window: int | None = WEAK_MODEL_WINDOW) -> list:
    """Aider's ``ChatSummary([weak], max_tokens=budget).summarize(history)`` after the system messages."""
    history_module = aider_history()
    system, history = _split(context)
    summary = history_module.ChatSummary([StubModel(size, window)], max_tokens=budget)
    if not summary.too_big(history):  # base_coder.summarize_start: aider summarizes only a history too big
        return list(context)
    return system + summary.summarize(list(history))


def aider_port(context: list, budget: int, *, size=message_size, window: int | None = WEAK_MODEL_WINDOW) -> list:
    """The ``aider_rule`` policy with the same max_tokens, window, size and answer."""
    policy = AiderPolicy(max_tokens=budget, weak_model_max_input_tokens=window)
    return apply_policy(policy, context, budget=0, size=size, tokens=size,
                        summarizer=lambda _excerpt: STUB_SUMMARY).messages


def aider_peer(window: int | None = WEAK_MODEL_WINDOW) -> Peer:
    """The differential: both sides on the aider form of each context, ``budget`` the history's ``max_tokens``."""
    return Peer(
        policy="aider_rule",
        source="aider.history.ChatSummary.summarize (model stubbed), from the wheel",
        version=lambda: f"aider-chat {AIDER_VERSION}",
        real=lambda ctx, budget: aider_real(aider_form(ctx), budget, window=window),
        port=lambda ctx, budget: aider_port(aider_form(ctx), budget, window=window),
        size=message_size,
        available=lambda: aider_unavailable(fetch=True),
    )


register_peer(aider_peer())
