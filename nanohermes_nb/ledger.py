"""Replay a recorded transcript through a context policy and keep the books (SPEC 5).

Every assistant message in a transcript was produced by one model request. The
replay rebuilds the context that request would have carried under a policy
(NanoHermes's compaction by default) and records its size, the running input
cost, and every event. Counterfactual caveat: the replay assumes the recorded
future did not depend on what was dropped.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .history import PROFILES, HistoryChecker
from .metrics import Retention, TextIndex, first_user_goal, goal_terms, retention
from .policies import Event, Policy, PolicyEnv, get_policy
from .sizing import UNITS, Meter, shared_prefix_bytes
from .summarizers import Summarizer

__all__ = ["replay", "reference_replay", "Ledger", "LedgerEvent", "Totals", "CAVEAT", "REQUEST_COLUMNS", "prepare"]

CAVEAT = (
    "Counterfactual replay: it assumes the recorded future did not depend on what was "
    "dropped. A real agent with less context might have acted differently."
)
REQUEST_COLUMNS = (
    "request", "turn", "index", "messages", "size", "size_before", "compacted", "dropped",
    "size_after", "cumulative_input", "size_no_compaction", "cumulative_no_compaction",
    "event", "prefix_reuse", "request_bytes",
)
_EMPTY_SYSTEM = {"role": "system", "content": ""}


def prepare(messages: Sequence[Mapping[str, Any]]) -> tuple[list, list[str]]:
    """The transcript as replayed: an empty system message prepended when missing."""
    msgs = list(messages)
    if msgs and isinstance(msgs[0], Mapping) and msgs[0].get("role") == "system":
        return msgs, []
    note = "messages[0] was not a system message: an empty one was prepended (indices shift by 1)"
    return [dict(_EMPTY_SYSTEM)] + msgs, [note]


@dataclass(frozen=True)
class LedgerEvent:
    """An event with where it happened, what it removed, and what survived."""

    request: int
    turn: int
    event: Event
    context_after: tuple
    problems: dict
    retention: Retention | None

    def __getattr__(self, name: str) -> Any:  # event fields read through
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.event, name)

    @property
    def dropped(self) -> list:
        return list(self.event.removed)


@dataclass(frozen=True)
class Totals:
    requests: int
    peak_request: int
    peak_request_number: int
    compactions: int
    summarizer_calls: int
    cumulative_input: int
    cumulative_input_no_compaction: int
    final_size: int
    ineffective_compactions: int  # events whose size after is still over the budget
    prefix_reuse: int
    request_bytes: int
    retention: float | None
    problems: dict = field(default_factory=dict)  # profile -> max problems in any request
    tokens: dict = field(default_factory=dict)  # unit -> cumulative input in that unit

    @property
    def saving(self) -> int:
        return self.cumulative_input_no_compaction - self.cumulative_input

    @property
    def saving_share(self) -> float:
        base = self.cumulative_input_no_compaction
        return self.saving / base if base else 0.0

    @property
    def prefix_reuse_share(self) -> float:
        return self.prefix_reuse / self.request_bytes if self.request_bytes else 0.0

    def as_dict(self) -> dict:
        out = {
            "requests": self.requests,
            "peak_request": self.peak_request,
            "peak_request_number": self.peak_request_number,
            "compactions": self.compactions,
            "summarizer_calls": self.summarizer_calls,
            "cumulative_input": self.cumulative_input,
            "cumulative_input_no_compaction": self.cumulative_input_no_compaction,
            "saving": self.saving,
            "saving_share": round(self.saving_share, 4),
            "final_size": self.final_size,
            "ineffective_compactions": self.ineffective_compactions,
            "prefix_reuse": self.prefix_reuse,
            "request_bytes": self.request_bytes,
            "prefix_reuse_share": round(self.prefix_reuse_share, 4),
            "retention": None if self.retention is None else round(self.retention, 4),
        }
        for profile, n in self.problems.items():
            out[f"problems_{profile}"] = n
        for unit, n in self.tokens.items():
            out[f"cumulative_{unit}"] = n
        return out


class _Run:
    """The replay loop, shared by ``replay`` (rows) and ``sweep`` (totals only)."""

    def __init__(self, messages: list, policy: Policy, env: PolicyEnv, *, bytes_meter: Meter,
                 token_meters: dict[str, Meter], profiles: Sequence[str], with_retention: bool,
                 rows: bool, text_index: TextIndex | None = None) -> None:
        self.messages = messages
        self.policy = policy
        self.env = env
        self.meter = env.meter
        self.bytes_meter = bytes_meter
        self.token_meters = token_meters
        self.profiles = tuple(profiles)
        self.with_retention = with_retention
        self.want_rows = rows
        self.text_index = text_index
        self.rows: list[dict] = []
        self.events: list[LedgerEvent] = []
        # per request: (last event before it or -1, first transcript index appended since, the reply's index)
        self.bases: list[tuple[int, int, int]] = []

    def run(self) -> Totals:
        msgs, size, bsize = self.messages, self.meter, self.bytes_meter
        n = len(msgs)
        ctx = [msgs[0]] if n else []
        ctx_size = sum(size(m) for m in ctx)
        full_size = ctx_size
        ctx_bytes = sum(bsize(m) for m in ctx)
        tok = {u: sum(mt(m) for m in ctx) for u, mt in self.token_meters.items()}
        tok_cum = {u: 0 for u in tok}
        checkers = self._checkers(ctx)
        goal = first_user_goal(msgs) if self.with_retention else ""
        turn = request = 0
        cumulative = cumulative_full = 0
        peak, peak_at = 0, 0
        prefix_total = request_total = 0
        summarizer_calls = ineffective = 0
        kept_items = all_items = 0
        max_problems = {p: 0 for p in self.profiles}
        prev_ctx: list | None = None  # the previous request's context list (may grow after)
        prev_len = 0
        prev_request_bytes = 0
        event_since_request = False
        base = (-1, 1)
        i = 1

        def append(m: Mapping[str, Any]) -> None:
            nonlocal ctx_size, full_size, ctx_bytes
            ctx.append(m)
            s = size(m)
            ctx_size += s
            full_size += s
            ctx_bytes += bsize(m)
            for u, mt in self.token_meters.items():
                tok[u] += mt(m)
            for c in checkers.values():
                c.feed(m)

        while i < n:
            m = msgs[i]
            role = m.get("role") if type(m) is dict else None
            if role == "user":
                turn += 1
            if role != "assistant":
                append(m)
                i += 1
                continue
            # one model request: the context as it is now
            request += 1
            req_bytes = 2 + max(len(ctx) - 1, 0) + ctx_bytes
            if prev_ctx is None:
                reuse = 0
            elif not event_since_request:
                reuse = prev_request_bytes - 1  # all but the closing ']'
            else:
                reuse = shared_prefix_bytes(prev_ctx[:prev_len], ctx, bsize)
            problems = {p: c.problem_count() for p, c in checkers.items()}
            for p, k in problems.items():
                max_problems[p] = max(max_problems[p], k)
            cumulative += ctx_size
            cumulative_full += full_size
            for u in tok:
                tok_cum[u] += tok[u]
            if ctx_size > peak:
                peak, peak_at = ctx_size, request
            prefix_total += reuse
            request_total += req_bytes
            row = None
            if self.want_rows:
                self.bases.append((*base, i))
                row = {
                    "request": request, "turn": turn, "index": i, "messages": len(ctx), "size": ctx_size,
                    "cumulative_input": cumulative, "size_no_compaction": full_size,
                    "cumulative_no_compaction": cumulative_full, "prefix_reuse": reuse,
                    "request_bytes": req_bytes,
                }
                for p, k in problems.items():
                    row[f"problems_{p}"] = k
                for u in tok:
                    row[f"size_{u}"] = tok[u]
                    row[f"cumulative_{u}"] = tok_cum[u]
            prev_ctx, prev_len, prev_request_bytes = ctx, len(ctx), req_bytes
            event_since_request = False
            append(m)
            i += 1
            calls = m.get("tool_calls")
            event = None
            size_before = ctx_size
            if isinstance(calls, list) and calls:
                while i < n and type(msgs[i]) is dict and msgs[i].get("role") == "tool":
                    append(msgs[i])
                    i += 1
                size_before = ctx_size
                new_ctx, event = self.policy.apply(ctx, self.env, ctx_size)
                if event is not None:
                    ctx = list(new_ctx)
                    ctx_size = sum(size(x) for x in ctx)
                    ctx_bytes = sum(bsize(x) for x in ctx)
                    for u, mt in self.token_meters.items():
                        tok[u] = sum(mt(x) for x in ctx)
                    checkers = self._checkers(ctx)
                    event_since_request = True
                    summarizer_calls += event.summarizer_calls
                    if ctx_size > self.env.budget:
                        ineffective += 1
                    ret = None
                    if self.with_retention:
                        ret = retention(event.removed, ctx, goal, self.text_index)
                        kept_items += ret.kept
                        all_items += ret.items
                    self.events.append(LedgerEvent(
                        request, turn, event, tuple(ctx),
                        {p: c.problem_count() for p, c in checkers.items()}, ret))
                    base = (len(self.events) - 1, i)
            if row is not None:
                row.update({
                    "size_before": size_before,
                    "compacted": event is not None,
                    "dropped": event.dropped_count if event is not None else 0,
                    "size_after": ctx_size,
                    "event": event.kind if event is not None else "",
                })
                self.rows.append(row)
        self.final_context = ctx
        return Totals(
            requests=request,
            peak_request=peak,
            peak_request_number=peak_at,
            compactions=len(self.events),
            summarizer_calls=summarizer_calls,
            cumulative_input=cumulative,
            cumulative_input_no_compaction=cumulative_full,
            final_size=ctx_size,
            ineffective_compactions=ineffective,
            prefix_reuse=prefix_total,
            request_bytes=request_total,
            retention=(kept_items / all_items) if all_items else None,
            problems=max_problems,
            tokens=tok_cum,
        )

    def _checkers(self, ctx: Sequence[Mapping[str, Any]]) -> dict[str, HistoryChecker]:
        checkers = {p: HistoryChecker(p) for p in self.profiles}
        for c in checkers.values():
            for m in ctx:
                c.feed(m)
        return checkers


@dataclass(frozen=True)
class Ledger:
    """The books of one replay: a row per request, every event, and totals."""

    requests: Any  # pandas.DataFrame
    compactions: list
    totals: Totals
    settings: dict
    notes: list
    messages: list = field(repr=False, default_factory=list)
    final_context: list = field(repr=False, default_factory=list)
    caveat: str = CAVEAT
    bases: list = field(repr=False, default_factory=list)

    @property
    def unit(self) -> str:
        return self.settings.get("unit", "bytes")

    @property
    def budget(self) -> int:
        return self.settings["budget"]

    @property
    def policy(self) -> str:
        return self.settings.get("policy", "nanohermes")

    def contexts(self):
        """Each request's context, in order: rebuilt from the events, no policy re-run."""
        for request in range(1, len(self.bases) + 1):
            yield self.context(request)

    def context(self, request: int) -> list:
        """The context sent with request number ``request`` (1-based, as in ``requests``)."""
        if not 1 <= request <= len(self.bases):
            raise IndexError(f"request {request} is not in 1..{len(self.bases)}")
        event, start, stop = self.bases[request - 1]
        head = list(self.compactions[event].context_after) if event >= 0 else self.messages[:1]
        return head + self.messages[start:stop]

    def by_turn(self):
        """The article's turn table: turn, messages, serialized size, action, size after."""
        import pandas as pd

        req = self.requests
        out = []
        if len(req):
            events = {e.request: e for e in self.compactions}
            for turn, group in req.groupby("turn", sort=True):
                last = group.iloc[-1]
                actions = []
                for idx in group["index"]:
                    calls = self.messages[idx].get("tool_calls") or []
                    for c in calls:
                        fn = c.get("function", {}) if isinstance(c, Mapping) else {}
                        actions.append(str(fn.get("name", "?")))
                action = _summarize_actions(actions) or "reply"
                compacted = [events[r] for r in group["request"] if r in events]
                for e in compacted:
                    action += f"; over budget: {e.kind} (dropped {e.dropped_count})"
                out.append({
                    "turn": int(turn),
                    "requests": len(group),
                    "messages": int(last["messages"]) + 1 + _tool_results(self.messages, int(last["index"])),
                    "size": int(group["size_before"].max()),
                    "action": action,
                    "compacted": bool(compacted),
                    "size_after": int(last["size_after"]),
                })
        return pd.DataFrame(out, columns=["turn", "requests", "messages", "size", "action", "compacted", "size_after"])

    def summary(self) -> str:
        t = self.totals
        unit = self.unit
        return (
            f"{t.requests} requests, peak {t.peak_request:,} {unit} (request {t.peak_request_number}), "
            f"{t.compactions} events ({self.policy}), {t.summarizer_calls} summarizer calls, "
            f"cumulative input {t.cumulative_input:,} {unit} vs {t.cumulative_input_no_compaction:,} "
            f"without compaction (saving {t.saving_share:.0%})"
        )

    def _repr_html_(self) -> str:
        head = f"<p><b>Ledger</b> — {html.escape(self.summary())}</p>"
        notes = "".join(f"<p><i>{html.escape(n)}</i></p>" for n in self.notes + [self.caveat])
        table = self.requests.to_html(index=False, max_rows=40)
        return head + notes + table


