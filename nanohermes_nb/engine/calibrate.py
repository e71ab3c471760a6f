"""The model proven against the bill: estimated prompt, cached tokens and dollars beside the reported ones.

A log shows what the agent sent except its hidden prefix (the system prompt
and tool schemas), and counts tokens with the provider's tokenizer, which for
Anthropic is not public. So the estimate of request ``j``'s prompt is

    hidden + scale * visible[j]

where ``visible[j]`` is what the log shows of that request's context in the
project's token unit (o200k, ``sizing``), and ``hidden`` and ``scale`` are
fitted (least squares) on the session's own first requests (``FIT_REQUESTS``,
before any compaction): Anthropic's tokens are Claude tokens, about 1.2 o200k
tokens each on these logs, and the fitted scale says so per session. That is
the *free-running* estimate. The *bill-anchored* one, used where the previous
request's bill is known, is that bill plus the scaled growth since: the
error does not accumulate over a 200-request session.

Which part of a prompt the provider reads from its cache follows the rule of
``CacheRule``: the whole previous prompt (Anthropic writes up to the last
breakpoint, the end of the previous request; OpenAI rounds down to 128-token
blocks) if it came within the time-to-live, on the same model; after a tool's
own compaction the hidden prefix and the visible start it left in place (the
system message, and the continuation's leading messages when they are the
transcript's own: ``_kept_start``); nothing after a longer gap or a model
switch. Times-to-live (``TTL_SECONDS``):

- Anthropic: 5 minutes by default, refreshed on each hit; 1 hour when the
  request asked for it (Claude Code's ``cache_creation.ephemeral_1h_input_tokens``
  says so). https://platform.claude.com/docs/en/build-with-claude/prompt-caching
- OpenAI: cached prefixes "generally remain active for 5 to 10 minutes of
  inactivity, up to a maximum of one hour" (prompt caching guide,
  https://developers.openai.com/api/docs/guides/prompt-caching, which adds that keeping a
  session "doesn't guarantee a cache hit"). The rule takes the
  hour: the Codex logs show full hits after 12 and 24 idle minutes, and a
  shorter TTL only adds misses on them.
- OpenAI reasoning models drop the reasoning items of earlier turns once a
  new user message comes (https://cookbook.openai.com/examples/responses_api/reasoning_items),
  so at a new user turn the prefix shared with the previous request ends
  where the turn before began: the rule expects the prompt of that turn's
  first request. (Anthropic keeps earlier thinking blocks on the models these
  logs use; the rule reads the whole previous prompt there.)

A request is *within* when its cached estimate is within 5% of its reported
prompt. Where it is not, ``reason`` says what came before it: the first
request, a compaction, an idle gap over the TTL, a model switch, or, with none
of those, a ``partial`` hit (the provider read 10-90% of the prefix the rule
expected: OpenAI's cache is best-effort, and no log can foresee it).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..transcripts.base import ReportedUsage
from ..transcripts.session import Session, SessionLike
from .pricing import Pricing

__all__ = ["RequestFacts", "CacheRule", "TTL_SECONDS", "FIT_REQUESTS", "TOLERANCE", "Fit", "fit_session",
           "Calibration", "calibrate_facts", "REASONS", "seconds", "facts_from_transcript", "calibrate",
           "calibration_table", "least_squares"]

TTL_SECONDS = {"anthropic": 300.0, "anthropic_1h": 3600.0, "openai": 3600.0}
FIT_REQUESTS = 12
TOLERANCE = 0.05
REASONS = ("first", "compaction", "idle", "model_switch", "partial", "over", "other")


@dataclass(frozen=True)
class RequestFacts:
    """What calibration needs of one API request: when, which model, what the log shows, what was billed.

    ``visible``: tokens of the context the log shows (project unit);
    ``reply``: tokens of the visible reply; ``compacted``: a tool compaction
    happened since the previous request; ``usage``: the reported usage (prompt,
    cached, cache-write, completion tokens) or None.
    """

    index: int
    time: float | None
    model: str
    visible: int
    reply: int
    compacted: bool = False
    usage: Any = None  # a ReportedUsage, or None where the log reports none
    ttl: float | None = None  # the request's own TTL when its log says (Anthropic 1 h writes)
    turn_start: bool = False  # a user message came since the previous request
    kept: int = 0  # after a tool's compaction: the visible tokens at the start it left as they were
    thinking: float = 0.0  # signature characters of this request's reply thinking (``logmeta``)
    shown_thinking: float = 0.0  # o200k tokens of the thinking text the log shows for that reply
    injected: float | None = None  # o200k tokens the agent injected since the request before; None: not logged


@dataclass(frozen=True)
class CacheRule:
    """How much of a prompt the provider reads from its cache (see the module docstring)."""

    provider: str = "anthropic"  # anthropic | openai
    ttl: float = 300.0
    step: int = 1

    @classmethod
    def for_pricing(cls, pricing: Pricing | None) -> CacheRule:
        if pricing is not None and pricing.cache == "openai":
            return cls("openai", TTL_SECONDS["openai"], pricing.rounding)
        return cls("anthropic", TTL_SECONDS["anthropic"], 1)

    def read(self, previous: float) -> float:
        """Tokens read of a cached prefix of ``previous`` tokens."""
        if previous <= 0:
            return 0.0
        return float(int(previous) - int(previous) % self.step)


@dataclass(frozen=True)
class Fit:
    """``prompt ~ hidden + scale * visible`` on the first requests; ``output_scale`` on the whole bill."""

    hidden: float
    scale: float
    output_scale: float
    points: int

    def prompt(self, visible: float) -> float:
        return self.hidden + self.scale * visible


def least_squares(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """``(intercept, slope)`` of the least-squares line through ``(xs, ys)`` (slope 1 when ``xs`` do not vary)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if n < 2 or sxx <= 0:
        return my - mx, 1.0
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return my - slope * mx, slope


