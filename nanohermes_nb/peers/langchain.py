"""LangChain, the real code beside its ports: ``trim_messages``, ``ClearToolUsesEdit``, ``SummarizationMiddleware``.

The lab's contexts are OpenAI-form dicts; LangChain works on its message
objects. ``Bridge`` converts with LangChain's own ``convert_to_messages`` and
back without loss. LangChain's ``convert_to_openai_messages`` alone is lossy on
the corpus (tests/test_peers_langchain.py measures it): ``content: None``
becomes ``""``, tool-call arguments are re-serialized from the parsed JSON
(``{"a":1}`` becomes ``{"a": 1}``), and extra fields such as
``reasoning_content`` (kept by ``convert_to_messages`` in
``additional_kwargs``) are dropped. So each dict is tagged with a message id
on the way in, and on the way out a message the real code left untouched is
its original dict; a message it changed is the original dict with exactly the
changed fields rewritten (content as LangChain holds it, changed calls
re-serialized as LangChain does, changed ``additional_kwargs`` keys); a change
to a field the bridge cannot translate raises, so no difference is hidden. Only
``response_metadata`` and ``artifact`` are ignored: they never reach a model.

The per-message size LangChain's token counter returns is the lab's size of
that message's OpenAI form, so both sides measure the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import metadata
from typing import Any

from ..context.messages import Message, role_of
from ..context.sizing import Meter, measure_each
from ..policies import apply_policy, resolve_policy
from ..policies.langchain_trim import SYSTEM_ROLES
from . import STUB_SUMMARY, Peer, register_peer

__all__ = ["Bridge", "BRIDGE", "available", "version", "trim_real", "trim_port", "clear_real", "clear_port",
           "summarize_real", "summarize_port", "stub_chat_model", "BYTES", "TOKENS"]

Sizer = Callable[[Message], int]
BYTES = Meter("bytes")  # the lab's default size, measured once per message object


class _Tokens(Meter):
    """cl100k tokens per message, cached by object and by content (cut candidates recur on both sides)."""

    def __init__(self) -> None:
        super().__init__("cl100k")
        self._sizer = lambda m: measure_each([m], "cl100k")[0]


TOKENS = _Tokens()  # the summarization peer counts cl100k tokens on both sides (its constants are tokens)
_IGNORED = ("response_metadata", "artifact")  # LangChain-side bookkeeping, never sent to a model


def available() -> str | None:
    """None when the real LangChain code imports, else why not."""
    try:
        import langchain.agents.middleware.context_editing  # noqa: F401
        import langchain.agents.middleware.summarization  # noqa: F401
        import langchain_core.messages  # noqa: F401
    except Exception as exc:  # any import failure means the comparison cannot run
        return f"LangChain is not importable here ({type(exc).__name__}: {exc}); install the 'peers' extra"
    return None


def version() -> str:
    return f"langchain-core {metadata.version('langchain-core')}, langchain {metadata.version('langchain')}"


class Bridge:
    """OpenAI-form dicts to LangChain messages and back, exactly (see the module docstring)."""

    def __init__(self) -> None:
        self._by_dict: dict[int, tuple[Message, Any]] = {}
        self._by_tag: dict[str, tuple[Message, Any]] = {}

    def to_langchain(self, context: Sequence[Message]) -> list:
        """LangChain messages for the dicts (converted once per dict object; LangChain never mutates them here)."""
        from langchain_core.messages import convert_to_messages

        out = []
        for m in context:
            hit = self._by_dict.get(id(m))
            if hit is None or hit[0] is not m:
                tag = f"nh-{id(m)}"
                hit = (m, convert_to_messages([{**m, "id": tag}])[0])
                self._by_dict[id(m)] = self._by_tag[tag] = hit
            out.append(hit[1])
        return out

    def to_openai(self, message: Any) -> Message:
        """The OpenAI-form dict of a message the real code returned."""
        hit = self._by_tag.get(message.id) if isinstance(message.id, str) else None
        if hit is None:
            from langchain_core.messages import convert_to_openai_messages

            return convert_to_openai_messages(message)  # a message the real code made (a summary)
        original, converted = hit
        if message is converted:
            return original
        return _changed(message, converted, original)

    def counter(self, size: Sizer) -> Callable[[Iterable[Any]], int]:
        """A LangChain token counter (a list of messages -> int) summing the lab's per-message size."""
        def count(messages):
            return sum(size(self.to_openai(m)) for m in messages)
        return count

    def clear(self) -> None:
        self._by_dict.clear()
        self._by_tag.clear()


def _changed(message: Any, converted: Any, original: Message) -> dict:
    out = dict(original)
    for name in type(message).model_fields:
        new, old = getattr(message, name), getattr(converted, name)
        if new == old or name in _IGNORED:
            continue
        if name == "content":
            out["content"] = new
        elif name == "tool_calls":
            out["tool_calls"] = _calls(new, old, original.get("tool_calls") or [])
        elif name == "additional_kwargs":
            for key in set(new) | set(old):
                if key not in new:
                    out.pop(key, None)
                elif new[key] != old.get(key):
                    out[key] = new[key]
        else:
            raise ValueError(f"LangChain changed {name!r} of a {role_of(original)} message; the bridge cannot "
                             "translate that change to OpenAI form")
    return out


def _calls(new: Sequence[Mapping], old: Sequence[Mapping], original: Sequence[Mapping]) -> list:
    if not (len(new) == len(old) == len(original)):
        raise ValueError("LangChain changed the number of tool calls of a message; the bridge cannot translate that")
    out = []
    for n, o, raw in zip(new, old, original, strict=True):
        if n == o:
            out.append(raw)
            continue
        fn = raw.get("function") or {}
        out.append({**raw, "id": n["id"], "function": {
            **fn, "name": n["name"], "arguments": json.dumps(n["args"], ensure_ascii=False)}})
    return out