def reference_replay(
    messages: Sequence[Mapping[str, Any]],
    *,
    budget: int = 120_000,
    keep_recent: int = 10,
    summarizer: Summarizer | None = None,
) -> list[dict]:
    """SPEC section 5 written as plainly as possible: every size re-serialized every time.

    Slow on purpose; it is the yardstick ``replay`` is tested and benchmarked against.
    """
    from .compaction import compact
    from .sizing import context_size

    msgs, _ = prepare(messages)
    ctx = [msgs[0]] if msgs else []
    rows, cumulative, turn, i = [], 0, 0, 1
    while i < len(msgs):
        m = msgs[i]
        if m.get("role") == "user":
            turn += 1
        if m.get("role") != "assistant":
            ctx.append(m)
            i += 1
            continue
        size = context_size(ctx)
        cumulative += size
        row = {"request": len(rows) + 1, "turn": turn, "messages": len(ctx), "size": size,
               "cumulative_input": cumulative}
        ctx.append(m)
        i += 1
        result = None
        if m.get("tool_calls"):
            while i < len(msgs) and msgs[i].get("role") == "tool":
                ctx.append(msgs[i])
                i += 1
            result = compact(ctx, budget=budget, keep_recent=keep_recent, summarizer=summarizer)
        row["size_before"] = context_size(ctx)
        if result is not None and result.compacted:
            ctx = result.messages
        row.update(compacted=bool(result and result.compacted),
                   dropped=result.dropped_count if result else 0, size_after=context_size(ctx))
        rows.append(row)
    return rows