def fit_session(facts: Sequence[RequestFacts], requests: int = FIT_REQUESTS) -> Fit | None:
    """The hidden prefix and the token scale from the first ``requests`` billed requests before any compaction."""
    points: list[Any] = []
    for f in facts:
        if f.compacted and points:
            break
        if f.usage is not None and f.usage.prompt_tokens > 0:
            points.append((f.visible, f.usage.prompt_tokens))
        if len(points) >= requests:
            break
    if not points:
        return None
    hidden, scale = least_squares([p[0] for p in points], [p[1] for p in points])
    if not 0.5 <= scale <= 3.0 or hidden < 0:  # too few or too alike points: keep the first request's ratio
        scale = 1.0
        hidden = max(0.0, points[0][1] - points[0][0])
    billed = [f for f in facts if f.usage is not None]
    shown = sum(f.reply for f in billed)
    output_scale = sum(f.usage.completion_tokens for f in billed) / shown if shown else 1.0
    return Fit(hidden, scale, output_scale, len(points))


@dataclass(frozen=True)
class Calibration:
    """Per-request estimate beside the bill (``rows``), the fit, and the session's figures (``summary``)."""

    rows: Any  # pandas.DataFrame, one row per request with reported usage
    fit: Fit | None
    rule: CacheRule
    summary: dict = field(default_factory=dict)

    def misses(self) -> dict:
        """Requests outside the 5% band, by what came before them."""
        r = self.rows
        if not len(r):
            return {}
        counts = r.loc[~r["within"], "reason"].value_counts()
        return {k: int(counts.get(k, 0)) for k in REASONS if counts.get(k, 0)}


def _reason(f: RequestFacts, prev: RequestFacts | None, ttl: float, expected: float, reported: int,
            prompt: int) -> str:
    if prev is None:
        return "first"
    if f.compacted:
        return "compaction"
    if f.time is not None and prev.time is not None and f.time - prev.time > ttl:
        return "idle"
    if f.model != prev.model:
        return "model_switch"
    if reported < expected - TOLERANCE * prompt:
        return "partial"
    if reported > expected + TOLERANCE * prompt:
        return "over"
    return "other"


def _expected(f: RequestFacts, prev: RequestFacts | None, prev_prompt: float, turn_prompt: float | None, fit: Fit,
              rule: CacheRule, ttl: float) -> float:
    """The cached tokens the rule expects: previous prompt, the start a compaction kept, or nothing.

    OpenAI reasoning models: at a new user turn the reasoning items of the
    turn before are no longer sent, so the prefix shared with the previous
    request ends where that turn began: the prompt of its first request.
    """
    if prev is None or f.model != prev.model:
        return 0.0
    if f.time is not None and prev.time is not None and f.time - prev.time > ttl:
        return 0.0
    if f.compacted:  # the prefix the compaction left as it was: the hidden one and the visible start it kept
        return rule.read(fit.hidden + fit.scale * f.kept)
    if rule.provider == "openai" and f.turn_start and turn_prompt is not None:
        return rule.read(min(turn_prompt, prev_prompt))
    return rule.read(prev_prompt)


