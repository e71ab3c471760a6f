"""The bill beside the estimate: what an agent's log says the provider charged, priced and totalled.

Claude Code and Codex CLI write, for every API request, the usage the provider
reported (``transcripts``: ``Transcript.requests``, one ``AgentRequest`` per
assistant message, its ``usage`` normalised to prompt / cached / cache-write /
completion / reasoning tokens). This module turns that into the ledger's
``usage_*`` columns (the names the live agent loop uses, ``agent.USAGE_COLUMNS``)
plus the cache-write count and ``usage_cost_usd`` priced from
``data/pricing.csv`` by the model each request names, and into session totals
that can be checked against ``ccusage`` (``parity``).

Prices: a request's model is matched to a preset by name (``price_for_model``);
a model no preset names leaves its cost empty and is listed, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .books import Book
from .columns import BILL
from .pricing import Pricing, pricing_presets
from .recorded import Context, RecordedSession

__all__ = ["BILL_COLUMNS", "price_for_model", "request_cost", "bill_columns", "with_bill", "BillBook",
           "has_bill", "SessionBill", "session_bill", "reported_requests", "bill_lines"]

# the live loop's usage columns, then what only a log's bill adds (declared in ``columns.BILL``)
BILL_COLUMNS = tuple(c.name for c in BILL)

_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_PROVIDER_PREFIX = re.compile(r"^[a-z0-9_.-]+/")


def _key(name: str) -> str:
    """A model name as compared: lower case, no provider prefix, no date suffix, dots as dashes."""
    name = _PROVIDER_PREFIX.sub("", name.strip().lower())
    return _DATE_SUFFIX.sub("", name).replace(".", "-")


def _model_index(presets: Mapping[str, Pricing]) -> dict[str, Pricing]:
    index: dict[str, Pricing] = {}
    for name, p in presets.items():
        for alias in (name, p.model):
            if alias:
                index.setdefault(_key(alias), p)
    return index


_INDEX: dict[int, dict[str, Pricing]] = {}


def price_for_model(model: str | None, presets: Mapping[str, Pricing] | None = None) -> Pricing | None:
    """The preset whose name or model is ``model`` (dates, provider prefixes and ``.``/``-`` aside); else None.

    ``claude-opus-4-5-20251101`` finds ``claude-opus-4.5``, ``mistral/mistral-small-latest`` finds
    ``mistral-small-latest``; ``gpt-5.5`` never falls back to ``gpt-5`` (no prefix guessing).
    """
    if not model:
        return None
    if presets is None:
        presets = pricing_presets()
    index = _INDEX.get(id(presets))
    if index is None:
        index = _INDEX[id(presets)] = _model_index(presets)
    return index.get(_key(model))


def request_cost(usage: Any, pricing: Pricing | None) -> float | None:
    """USD of one reported request: uncached prompt, cache reads, cache writes and completion at the preset's prices.

    ``usage.prompt_tokens`` counts every prompt token (cached and written ones
    included, as ``Pricing.cost`` expects); reasoning tokens are part of the
    completion and bill at the output price.
    """
    if usage is None or pricing is None:
        return None
    return pricing.cost(usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens,
                        usage.cache_write_tokens)


def reported_requests(transcript: Any) -> tuple:
    """The transcript's ``requests`` (one per assistant message), or () for a format without them."""
    requests = getattr(transcript, "requests", ())
    return tuple(requests) if isinstance(requests, (tuple, list)) else ()


def bill_columns(requests: Sequence[Any], presets: Mapping[str, Pricing] | None = None) -> dict[str, list]:
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


def with_bill(ledger: Any, transcript: Any) -> Any:
    """``ledger`` with the ``BILL_COLUMNS`` of ``transcript``'s reported usage (unchanged when it has none).

    A ledger row is the request whose assistant message is at its ``index``
    (``AgentRequest.message``, shifted by one when the replay prepended an
    empty system message); a row no request names gets empty cells.
    """
    requests = reported_requests(transcript)
    if not requests or not any(r.usage is not None for r in requests):
        return ledger
    shift = len(ledger.messages) - len(transcript)  # 1 when the replay prepended an empty system message
    by_index = {int(r.message) + shift: r for r in requests}
    empty = _Empty()
    rows = [by_index.get(int(i), empty) for i in ledger.rows["index"]]
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
            s, empty = self.session, _Empty()
            self.cols.update(bill_columns([s.reported.get(i, empty) for i in s.reply]))


class _Empty:
    """A ledger row with no reported request: no model, no usage."""

    model = ""
    usage = None


@dataclass(frozen=True)
class SessionBill:
    """A session's reported usage, summed once per API request, and priced.

    ``input_tokens`` are the uncached prompt tokens (Anthropic's ``input_tokens``;
    for OpenAI the prompt less the cached part), ``cache_write_tokens``
    Anthropic's cache creation, ``cached_tokens`` cache reads;
    ``output_tokens`` include reasoning. ``cost_usd`` sums the requests whose
    model has a preset; ``unpriced`` lists the models that have none.
    """

    requests: int
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

    def as_dict(self) -> dict:
        return {"requests": self.requests, "reported": self.reported, "prompt_tokens": self.prompt_tokens,
                "input_tokens": self.input_tokens, "cache_write_tokens": self.cache_write_tokens,
                "cached_tokens": self.cached_tokens, "output_tokens": self.output_tokens,
                "reasoning_tokens": self.reasoning_tokens, "cost_usd": self.cost_usd,
                "unpriced": ", ".join(self.unpriced)}


def session_bill(requests: Iterable[Any], presets: Mapping[str, Pricing] | None = None) -> SessionBill:
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


def bill_lines(transcript: Any) -> list[str]:
    """What the CLI prints under a ledger of an agent log: the bill, and the calibrated estimate beside it."""
    from .calibrate import TOLERANCE, calibrate

    b = session_bill(reported_requests(transcript))
    agent = getattr(transcript, "agent", "") or "the log"
    lines = [f"reported by {agent}: {b.reported:,} of {b.requests:,} requests with usage; prompt {b.prompt_tokens:,} "
             f"tokens ({b.cached_tokens:,} read from the cache, {b.cache_write_tokens:,} written), output "
             f"{b.output_tokens:,}; {b.cost_usd:.4f} USD at data/pricing.csv prices"
             + (f" (no price for {', '.join(b.unpriced)})" if b.unpriced else "")]
    cal = calibrate(transcript)
    s = cal.summary
    if s.get("within") is not None:
        err = s["cost_error"]
        lines.append(f"estimate calibrated on this bill (hidden prefix {s['hidden']:,} tokens, scale {s['scale']:g}): "
                     f"cached tokens within {TOLERANCE:.0%} on {s['within']:,} of {s['requests']:,} requests "
                     f"({s['within_share']:.1%}); {s['est_cost_usd']:.4f} USD estimated"
                     + (f" ({err:+.1%})" if err is not None else ""))
    return lines
