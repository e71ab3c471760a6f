"""The policy interface: what an agent does once its context is over budget.

*When* and *what* are kept apart, as hermes-agent's ``context_engine.py`` does
(``should_compress`` beside ``compress``): the trigger is one function,
``over_budget`` (size > budget, in the ledger's unit), asked by the replay loop,
the live agent loop and ``apply_policy``; a policy is only ever told "this
context is over budget: compact it" and answers with the context to carry on
with and an ``Event`` describing what it did (or ``None`` when it declines).

A policy is a frozen dataclass whose fields are its options, with the source
system's defaults: ``NanoHermesPolicy(keep_recent=4)``,
``POLICIES["clear_tool_uses"](clear_at_least=2000)``. ``resolve_policy`` turns a
name, a class or an instance plus option shorthands into one instance, and an
option the policy does not have is a ``TypeError`` naming it. Policies never
mutate the context they are given: changed messages are new dicts, unchanged
ones are the same objects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from ..context import compaction
from ..context.budgets import over_budget
from ..context.compaction import PLAIN_EXCERPTS, ExcerptReader
from ..context.messages import Message
from ..context.sizing import DEFAULT_UNIT, Meter, message_size
from ..context.summarizers import Summarizer

__all__ = [
    "PolicyError",
    "Event",
    "PolicyEnv",
    "Policy",
    "Applied",
    "apply_policy",
    "resolve_policy",
    "policy_options",
    "over_budget",
    "make_event",
    "check_positive",
    "POLICIES",
    "register",
    "summary_prefixes",
    "is_summary_message",
]

Sizer = Callable[[Message], int]


class PolicyError(ValueError):
    """A policy that cannot work on the context it was given, in one line naming the policy.

    Not a bug and not a bad option: the input does not suit this policy (Cline's and Roo's rules keep the
    user's task first, so a history with no user message leaves them nothing to keep). ``replay`` raises
    it; a sweep lists the transcript as skipped with this line; the CLI prints it with the file name and
    exits 2.
    """


@dataclass(frozen=True)
class Event:
    """One thing a policy did to the context: a compaction, a trim, a mask."""

    policy: str
    kind: str  # 'summary', 'placeholder', 'trim', 'mask', 'clear', ...
    size_before: int
    size_after: int
    removed: tuple = ()  # original messages no longer in the context as they were
    inserted: tuple = ()  # messages the policy added (a summary, placeholders)
    cut: int | None = None
    naive_cut: int | None = None
    note: str | None = None
    summarizer_calls: int = 0
    failure: str | None = None
    detail: str = ""
    # issue 27: (prompt, completion) tokens the summary requests cost, when the summarizer measured them
    summarizer_tokens: tuple | None = None

    @property
    def dropped_count(self) -> int:
        return len(self.removed)


@dataclass(frozen=True)
class PolicyEnv:
    """What a policy may use: the budget, the sizes, the summarizer.

    ``meter`` sizes one message in the trigger's unit (``unit``); constants a
    source gives in tokens are measured with ``tokens()`` (cl100k unless a token
    meter is given or the trigger itself counts tokens). ``excerpts`` reads a
    summary's excerpt and asks the summarizer (``compaction.ExcerptReader``): the
    plain reader, or in a replay the engine's, which answers the same faster.
    """

    budget: int
    meter: Sizer = message_size
    summarizer: Summarizer | None = None
    unit: str = DEFAULT_UNIT
    token_meter: Sizer | None = None
    excerpts: ExcerptReader = PLAIN_EXCERPTS

    def tokens(self) -> Sizer:
        if self.token_meter is not None:
            return self.token_meter
        if self.unit in ("cl100k", "o200k", "tokens_approx"):
            return self.meter
        meter = Meter("cl100k")  # loaded only when a policy asks
        object.__setattr__(self, "token_meter", meter)
        return meter


class Policy:
    """Base class. Subclasses are frozen dataclasses; their fields are their options.

    ``compact(context, env, size)``: the context (a list, never mutated) is over
    ``env.budget`` at ``size`` in the trigger's unit; return ``(new_context,
    event)``, or ``(context, None)`` to decline.
    """

    name: ClassVar[str] = "policy"
    # how this policy's summaries open when it does not use the lab's SUMMARY_HEADER (``summary_prefixes()``)
    summary_prefixes: ClassVar[tuple[str, ...]] = ()

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        raise NotImplementedError

    def describe(self) -> str:
        return (self.__doc__ or self.name).strip().splitlines()[0]

    def option(self, name: str, default: Any = None) -> Any:
        """The value of one of this policy's options, or ``default`` when it has no such option.

        The engine asks a policy this way (``policy.option("keep_recent")``) instead of
        probing attributes, so a policy that wraps another can answer for it.
        """
        return policy_options(self).get(name, default)

    @property
    def label(self) -> str:
        """The name, with the options that differ from the defaults: ``nanohermes(keep_recent=4)``."""
        changed = policy_options(self, changed_only=True)
        if not changed:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"


POLICIES: dict[str, type[Policy]] = {}


def register(cls: type[Policy]) -> type[Policy]:
    """Add a policy class to ``POLICIES`` under its ``name``."""
    POLICIES[cls.name] = cls
    return cls


def summary_prefixes() -> tuple[str, ...]:
    """How the registered policies' summaries open, each policy's declared ``summary_prefixes`` in turn.

    Whoever must tell a summary from a real message (the Codex policy collecting
    user messages, the retention book finding the user's goal) asks this, then
    ``compaction.is_summary_message(message, prefixes)``: the registry is read when
    asked, so nothing changes another module when a policy is imported.
    """
    return tuple(dict.fromkeys(p for cls in POLICIES.values() for p in cls.summary_prefixes if p))


def is_summary_message(message: Message) -> bool:
    """``compaction.is_summary_message`` with every registered policy's summary openings."""
    return compaction.is_summary_message(message, summary_prefixes())


def policy_options(policy: Policy | type[Policy], *, changed_only: bool = False) -> dict[str, Any]:
    """A policy's options and their values (for a class: the defaults)."""
    out = {}
    for f in dataclasses.fields(cast(Any, policy)):  # every concrete policy is a dataclass
        if not f.init:
            continue
        default = f.default if f.default is not dataclasses.MISSING else None
        value = getattr(policy, f.name) if isinstance(policy, Policy) else default
        if not changed_only or value != default:
            out[f.name] = value
    return out


def _option_names(cls: type[Policy]) -> list[str]:
    return [f.name for f in dataclasses.fields(cast(Any, cls)) if f.init]


def resolve_policy(policy: str | type[Policy] | Policy | None = None, **options: Any) -> Policy:
    """One policy instance from a name, a class from ``POLICIES``, an instance, or None (nanohermes).

    ``options`` set the policy's options; ``None`` values mean "not given" (the
    shorthands of ``replay`` and ``sweep``). An option the policy does not have
    raises ``TypeError`` naming it: nothing is silently ignored.
    """
    given = {k: v for k, v in options.items() if v is not None}
    if policy is None:
        policy = "nanohermes"
    if isinstance(policy, str):
        try:
            policy = POLICIES[policy]
        except KeyError:
            raise ValueError(f"unknown policy {policy!r}; known: {', '.join(sorted(POLICIES))}") from None
    if isinstance(policy, type) and issubclass(policy, Policy):
        cls, instance = policy, None
    elif isinstance(policy, Policy):
        cls, instance = type(policy), policy
    else:
        raise TypeError(f"policy must be a name, a Policy class or a Policy instance, got {type(policy).__name__}")
    unknown = [k for k in given if k not in _option_names(cls)]
    if unknown:
        raise TypeError(
            f"option {unknown[0]!r} does not apply to policy {cls.name!r} "
            f"(its options: {', '.join(_option_names(cls)) or 'none'})")
    if instance is None:
        return cls(**given)
    return dataclasses.replace(cast(Any, instance), **given) if given else instance


def accepts_option(policy: str | type[Policy] | Policy, option: str) -> bool:
    """True when the policy has an option of that name."""
    if isinstance(policy, str):
        policy = POLICIES[policy]
    cls = policy if isinstance(policy, type) else type(policy)
    return option in _option_names(cls)


@dataclass(frozen=True)
class Applied:
    """What one application of a policy gave: the new context and its event (None: nothing done)."""

    messages: list
    event: Event | None
    size_before: int
    budget: int

    @property
    def acted(self) -> bool:
        return self.event is not None


def apply_policy(
    policy: str | type[Policy] | Policy,
    messages: Sequence[Message],
    *,
    budget: int,
    size: Sizer | None = None,
    tokens: Sizer | None = None,
    summarizer: Summarizer | None = None,
    unit: str | None = None,
) -> Applied:
    """Apply a policy once to one context, under the one trigger.

    ``size`` measures one message in the trigger's unit (default: UTF-8 bytes of
    compact JSON); ``tokens`` measures one message for the constants a source
    gives in tokens (default: cl100k, loaded when first needed). The caller's
    list is never touched.
    """
    pol = resolve_policy(policy)
    context = list(messages)
    meter = size or message_size
    total = sum(meter(m) for m in context)
    if not over_budget(total, budget):
        return Applied(context, None, total, budget)
    env = PolicyEnv(budget, meter, summarizer, unit or (DEFAULT_UNIT if size is None else "custom"), tokens)
    new, event = pol.compact(context, env, total)
    return Applied(list(new), event, total, budget)


def make_event(policy: Policy, kind: str, context: Sequence[Message], new: Sequence[Message], env: PolicyEnv,
               size: int, **fields: Any) -> Event:
    """An event with removed/inserted found by identity and the size after in the trigger's unit."""
    new_ids = {id(m) for m in new}
    old_ids = {id(m) for m in context}
    return Event(
        policy=policy.name,
        kind=kind,
        size_before=size,
        size_after=sum(env.meter(m) for m in new),
        removed=tuple(m for m in context if id(m) not in new_ids),
        inserted=tuple(m for m in new if id(m) not in old_ids),
        **fields,
    )


def check_positive(value: float, name: str, *, upper: float | None = None, zero: bool = False) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is > 0 (>= 0 with ``zero``) and <= ``upper``."""
    ok = value >= 0 if zero else value > 0
    if not ok or (upper is not None and value > upper):
        bound = f" and <= {upper}" if upper is not None else ""
        raise ValueError(f"{name} must be {'>=' if zero else '>'} 0{bound}, got {value!r}")
