"""The one cost model inside a replay: an agent log's requests priced by ``costmodel``, in every table.

A transcript that carries its bill (an agent log: ``RecordedSession.reported``) is never priced by
the cost book's count of its visible text: the provider sees a hidden prefix the log does not show,
counts Claude tokens, and caches by its own rule with its own lifetime. So wherever a replay of
such a log is priced (``replay(..., pricing=...)``, the ledger CLI, ``sweep``, ``compare_policies``,
``whatif``), ``Replay.books`` asks ``cost_book`` for its cost book and gets a ``ModelBook``: the
cost book's own walk (the context each request sends, and the part of it an earlier request of the
run already sent, under the provider's cache rule) feeds ``costmodel.predict``, the free-running
model fitted on the session's first ``FIT_REQUESTS`` billed requests with the priors learned on
*other* sessions, and every request is priced by the model the log names for it
(``costmodel.request_dollars``: 5-minute and 1-hour writes). The tables of one session therefore
never disagree: a sweep row, a ledger's totals, a ``compare_policies`` row and a ``whatif`` row are
the same number (``whatif`` rounds it to the model's band).

``SessionModel`` is that model for one session (fit, priors, prices, band, and each replay
request's recorded time, model and turn), built once per session (``SessionCache.cost_model``).
The ``pricing`` a caller passes only turns dollars on for an agent log: its prices are not used,
and the totals' ``pricing`` says so (``MODEL_PRICING``, with the model's band and the session's main
model; several pricings give identical rows). A log whose usage fits no model (``UnfittedBook``) or
that names a model with no price gets no dollars (NaN), never the visible-text count and never $0.
A transcript with no bill keeps the cost book, and ``describe_pricing`` says which model priced what.

The book predicts a replay from its first compaction on: before it, the replay is the session's own
trajectory (``SessionModel.baseline``, predicted once per session). That holds while ``predict``
carries nothing from one request to the next but the request before and whether a compaction came;
``tests/test_one_cost_model.py`` holds the two equal, so a ``predict`` that carries more fails there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..transcripts.session import Session, SessionLike
from .costbook import CostBook
from .costmodel import Priors, SessionFit, Step, Tokens, predict, provider_of, request_dollars
from .pricing import Pricing
from .recorded import Context, RecordedSession

__all__ = ["SessionModel", "ModelBook", "cost_book", "model_of", "MODEL_PRICING", "DEFAULT_BAND", "rule_pricing",
           "describe_pricing", "is_model_priced", "label_band", "finite"]

MODEL_PRICING = "cost model"  # the totals' ``pricing`` of a replay the cost model priced (``SessionModel.label``)
DEFAULT_BAND = 0.20  # when no priors say otherwise: the worst leave-one-out error seen (validation)
NAN = float("nan")


def rule_pricing(provider: str) -> Pricing:
    """A ``Pricing`` for the cost book's cache rule only (which prefix is shared); its dollars are never used.

    No minimum and no rounding: the shared prefix is in visible tokens, and ``costmodel.predict`` applies the
    provider's own rounding to the provider's tokens, as it does on the recorded trajectory.
    """
    cache = "anthropic" if provider == "anthropic" else "openai"
    return Pricing(1.0, 0.1, 1.0, cache=cache, min_cached_tokens=0, step=1, name="rule")


class SessionModel:
    """An agent log with its fit, priors, prices and band: what every dollar about it is priced by.

    ``recorded[r]``: the session's request ``r`` (its ``reply[r]``) as the log recorded it: a
    ``costmodel.Step`` holding its time, its model (the previous one's, or the session's main model,
    where the log names none), whether a user message came since the request before, and the context the
    messages do not show that grew at it (``hidden``); ``replies[r]``: its reply's size as the provider counts
    it (hidden thinking included; None where the log reports no usage for it). A replay keeps the recorded
    replies, so it keeps both: the replay and the recorded trajectory are priced by one model
    (``costmodel.steps_of_facts``), and an untouched replay of a session its agent never compacted costs
    exactly the modelled row.
    """

    def __init__(self, transcript: SessionLike, priors: Priors | None = None,
                 session: RecordedSession | None = None) -> None:
        from .bill import price_for_model, session_bill
        from .costmodel import fit_for, load_priors, provider_session
        from .validation import case_of

        self.transcript = transcript = Session.of(transcript)
        self.priors = priors if priors is not None else load_priors()
        self.session = session if session is not None else provider_session(transcript)
        self.case = case_of(transcript, session=self.session, priors=self.priors)
        self.agent = self.case.agent or "agent"
        self.provider = provider_of(self.agent)
        self.fit: SessionFit | None = fit_for(self.case.facts, self.agent, self.priors,
                                              continued=self.case.meta.continued, writes_1h=self.case.writes_1h)
        requests = transcript.requests
        models = [r.model for r in requests if r.usage is not None and r.model]
        self.main = max(set(models), key=models.count) if models else ""
        self.prices = {m: price_for_model(m) for m in set(models) | {f.model for f in self.case.facts} | {""}}
        self.bill = session_bill(requests)
        self.band = float(self.priors.band.get(self.agent, DEFAULT_BAND))
        self.band_sessions = int(self.priors.band_sessions.get(self.agent, 0))
        self.rule = rule_pricing(self.provider)
        self.recorded = self._recorded()
        self._baseline: Baseline | None = None
        if session is None:  # its own session: every replay of it is priced by this model (these priors)
            self.session.cache.cost_model(lambda: self)

    def _recorded(self) -> list[Step]:
        s, t = self.session, self.transcript
        shift = len(s.messages) - len(t.messages)
        facts = {int(q.message) + shift: (f, st) for q, f, st in zip(t.requests, self.case.facts, self.case.steps,
                                                                         strict=False)}
        out: list[Step] = []
        self.replies: list[float | None] = []  # the recorded reply's size as the provider counts it (thinking too)
        model = self.main
        for r, i in enumerate(s.reply):
            f, st = facts.get(i, (None, None))
            model = (f.model if f is not None and f.model else model) or self.main
            turn = f.turn_start if f is not None else r > 0 and s.turn[r] > s.turn[r - 1]
            out.append(Step(f.time if f is not None else None, model, 0.0, 0.0, 0.0, False, bool(turn),
                            st.hidden if st is not None else 0.0))
            self.replies.append(st.reply if st is not None else None)
        return out

    @property
    def billed_usd(self) -> float | None:
        """What the log says was billed, or None when a model of it has no price."""
        return None if self.bill.unpriced else self.bill.cost_usd

    def label(self) -> str:
        """The totals' ``pricing`` of a replay this model priced: the model, its band, the session's main model."""
        return f"{MODEL_PRICING} +/-{self.band:.1%} ({self.main or self.agent})"

    def describe(self) -> str:
        """Which cost model priced the rows, in one line (a what-if must say so)."""
        fit = self.fit
        if fit is None:
            return "no cost model: no request of the log reports a prompt to fit one on, so no dollars"
        first = f"fitted on this session's first {fit.points} billed requests"
        band = (f"band +/-{self.band:.0%}: the 90th percentile of the leave-one-session-out cost error over "
                f"{self.band_sessions} {self.agent} sessions" if self.band_sessions else
                f"band +/-{self.band:.0%} (no validation shipped for {self.agent})")
        return (f"free-running cost model (engine/costmodel.py): hidden prefix {fit.hidden:,.0f} tokens, scale "
                f"{fit.scale:.3f}, TTL {fit.ttl / 60:.0f} min, {fit.share_1h:.0%} of writes for 1 hour, {first}; "
                f"priors from {self.priors.source or 'none'}; {band}")

    def steps(self, visible: Sequence[float], shared: Sequence[float], replies: Sequence[float],
              events: set[int], start: int = 0) -> list[Step]:
        """A replay's requests from ``start`` on as ``Step``s: what each sent, what an earlier request sent too, the
        rest recorded.

        ``events``: the requests right after a compaction (their context's start was rewritten). On
        OpenAI, a request at a new user turn reads at most the context of the turn before's first
        request (reasoning items are no longer sent), as ``costmodel.steps_of_facts`` has it.
        """
        out: list[Step] = []
        turn_visible = 0.0
        openai = self.provider == "openai"
        recorded = self.recorded[start:start + len(visible)]
        for r, (v, c, o, rec) in enumerate(zip(visible, shared, replies, recorded, strict=True), start):
            event = r in events
            share = float(c) if r else 0.0
            if openai and rec.turn_start and not event:
                share = min(share, turn_visible)
            reply = self.replies[r]  # a replay keeps the recorded replies: their full size, hidden thinking too
            out.append(Step(rec.time, rec.model, float(v), share, float(o) if reply is None else reply, event,
                            rec.turn_start, rec.hidden))
            if r == start or rec.turn_start or event:
                turn_visible = float(v)
        return out

    def predict(self, steps: Sequence[Step]) -> list[Tokens]:
        return predict(steps, self.fit, self.priors, self.agent, self.case.step)  # type: ignore[arg-type]

    def dollars(self, tokens: Sequence[Tokens], models: Sequence[str]) -> list[float | None]:
        """Each predicted request at its own model's price (None where that model has no price)."""
        return [request_dollars(t, self.prices.get(m)) for t, m in zip(tokens, models, strict=True)]

    def recorded_cost(self) -> float | None:
        """The recorded trajectory (the tool's own compactions included) predicted and priced: the *modelled* row."""
        if self.fit is None:
            return None
        costs = self.dollars(self.predict(self.case.steps), [x.model for x in self.case.steps])
        return None if any(c is None for c in costs) else float(sum(costs))  # type: ignore[arg-type]

    def summarizer(self, visible_in: float, visible_out: float) -> tuple[Tokens, float | None]:
        """A summarizer's extra request in the provider's tokens (uncached), at the session's main model's price."""
        fit = self.fit
        assert fit is not None
        tokens = Tokens(fit.scale * visible_in, 0.0, 0.0, 0.0, fit.output_scale * visible_out)
        return tokens, request_dollars(tokens, self.prices.get(self.main))

    def baseline(self) -> Baseline:
        """The whole transcript replayed with no compaction, predicted and priced (once per session).

        A replay is the same trajectory up to its first compaction, and ``predict`` carries nothing from one
        request to the next but the request before and whether a compaction came: so a replay's first
        requests are the baseline's (``ModelBook`` predicts from its first compaction on).
        """
        if self._baseline is None:
            from .pricing import sent_each

            s, rule = self.session, self.rule
            sent = sent_each(s, "o200k")
            outs = s.reply_sums("o200k")
            shared = [0] + [rule.cached(n) for n in sent[:-1]] if sent else []
            steps = self.steps(sent, shared, [outs[r + 1] - outs[r] for r in range(s.n_requests)], set())
            tokens = self.predict(steps)
            self._baseline = Baseline(steps, tokens, self.dollars(tokens, [x.model for x in steps]))
        return self._baseline

    def untouched(self) -> tuple[Tokens, float]:
        """The baseline's tokens and dollars (NaN when a model of the session has no price)."""
        b = self.baseline()
        n = len(b.steps)
        return b.tokens_upto(n), b.cost_upto(n)


class Baseline:
    """A session replayed untouched, request by request, with running sums of its tokens and dollars."""

    def __init__(self, steps: list[Step], tokens: list[Tokens], costs: list[float | None]) -> None:
        from itertools import accumulate

        self.steps, self.tokens, self.costs = steps, tokens, costs
        self._sums = {f: list(accumulate((getattr(t, f) for t in tokens), initial=0.0)) for f in _FIELDS}
        self._costs = list(accumulate((NAN if c is None else c for c in costs), initial=0.0))

    def tokens_upto(self, k: int) -> Tokens:
        """The tokens of its first ``k`` requests, summed."""
        return Tokens(*(self._sums[f][k] for f in _FIELDS))

    def cost_upto(self, k: int) -> float:
        """The dollars of its first ``k`` requests (NaN when one of them is unpriced)."""
        return self._costs[k]


_FIELDS = ("prompt", "cached", "write_5m", "write_1h", "output")


def _sum(tokens: Sequence[Tokens], start: Tokens | None = None) -> Tokens:
    return Tokens(*(sum((getattr(t, f) for t in tokens), getattr(start, f) if start is not None else 0.0)
                    for f in _FIELDS))


def _total(costs: Sequence[float | None], start: float = 0.0) -> float:
    """Dollars summed; NaN when any is unpriced (never a partial sum shown as the whole)."""
    total = start
    for c in costs:
        if c is None:
            return NAN
        total += c
    return float(total)


def model_of(session: RecordedSession, priors: Priors | None = None) -> SessionModel | None:
    """The session's cost model (built once per session), or None for a transcript that reports no usage."""
    source = session.source
    if source is None or not source.billed:
        return None
    return session.cache.cost_model(lambda: SessionModel(source, priors, session))


def label_band(pricing_name: Any) -> float | None:
    """The band a ``pricing`` label of the cost model carries (``SessionModel.label``), or None."""
    import re

    found = re.search(r"\+/-(\d+(?:\.\d+)?)%", pricing_name) if is_model_priced(pricing_name) else None
    return float(found.group(1)) / 100 if found else None


def is_model_priced(pricing_name: Any) -> bool:
    """Whether a totals' ``pricing`` names the cost model (an agent log's replay) rather than a preset."""
    return isinstance(pricing_name, str) and pricing_name.startswith(MODEL_PRICING)


class ModelBook(CostBook):
    """The cost book of an agent log: its walk gives each request's context and shared prefix; the model prices.

    The cost book runs with the provider's cache rule (``rule_pricing``). Up to the replay's first
    compaction its requests are the session's ``baseline`` (running sums, once per session); from there
    on the cost book walks request by request (``_request``), the requests become ``Step``s,
    ``costmodel.predict`` turns them into the provider's tokens, and each is priced at its own model.
    With ``rows``, the ledger's ``input_tokens``, ``cached_tokens``, ``cache_write_tokens``,
    ``output_tokens`` and ``cost_usd`` are the model's per request, predicted over the whole replay
    (``tests/test_one_cost_model.py`` holds them equal to the totals); the summarizer's request is priced at
    the session's main model.
    """

    def __init__(self, session: RecordedSession, rows: bool, model: SessionModel,
                 excerpt_tool_calls: bool = False) -> None:
        super().__init__(session, rows, model.rule, excerpt_tool_calls)
        self.model = model
        self.after: set[int] = set()  # requests right after an event
        self.e1: int | None = None  # the first of them
        self.tail: tuple[list, list, list] = ([], [], [])  # sent, read and output of every request from e1 on
        self.s_cost: float | None = 0.0
        self.result: dict[str, Any] = {}

    def event(self, k: int, before: Context, after: Context, event: Any) -> dict[str, Any]:
        if k + 1 < self.session.n_requests:
            self.after.add(k + 1)
            if self.e1 is None:
                self.e1, self.per_request = k + 1, True
        return super().event(k, before, after, event)

    def _request(self, sent: int, read: int, out: int) -> None:
        a, b, c = self.tail
        a.append(sent)
        b.append(read)
        c.append(out)

    def _requests(self, base: int, r0: int, r1: int, first: int) -> None:
        a, outs, cached = self.a, self.outs, self.pricing.cached
        sent = [base + a[r] for r in range(r0, r1 + 1)]
        self.tail[0].extend(sent)
        self.tail[1].append(first)
        self.tail[1].extend(map(cached, sent[:-1]))
        self.tail[2].extend([outs[r + 1] - outs[r] for r in range(r0, r1 + 1)])

    def _summarizer(self, event: Any) -> dict[str, Any]:
        fields = super()._summarizer(event)
        cost = fields["cost"]
        tokens, usd = self.model.summarizer(cost["summarizer_input_tokens"], cost["summarizer_output_tokens"])
        self.s_cost = None if usd is None or self.s_cost is None else self.s_cost + usd
        return {"cost": {"summarizer_input_tokens": round(tokens.prompt),
                         "summarizer_output_tokens": round(tokens.output),
                         "summarizer_cost_usd": NAN if usd is None else usd}}

    def finish(self, ctx: Context) -> None:
        m, e1, n = self.model, self.e1, self.session.n_requests
        base = m.baseline()
        tail: list[Tokens] = []
        if e1 is not None:
            sent, read, out = ([c[e1:] for c in self._columns()] if self.rows else self.tail)
            steps = [base.steps[e1 - 1], *m.steps(sent, read, out, self.after, start=e1)]
            tail = m.predict(steps)[1:]  # the request before the first compaction only sets the scene
        k = n if e1 is None else e1
        costs = m.dollars(tail, [x.model for x in m.recorded[k:]])
        self.result = _priced(m, _sum(tail, base.tokens_upto(k)), _total(costs, base.cost_upto(k)), self)
        if self.rows:
            self._model_rows()

    def _columns(self) -> tuple[list, list, list]:
        c = self.cols
        return c["input_tokens"], c["cached_tokens"], c["output_tokens"]

    def _model_rows(self) -> None:
        """The ledger's cost columns, request by request: the model over the whole replay."""
        m, c = self.model, self.cols
        tokens = m.predict(m.steps(*self._columns(), self.after))
        c["input_tokens"] = [round(t.prompt) for t in tokens]
        c["cached_tokens"] = [round(t.cached) for t in tokens]
        c["cache_write_tokens"] = [round(t.write) for t in tokens]
        c["output_tokens"] = [round(t.output) for t in tokens]
        c["cost_usd"] = [NAN if x is None else x for x in m.dollars(tokens, [x.model for x in m.recorded])]

    def totals(self) -> dict[str, Any]:
        return self.result


def _priced(m: SessionModel, t: Tokens, agent: float, book: ModelBook) -> dict[str, Any]:
    """The cost totals of a replay the model priced (``columns.COST_TOTALS``)."""
    summarizer = NAN if book.s_cost is None else book.s_cost
    fit = m.fit
    assert fit is not None
    base, base_cost = m.untouched()
    return {
        "pricing": m.label(), "input_tokens": round(t.prompt), "cached_tokens": round(t.cached),
        "cache_write_tokens": round(t.write), "output_tokens": round(t.output),
        "summarizer_input_tokens": round(fit.scale * book.s_input),
        "summarizer_output_tokens": round(fit.output_scale * book.s_output),
        "cost_usd": agent + summarizer, "summarizer_cost_usd": summarizer, "cost_usd_no_compaction": base_cost,
        "cache_hit_rate": t.cached / t.prompt if t.prompt else 0.0,
        "cache_hit_rate_no_compaction": base.cached / base.prompt if base.prompt else 0.0,
    }


class UnfittedBook(CostBook):
    """The cost book of an agent log the model cannot fit: the cost columns are there, empty (no dollars).

    Beside a bill, the visible-text count is not shown as a price; a log with too few billed requests
    to fit the model on says it has none.
    """

    def __init__(self, session: RecordedSession, rows: bool, model: SessionModel) -> None:
        super().__init__(session, rows, model.rule)
        self.model = model

    def _summarizer(self, event: Any) -> dict[str, Any]:
        return {"cost": {"summarizer_input_tokens": None, "summarizer_output_tokens": None,
                         "summarizer_cost_usd": NAN}}

    def finish(self, ctx: Context) -> None:
        if self.rows:
            n = len(self.cols.get("cost_usd", []))
            for name in ("input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens"):
                self.cols[name] = [None] * n
            self.cols["cost_usd"] = [NAN] * n

    def totals(self) -> dict[str, Any]:
        return {"pricing": f"{MODEL_PRICING}: none fitted", "input_tokens": None, "cached_tokens": None,
                "cache_write_tokens": None, "output_tokens": None, "summarizer_input_tokens": None,
                "summarizer_output_tokens": None, "cost_usd": NAN, "summarizer_cost_usd": NAN,
                "cost_usd_no_compaction": NAN, "cache_hit_rate": NAN, "cache_hit_rate_no_compaction": NAN}


def cost_book(session: RecordedSession, rows: bool, pricing: Pricing, excerpt_tool_calls: bool = False) -> CostBook:
    """The cost book a priced replay keeps: the cost model's for an agent log with a bill, else ``CostBook``."""
    model = model_of(session)
    if model is None:
        return CostBook(session, rows, pricing, excerpt_tool_calls)
    if model.fit is None:
        return UnfittedBook(session, rows, model)
    return ModelBook(session, rows, model, excerpt_tool_calls)


def describe_pricing(labels: Sequence[Any], pricing: Pricing | None = None) -> str:
    """One line saying which model priced a table's rows, from their ``pricing`` values."""
    names = [x for x in labels if isinstance(x, str)]
    model = sorted({x for x in names if is_model_priced(x)})
    other = sorted({x for x in names if not is_model_priced(x)})
    parts = []
    if model:
        parts.append(f"agent logs with a bill: the free-running cost model (engine/costmodel.py; fitted on each "
                     f"session's first 12 billed requests, priors learned on other sessions; each request at its "
                     f"own model's price): {', '.join(model)}")
    if other:
        parts.append(f"transcripts without a bill: the cost book's count of the visible text at {', '.join(other)} "
                     "(no hidden prefix, no provider token scale: uncalibrated)")
    if not parts:
        return "no dollars" if pricing is None else f"the cost book at {pricing.name}"
    return "; ".join(parts)


def finite(value: Any) -> float | None:
    """A dollar figure for display: None for None or NaN (unpriced)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