def _tool_results(messages: Sequence[Mapping[str, Any]], index: int) -> int:
    k = index + 1
    if not messages[index].get("tool_calls"):
        return 0
    while k < len(messages) and messages[k].get("role") == "tool":
        k += 1
    return k - index - 1


def _summarize_actions(names: list[str]) -> str:
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return ", ".join(n if c == 1 else f"{n} ×{c}" for n, c in counts.items())


def _check_unit(unit: str) -> None:
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(UNITS)}")


def replay(
    messages: Sequence[Mapping[str, Any]],
    *,
    budget: int = 120_000,
    keep_recent: int = 10,
    summarizer: Summarizer | None = None,
    unit: str = "bytes",
    policy: "str | Policy | None" = None,
    tokens: Iterable[str] = (),
    profiles: Sequence[str] = PROFILES,
    retention: bool = True,
    summary_role: str = "system",
    excerpt_tool_calls: bool = False,
    cut: str = "forward",
    meters: dict | None = None,
) -> Ledger:
    """Replay ``messages`` under a policy and return its ledger (SPEC section 5).

    ``budget`` is in ``unit`` (bytes of compact JSON by default). ``policy``
    defaults to NanoHermes with ``keep_recent``, ``summary_role``,
    ``excerpt_tool_calls`` and ``cut``; pass a name from ``POLICIES`` or an
    instance for another. ``tokens`` adds per-request token columns
    (``cl100k``, ``o200k``, ``tokens_approx``).
    """
    run, notes, prepared, pol = _start(messages, budget=budget, keep_recent=keep_recent,
                                       summarizer=summarizer, unit=unit, policy=policy, tokens=tokens,
                                       profiles=profiles, with_retention=retention,
                                       summary_role=summary_role, excerpt_tool_calls=excerpt_tool_calls,
                                       cut=cut, meters=meters, rows=True)
    totals = run.run()
    import pandas as pd

    columns = list(REQUEST_COLUMNS) + [f"problems_{p}" for p in run.profiles]
    for u in run.token_meters:
        columns += [f"size_{u}", f"cumulative_{u}"]
    frame = pd.DataFrame(run.rows, columns=columns)
    settings = {"budget": budget, "keep_recent": keep_recent, "unit": unit, "policy": pol.name,
                "policy_object": pol, "summarizer": repr(summarizer) if summarizer else "extractive (offline)"}
    return Ledger(frame, run.events, totals, settings, notes, prepared, run.final_context, bases=run.bases)


