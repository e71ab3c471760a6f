"""The bill beside the estimate: what an agent's log says the provider charged, priced and totalled.

Claude Code and Codex CLI write, for every API request, the usage the provider
reported (``transcripts``: ``Transcript.requests``, one ``AgentRequest`` per
assistant message, its ``usage`` normalised to prompt / cached / cache-write /
completion / reasoning tokens). This module turns that into the ledger's
``usage_*`` columns (the names the live agent loop uses, ``agent.USAGE_COLUMNS``)
plus the cache-write count and ``usage_cost_usd`` priced from
``nanohermes_nb/resources/pricing.csv`` by the model each request names, and into session totals
that can be checked against ``ccusage`` (``parity``).

Prices: a request's model is matched to a preset by name (``price_for_model``);
a model no preset names leaves its cost empty and is listed, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._deprecated import renamed
from ..transcripts.base import AgentRequest, ReportedUsage
from ..transcripts.session import Session, SessionLike
from .books import Book
from .columns import BILL
from .pricing import Pricing, pricing_presets
from .recorded import Context, RecordedSession

__all__ = ["BILL_COLUMNS", "price_for_model", "request_cost", "bill_columns", "with_bill", "BillBook",
           "has_bill", "SessionBill", "session_bill", "reported_requests", "bill_lines"]

# the live loop's usage columns, then what only a log's bill adds (declared in ``columns.BILL``)
BILL_COLUMNS = tuple(c.name for c in BILL)
NO_REQUEST = AgentRequest(-1, "")  # a ledger row no reported request names: no model, no usage


def price_for_model(model: str | None, presets: Mapping[str, Pricing] | None = None) -> Pricing | None:
    """The price of ``model`` (``prices.price_for_model``: the one look-up), or None when nothing prices it.

    ``claude-opus-4-5-20251101`` finds ``claude-opus-4.5``, ``mistral/mistral-small-latest`` finds
    ``mistral-small-latest``; ``gpt-5.5`` never falls back to ``gpt-5`` (no prefix guessing).
    """
    from .prices import price_for_model as look_up

    return look_up(model, presets)


def request_cost(usage: ReportedUsage | None, pricing: Pricing | None) -> float | None:
    """USD of one reported request: uncached prompt, cache reads, cache writes and completion at the preset's prices.

    ``usage.prompt_tokens`` counts every prompt token (cached and written ones
    included, as ``Pricing.cost`` expects); reasoning tokens are part of the
    completion and bill at the output price. A cache write made for one hour
    (``usage.cache_write_1h_tokens``) bills at the 1-hour price, twice the input
    price unless the row gives its own, as Anthropic bills it; the rest at the
    5-minute price (``costmodel.request_dollars``, the one rule). ccusage 18 bills
    every write at the 5-minute price: ``ccusage.one_hour_surcharge`` is the difference.
    """
    if usage is None or pricing is None:
        return None
    return pricing.cost(usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens,
                        usage.cache_write_tokens, usage.cache_write_1h_tokens)


def reported_requests(transcript: SessionLike) -> tuple[AgentRequest, ...]:
    """The session's ``requests`` (one per assistant message), or () for a format without them."""
    return Session.of(transcript).requests


def bill_columns(requests: Sequence[AgentRequest], presets: Mapping[str, Pricing] | None = None
                 ) -> dict[str, list]:
    """The ``BILL_COLUMNS`` for a sequence of ``AgentRequest`` (None where a request reported nothing)."""
    presets = pricing_presets() if presets is None else presets
    cols: dict[str, list] = {c: [] for c in BILL_COLUMNS}
    for r in requests:
        u = r.usage
        values = (None,) * 5 if u is None else (u.prompt_tokens, u.cached_tokens, u.cache_write_tokens,
                                                 u.completion_tokens, u.reasoning_tokens)
        for name, v in zip(BILL_COLUMNS[:5], values, strict=True):
            cols[name].append(v)
        cols["usage_cost_usd"].append(request_cost(u, price_for_model(r.model, presets)))
    return cols


