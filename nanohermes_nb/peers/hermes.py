"""hermes-agent's ``ContextCompressor.compress`` beside the lab's ``hermes_agent`` port.

The real side is the installed ``hermes-agent==0.19.0``
(``agent/context_compressor.py``), called directly on a context that is over
budget (the trigger is the lab's, outside the policy):

- **Budget mapping.** hermes triggers at ``threshold_tokens`` and protects a tail
  of ``tail_token_budget = int(threshold_tokens x summary_target_ratio)``
  (``ContextCompressor.__init__`` and ``update_model``). Its constructor floors
  the threshold at ``MINIMUM_CONTEXT_LENGTH`` (64,000), so the lab's budget is
  set on a fresh compressor the way ``update_model`` derives both numbers:
  ``threshold_tokens = budget`` and ``tail_token_budget = int(budget x ratio)``.
  A fresh compressor per call: ``compression_count`` and ``_previous_summary``
  start empty, as in a new session.
- **Size.** Both sides measure a message with hermes' own estimator,
  ``_estimate_msg_budget_tokens`` (content chars // 4 + 10, plus ``str(call)``
  // 4 per tool call and the replay fields); the port gets it as ``size``.
- **The summary LLM stubbed at its seam.** ``_generate_summary`` calls
  ``agent.auxiliary_client.call_llm`` (imported into ``agent.context_compressor``);
  the stub answers ``STUB_SUMMARY`` in an OpenAI-shaped response. Everything
  hermes does around the answer (grounding the task snapshot, its reference-only
  prefix and end marker, the merge into a tail message) runs for real; the port
  does the same around its summarizer's answer, so the summary messages are
  compared in full.
- **Wire form.** hermes marks its summary with the in-process key
  ``_compressed_summary``; its transports strip every top-level key starting
  with ``_`` before a request leaves the process
  (``agent/transports/chat_completions.py``, ``convert_messages``). The real
  side's output is compared in that wire form.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
from collections.abc import Callable, Iterator, Mapping
from types import SimpleNamespace
from typing import Any

from ..context.messages import Message
from ..policies import apply_policy
from ..policies.hermes_agent import HermesAgentPolicy
from . import STUB_SUMMARY, Peer, register_peer

__all__ = [
    "HERMES_VERSION",
    "hermes_available",
    "hermes_version",
    "real_compressor",
    "stub_summary_llm",
    "hermes_size",
    "hermes_real",
    "hermes_port",
    "wire_form",
    "hermes_peer",
]

HERMES_VERSION = "0.19.0"  # the version the port is proven against (pyproject pins it)
SOURCE = "hermes-agent agent/context_compressor.py ContextCompressor.compress"


def hermes_available() -> str | None:
    """None when hermes-agent 0.19.0 can be imported; else why not."""
    try:
        import agent.context_compressor  # noqa: F401
    except Exception as exc:  # an optional peer library: report, never raise
        return f"hermes-agent cannot be imported: {type(exc).__name__}: {exc}"
    found = hermes_version()
    if found != HERMES_VERSION:
        return f"hermes-agent {found} is installed; the port is proven against {HERMES_VERSION}"
    return None


def hermes_version() -> str:
    try:
        return importlib.metadata.version("hermes-agent")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def real_compressor(budget: int, **options: Any):
    """A fresh ``ContextCompressor`` whose threshold is ``budget`` (hermes' own derivation of the tail budget)."""
    from agent.context_compressor import ContextCompressor

    comp = ContextCompressor(model="lab-model", config_context_length=max(budget, 1) * 4,
                             quiet_mode=True, **options)
    comp.threshold_tokens = budget
    comp.tail_token_budget = int(comp.threshold_tokens * comp.summary_target_ratio)
    return comp


def _stub_call_llm(**_kwargs: Any) -> SimpleNamespace:
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=STUB_SUMMARY))])


@contextlib.contextmanager
def stub_summary_llm(call_llm: Callable[..., Any] = _stub_call_llm) -> Iterator[None]:
    """Replace hermes' summary LLM call (``call_llm`` as seen by ``context_compressor``) for the block."""
    import agent.context_compressor as cc

    saved = cc.call_llm
    cc.call_llm = call_llm
    try:
        yield
    finally:
        cc.call_llm = saved


def hermes_size(message: Message) -> int:
    """hermes' per-message token estimate (``_estimate_msg_budget_tokens``), the real function."""
    from agent.context_compressor import _estimate_msg_budget_tokens

    return _estimate_msg_budget_tokens(message)


def wire_form(message: Mapping[str, Any]) -> dict:
    """A message as hermes sends it: top-level keys starting with ``_`` dropped."""
    return {k: v for k, v in message.items() if not (isinstance(k, str) and k.startswith("_"))}


def hermes_real(context: list, budget: int, *, compressor=None) -> list:
    """The real ``compress`` on ``context`` at ``budget`` with the summary stubbed, in wire form."""
    comp = compressor if compressor is not None else real_compressor(budget)
    with stub_summary_llm():
        out = comp.compress([dict(m) for m in context])
    return [wire_form(m) for m in out]


def hermes_port(context: list, budget: int, *, policy: HermesAgentPolicy | None = None) -> list:
    """The lab's port on the same context, same size, a summarizer answering ``STUB_SUMMARY``."""
    done = apply_policy(policy or HermesAgentPolicy(), context, budget=budget, size=hermes_size,
                        summarizer=lambda excerpt: STUB_SUMMARY)
    return done.messages


hermes_peer = register_peer(Peer(
    policy="hermes_agent",
    source=SOURCE,
    version=lambda: f"hermes-agent {hermes_version()}",
    real=hermes_real,
    port=hermes_port,
    size=hermes_size,
    available=hermes_available,
))