def _start(messages, *, budget, keep_recent, summarizer, unit, policy, tokens, profiles, with_retention,
           summary_role, excerpt_tool_calls, cut, meters, rows):
    _check_unit(unit)
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    meters = {} if meters is None else meters
    for u in set(tokens) | {unit, "bytes"}:
        _check_unit(u)
        if u not in meters:
            meters[u] = Meter(u)
    if policy is None or policy == "nanohermes":
        pol = get_policy("nanohermes", keep_recent=keep_recent, summary_role=summary_role,
                         excerpt_tool_calls=excerpt_tool_calls, cut=cut)
    else:
        pol = get_policy(policy)
    prepared, notes = prepare(messages)
    index = None
    if with_retention:  # one index per transcript, shared by every setting of a sweep
        terms = tuple(goal_terms(first_user_goal(prepared)))
        index = meters.get("text_index")
        if index is None or index.terms != terms:
            index = meters["text_index"] = TextIndex(terms)
    token_meter = meters.get("cl100k")
    env = PolicyEnv(budget, meters[unit], summarizer, unit, token_meter)
    run = _Run(prepared, pol, env, bytes_meter=meters["bytes"],
               token_meters={u: meters[u] for u in tokens}, profiles=profiles,
               with_retention=with_retention, rows=rows, text_index=index)
    return run, notes, prepared, pol
