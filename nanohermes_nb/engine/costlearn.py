"""What the cost model learns across sessions: ``learn_priors`` from a set of sessions' bills.

Give it the *other* sessions to predict one (``validation.leave_one_out``). Every value is a
physical quantity measured on many sessions, never a session's own after its first requests:

- ``thinking`` (Claude Code): o200k tokens of thinking per signature character, from the prompt
  growth between consecutive requests (``prompt[j] - prompt[j-1]``, no compaction, no model
  switch, no user turn): growth = scale x (visible growth + injected) + scale x k x signature of
  the reply before, per session; k is pooled, weighted by the signature characters;
- ``unlogged`` (Claude Code logs that do not record injections): the per-request intercept of the
  same growth, in o200k tokens (the session's scale divided out), the median over sessions;
- ``hidden``, ``first_read``, ``uncached``, ``read_share``: the typical hidden prefix, the share
  of it a first request reads, the uncached tail of an Anthropic prompt, and reads over the
  rule's expected reads mid-session (``mid_session``: OpenAI's best-effort cache; for Claude
  Code the rewrites and fall-backs to an earlier breakpoint no log foresees, as a rate);
- ``restored``, ``compact_read`` (Claude Code): what a prompt holds right after the agent's own
  compaction beyond the model's (median, o200k) and the share of the hidden prefix it reads.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from .calibrate import RequestFacts
from .costmodel import Priors, fit_for, predict, provider_of, steps_of_facts

__all__ = ["learn_priors", "mid_session", "rewrites"]


def _per_agent(cases: Iterable[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for c in cases:
        out.setdefault(c.agent, []).append(c)
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _growth(case: Any, steps: Sequence[Any] | None = None, turns: bool = False,
            limit: float = 60_000) -> list[tuple[float, float, float]]:
    """(prompt growth, visible growth with the hidden part, signature chars of the reply before) per request
    (growths over ``limit``, a rewrite rather than growth, left out)."""
    rows = []
    facts = case.facts
    for j in range(1, len(facts)):
        f, g = facts[j], facts[j - 1]
        if f.usage is None or g.usage is None or f.compacted or f.model != g.model or (f.turn_start and not turns):
            continue
        grown = f.usage.prompt_tokens - g.usage.prompt_tokens
        if abs(grown) > limit:
            continue
        seen = f.visible - g.visible
        seen += steps[j].hidden if steps is not None else (f.injected or 0.0) - (g.shown_thinking if g.thinking else 0)
        rows.append((float(grown), float(seen), float(g.thinking)))
    return rows


def _lsq2(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float] | None:
    """Least squares of y on two regressors, no intercept (the normal equations)."""
    a = sum(r[1] * r[1] for r in rows)
    b = sum(r[1] * r[2] for r in rows)
    c = sum(r[2] * r[2] for r in rows)
    y1, y2 = sum(r[0] * r[1] for r in rows), sum(r[0] * r[2] for r in rows)
    det = a * c - b * b
    if abs(det) < 1e-9 * max(1.0, a * c):
        return None
    return (y1 * c - y2 * b) / det, (a * y2 - b * y1) / det


def _thinking(cases: Sequence[Any]) -> float | None:
    num = den = 0.0
    for case in cases:
        rows = _growth(case)
        weight = sum(r[2] for r in rows)
        fit = _lsq2(rows) if len(rows) >= 10 and weight else None
        if fit is None or fit[0] <= 0.5 or fit[1] <= 0:
            continue
        num += fit[1] / fit[0] * weight
        den += weight
    return round(num / den, 4) if den else None


def _unlogged(cases: Sequence[Any], priors: Priors) -> float | None:
    """Per-request growth (o200k) the messages do not explain, on logs that do not record injections."""
    values = []
    for case in cases:
        if not case.facts or case.facts[0].injected is not None:
            continue
        steps = steps_of_facts(case.facts, provider_of(case.agent), priors, case.agent)
        rows = [(g, s, 1.0) for g, s, _ in _growth(case, steps, turns=True, limit=30_000)]
        fit = _lsq2(rows) if len(rows) >= 20 else None
        if fit is not None and fit[0] > 0.5:
            values.append(fit[1] / fit[0])
    return round(statistics.median(values), 1) if values else None


def mid_session(case: Any, turn: bool) -> tuple[float, float, list[float]]:
    """Reported reads, the rule's expected reads and uncached tokens, mid-session, at user turns or within them.

    The expected read is the previous billed prompt (within a turn) or, at a new user turn on an
    OpenAI reasoning model, the prompt of the turn before's first request.
    """
    read = expected = 0.0
    tails: list[float] = []
    turn_prompt = 0.0
    prev: RequestFacts | None = None
    for f, s in zip(case.facts, case.steps, strict=True):
        u = f.usage
        if u is not None and prev is not None and prev.usage is not None and not f.compacted and \
                f.model == prev.model and f.time is not None and prev.time is not None \
                and f.time - prev.time <= 300 and f.turn_start == turn:
            rule = prev.usage.prompt_tokens if s.shared >= prev.visible else min(turn_prompt, prev.usage.prompt_tokens)
            read += u.cached_tokens
            expected += min(rule, u.prompt_tokens)
            tails.append(u.prompt_tokens - u.cached_tokens - u.cache_write_tokens)
        if u is not None and (prev is None or f.turn_start or f.compacted):
            turn_prompt = u.prompt_tokens
        prev = f
    return read, expected, tails


def _hour_class(case: Any) -> bool:
    firsts = [case.writes_1h.get(f.index, 0.0) for f in case.billed[:12] if f.usage.cache_write_tokens > 0]
    return bool(firsts) and sum(firsts) / len(firsts) >= 0.5


def _fit(case: Any, priors: Priors) -> Any:
    steps = steps_of_facts(case.facts, provider_of(case.agent), priors, case.agent)
    return fit_for(case.facts, case.agent, priors, continued=case.meta.continued, writes_1h=case.writes_1h,
                   steps=steps), steps


def _prefix(agent: str, mine: Sequence[Any], priors: Priors, out: dict) -> None:
    """The typical hidden prefix, first reads, the Anthropic tail and OpenAI's read share (``out`` tables)."""
    fits = [(c, _fit(c, priors)[0]) for c in mine]
    own = [(c, f) for c, f in fits if f is not None and f.hidden > 0 and c.meta.continued is None]
    if own:
        out["hidden"][agent] = round(statistics.median(f.hidden for _, f in own))
    for logged in (True, False):  # a log that records injections shows part of what another one hides
        hs = [f.hidden for c, f in own if (c.facts[0].injected is not None) == logged]
        if hs:
            out["hidden"][f"{agent}:{'logged' if logged else 'unlogged'}"] = round(statistics.median(hs))
    by_class: dict[str, list[float]] = {}
    for c, f in fits:
        if f is None or f.hidden <= 0 or c.meta.continued is not None or not c.billed:
            continue
        x = min(1.0, c.billed[0].usage.cached_tokens / f.hidden)
        hour = provider_of(agent) == "anthropic" and _hour_class(c)
        by_class.setdefault(f"{agent}:{'1h' if hour else 'default'}", []).append(x)
        by_class.setdefault(agent, []).append(x)
    out["first_read"].update({k: round(_mean(v) or 0.0, 4) for k, v in by_class.items()})
    mids = [mid_session(c, turn) for c in mine for turn in (False, True)]
    expected = sum(m[1] for m in mids)
    if expected:
        out["read_share"][agent] = round(sum(m[0] for m in mids) / expected, 4)
    tails = [t for m in mids for t in m[2]]
    if tails and provider_of(agent) == "anthropic":
        out["uncached"][agent] = round(_mean(tails) or 0.0, 1)


