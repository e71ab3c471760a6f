"""The peer policies proven against the real code they name: the differential harness.

For each policy that reproduces another system, a ``Peer`` says how to run the
real code (an installed library, or a released wheel unpacked beside the
project where the package cannot be installed) and the project's port on the
same context, with the same per-message size on both sides and the LLM summary stubbed on both sides. The
harness walks every tool-batch point of a transcript (the context right after a
tool batch, where the trigger is checked), applies both at budgets below the
context's size, and counts the contexts that come out identical.

``agreement(files)`` is the table the README and notebook 17 show. The real
libraries live in the ``peers`` extra; a peer whose library is missing is
reported as such, never silently passed. A system with no code that can run
here (Codex is Rust) is ``Pinned`` instead: cases taken from its own tests, a
history in and the history it gives out, checked by ``check_pinned``; its row
counts cases, and its note says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..context.messages import Message, calls_of, role_of
from ..engine.frames import frame
from ..engine.recorded import prepare

__all__ = [
    "Peer",
    "Agreement",
    "PEERS",
    "register_peer",
    "batch_points",
    "budgets_below",
    "canonical",
    "compare",
    "first_difference",
    "agreement",
    "STUB_SUMMARY",
    "PinnedCase",
    "Pinned",
    "PINNED",
    "register_pinned",
    "check_pinned",
]

STUB_SUMMARY = "STUB SUMMARY"  # what the stubbed LLM answers, on both sides
BUDGET_SHARES = (0.75, 0.5, 0.25)


@dataclass(frozen=True)
class Peer:
    """How to run one real system's policy and the project's port of it on the same context.

    ``real(context, budget)`` and ``port(context, budget)`` each return the new
    context as OpenAI-form dicts; both use the same per-message size and a
    summarizer that answers ``STUB_SUMMARY``. ``version()`` names what the real
    side is (library or wheel, and its version).
    """

    policy: str
    source: str
    version: Callable[[], str]
    real: Callable[[list, int], list]
    port: Callable[[list, int], list]
    size: Callable[[Message], int]
    available: Callable[[], str | None] = lambda: None  # None, or why the real code cannot run here


PEERS: dict[str, Peer] = {}


def register_peer(peer: Peer) -> Peer:
    PEERS[peer.policy] = peer
    return peer


def batch_points(messages: Sequence[Message]) -> Iterator[list]:
    """Every context at which the trigger is checked: the transcript up to the end of each tool batch."""
    msgs, _ = prepare(messages)
    i, n = 1, len(msgs)
    while i < n:
        if role_of(msgs[i]) == "assistant" and calls_of(msgs[i]):
            i += 1
            while i < n and role_of(msgs[i]) == "tool":
                i += 1
            yield msgs[:i]
        else:
            i += 1


def budgets_below(size: int, shares: Sequence[float] = BUDGET_SHARES) -> list[int]:
    """Budgets below a context's size (so every policy is asked to act), as shares of it."""
    return sorted({max(1, int(size * s)) for s in shares if int(size * s) < size}, reverse=True)