def with_bill(ledger: Any, transcript: SessionLike) -> Any:
    """``ledger`` with the ``BILL_COLUMNS`` of ``transcript``'s reported usage (unchanged when it has none).

    A ledger row is the request whose assistant message is at its ``index``
    (``AgentRequest.message``, shifted by one when the replay prepended an
    empty system message); a row no request names gets empty cells.
    """
    log = Session.of(transcript)
    requests = log.requests
    if not requests or not any(r.usage is not None for r in requests):
        return ledger
    shift = len(ledger.messages) - len(log.messages)  # 1 when the replay prepended an empty system message
    by_index = {int(r.message) + shift: r for r in requests}
    rows = [by_index.get(int(i), NO_REQUEST) for i in ledger.rows["index"]]
    return ledger.with_columns(**bill_columns(rows))


def has_bill(session: RecordedSession) -> bool:
    """Whether the session's transcript reports usage for any request (an agent log's bill)."""
    return any(q.usage is not None for q in session.reported.values())


class BillBook(Book):
    """The bill beside the estimate: each request's reported usage and its price (``columns.BILL``).

    The values come from the transcript (``RecordedSession.reported``, an
    agent log's ``Transcript.requests``), not from the replay: they are what the
    recorded request was billed, whatever the policy. A request the log reports
    nothing for gets empty cells. Request columns only; no totals.
    """

    def finish(self, ctx: Context) -> None:
        if self.rows:
            s = self.session
            self.cols.update(bill_columns([s.reported.get(i, NO_REQUEST) for i in s.reply]))


@dataclass(frozen=True)
class SessionBill:
    """A session's reported usage, summed once per API request, and priced.

    ``input_tokens`` are the uncached prompt tokens (Anthropic's ``input_tokens``;
    for OpenAI the prompt less the cached part), ``cache_write_tokens``
    Anthropic's cache creation, ``cached_tokens`` cache reads;
    ``output_tokens`` include reasoning. ``cost_usd`` sums the requests whose
    model has a preset; ``unpriced`` lists the models that have none.
    """

    n_requests: int
    reported: int
    input_tokens: int
    cache_write_tokens: int
    cached_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost_usd: float
    models: dict = field(default_factory=dict)  # model -> requests with usage
    unpriced: tuple = ()

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cached_tokens

    @property
    def requests(self) -> int:
        """Deprecated since 0.3.0: ``n_requests``."""
        return renamed(self, "requests", "n_requests")

    def as_dict(self) -> dict:
        return {"requests": self.n_requests, "reported": self.reported, "prompt_tokens": self.prompt_tokens,
                "input_tokens": self.input_tokens, "cache_write_tokens": self.cache_write_tokens,
                "cached_tokens": self.cached_tokens, "output_tokens": self.output_tokens,
                "reasoning_tokens": self.reasoning_tokens, "cost_usd": self.cost_usd,
                "unpriced": ", ".join(self.unpriced)}


def session_bill(requests: Iterable[AgentRequest], presets: Mapping[str, Pricing] | None = None) -> SessionBill:
    """Totals of the reported usage over a session's requests (each API request once)."""
    presets = pricing_presets() if presets is None else presets
    n = reported = 0
    sums = [0, 0, 0, 0, 0]
    cost = 0.0
    models: dict[str, int] = {}
    unpriced: dict[str, None] = {}
    for r in requests:
        n += 1
        u = r.usage
        if u is None:
            continue
        reported += 1
        models[r.model or "?"] = models.get(r.model or "?", 0) + 1
        uncached = u.prompt_tokens - u.cached_tokens - u.cache_write_tokens
        for k, v in enumerate((uncached, u.cache_write_tokens, u.cached_tokens, u.completion_tokens,
                               u.reasoning_tokens)):
            sums[k] += v
        c = request_cost(u, price_for_model(r.model, presets))
        if c is None:
            unpriced[r.model or "?"] = None
        else:
            cost += c
    inputs, writes, reads, outputs, reasoning = sums
    return SessionBill(n, reported, inputs, writes, reads, outputs, reasoning, cost_usd=cost, models=models,
                       unpriced=tuple(unpriced))


