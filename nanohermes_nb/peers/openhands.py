"""OpenHands' real masking condenser and conversation memory, run from the released ``openhands-ai`` wheel.

The real side of the ``observation_masking`` differential is OpenHands' own
code: ``ObservationMaskingCondenser.condense`` and
``ConversationMemory.process_events`` from ``openhands-ai`` 1.6.0 (the newest
release that ships both; they are its legacy V0 code). The package itself is
not installed (its dependencies are the whole application): the wheel is
fetched with ``pip download --no-deps`` into a project-local folder
(``.cache/peers/``, git-ignored), unpacked, and put on ``sys.path``; only what
those two modules import comes from the ``peers-openhands`` extra (litellm at
the version OpenHands' own ``poetry.lock`` pins, google-cloud-storage, boto3,
python-json-logger, ...). ``openhands/controller/__init__.py`` is never run
(it imports the agent controller and with it the runtime): a package module
whose ``__path__`` is that folder stands in for it, so that
``openhands.controller.state.state`` imports as it is. No OpenHands source is
changed. What the import does to the process is undone: OpenHands' logger
installs a ``sys.excepthook`` and ``openhands.core.config.utils`` loads a
``.env`` file; the hook and the environment are restored afterwards.

Events are built from OpenHands' own classes, as ``CodeActAgent`` records
them (``agenthub/codeact_agent/function_calling.py``, ``response_to_actions``):
the system message a ``SystemMessageAction``; a user message, or an assistant
message without calls, a ``MessageAction`` (source ``user`` or ``agent``); an
assistant message with calls one ``MCPAction`` per call (MCP is the one tool
action whose arguments are free-form), each with a ``ToolCallMetadata``
carrying the litellm ``ModelResponse`` of the whole message; each tool result
an ``MCPObservation`` with its call's metadata (calls and results paired by
position, as the transcripts need). ``process_events`` gives OpenHands
``Message`` objects; ``model_dump()`` is what OpenHands sends.

Two readings of the project's replay contexts (``batch_points``: SPEC 5 puts an
empty system message first when the recording has none):

- ``stand_in`` (the default): the real side gets the context as it is; that
  empty system message stands in for the agent's own prompt (a live OpenHands
  agent always records one, so ``_ensure_system_message`` finds it);
- ``strict``: the real side gets only the recorded messages, and its prompt
  source has no prompt (``PromptManager.get_system_message`` cannot run
  without CodeActAgent's whole tool set): ``_ensure_system_message`` then adds
  nothing, and ``_ensure_initial_user_message`` repeats the task at index 1.
  The contexts of transcripts whose first recorded message is not a system
  message differ by that, never by the masking (docs/policies.md).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import types
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..context.messages import (
    Message,
    call_id,
    call_name,
    calls_of,
    pair_tool_results,
    role_of,
    text_of,
)
from ..context.sizing import message_size
from ..policies import apply_policy
from ..policies.observation_masking import ObservationMaskingPolicy
from . import STUB_SUMMARY, Peer, register_peer

__all__ = [
    "OPENHANDS_VERSION",
    "CLASS_ATTENTION_WINDOW",
    "CONFIG_ATTENTION_WINDOW",
    "MODES",
    "OpenHands",
    "cache_dir",
    "fetch_openhands",
    "openhands",
    "openhands_unavailable",
    "events_for",
    "openhands_real",
    "openhands_port",
    "openhands_peer",
    "sent_form",
    "Difference",
    "agreement_by_context",
]

OPENHANDS_VERSION = "1.6.0"
REQUIREMENT = f"openhands-ai=={OPENHANDS_VERSION}"
CLASS_ATTENTION_WINDOW = 5  # ObservationMaskingCondenser.__init__(attention_window=5), its line 14
CONFIG_ATTENTION_WINDOW = 100  # ObservationMaskingCondenserConfig.attention_window default, condenser_config.py:30-31
MODES = ("stand_in", "strict")
ENV_CACHE = "NANOHERMES_PEERS_CACHE"
FETCH_TIMEOUT = 300  # seconds for pip download


# --- getting the code ----------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where peers fetched at test time live: ``$NANOHERMES_PEERS_CACHE``, else ``.cache/peers`` in the checkout."""
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        return root / ".cache" / "peers"
    return Path.home() / ".cache" / "nanohermes_nb" / "peers"


def _unpacked(cache: Path) -> Path:
    return cache / f"openhands-ai-{OPENHANDS_VERSION}"


