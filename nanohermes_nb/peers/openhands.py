"""OpenHands' ``ObservationMaskingCondenser``, ported into the harness (its package cannot be installed here).

``openhands-ai`` pulls its whole application (runtime, server, litellm, docker
clients), so the differential test cannot import the real condenser. This
module is the "real" side instead: a line-for-line port of the few pieces of
OpenHands that decide what the LLM sees when the masking condenser is on,
kept separate from the lab's own policy (``policies/observation_masking.py``),
which is written independently in the lab's style. Every piece cites the file,
commit and lines it follows (All-Hands-AI/OpenHands, as stored by the code
index; the same logic is at OpenHands/OpenHands@76483ad8):

1. **Events** (``openhands/agenthub/codeact_agent/function_calling.py``
   @3db179ab, ``response_to_actions`` L53-): one action per tool call of an
   assistant message (the loop at L71), each carrying ``ToolCallMetadata``
   with the whole model response; an assistant message without calls is one
   ``MessageAction``; each user message one ``MessageAction``, the system
   message one ``SystemMessageAction``, each tool result one observation.
2. **The condenser** (``openhands/memory/condenser/impl/observation_masking_condenser.py``
   @b781d1b0, ``__init__`` L13-16, ``condense`` L18-27): every ``Observation`` at
   view index ``i < len(view) - attention_window`` becomes
   ``AgentCondensationObservation('<MASKED>')``.
3. **Events to messages** (``openhands/memory/conversation_memory.py`` @e94ca25a,
   ``process_events`` L75-165): tool actions park their assistant message under
   the response id (L263-271) until every call of it has a tool result
   (L130-154), then the message and its results are emitted in call order; an
   ``AgentCondensationObservation`` has no tool-call metadata, so it becomes a
   *user* message (L522-524, L672-685); ``_filter_unmatched_tool_calls``
   (L750-803); ``_apply_user_message_formatting`` prefixes ``"\\n\\n"`` to a user
   message that follows a user message (L167-182); ``_ensure_initial_user_message``
   (L829-862).

Back to OpenAI form: a message OpenHands renders with the same role, text and
calls as a transcript message *is* that transcript message (OpenHands rebuilds
it from the same event; only the wire serialization differs: content as a list
of parts, a ``name`` key on tool results), so the transcript dict is reused; a
message whose text or calls OpenHands changed is a copy with the new field; a
masked observation is a new ``{"role": "user", "content": ...}``. The comparison
is made on these messages, not on events: the lab measures what is sent to the
LLM, and what OpenHands sends differs from its event view (the masked turn's
actions are in the view but never reach the LLM).

When the condenser replaces nothing, OpenHands' view is unchanged and the lab's
context stands for it as it is (the policy declines); the rendering artefacts
OpenHands has without any condenser are not the condenser's doing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    "OPENHANDS_REPO",
    "CONDENSER_COMMIT",
    "MEMORY_COMMIT",
    "CLASS_ATTENTION_WINDOW",
    "CONFIG_ATTENTION_WINDOW",
    "events_from_openai",
    "condense",
    "process_events",
    "to_openai",
    "openhands_real",
    "openhands_port",
    "openhands_peer",
]

OPENHANDS_REPO = "All-Hands-AI/OpenHands"
CONDENSER_COMMIT = "b781d1b0ea0de1b9ca0ae14297561d7edbfba8a5"  # observation_masking_condenser.py
MEMORY_COMMIT = "e94ca25ace62d7a56d841bc18a8657cfe0785890"  # conversation_memory.py
CLASS_ATTENTION_WINDOW = 5  # ObservationMaskingCondenser.__init__(attention_window=5), L13
CONFIG_ATTENTION_WINDOW = 100  # ObservationMaskingCondenserConfig.attention_window, condenser_config.py@b781d1b0 L24
MASK = "<MASKED>"


# --- events: the classes condense() and process_events() tell apart ----------------------------


@dataclass(eq=False)
class ModelResponse:
    """litellm ``ModelResponse`` reduced to what ConversationMemory reads: ``id`` and the assistant message."""

    id: str
    message: Mapping[str, Any]


@dataclass(eq=False)
class ToolCallMetadata:
    """``openhands/events/tool.py`` ``ToolCallMetadata``."""

    tool_call_id: Any
    function_name: str
    model_response: ModelResponse
    total_calls_in_response: int


@dataclass(eq=False)
class Event:
    source_message: Mapping[str, Any] | None = None  # the transcript message the event came from
    tool_call_metadata: ToolCallMetadata | None = None


class Action(Event):
    pass


@dataclass(eq=False)
class SystemMessageAction(Action):
    content: str = ""


@dataclass(eq=False)
class MessageAction(Action):
    content: str = ""
    source: str = "user"  # 'user' or 'agent'


class ToolAction(Action):
    """Any tool-based action (CmdRunAction, FileEditAction, ...): all take one branch, L226-271."""


class Observation(Event):
    pass


@dataclass(eq=False)
class ToolObservation(Observation):
    content: str = ""


@dataclass(eq=False)
class AgentCondensationObservation(Observation):
    content: str = ""


def events_from_openai(messages: Sequence[Message]) -> list[Event]:
    """The event history OpenHands would have recorded for this transcript.

    One ``ToolAction`` per tool call (``response_to_actions``: parallel calls are
    several actions sharing one ``ModelResponse``), one ``MessageAction`` per
    user message or call-less assistant message, one ``SystemMessageAction``
    per system message, one observation per tool result (its metadata is the
    action's: the same call id, as the runtime copies it onto the observation).
    """
    events: list[Event] = []
    pairs = pair_tool_results(messages)
    for i, m in enumerate(messages):
        role = role_of(m)
        if role == "assistant" and calls_of(m):
            response = ModelResponse(id=f"response-{i}", message=m)
            n = len(calls_of(m))
            for c in calls_of(m):
                meta = ToolCallMetadata(call_id(c), call_name(c), response, n)
                events.append(ToolAction(source_message=m, tool_call_metadata=meta))
        elif role == "tool":
            name = call_name(calls_of(messages[pairs[i][0]])[pairs[i][1]]) if i in pairs else "unknown"
            meta = ToolCallMetadata(m.get("tool_call_id"), name, ModelResponse("", {}), 1)
            events.append(ToolObservation(source_message=m, tool_call_metadata=meta, content=text_of(m)))
        elif role == "system":
            events.append(SystemMessageAction(source_message=m, content=text_of(m)))
        else:  # user, or an assistant message without calls (response_to_actions' else branch)
            events.append(MessageAction(source_message=m, content=text_of(m),
                                        source="user" if role == "user" else "agent"))
    return events


# --- the condenser ----------------------------------------------------------------------------


def condense(view: list[Event], attention_window: int = CLASS_ATTENTION_WINDOW) -> list[Event]:
    """``ObservationMaskingCondenser.condense`` (observation_masking_condenser.py@b781d1b0 L18-27)."""
    results: list[Event] = []
    for i, event in enumerate(view):
        if isinstance(event, Observation) and i < len(view) - attention_window:
            results.append(AgentCondensationObservation(content=MASK))
        else:
            results.append(event)
    return results


# --- ConversationMemory.process_events --------------------------------------------------------


@dataclass(eq=False)
class LLMMessage:
    """``openhands/core/message.py`` ``Message``: a role, text parts, calls, and (for tool) the call id."""

    role: str
    text: list[str] = field(default_factory=list)
    tool_calls: list | None = None
    tool_call_id: Any = None
    name: str | None = None
    source: Mapping[str, Any] | None = None  # the transcript message this one renders, if any
    call_ids: list = field(default_factory=list)  # ``[tool_call.id for tool_call in tool_calls]``, read once


def _process_action(action: Action, pending: dict[str, LLMMessage]) -> list[LLMMessage]:
    """``_process_action`` (conversation_memory.py@e94ca25a L184-343), the branches a transcript reaches."""
    if isinstance(action, ToolAction):
        response = action.tool_call_metadata.model_response
        assistant = response.message
        content = text_of(assistant)
        pending[response.id] = LLMMessage(  # L263-271: overwrites the same response id
            role="assistant", text=[content] if content and content.strip() else [],
            tool_calls=calls_of(assistant), source=assistant, call_ids=[call_id(c) for c in calls_of(assistant)])
        return []
    if isinstance(action, MessageAction):  # L303-323
        return [LLMMessage(role="user" if action.source == "user" else "assistant",
                           text=[action.content or ""], source=action.source_message)]
    if isinstance(action, SystemMessageAction):  # L333-342
        return [LLMMessage(role="system", text=[action.content], source=action.source_message)]
    return []


def _process_observation(obs: Observation, tool_results: dict[Any, LLMMessage]) -> list[LLMMessage]:
    """``_process_observation`` (L345-685): both observation kinds render as a user message first."""
    message = LLMMessage(role="user", text=[obs.content], source=obs.source_message)
    meta = obs.tool_call_metadata
    if meta is not None:  # L672-683: a tool response, held until its action's message is complete
        tool_results[meta.tool_call_id] = LLMMessage(
            role="tool", text=message.text, tool_call_id=meta.tool_call_id, name=meta.function_name,
            source=obs.source_message)
        return []
    return [message]


def _filter_unmatched_tool_calls(messages: list[LLMMessage]) -> list[LLMMessage]:
    """``_filter_unmatched_tool_calls`` (L750-803)."""
    call_ids = {call_id(c) for m in messages if m.tool_calls and m.role == "assistant"
                for c in m.tool_calls if call_id(c)}
    response_ids = {m.tool_call_id for m in messages if m.role == "tool" and m.tool_call_id}
    out = []
    for m in messages:
        if m.role == "tool" and m.tool_call_id:
            if m.tool_call_id in call_ids:
                out.append(m)
        elif m.role == "assistant" and m.tool_calls:
            matched = [c for c in m.tool_calls if call_id(c) in response_ids]
            if len(matched) == len(m.tool_calls):
                out.append(m)
            elif matched:
                out.append(LLMMessage(m.role, m.text, matched, m.tool_call_id, m.name, m.source))
        else:
            out.append(m)
    return out


def _apply_user_message_formatting(messages: list[LLMMessage]) -> list[LLMMessage]:
    """``_apply_user_message_formatting`` (L167-182): ``"\\n\\n"`` before a user message after a user message."""
    prev_role = None
    for m in messages:
        if m.role == "user" and prev_role == "user" and len(m.text) > 0:
            m.text = ["\n\n" + m.text[0]] + m.text[1:]
        prev_role = m.role
    return messages


def _ensure_initial_user_message(events: list[Event], initial: MessageAction | None) -> None:
    """``_ensure_initial_user_message`` (L829-862); ``_ensure_system_message`` adds nothing here.

    The lab's contexts always start with a system message (``recorded.prepare``);
    without one OpenHands would insert its own prompt, which this port cannot know.
    """
    if not events or initial is None or not isinstance(events[0], SystemMessageAction):
        return
    if len(events) == 1 or not (isinstance(events[1], MessageAction) and events[1].source == "user"):
        events.insert(1, initial)


def process_events(condensed: list[Event], initial_user_action: MessageAction | None) -> list[LLMMessage]:
    """``ConversationMemory.process_events`` (conversation_memory.py@e94ca25a L75-165) on a fresh memory."""
    events = list(condensed)
    _ensure_initial_user_message(events, initial_user_action)
    messages: list[LLMMessage] = []
    pending: dict[str, LLMMessage] = {}
    tool_results: dict[Any, LLMMessage] = {}
    for event in events:
        if isinstance(event, Action):
            to_add = _process_action(event, pending)
        else:
            to_add = _process_observation(event, tool_results)
        done = []
        for response_id, message in pending.items():  # L130-154
            if all(c in tool_results for c in message.call_ids):
                to_add.append(message)
                for c in message.call_ids:
                    to_add.append(tool_results.pop(c))
                done.append(response_id)
        for response_id in done:
            pending.pop(response_id)
        messages += to_add
    return _apply_user_message_formatting(_filter_unmatched_tool_calls(messages))


def to_openai(message: LLMMessage) -> dict | Mapping[str, Any]:
    """One rendered message in the lab's OpenAI form: the transcript dict itself when unchanged."""
    text = "".join(message.text)
    src = message.source
    if src is None or role_of(src) != message.role:
        return {"role": message.role, "content": text}
    changed: dict[str, Any] = {}
    if text != text_of(src):
        changed["content"] = text
    if message.tool_calls is not None and [call_id(c) for c in message.tool_calls] != [
            call_id(c) for c in calls_of(src)]:
        changed["tool_calls"] = list(message.tool_calls)
    return {**src, **changed} if changed else src


def openhands_real(context: Sequence[Message], attention_window: int = CLASS_ATTENTION_WINDOW) -> list:
    """What OpenHands sends to the LLM for this history with the masking condenser on.

    The context as it stands when the condenser replaces nothing (see the module docstring).
    """
    view = events_from_openai(context)
    condensed = condense(view, attention_window)
    if all(a is b for a, b in zip(view, condensed)):
        return list(context)
    initial = next((e for e in view if isinstance(e, MessageAction) and e.source == "user"), None)
    return [to_openai(m) for m in process_events(condensed, initial)]


def openhands_port(context: Sequence[Message], budget: int, attention_window: int = CLASS_ATTENTION_WINDOW) -> list:
    """The lab's policy on the same context, through the one trigger (sizes in bytes, as the real side)."""
    policy = ObservationMaskingPolicy(attention_window=attention_window)
    return apply_policy(policy, context, budget=budget, size=message_size,
                        summarizer=lambda _e: STUB_SUMMARY).messages


def openhands_peer(attention_window: int = CLASS_ATTENTION_WINDOW) -> Peer:
    """A Peer at a given window: the class default (5) is the lab's; OpenHands' config default is 100."""
    label = "observation_masking" if attention_window == CLASS_ATTENTION_WINDOW else (
        f"observation_masking(attention_window={attention_window})")
    return Peer(
        policy=label,
        source="OpenHands ObservationMaskingCondenser.condense + ConversationMemory.process_events (ported)",
        version=lambda: (f"{OPENHANDS_REPO}@{CONDENSER_COMMIT[:8]} (condenser), "
                         f"@{MEMORY_COMMIT[:8]} (conversation memory), ported"),
        real=lambda ctx, budget: openhands_real(ctx, attention_window),
        port=lambda ctx, budget: openhands_port(ctx, budget, attention_window),
        size=message_size,
    )


register_peer(openhands_peer(CLASS_ATTENTION_WINDOW))
register_peer(openhands_peer(CONFIG_ATTENTION_WINDOW))
