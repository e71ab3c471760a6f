"""SWE-agent's real ``LastNObservations``, run from a SWE-agent checkout, against the ``swe_agent_rule`` policy.

SWE-agent 1.x is not on PyPI (the ``sweagent`` name there is a 2024 placeholder,
0.0.1), so no ordinary client can fetch its code at test time. When a checkout
is at hand, ``NANOHERMES_SWEAGENT_SRC`` names the folder holding ``sweagent/``;
only ``sweagent/types.py`` and ``sweagent/agent/history_processors.py`` are
loaded from it (they import pydantic and typing_extensions, nothing else of
SWE-agent), as modules of a package whose ``__init__`` is not run. Without it
the peer says so in one line and the tests skip; the rule is then pinned by
the case of SWE-agent's ``tests/test_history_processors.py``.

Contexts are given to SWE-agent as its history items: every message with a
``message_type`` (``system``, ``observation`` for user and tool messages,
``action`` for assistant messages), content as it is. The key is removed from
SWE-agent's answer before the comparison, on exact text.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..context.messages import role_of
from ..context.sizing import message_size
from ..policies import apply_policy
from ..policies.swe_agent import SweAgentPolicy
from . import Peer, register_peer

__all__ = ["ENV_SOURCE", "sweagent_history_processors", "sweagent_unavailable", "sweagent_real", "sweagent_port",
           "sweagent_peer", "history_items"]

ENV_SOURCE = "NANOHERMES_SWEAGENT_SRC"
TYPE_OF = {"system": "system", "developer": "system", "assistant": "action", "user": "observation",
           "tool": "observation"}


def _module(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=1)
def _load() -> Any:
    root = os.environ.get(ENV_SOURCE)
    if not root:
        return f"{ENV_SOURCE} is not set (SWE-agent is not on PyPI: point it at a checkout)"
    base = Path(root) / "sweagent"
    source = base / "agent" / "history_processors.py"
    if not source.is_file():
        return f"{source} not found"
    try:
        if "sweagent" not in sys.modules:
            package = types.ModuleType("sweagent")
            package.__path__ = [str(base)]
            sys.modules["sweagent"] = package
            agent = types.ModuleType("sweagent.agent")
            agent.__path__ = [str(base / "agent")]
            sys.modules["sweagent.agent"] = agent
            _module("sweagent.types", base / "types.py")
        return _module("sweagent.agent.history_processors", source)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def sweagent_history_processors() -> Any:
    got = _load()
    if isinstance(got, str):
        raise RuntimeError(got)
    return got


def sweagent_unavailable() -> str | None:
    got = _load()
    return got if isinstance(got, str) else None


def history_items(context: list) -> list:
    """The context as SWE-agent history items (copies with a ``message_type``)."""
    return [{**m, "message_type": TYPE_OF.get(role_of(m), "observation")} for m in context]


def sweagent_real(context: list, n: int = 5, polling: int = 1) -> list:
    """``LastNObservations(n=n, polling=polling)(history)``, ``message_type`` taken out again."""
    processor = sweagent_history_processors().LastNObservations(n=n, polling=polling)
    out = processor(history_items(context))
    return [{k: v for k, v in m.items() if k != "message_type"} for m in out]


def sweagent_port(context: list, n: int = 5, polling: int = 1) -> list:
    return apply_policy(SweAgentPolicy(n=n, polling=polling), context, budget=0, size=message_size).messages


def sweagent_peer(n: int = 5, polling: int = 1) -> Peer:
    """The differential (the budget does not matter: SWE-agent processes every request)."""
    return Peer(policy="swe_agent_rule", source="sweagent.agent.history_processors.LastNObservations, from a checkout",
                version=lambda: f"SWE-agent checkout ({os.environ.get(ENV_SOURCE, '')})",
                real=lambda ctx, _budget: sweagent_real(ctx, n, polling),
                port=lambda ctx, _budget: sweagent_port(ctx, n, polling),
                size=message_size, available=sweagent_unavailable)


register_peer(sweagent_peer())