def fetch_openhands(cache: Path | None = None) -> Path:
    """The wheel unpacked under ``cache`` (downloaded with pip on first use); raises RuntimeError with one line."""
    cache = cache or cache_dir()
    target = _unpacked(cache)
    if (target / "openhands" / "memory" / "conversation_memory.py").is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--python-version", "3.12",
               "--only-binary=:all:", REQUIREMENT, "-d", tmp]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=FETCH_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"pip download {REQUIREMENT} failed: {exc}") from None
        wheels = sorted(Path(tmp).glob("openhands_ai-*.whl"))
        if done.returncode or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise RuntimeError(f"pip download {REQUIREMENT} failed: {last}")
        staging = Path(tmp) / "unpacked"
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(staging)
        try:
            staging.rename(target)  # atomic: a half-unpacked tree never has the final name
        except OSError:
            if not (target / "openhands").is_dir():  # another process won the race: use its copy
                raise
    return target


@dataclass(frozen=True)
class OpenHands:
    """The real classes the differential needs, imported from the unpacked wheel."""

    root: Path
    ObservationMaskingCondenser: Any
    ConversationMemory: Any
    View: Any
    AgentConfig: Any
    SystemMessageAction: Any
    MessageAction: Any
    MCPAction: Any
    MCPObservation: Any
    EventSource: Any
    ToolCallMetadata: Any
    ModelResponse: Any
    Choices: Any
    LLMMessage: Any
    ToolCall: Any
    Function: Any