def bill_lines(transcript: SessionLike, model: Any = None) -> list[str]:
    """What the CLI prints under a ledger of an agent log: the bill, and the cost model's prediction beside it.

    The prediction is the free-running model of ``costmodel`` (fitted on the session's first
    requests, priors learned on other sessions), the one every table of the log uses; its band is the
    leave-one-session-out error. The bill-anchored cached-token share explains the recorded session.
    """
    from .calibrate import TOLERANCE
    from .costmodel import predict
    from .modelbook import SessionModel
    from .whatif import round_to_band, steps_cost

    log = Session.of(transcript)
    b = session_bill(log.requests)
    agent = log.agent or "the log"
    cost = "unpriced" if b.unpriced and not b.cost_usd else f"{b.cost_usd:.4f} USD"
    lines = [f"reported by {agent}: {b.reported:,} of {b.n_requests:,} requests with usage; prompt {b.prompt_tokens:,} "
             f"tokens ({b.cached_tokens:,} read from the cache, {b.cache_write_tokens:,} written), output "
             f"{b.output_tokens:,}; {cost}" + (f" (unpriced: {', '.join(b.unpriced)})" if b.unpriced else "")]
    model = model or SessionModel(log)
    if model.fit is None:
        lines.append(model.describe())
        return lines
    free = predict(model.case.steps, model.fit, model.priors, model.agent, model.case.step)
    anchor = [None] + [f.usage for f in model.case.facts[:-1]]
    anchored = predict(model.case.steps, model.fit, model.priors, model.agent, model.case.step, anchor)
    billed = [(f, a) for f, a in zip(model.case.facts, anchored, strict=True) if f.usage is not None]
    within = sum(abs(a.cached - f.usage.cached_tokens) <= TOLERANCE * f.usage.prompt_tokens for f, a in billed)
    dollars = steps_cost(free, [s.model for s in model.case.steps], model.prices)
    said = "unpriced" if dollars is None else (f"about {round_to_band(dollars, model.band):g} USD "
                                              f"(+/-{model.band:.0%})")
    lines.append(f"cost model: {said} predicted for the recorded trajectory; cached tokens within {TOLERANCE:.0%} of "
                 f"the prompt on {within:,} of {len(billed):,} requests, anchored on each previous bill")
    lines.append(model.describe())
    return lines


def model_line(ledger: Any, transcript: SessionLike, model: Any = None) -> str | None:
    """A priced replay of an agent log, in one line: the cost model's dollars its totals hold, with the band.

    The totals are the ``modelbook.ModelBook``'s (the replay priced by the cost model, as every table of
    the log is); nothing is predicted again here. None when the ledger is not priced by the model.
    """
    from .modelbook import SessionModel, finite, is_model_priced
    from .whatif import money

    t = ledger.totals
    if not is_model_priced(t.pricing):
        return None
    model = model or SessionModel(transcript)
    billed = model.billed_usd
    m = money(finite(t.cost_usd), billed, model.band)
    if m["cost_usd"] is None:
        return f"{ledger.policy} on this log: no dollars (a model of the session has no price, or none was fitted)"
    never = money(finite(t.cost_usd_no_compaction), billed, model.band)["cost_usd"]
    text = (f"{ledger.policy} on this log, priced by the cost model: about {m['cost_usd']:g} USD "
            f"({m['cost_low_usd']:g}-{m['cost_high_usd']:g})")
    if never is not None:
        text += f", never compacting about {never:g} USD"
    return text + (f"; billed {billed:.2f} USD" if billed is not None else "")
