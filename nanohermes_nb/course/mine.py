"""Run a notebook on the learner's own code: ``notebooks/mine.py`` in place of the package's context layer.

A learner writes ``clamp`` (exercise 7.1), ``find_cut`` (10.1) and ``compact`` (10.2) early in the course
and collects them in ``notebooks/mine.py``. A later notebook that sets ``MY_CODE = True`` in its
parameters cell asks :func:`context_layer` for its ``nh``: instead of the package it gets a
:class:`Layer` whose ``clamp``, ``find_cut`` and ``compact`` are the learner's, and whose ``replay`` runs
the learner's ``compact`` through :class:`MinePolicy`; every other name is the package's. So the
notebook runs unchanged on the learner's code, and its own assertions check it.

The learner's ``compact`` returns four values (messages, cut, dropped, note), as exercise 10.2
asks; ``Layer.compact`` turns them into the package's ``CompactionResult``. It takes what exercise
10.2's function takes (budget, keep_recent, summarizer, force): an option it does not have (a
backward cut, a user-role summary, another unit) raises a ``TypeError`` that says so rather than
silently running the package's code.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

from ..context.budgets import DEFAULT_BUDGETS
from ..policies.base import Policy

__all__ = ["context_layer", "load_mine", "Layer", "MinePolicy", "MINE_FILE"]

MINE_FILE = Path(__file__).resolve().parents[2] / "notebooks" / "mine.py"
_DEFAULTS = {"summary_role": "system", "excerpt_tool_calls": False, "cut": "forward", "meter": None, "size": None}


def load_mine(path: str | os.PathLike | None = None) -> ModuleType:
    """The learner's module: ``path``, else ``mine.py`` in the current folder (a notebook's), else the course's."""
    candidates = [Path(path)] if path else [Path.cwd() / "mine.py", MINE_FILE]
    found = next((p for p in candidates if p.is_file()), None)
    if found is None:
        raise FileNotFoundError(f"no learner's module at {candidates[0]}")
    spec = importlib.util.spec_from_file_location("mine", found)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [name for name in ("clamp", "find_cut", "compact") if not callable(getattr(module, name, None))]
    if missing:
        raise AttributeError(f"{found}: no {', '.join(missing)}: write them there (exercises 7.1, 10.1, 10.2)")
    return module


def _check_options(options: dict[str, Any]) -> None:
    unknown = [k for k, v in options.items() if k not in _DEFAULTS or _DEFAULTS[k] != v]
    if unknown:
        raise TypeError(f"your compact (notebooks/mine.py) has no option {unknown[0]}={options[unknown[0]]!r}: "
                        "exercise 10.2's compact takes budget, keep_recent, summarizer and force; "
                        "run this cell with MY_CODE = False")


def compact_with(mine: ModuleType, messages: Any, *, budget: int = DEFAULT_BUDGETS.context_char_budget,
                 keep_recent: int = DEFAULT_BUDGETS.keep_recent,
                 summarizer: Any = None, force: bool = False, **options: Any) -> Any:
    """The learner's ``compact``, its four values turned into the package's ``CompactionResult``."""
    from ..context.compaction import SUMMARY_HEADER, CompactionResult, naive_cut
    from ..context.sizing import context_size

    _check_options({k: v for k, v in options.items() if k not in ("meter", "size")})
    source = list(messages)
    size = context_size(source)
    new, cut, dropped, note = mine.compact(source, budget, keep_recent, summarizer, force)
    naive = naive_cut(source, keep_recent)
    if cut is None:
        return CompactionResult(source, [], None, None, "your compact did not act", naive, mine.find_cut(
            source, keep_recent), size, size, budget, keep_recent, forced=force, source=source)
    summarized = isinstance(note, str) and note.startswith(SUMMARY_HEADER)
    return CompactionResult(list(new), list(dropped), cut, note, "forced" if force else f"size {size:,} > {budget:,}",
                            naive, cut, size, context_size(new), budget, keep_recent, summarizer_called=summarized,
                            failure=None if summarized else "placeholder (your compact)", forced=force,
                            source=source)