def _import(root: Path) -> OpenHands:
    """Import the two modules from ``root`` without running ``openhands/controller/__init__.py``."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no fetch of the price list
    environ, hook = dict(os.environ), sys.excepthook
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import openhands  # noqa: F401  (its __init__ only reads the version)

            if "openhands.controller" not in sys.modules:
                controller = types.ModuleType("openhands.controller")
                controller.__path__ = [str(root / "openhands" / "controller")]
                sys.modules["openhands.controller"] = controller
                openhands.controller = controller
            from litellm import ChatCompletionMessageToolCall, Choices, Function, ModelResponse
            from litellm import Message as LiteLLMMessage
            from openhands.core.config.agent_config import AgentConfig
            from openhands.events.action.mcp import MCPAction
            from openhands.events.action.message import MessageAction, SystemMessageAction
            from openhands.events.event import EventSource
            from openhands.events.observation.mcp import MCPObservation
            from openhands.events.tool import ToolCallMetadata
            from openhands.memory.condenser.condenser import View
            from openhands.memory.condenser.impl.observation_masking_condenser import ObservationMaskingCondenser
            from openhands.memory.conversation_memory import ConversationMemory
    finally:
        sys.excepthook = hook
        os.environ.clear()
        os.environ.update(environ)
    import logging

    logging.getLogger("openhands").setLevel(logging.WARNING)  # process_events logs every re-inserted task
    return OpenHands(root, ObservationMaskingCondenser, ConversationMemory, View, AgentConfig, SystemMessageAction,
                     MessageAction, MCPAction, MCPObservation, EventSource, ToolCallMetadata, ModelResponse,
                     Choices, LiteLLMMessage, ChatCompletionMessageToolCall, Function)


@lru_cache(maxsize=1)
def _load(fetch: bool) -> OpenHands | str:
    try:
        root = fetch_openhands() if fetch else _unpacked(cache_dir())
        if not (root / "openhands").is_dir():
            return f"openhands-ai {OPENHANDS_VERSION} not fetched into {cache_dir()}"
        return _import(root)
    except RuntimeError as exc:
        return str(exc)
    except ImportError as exc:
        return f"openhands-ai {OPENHANDS_VERSION} needs {exc.name or exc} (pip install -e '.[peers-openhands]')"


def openhands(fetch: bool = True) -> OpenHands:
    """The real OpenHands classes (fetching the wheel when missing); RuntimeError with one line if it cannot be had."""
    got = _load(fetch)
    if isinstance(got, str):
        raise RuntimeError(got)
    return got


def openhands_unavailable(fetch: bool = True) -> str | None:
    """None when the real code runs here, else why not (one line)."""
    got = _load(fetch)
    return got if isinstance(got, str) else None


# --- the transcript as OpenHands events --------------------------------------------------------


def _tool_call(oh: OpenHands, call: Mapping[str, Any]) -> Any:
    fn = call.get("function") or {}
    args = fn.get("arguments")
    return oh.ToolCall(id=call_id(call), type="function",
                       function=oh.Function(name=call_name(call), arguments=args if isinstance(args, str)
                                            else json.dumps(args if args is not None else {})))


def _arguments(call: Mapping[str, Any]) -> dict:
    raw = (call.get("function") or {}).get("arguments")
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"raw": raw}


_RESPONSES = itertools.count()
_ACTIONS: dict[int, tuple[Message, list]] = {}  # id(message) -> (message, its MCPActions): built once per message
_ACTIONS_CAP = 200_000


def _call_actions(m: Message, oh: OpenHands) -> list:
    """The ``MCPAction`` of each call of an assistant message, sharing one litellm ``ModelResponse``.

    Built once per message object and reused (a ``ModelResponse`` takes tens of
    milliseconds to build; neither OpenHands function changes an event).
    """
    hit = _ACTIONS.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    calls = calls_of(m)
    reply = oh.LLMMessage(role="assistant", content=text_of(m) or None, tool_calls=[_tool_call(oh, c) for c in calls])
    response = oh.ModelResponse(id=f"response-{next(_RESPONSES)}", choices=[oh.Choices(index=0, message=reply)])
    actions = []
    for c in calls:
        meta = oh.ToolCallMetadata(function_name=call_name(c) or "", tool_call_id=str(call_id(c)),
                                   model_response=response, total_calls_in_response=len(calls))
        action = oh.MCPAction(name=call_name(c) or "", arguments=_arguments(c))
        action.tool_call_metadata, action._source = meta, oh.EventSource.AGENT
        actions.append(action)
    if len(_ACTIONS) >= _ACTIONS_CAP:
        _ACTIONS.clear()
    _ACTIONS[id(m)] = (m, actions)
    return actions


def events_for(messages: Sequence[Message], oh: OpenHands) -> list[list]:
    """For each message, the OpenHands events it is (one per tool call for an assistant message with calls)."""
    pairs = pair_tool_results(messages)
    out: list[list] = []
    actions: dict[int, list] = {}
    by_id: dict[Any, Any] = {}  # the latest call with each id, for results not paired by position
    for i, m in enumerate(messages):
        role, text = role_of(m), text_of(m)
        if role == "assistant" and calls_of(m):
            actions[i] = _call_actions(m, oh)
            by_id.update((a.tool_call_metadata.tool_call_id, a) for a in actions[i])
            out.append(actions[i])
        elif role == "tool":
            obs = oh.MCPObservation(content=text)
            obs._source = oh.EventSource.ENVIRONMENT
            call = actions[pairs[i][0]][pairs[i][1]] if i in pairs and pairs[i][0] in actions else (
                by_id.get(str(m.get("tool_call_id"))))
            if call is not None:
                obs.tool_call_metadata, obs.name, obs.arguments = call.tool_call_metadata, call.name, call.arguments
            out.append([obs])
        elif role == "system":
            action = oh.SystemMessageAction(content=text)
            action._source = oh.EventSource.AGENT
            out.append([action])
        else:  # a user message, or an assistant message without calls
            action = oh.MessageAction(content=text)
            action._source = oh.EventSource.USER if role == "user" else oh.EventSource.AGENT
            out.append([action])
    return out


class _NoPrompt:
    """The prompt source of the strict reading: no system prompt is known (``get_system_message`` gives '')."""

    def get_system_message(self, **_context: Any) -> str:
        return ""


def sent_form(message: Any) -> dict:
    """An OpenHands ``Message`` as OpenHands sends it (its own string serializer)."""
    return message.model_dump()


def _recorded(context: Sequence[Message]) -> list:
    """The context without the empty system message SPEC 5 puts first (what the recording holds)."""
    if context and role_of(context[0]) == "system" and not text_of(context[0]):
        return list(context[1:])
    return list(context)


def openhands_real(context: Sequence[Message], attention_window: int = CLASS_ATTENTION_WINDOW,
                   mode: str = "stand_in", oh: OpenHands | None = None, events: list | None = None) -> list[dict]:
    """What OpenHands 1.6.0 sends for this history with the masking condenser on (CodeActAgent.step, L207-222).

    ``events`` (one list per message of the context as the real side reads it)
    may be passed to reuse events built once for a whole transcript.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    oh = oh or openhands()
    messages = _recorded(context) if mode == "strict" else list(context)
    per_message = events if events is not None else events_for(messages, oh)
    view = oh.View(events=[e for evs in per_message for e in evs])
    condensed = oh.ObservationMaskingCondenser(attention_window=attention_window).condense(view)
    history = list(condensed.events)
    initial = next((e for e in view.events if isinstance(e, oh.MessageAction) and e.source == "user"), None)
    if initial is None:  # CodeActAgent._get_initial_user_message (codeact_agent.py:240-258) raises too
        raise ValueError("a history without a user message: OpenHands' CodeActAgent refuses it")
    memory = oh.ConversationMemory(oh.AgentConfig(), _NoPrompt())
    return [sent_form(m) for m in memory.process_events(history, initial)]