BRIDGE = Bridge()


# --- trim_messages -----------------------------------------------------------------------------------


def trim_real(context: list, budget: int, size: Sizer = BYTES, **options: Any) -> list:
    """``trim_messages(strategy="last", start_on="human", include_system=True)`` at ``max_tokens=budget``."""
    from langchain_core.messages import trim_messages

    kwargs = {"strategy": "last", "start_on": "human", "include_system": True, **options}
    out = trim_messages(BRIDGE.to_langchain(context), max_tokens=budget, token_counter=BRIDGE.counter(size), **kwargs)
    return [BRIDGE.to_openai(m) for m in out]


def trim_port(context: list, budget: int, size: Sizer = BYTES, **options: Any) -> list:
    return apply_policy(resolve_policy("langchain_trim", **options), context, budget=budget, size=size).messages


# --- ClearToolUsesEdit -------------------------------------------------------------------------------


def clear_real(context: list, budget: int, size: Sizer = BYTES, **options: Any) -> list:
    """``ClearToolUsesEdit(trigger=budget, **options).apply`` on the context, tokens counted with ``size``."""
    from langchain.agents.middleware.context_editing import ClearToolUsesEdit

    messages = BRIDGE.to_langchain(context)
    ClearToolUsesEdit(trigger=budget, **options).apply(messages, count_tokens=BRIDGE.counter(size))
    return [BRIDGE.to_openai(m) for m in messages]


def clear_port(context: list, budget: int, size: Sizer = BYTES, **options: Any) -> list:
    policy = resolve_policy("clear_tool_uses", **options)
    return apply_policy(policy, context, budget=budget, size=size, tokens=size).messages


# --- SummarizationMiddleware -------------------------------------------------------------------------


_STUB_CLASS: list = []


def _stub_class() -> Any:
    """The stub chat model class, defined once (a pydantic model class is costly to build)."""
    if not _STUB_CLASS:
        from langchain_core.language_models.chat_models import SimpleChatModel

        class StubChatModel(SimpleChatModel):
            reply: str = STUB_SUMMARY
            prompts: list = []

            @property
            def _llm_type(self) -> str:
                return "nanohermes-stub"

            def _call(self, messages, stop=None, run_manager=None, **kwargs):
                self.prompts.append(messages[0].content if len(messages) == 1 else messages)
                return self.reply

        _STUB_CLASS.append(StubChatModel)
    return _STUB_CLASS[0]


def stub_chat_model(reply: str = STUB_SUMMARY, **fields: Any):
    """A LangChain chat model that answers ``reply`` and records every prompt it is sent (``.prompts``).

    ``fields`` set other chat-model fields, e.g. ``profile={"max_input_tokens": n}``.
    """
    return _stub_class()(reply=reply, prompts=[], **fields)


def _split_system(context: Sequence[Message]) -> tuple[list, list]:
    head = list(context[:1]) if context and role_of(context[0]) in SYSTEM_ROLES else []
    return head, list(context[len(head):])


def summarize_real(context: list, budget: int, size: Sizer = TOKENS, model: Any = None, **options: Any) -> list:
    """``SummarizationMiddleware.before_model`` on the agent state, its model stubbed.

    A LangChain agent's system prompt is not in its state (``create_agent`` adds
    it at each model call, ``langchain/agents/factory.py``), so a leading system
    message is set aside and put back first. The middleware's trigger is the lab
    trigger: ``("tokens", budget + 1 - system size)`` on the state is
    ``size > budget`` on the whole context, with the same counter.
    """
    from langchain.agents.middleware.summarization import SummarizationMiddleware
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    head, history = _split_system(context)
    threshold = max(1, budget + 1 - sum(size(m) for m in head))
    middleware = SummarizationMiddleware(model or stub_chat_model(), trigger=("tokens", threshold),
                                         token_counter=BRIDGE.counter(size), **options)
    runtime: Any = None  # the middleware reads nothing of a graph's runtime on this path
    update = middleware.before_model({"messages": BRIDGE.to_langchain(history)}, runtime)
    if update is None:
        return list(context)
    first, *rest = update["messages"]
    if not (isinstance(first, RemoveMessage) and first.id == REMOVE_ALL_MESSAGES):
        raise ValueError("SummarizationMiddleware no longer replaces the whole state; the bridge needs updating")
    return head + [BRIDGE.to_openai(m) for m in rest]


def summarize_port(context: list, budget: int, size: Sizer = TOKENS, summarizer: Any = None, **options: Any) -> list:
    policy = resolve_policy("langchain_summarize", **options)
    return apply_policy(policy, context, budget=budget, size=size, tokens=size,
                        summarizer=summarizer or (lambda excerpt: STUB_SUMMARY)).messages


_SOURCES = {
    "langchain_trim": 'langchain_core.messages.trim_messages(strategy="last", start_on="human", include_system=True)',
    "clear_tool_uses": "langchain.agents.middleware.context_editing.ClearToolUsesEdit.apply",
    "langchain_summarize": "langchain.agents.middleware.summarization.SummarizationMiddleware.before_model",
}

for _policy, _real, _port, _size in (("langchain_trim", trim_real, trim_port, BYTES),
                                     ("clear_tool_uses", clear_real, clear_port, BYTES),
                                     ("langchain_summarize", summarize_real, summarize_port, TOKENS)):
    register_peer(Peer(_policy, _SOURCES[_policy], version, _real, _port, _size, available))