def calibrate_facts(facts: Sequence[RequestFacts], pricing: Pricing | Mapping[str, Pricing] | None,
                    rule: CacheRule | None = None, fit: Fit | None = None) -> Calibration:
    """The estimate of every billed request beside its bill, and the session's figures.

    ``pricing``: one ``Pricing`` or a mapping model -> ``Pricing`` (per-request
    prices; a model without one costs nothing on both sides and is counted).
    """
    from .frames import frame

    price_of = (lambda m: pricing.get(m)) if isinstance(pricing, Mapping) else (lambda m: pricing)
    if rule is None:
        first = next((price_of(f.model) for f in facts if price_of(f.model) is not None), None)
        rule = CacheRule.for_pricing(first)
    fit = fit or fit_session(facts)
    rows: list[dict] = []
    prev: RequestFacts | None = None
    prev_prompt = 0.0
    turn_prompt: float | None = None  # the prompt of the first request of the current user turn
    for f in facts:
        u = f.usage
        if fit is None:
            break
        free = fit.prompt(f.visible)
        if prev is not None and prev.usage is not None and not f.compacted and f.model == prev.model:
            est = prev.usage.prompt_tokens + fit.scale * (f.visible - prev.visible)  # anchored on the last bill
        else:
            est = free
        est = max(est, 0.0)
        ttl = f.ttl or rule.ttl
        cached = min(_expected(f, prev, prev_prompt, turn_prompt, fit, rule, ttl), est)
        if u is not None:
            rows.append(_row(f, prev, est, free, cached, fit, rule, ttl))
        prev, prev_prompt = f, (u.prompt_tokens if u is not None else est)
        if f.turn_start or f.compacted or turn_prompt is None:
            turn_prompt = prev_prompt
    efficiency = _efficiency(rows)
    for row, usage in zip(rows, (f.usage for f in facts if f.usage is not None), strict=True):
        _price(row, price_of(row["model"]), rule, efficiency, usage)
    table = frame(rows, list(_ROW_COLUMNS))
    return Calibration(table, fit, rule, _summary(table, fit, efficiency))


def _efficiency(rows: Sequence[dict]) -> float:
    """Tokens the provider read from its cache over those the rule expected, on the session's whole bill.

    Below 1 where partial hits (OpenAI's best-effort cache, an Anthropic
    breakpoint evicted early) bill part of the expected prefix at the full
    price; above 1 where a cache outlived its documented lifetime. It is
    fitted on the session's own bill (in-sample), and only the calibrated cost
    uses it; ``est_cost_rule_usd`` is the rule's cost without it.
    """
    expected = sum(r["est_cached"] for r in rows)
    return sum(r["cached"] for r in rows) / expected if expected > 0 else 1.0


def _price(row: dict, pricing: Pricing | None, rule: CacheRule, efficiency: float, usage: Any = None) -> None:
    """The reported cost (as the bill prices it: ``bill.request_cost``, 1-hour writes at their price), the rule's
    estimate, and the estimate with the session's cache efficiency."""
    from .bill import request_cost

    if pricing is None:
        row.update(cost_usd=None, est_cost_rule_usd=None, est_cost_usd=None)
        return
    est, out = row["est_prompt"], row["est_output"]
    row["cost_usd"] = request_cost(usage, pricing) if usage is not None else pricing.cost(
        row["prompt"], row["cached"], row["output"], row["cache_write"])
    for name, eff in (("est_cost_rule_usd", 1.0), ("est_cost_usd", efficiency)):
        cached = min(round(row["est_cached"] * eff), est)
        write = est - cached if rule.provider == "anthropic" else 0
        row[name] = pricing.cost(est, cached, out, write)


_ROW_COLUMNS = ("index", "time", "model", "compacted", "kept", "visible", "prompt", "est_prompt", "est_prompt_free",
                "cached", "est_cached", "cache_write", "est_cache_write", "output", "est_output", "within", "reason",
                "partial_hit", "cost_usd", "est_cost_rule_usd", "est_cost_usd")


def _row(f: RequestFacts, prev: RequestFacts | None, est: float, free: float, cached: float, fit: Fit,
         rule: CacheRule, ttl: float) -> dict:
    u = f.usage
    prompt = u.prompt_tokens
    within = abs(cached - u.cached_tokens) <= TOLERANCE * prompt
    partial = bool(cached > 0 and 0.1 * cached <= u.cached_tokens <= 0.9 * cached)
    return {"index": f.index, "time": f.time, "model": f.model, "compacted": f.compacted, "kept": f.kept,
            "visible": f.visible,
            "prompt": prompt,
            "est_prompt": round(est), "est_prompt_free": round(free), "cached": u.cached_tokens,
            "est_cached": round(cached), "cache_write": u.cache_write_tokens,
            "est_cache_write": round(est - cached) if rule.provider == "anthropic" else 0,
            "output": u.completion_tokens, "est_output": round(fit.output_scale * f.reply),
            "within": bool(within), "reason": "" if within else _reason(f, prev, ttl, cached, u.cached_tokens, prompt),
            "partial_hit": partial, "cache_write_1h": u.cache_write_1h_tokens}


