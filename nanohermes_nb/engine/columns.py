"""Every column a replay produces, declared once: its name, its type, and where it appears.

A book (``books.py``, ``costbook.py``) fills a group of columns. Each group here says
which of its columns are per request (the ledger's request table) and which are totals
(``Totals``, one sweep row per setting); the ledger's column order, ``Totals.as_dict``,
the sweep's columns and its Parquet schema are all derived from these declarations, so
adding a column is one line here plus the book that fills it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..context.probes import CATEGORIES

__all__ = ["Column", "request_columns", "total_columns", "dtype_of", "COST_REQUEST", "COST_TOTALS", "BILL", "PROBES"]


@dataclass(frozen=True)
class Column:
    """One column: ``dtype`` is ``int``, ``float``, ``bool`` or ``str``; ``digits`` rounds a total for display."""

    name: str
    dtype: str
    request: bool = False  # in the ledger's request table
    total: bool = False  # in the totals (and so in a sweep row)
    digits: int | None = None


def _c(name: str, dtype: str = "int", *, request: bool = False, total: bool = False,
       digits: int | None = None) -> Column:
    return Column(name, dtype, request, total, digits)


# the size book: the trigger's unit, what was sent, what compaction saved
SIZE = (
    _c("request", request=True), _c("turn", request=True), _c("index", request=True),
    _c("messages", request=True), _c("size", request=True), _c("size_before", request=True),
    _c("compacted", "bool", request=True), _c("dropped", request=True), _c("size_after", request=True),
    _c("cumulative_input", request=True), _c("size_no_compaction", request=True),
    _c("cumulative_no_compaction", request=True), _c("event", "str", request=True),
    _c("requests", total=True), _c("peak_request", total=True), _c("peak_request_number", total=True),
    _c("compactions", total=True), _c("summarizer_calls", total=True), _c("cumulative_input", total=True),
    _c("cumulative_input_no_compaction", total=True), _c("saving", total=True),
    _c("saving_share", "float", total=True, digits=4), _c("final_size", total=True),
    _c("ineffective_compactions", total=True),
)
# the prefix book: how much of each request repeats the previous one (what a cache could reuse)
PREFIX = (
    _c("prefix_reuse", request=True, total=True), _c("request_bytes", request=True, total=True),
    _c("prefix_reuse_share", "float", total=True, digits=4),
)
# the retention book: a total only (None when no event happened or the book is off)
RETENTION = (_c("retention", "float", total=True, digits=4),)
# the needed-later book
NEEDED = (_c("needed_later", "float", total=True, digits=4), _c("needed_later_items", total=True))
# the probe book (issue 36): probes of what events removed, the share of each outcome, survival per category
PROBES = (_c("probe_items", total=True), _c("probe_survival", "float", total=True, digits=4),
          _c("probe_kept", "float", total=True, digits=4), _c("probe_reinjected", "float", total=True, digits=4),
          _c("probe_summarized", "float", total=True, digits=4),
          *(col for c in CATEGORIES for col in (_c(f"probe_{c}", "float", total=True, digits=4),
                                                 _c(f"probe_{c}_items", total=True))))
# the cost book: tokens and dollars under the pricing's caching rule
COST_REQUEST = ("input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens", "cost_usd",
                "summarizer_cost_usd")
COST_TOTALS = ("pricing", "input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens",
               "summarizer_input_tokens", "summarizer_output_tokens", "cost_usd", "summarizer_cost_usd",
               "cost_usd_no_compaction", "cache_hit_rate", "cache_hit_rate_no_compaction")
_COST_TYPES = {"pricing": "str", "cost_usd": "float", "summarizer_cost_usd": "float", "cost_usd_no_compaction": "float",
               "cache_hit_rate": "float", "cache_hit_rate_no_compaction": "float"}
# (the same name may be a request column and a total: two declarations, each in its own order)
COST = (tuple(_c(n, _COST_TYPES.get(n, "int"), request=True) for n in COST_REQUEST)
        + tuple(_c(n, _COST_TYPES.get(n, "int"), total=True) for n in COST_TOTALS))
# the bill book (issue 24): what an agent log reports per request, beside the estimate (request columns only)
BILL = (_c("usage_prompt_tokens", request=True), _c("usage_cached_tokens", request=True),
        _c("usage_cache_write_tokens", request=True), _c("usage_completion_tokens", request=True),
        _c("usage_reasoning_tokens", request=True), _c("usage_cost_usd", "float", request=True))


def _history(profiles: Sequence[str]) -> tuple[Column, ...]:
    return tuple(_c(f"problems_{p}", request=True, total=True) for p in profiles)


def _tokens(units: Sequence[str]) -> tuple[Column, ...]:
    return tuple(c for u in units for c in (_c(f"size_{u}", request=True), _c(f"cumulative_{u}", request=True,
                                                                                  total=True)))


def _groups(profiles: Sequence[str], tokens: Sequence[str], prefix_reuse: bool, needed_later: bool,
            pricing: bool, probes: bool = False) -> list[tuple[Column, ...]]:
    """The books' column groups, in the order the ledger and the sweep show them."""
    groups: list[tuple[Column, ...]] = [SIZE]
    if prefix_reuse:
        groups.append(PREFIX)
    groups += [RETENTION, _history(profiles), _tokens(tokens)]
    if needed_later:
        groups.append(NEEDED)
    if probes:
        groups.append(PROBES)
    if pricing:
        groups.append(COST)
    return groups


def request_columns(profiles: Sequence[str] = (), tokens: Sequence[str] = (), prefix_reuse: bool = True,
                    pricing: bool = False, bill: bool = False) -> list[str]:
    """The ledger's request table, in order (``bill``: an agent log's reported usage, last)."""
    groups = _groups(profiles, tokens, prefix_reuse, False, pricing) + ([BILL] if bill else [])
    return [c.name for g in groups for c in g if c.request]


def total_columns(profiles: Sequence[str] = (), tokens: Sequence[str] = (), prefix_reuse: bool = True,
                  needed_later: bool = False, pricing: bool = False, probes: bool = False) -> list[Column]:
    """The totals of one replay (``Totals.as_dict``, a sweep row after its settings), in order."""
    return [c for g in _groups(profiles, tokens, prefix_reuse, needed_later, pricing, probes) for c in g if c.total]


def dtype_of(name: str) -> str:
    """The declared type of a column by name (per-profile and per-unit columns are integers)."""
    for group in (SIZE, PREFIX, RETENTION, NEEDED, COST, BILL, PROBES):
        for c in group:
            if c.name == name:
                return c.dtype
    return "int"