def openhands_port(context: Sequence[Message], budget: int, attention_window: int = CLASS_ATTENTION_WINDOW) -> list:
    """The project's policy on the same context, through the one trigger (sizes in bytes, as the real side)."""
    policy = ObservationMaskingPolicy(attention_window=attention_window)
    return apply_policy(policy, context, budget=budget, size=message_size,
                        summarizer=lambda _e: STUB_SUMMARY).messages


def _wire(message: Mapping[str, Any]) -> dict:
    """A message in the form both sides are compared in: OpenAI fields, content as one string.

    OpenHands sends content as text and names every tool result after its call
    (``name``); the transcripts name some results and not others, so ``name`` on
    a tool message is left out of the comparison. Every other key a message
    carries is compared (``reasoning_content`` among them: OpenHands' ``Message``
    has no such field, so a side that sends it differs).
    """
    out = {k: v for k, v in message.items() if k not in ("content", "tool_calls", "name")}
    if role_of(message) != "tool" and "name" in message:
        out["name"] = message["name"]
    parts = message.get("content")
    out["content"] = "\n".join(p.get("text", "") for p in parts if isinstance(p, Mapping)) \
        if isinstance(parts, list) else (parts or "")
    calls = calls_of(message)
    if calls:
        out["tool_calls"] = [[call_id(c), call_name(c), (c.get("function") or {}).get("arguments")] for c in calls]
    return {k: v for k, v in out.items() if v is not None}


def openhands_peer(attention_window: int = CLASS_ATTENTION_WINDOW, mode: str = "stand_in") -> Peer:
    """A Peer at a given window: the class default (5) is the project's; OpenHands' config default is 100."""
    label = "observation_masking" if attention_window == CLASS_ATTENTION_WINDOW else (
        f"observation_masking(attention_window={attention_window})")
    return Peer(
        policy=label,
        source="OpenHands ObservationMaskingCondenser.condense + ConversationMemory.process_events",
        version=lambda: f"openhands-ai {OPENHANDS_VERSION} (wheel, {mode.replace('_', '-')})",
        real=lambda ctx, budget: [_wire(m) for m in openhands_real(ctx, attention_window, mode)],
        port=lambda ctx, budget: [_wire(m) for m in openhands_port(ctx, budget, attention_window)],
        size=message_size,
        available=openhands_unavailable,
    )


register_peer(openhands_peer(CLASS_ATTENTION_WINDOW))
register_peer(openhands_peer(CONFIG_ATTENTION_WINDOW))


@dataclass(frozen=True)
class Difference:
    """One context where the two sides differ: transcript, tool-batch point, first differing message."""

    transcript: str
    point: int
    index: int
    masked: bool  # whether the real condenser masked anything in this context


def agreement_by_context(transcripts: Sequence[tuple[str, Sequence[Message]]], attention_window: int, mode: str,
                         port=None, stride: int = 1) -> tuple[int, list[Difference]]:
    """(contexts compared, differences) over every ``stride``-th tool-batch point, one budget each.

    The policy masks at any budget below the context's size, so one budget
    (half the size) per context is enough. Events are built once per
    transcript and sliced per context (they are never changed by either
    OpenHands function), which makes the whole corpus a matter of seconds.
    ``port(context)`` is the project's side (default: the policy, as the Peer runs it).
    """
    from ..engine.recorded import prepare
    from . import batch_points, first_difference

    oh = openhands()
    port = port or (lambda ctx: openhands_port(ctx, max(1, sum(message_size(m) for m in ctx) // 2), attention_window))
    compared, diffs = 0, []
    for name, messages in transcripts:
        points = list(batch_points(messages))
        full, _ = prepare(messages)
        whole = _recorded(full) if mode == "strict" else list(full)
        per_message = events_for(whole, oh)
        for k, ctx in enumerate(points):
            if k % stride:
                continue
            seen = _recorded(ctx) if mode == "strict" else ctx
            events = per_message[: len(seen)]
            real = [_wire(m) for m in openhands_real(ctx, attention_window, mode, oh, events)]
            ours = [_wire(m) for m in port(list(ctx))]
            compared += 1
            at = first_difference(real, ours)
            if at is not None:
                masked = any(m.get("content") == "<MASKED>" or m.get("content") == "\n\n<MASKED>" for m in real)
                diffs.append(Difference(name, k, at, masked))
    return compared, diffs