def _summary(rows: Any, fit: Fit | None, efficiency: float = 1.0) -> dict:
    n = len(rows)
    if not n or fit is None:
        return {"requests": n}
    cost = float(rows["cost_usd"].fillna(0).sum())
    est = float(rows["est_cost_usd"].fillna(0).sum())
    rule_est = float(rows["est_cost_rule_usd"].fillna(0).sum())
    prompt = rows["prompt"].astype(float).where(rows["prompt"] > 0)
    free_err = ((rows["est_prompt_free"] - prompt).abs() / prompt).median()
    anch_err = ((rows["est_prompt"] - prompt).abs() / prompt).median()
    return {"requests": n, "within": int(rows["within"].sum()), "within_share": float(rows["within"].mean()),
            "partial_hits": int(rows["partial_hit"].sum()), "partial_share": float(rows["partial_hit"].mean()),
            "cost_usd": cost, "est_cost_usd": est, "cost_error": (est - cost) / cost if cost else None,
            "est_cost_rule_usd": rule_est, "cost_error_rule": (rule_est - cost) / cost if cost else None,
            "cache_efficiency": round(efficiency, 4), "hidden": round(fit.hidden), "scale": round(fit.scale, 4),
            "output_scale": round(fit.output_scale, 4), "fit_points": fit.points,
            "prompt_error_median": float(anch_err), "prompt_error_free_median": float(free_err)}


# ---------------------------------------------------------------- from a loaded agent log


def seconds(t: Any) -> float | None:
    """A request time as POSIX seconds: from a number, a ``datetime`` or an ISO 8601 text (``Z`` allowed)."""
    if t is None:
        return None
    if isinstance(t, (int, float)):
        return float(t)
    if hasattr(t, "timestamp"):
        return float(t.timestamp())
    if isinstance(t, str):
        from datetime import datetime, timezone

        try:
            d = datetime.fromisoformat(t.replace("Z", "+00:00"))
        except ValueError:
            return None
        return (d if d.tzinfo else d.replace(tzinfo=timezone.utc)).timestamp()
    return None


def _ttl_of(usage: ReportedUsage) -> float | None:
    """1 hour when the request wrote to Anthropic's 1-hour cache (Claude Code's usage says so), else None."""
    for key, value in usage.raw.items():
        if isinstance(value, Mapping):
            if any("1h" in str(k) and isinstance(v, (int, float)) and v > 0 for k, v in value.items()):
                return TTL_SECONDS["anthropic_1h"]
        elif "1h" in str(key) and isinstance(value, (int, float)) and value > 0:
            return TTL_SECONDS["anthropic_1h"]
    return None


def _session_ttl(log: Session) -> float | None:
    """1 hour when the file shows Claude Code writes to the 1-hour cache anywhere (a text search), else None."""
    import re

    if log.agent != "claude_code" or not log.path:
        return None
    try:
        with open(log.path, "rb") as fh:
            text = fh.read()
    except OSError:
        return None
    return TTL_SECONDS["anthropic_1h"] if re.search(rb'"ephemeral_1h_input_tokens":\s*[1-9]', text) else None


def facts_from_transcript(transcript: SessionLike, session: Any = None, unit: str = "o200k",
                          meta: Any = None) -> list[RequestFacts]:
    """One ``RequestFacts`` per request of a loaded agent log (``Session.requests``, ``.compactions``).

    The visible context of a request is what the log shows the agent sent:
    the system message, then, after the tool's last compaction, the messages it
    went on from (``ToolCompaction.continuation``: Claude Code's summary, Codex's
    replacement history) and the transcript from there to the request's
    assistant message (``AgentRequest.message``). ``meta`` (``logmeta.SessionMeta``) adds what
    the file says beyond its messages: each reply's thinking signatures and the context the
    agent injected (``RequestFacts.thinking``, ``.injected``).
    """
    from .recorded import RecordedSession

    log = Session.of(transcript)
    requests = log.requests
    session = session if session is not None else RecordedSession.of(log)
    shift = len(session.messages) - len(log.messages)  # 1 when an empty system message was prepended
    p, meter = session.prefix(unit), session.meter(unit)
    system = p[1] if len(p) > 1 else 0
    cuts = sorted(((int(c.message) + shift, sum(meter(m) for m in (c.continuation or ())),
                    system + _kept_start(c.continuation or (), session.messages, meter))
                   for c in log.compactions), key=lambda c: c[0])
    ttl = _session_ttl(log)
    users = [k for k, m in enumerate(session.messages) if isinstance(m, Mapping) and m.get("role") == "user"]
    out: list[RequestFacts] = []
    k = 0
    start = head = None
    kept = 0
    before = -1
    for j, r in enumerate(requests):
        i = int(r.message) + shift
        compacted = False
        while k < len(cuts) and cuts[k][0] <= i:
            (start, head, kept), compacted, k = cuts[k], True, k + 1
        visible = p[i] if start is None or head is None else system + head + p[i] - p[start]
        own = _ttl_of(r.usage) if r.usage is not None else None
        turn = bisect_right(users, i) > bisect_right(users, before)  # a user message since the previous request
        out.append(RequestFacts(j, seconds(r.time), r.model or "", visible, meter(session.messages[i]),
                                compacted and j > 0, r.usage, own or ttl, turn and j > 0,
                                kept if compacted else 0, *_unshown(meta, r.id, session.messages[i])))
        before = i
    return out


