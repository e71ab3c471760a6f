"""What one replay runs with, declared once: the trigger, the policy, the summarizer, the books.

``replay``, ``sweep`` (a grid over one ``Settings``), ``compare_policies``, the CLI and
the live agent all take a ``Settings``; each field has one default, the same
everywhere. Options of one policy (NanoHermes's ``keep_recent``, ``summary_role``,
``excerpt_tool_calls``, ``cut``) are not settings: they belong to the policy
(``policy=NanoHermesPolicy(keep_recent=4)``), and the CLI builds that policy from
its flags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..context.budgets import DEFAULT_BUDGETS
from ..context.history import PROFILES
from ..context.sizing import DEFAULT_UNIT, UNITS
from ..context.summarizers import Summarizer
from ..policies import resolve_policy
from .pricing import Pricing, get_pricing

__all__ = ["Settings", "check_settings", "POLICY_OPTIONS"]

# options of a policy, not of a replay: naming one as a setting is a TypeError that says where it goes
POLICY_OPTIONS = ("keep_recent", "summary_role", "excerpt_tool_calls", "cut")


def check_settings(unit: str, tokens: Iterable[str], profiles: Iterable[str], budgets: Iterable[int]) -> None:
    """Raise ``ValueError`` for an unknown unit or profile or a negative budget, before any work."""
    for u in (unit, *tokens):
        if u not in UNITS:
            raise ValueError(f"unknown unit {u!r}; use one of {', '.join(UNITS)}")
    for p in profiles:
        if p not in PROFILES:
            raise ValueError(f"unknown profile {p!r}; use one of {', '.join(PROFILES)}")
    for b in budgets:
        if b < 0:
            raise ValueError(f"budget must be >= 0, got {b}")


@dataclass(frozen=True)
class Settings:
    """One replay's settings (a frozen value: ``settings.replace(budget=60_000)`` gives a new one).

    - ``budget`` in ``unit``: the trigger (SPEC: 120,000 bytes of compact JSON);
    - ``policy``: a name from ``POLICIES``, a policy class, or a configured instance;
    - ``summarizer``: a callable excerpt -> summary (None: the offline extractive one);
    - the books: ``tokens`` (extra token columns), ``profiles`` (history legality),
      ``prefix_reuse``, ``retention`` (goal/file retention at each event),
      ``needed_later`` (removed identifiers the recorded future mentions again),
      ``pricing`` (a preset name or a ``Pricing``: tokens and dollars), ``bill`` (an agent log's
      reported usage per request, the ``usage_*`` columns, when the transcript reports any: issue 24),
      ``probes`` (probes of what each event removed and their survival, per category: issue 36).
    """

    budget: int = DEFAULT_BUDGETS.context_char_budget
    unit: str = DEFAULT_UNIT
    policy: Any = "nanohermes"
    summarizer: Summarizer | None = None
    tokens: tuple[str, ...] = ()
    profiles: tuple[str, ...] = PROFILES
    prefix_reuse: bool = True
    retention: bool = True
    needed_later: bool = False
    pricing: Pricing | str | None = None
    bill: bool = True
    probes: bool = False  # issue 36: probe survival per event and per category (``probebook``)

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # normalising a frozen dataclass's own fields, once, at construction
        set_(self, "tokens", tuple(self.tokens))
        set_(self, "profiles", tuple(self.profiles))
        check_settings(self.unit, self.tokens, self.profiles, [self.budget])
        if self.policy is None or isinstance(self.policy, (str, type)):
            set_(self, "policy", resolve_policy(self.policy))
        if self.pricing is not None and not isinstance(self.pricing, Pricing):
            set_(self, "pricing", get_pricing(self.pricing))

    @classmethod
    def of(cls, settings: Settings | None = None, where: str = "replay", **changes: Any) -> Settings:
        """``settings`` (default: ``Settings()``) with ``changes``; a policy option named here says where it goes."""
        misplaced = [k for k in changes if k in POLICY_OPTIONS]
        if misplaced:
            k = misplaced[0]
            raise TypeError(f"{where}() has no setting {k!r}: it is an option of the policy, e.g. "
                            f"policy=NanoHermesPolicy({k}=...)")
        unknown = [k for k in changes if k not in _FIELDS]
        if unknown:
            raise TypeError(f"{where}() has no setting {unknown[0]!r}; settings: {', '.join(_FIELDS)}")
        base = settings if settings is not None else cls()
        return dataclasses.replace(base, **changes) if changes else base

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed (validated like a new one)."""
        return Settings.of(self, "Settings.replace", **changes)


_FIELDS = tuple(f.name for f in dataclasses.fields(Settings))