def _compactions(agent: str, mine: Sequence[Any], priors: Priors, out: dict) -> None:
    """What a prompt holds right after the agent's own compaction beyond the model, and what it reads."""
    excess, reads = [], []
    for c in mine:
        if not any(f.compacted for f in c.facts):
            continue
        fit, steps = _fit(c, priors)
        if fit is None:
            continue
        tokens = predict(steps, fit, priors, agent, c.step)
        for f, t in zip(c.facts, tokens, strict=True):
            if f.compacted and f.usage is not None:
                excess.append((f.usage.prompt_tokens - t.prompt) / fit.scale)
                if fit.hidden > 0:
                    reads.append(min(1.0, f.usage.cached_tokens / fit.hidden))
    if excess:
        out["restored"][agent] = round(statistics.median(excess))
    if reads:
        out["compact_read"][agent] = round(_mean(reads) or 1.0, 4)


def learn_priors(cases: Sequence[Any], source: str = "") -> Priors:
    """``Priors`` from these sessions' bills (give it the *other* sessions to predict one)."""
    tables: dict[str, dict[str, float]] = {k: {} for k in ("hidden", "first_read", "read_share", "uncached",
                                                             "thinking", "unlogged", "restored", "compact_read")}
    for agent, mine in _per_agent(cases).items():
        priors = Priors()
        if provider_of(agent) == "anthropic":
            k = _thinking(mine)
            if k is not None:
                tables["thinking"][agent] = k
            priors = Priors(thinking=dict(tables["thinking"]))
            rate = _unlogged(mine, priors)
            if rate is not None:
                tables["unlogged"][agent] = rate
        _prefix(agent, mine, replace(priors, unlogged=dict(tables["unlogged"])), tables)
        if provider_of(agent) == "anthropic":
            _compactions(agent, mine, _priors(tables, restored=False), tables)
    return _priors(tables, len(cases), source)


def _priors(tables: dict[str, dict[str, float]], sessions: int = 0, source: str = "", restored: bool = True) -> Priors:
    t = {k: dict(v) for k, v in tables.items()}
    return Priors(hidden=t["hidden"], first_read=t["first_read"], read_share=t["read_share"], uncached=t["uncached"],
                  thinking=t["thinking"], unlogged=t["unlogged"], restored=t["restored"] if restored else {},
                  compact_read=t["compact_read"] if restored else {}, sessions=sessions, source=source)


def rewrites(cases: Sequence[Any], priors: Priors) -> dict[str, float]:
    """Per agent: the share of the warm context (the previous prompt above what other sessions keep warm)
    that a user turn within the time-to-live loses on average (not part of the shipped model)."""
    out = {}
    for agent, mine in _per_agent(cases).items():
        cold = priors.get("first_read", agent, 0.0) * priors.get("hidden", agent, 0.0)
        lost = span = 0.0
        for c in mine:
            for j in range(1, len(c.facts)):
                f, g = c.facts[j], c.facts[j - 1]
                if not f.turn_start or f.usage is None or g.usage is None or f.compacted or f.model != g.model \
                        or f.time is None or g.time is None or f.time - g.time > 300:
                    continue
                lost += max(0.0, g.usage.prompt_tokens - f.usage.cached_tokens)
                span += max(1.0, g.usage.prompt_tokens - cold)
        if span:
            out[agent] = round(lost / span, 4)
    return out