def _unshown(meta: Any, ident: str, reply: Any) -> tuple[float, float, float | None]:
    """A request's thinking signature characters, the tokens of the thinking text shown, what was injected."""
    from ..context.sizing import count_tokens

    signed = float(meta.thinking.get(ident, 0)) if meta is not None else 0.0
    shown = reply.get("reasoning_content") if signed and isinstance(reply, Mapping) else None
    return (signed, float(count_tokens(shown, "o200k")) if shown else 0.0,
            None if meta is None or meta.injected is None else float(meta.injected.get(ident, 0.0)))


def _kept_start(continuation: Sequence[Any], messages: Sequence[Any], meter: Any) -> int:
    """Tokens of the continuation's leading messages that are the transcript's own, in place, after its
    system message: what a compaction left unchanged at the start of the context (Codex keeps the
    developer and AGENTS.md messages when its replacement history begins with them; it often begins
    with the first user message instead, and then only the system message is kept)."""
    n = 0
    for k, m in enumerate(continuation, start=1):
        if k >= len(messages) or m != messages[k]:
            break
        n += meter(m)
    return n


def calibrate(transcript: SessionLike, presets: Mapping[str, Pricing] | None = None) -> Calibration:
    """The session's estimate beside its bill: ``calibrate_facts`` over ``facts_from_transcript``.

    Each request is priced by its own model (``bill.price_for_model``).
    """
    from .bill import price_for_model
    from .pricing import pricing_presets

    presets = pricing_presets() if presets is None else presets
    facts = facts_from_transcript(transcript)
    prices = {f.model: price_for_model(f.model, presets) for f in facts}
    return calibrate_facts(facts, {k: v for k, v in prices.items() if v is not None})


def calibration_table(transcripts: Any) -> tuple[Any, dict]:
    """Per-session figures of many agent logs, and the pooled ones per agent.

    ``transcripts``: loaded ``Transcript``s or ``Session``s (or paths). Returns a DataFrame (one
    row per session with reported usage: agent, file, requests, within share,
    partial hits, reported and estimated cost and its error, hidden prefix,
    scale) and ``{agent: {...}}`` pooled over that agent's sessions: requests,
    within share, partial-hit share, and the same over sessions of 30 requests
    or more.
    """
    from pathlib import Path

    from .frames import frame

    rows = []
    for t in transcripts:
        if isinstance(t, (str, Path)):
            from ..transcripts import load_transcript

            t = load_transcript(t)
        log = Session.of(t)
        cal = calibrate(log)
        s = cal.summary
        if not s.get("requests") or cal.fit is None:
            continue
        rows.append({"agent": log.agent, "file": log.name, **s,
                     "misses": cal.misses()})
    table = frame(rows)
    pooled: dict = {}
    for agent in dict.fromkeys(r["agent"] for r in rows):
        mine = [r for r in rows if r["agent"] == agent]
        long = [r for r in mine if r["requests"] >= 30]
        pooled[agent] = {
            "sessions": len(mine), "requests": sum(r["requests"] for r in mine),
            "within_share": sum(r["within"] for r in mine) / max(1, sum(r["requests"] for r in mine)),
            "partial_share": sum(r["partial_hits"] for r in mine) / max(1, sum(r["requests"] for r in mine)),
            "sessions_30": len(long), "requests_30": sum(r["requests"] for r in long),
            "within_share_30": sum(r["within"] for r in long) / max(1, sum(r["requests"] for r in long)),
            "worst_cost_error_30": max((abs(r["cost_error"]) for r in long if r["cost_error"] is not None),
                                       default=None),
        }
    return table, pooled