def canonical(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """Messages as comparable text: compact JSON with sorted keys (key order is not content)."""
    return [json.dumps(m, ensure_ascii=False, sort_keys=True, separators=(",", ":")) for m in messages]


@dataclass
class Agreement:
    """How often the port and the real code gave the same context."""

    policy: str
    source: str
    version: str
    compared: int = 0
    identical: int = 0
    mismatches: list = field(default_factory=list)  # (file, point, budget, first differing index)
    unavailable: str | None = None
    note: str = ""  # what the counts are, when they are not contexts (pinned cases)

    @property
    def share(self) -> float | None:
        return self.identical / self.compared if self.compared else None

    def row(self) -> dict:
        return {"policy": self.policy, "real code": self.source, "version": self.version,
                "contexts compared": self.compared, "identical": self.identical,
                "agreement": None if self.share is None else round(self.share, 4),
                "note": self.unavailable or self.note}


def first_difference(a: Sequence[Any], b: Sequence[Any]) -> int | None:
    """Index of the first message that differs, None when the contexts are identical.

    The same object on both sides is the same message (most of a context is
    passed through untouched), so only the others are serialized.
    """
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x is not y and canonical([x]) != canonical([y]):
            return k
    return None if len(a) == len(b) else min(len(a), len(b))


def compare(peer: Peer, transcripts: Iterable[tuple[str, Sequence[Message]]], *,
            shares: Sequence[float] = BUDGET_SHARES, keep_mismatches: int = 20, stride: int = 1) -> Agreement:
    """Run the real code and the port on every tool-batch point at every budget below its size.

    ``stride`` > 1 takes every ``stride``-th point of each transcript (0, stride,
    ...): a deterministic sample for a real side too slow to run on every point.
    """
    why = peer.available()
    if why:
        return Agreement(peer.policy, peer.source, "not installed", unavailable=why)
    result = Agreement(peer.policy, peer.source, peer.version())
    for name, messages in transcripts:
        for point, context in enumerate(batch_points(messages)):
            if point % stride:
                continue
            size = sum(peer.size(m) for m in context)
            for budget in budgets_below(size, shares):
                real = peer.real(list(context), budget)
                port = peer.port(list(context), budget)
                result.compared += 1
                differs = first_difference(real, port)
                if differs is None:
                    result.identical += 1
                elif len(result.mismatches) < keep_mismatches:
                    result.mismatches.append((name, point, budget, differs))
    return result


def agreement(transcripts: Iterable[str | Path] | Iterable[tuple[str, Sequence[Message]]], *,
              policies: Sequence[str] | None = None, shares: Sequence[float] = BUDGET_SHARES, stride: int = 1):
    """The agreement table: one row per peer policy (contexts compared, identical, library version).

    ``stride`` > 1 compares every ``stride``-th tool-batch point of each transcript (a quick look).
    """
    from ..transcripts import load_transcript

    named = []
    for t in transcripts:
        if isinstance(t, tuple):
            named.append(t)
        else:
            named.append((Path(t).name, load_transcript(t)))
    _load_all()
    rows = []
    for name in policies or [*sorted(PEERS), *sorted(p for p in PINNED if p not in PEERS)]:
        if name in PEERS:
            rows.append(compare(PEERS[name], named, shares=shares, stride=stride).row())
        elif name in PINNED:
            rows.append(check_pinned(PINNED[name]).row())
        else:
            raise KeyError(f"no peer registered for policy {name!r}")
    return frame(rows)


@dataclass(frozen=True)
class PinnedCase:
    """One case taken from a source's own tests: a history in, the history the source gives out.

    For a system with no code that runs here (Codex is Rust): ``source`` names the
    test it comes from (file and line), ``budget`` is the trigger's budget (the
    history is over it), ``options`` the policy options the case sets, ``summary``
    what the stubbed model answers.
    """

    name: str
    source: str
    history: list
    expected: list
    budget: int = 1
    options: dict = field(default_factory=dict)
    summary: str = STUB_SUMMARY


@dataclass(frozen=True)
class Pinned:
    """A policy pinned by cases instead of a differential run: ``run(case)`` is the port's answer."""

    policy: str
    source: str
    version: Callable[[], str]
    cases: Callable[[], list]
    run: Callable[[PinnedCase], list]


PINNED: dict[str, Pinned] = {}


def register_pinned(pinned: Pinned) -> Pinned:
    PINNED[pinned.policy] = pinned
    return pinned


def check_pinned(pinned: Pinned, *, keep_mismatches: int = 20) -> Agreement:
    """Run the port on every pinned case: the counts are cases, not contexts (the note says so)."""
    cases = pinned.cases()
    result = Agreement(pinned.policy, pinned.source, pinned.version(),
                       note=f"pinned by {len(cases)} cases from the source's tests (no real code runs here)")
    for case in cases:
        got, want = canonical(pinned.run(case)), canonical(case.expected)
        result.compared += 1
        if got == want:
            result.identical += 1
        elif len(result.mismatches) < keep_mismatches:
            result.mismatches.append((case.name, case.source, case.budget, first_difference(got, want)))
    return result


def _load_all() -> None:
    """Import every peer module so that it registers itself."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