@dataclass(frozen=True)
class MinePolicy(Policy):
    """NanoHermes's rule as the learner wrote it (``notebooks/mine.py``), for ``replay``: the same Event as
    ``NanoHermesPolicy``'s, from the learner's ``compact``. Option: ``keep_recent`` (10)."""

    keep_recent: int = DEFAULT_BUDGETS.keep_recent
    module: Any = dataclasses.field(default=None, init=False, compare=False, repr=False)
    name: ClassVar[str] = "nanohermes (your code)"

    @classmethod
    def of(cls, module: ModuleType, keep_recent: int = DEFAULT_BUDGETS.keep_recent) -> MinePolicy:
        """The policy running ``module``'s ``compact``."""
        policy = cls(keep_recent=keep_recent)
        object.__setattr__(policy, "module", module)
        return policy

    def compact(self, context: list, env: Any, size: int) -> tuple[list, Any]:
        from ..policies.base import Event

        if env.unit != "bytes":
            raise TypeError(f"your compact (notebooks/mine.py) counts bytes, not {env.unit}: run with MY_CODE = False")
        result = compact_with(self.module or load_mine(), context, budget=env.budget, keep_recent=self.keep_recent,
                              summarizer=env.summarizer)
        if not result.compacted:
            return context, None
        return result.messages, Event(policy=self.name, kind="summary" if result.summarizer_called else "placeholder",
                                      size_before=result.size_before, size_after=result.size_after,
                                      removed=tuple(result.dropped), inserted=(result.messages[1],), cut=result.cut,
                                      naive_cut=result.naive_cut, note=result.note,
                                      summarizer_calls=int(result.summarizer_called), failure=result.failure,
                                      detail=result.describe())


class Layer:
    """The package, with the learner's ``clamp``, ``find_cut``, ``compact`` and a ``replay`` that uses them."""

    def __init__(self, mine: ModuleType) -> None:
        import nanohermes_nb

        self._package, self.mine = nanohermes_nb, mine
        self.clamp, self.find_cut = mine.clamp, mine.find_cut

    def __getattr__(self, name: str) -> Any:
        return getattr(self._package, name)

    def __repr__(self) -> str:
        return f"<the nanohermes_nb package with your clamp, find_cut and compact from {self.mine.__file__}>"

    def compact(self, messages: Any, **options: Any) -> Any:
        return compact_with(self.mine, messages, **options)

    def replay(self, messages: Any, settings: Any = None, **changes: Any) -> Any:
        """``nanohermes_nb.replay``, NanoHermes's rule run by the learner's ``compact`` (other policies as they are)."""
        from ..engine.settings import Settings
        from ..policies.nanohermes import NanoHermesPolicy

        chosen = Settings.of(settings, "replay", **changes)
        policy = chosen.policy
        if isinstance(policy, NanoHermesPolicy):
            _check_options({"summary_role": policy.summary_role, "excerpt_tool_calls": policy.excerpt_tool_calls,
                            "cut": policy.cut, **({"force": True} if policy.force else {})})
            chosen = dataclasses.replace(chosen, policy=MinePolicy.of(self.mine, policy.keep_recent))
        return self._package.replay(messages, chosen)


def context_layer(my_code: bool | str | os.PathLike, path: str | os.PathLike | None = None) -> Any:
    """The ``nh`` a notebook runs on: the package, or (``my_code``) the package with the learner's functions in it.

    ``my_code`` may also name the learner's module file itself (a test runs a notebook on a broken copy).
    """
    import nanohermes_nb

    if isinstance(my_code, (str, os.PathLike)):
        return Layer(load_mine(my_code))
    return Layer(load_mine(path)) if my_code else nanohermes_nb
