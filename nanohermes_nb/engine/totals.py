"""A replay's totals: one value per total column a book declares (``columns.py``).

Split from ``ledger`` so that each module stays small. The counts are ``n_requests`` and
``n_compactions`` (issue 34): ``Ledger.requests`` is the request table and ``Ledger.compactions``
the list of events; the columns keep their names (``requests``, ``compactions``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .._deprecated import renamed
from .columns import Column, total_columns

__all__ = ["Totals"]


@dataclass(frozen=True)
class Totals:
    """A replay's totals: one value per total column (``columns.py``), under the column's name.

    Two are counts named ``n_...`` so that a name means one thing: ``n_requests`` (the column
    ``requests``; ``Ledger.requests`` is the request table) and ``n_compactions`` (the column
    ``compactions``; ``Ledger.compactions`` is the list of events).
    """

    n_requests: int
    peak_request: int
    peak_request_number: int
    n_compactions: int
    summarizer_calls: int
    cumulative_input: int
    cumulative_input_no_compaction: int
    final_size: int
    ineffective_compactions: int  # events whose size after is still over the budget
    prefix_reuse: int = 0
    request_bytes: int = 0
    retention: float | None = None
    problems: dict = field(default_factory=dict)  # profile -> max problems in any request
    tokens: dict = field(default_factory=dict)  # unit -> cumulative input in that unit
    # with needed_later=True: share of the needed-later identifiers still kept, over all events, and how many
    needed_later: float | None = None
    needed_later_items: int | None = None
    # with pricing: tokens and dollars (cost_usd includes the summarizer's requests)
    pricing: str | None = None
    input_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None
    output_tokens: int | None = None
    summarizer_input_tokens: int | None = None
    summarizer_output_tokens: int | None = None
    cost_usd: float | None = None
    summarizer_cost_usd: float | None = None
    cost_usd_no_compaction: float | None = None
    cache_hit_rate: float | None = None
    cache_hit_rate_no_compaction: float | None = None
    # with probes=True (issue 36): how many probes, the share of each outcome; ``probes`` per category
    probe_items: int | None = None
    probe_survival: float | None = None
    probe_kept: float | None = None
    probe_reinjected: float | None = None
    probe_summarized: float | None = None
    probes: dict = field(default_factory=dict)  # "file" -> survival share, "file_items" -> probes, ...

    @classmethod
    def of(cls, books: dict[str, Any]) -> Totals:
        """Totals from the books' merged totals."""
        names = _TOTAL_FIELDS.get(cls)
        if names is None:
            names = _TOTAL_FIELDS[cls] = frozenset(f.name for f in fields(cls))
        named = ((_FIELD_OF_COLUMN.get(k, k), v) for k, v in books.items())
        return cls(**{k: v for k, v in named if k in names})

    @property
    def requests(self) -> int:
        """Deprecated since 0.3.0: ``n_requests`` (``Ledger.requests`` is the request table)."""
        return renamed(self, "requests", "n_requests")

    @property
    def compactions(self) -> int:
        """Deprecated since 0.3.0: ``n_compactions`` (``Ledger.compactions`` is the list of events)."""
        return renamed(self, "compactions", "n_compactions")

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

    @property
    def cost_saving_usd(self) -> float | None:
        """Dollars compaction saved (negative: it cost more than keeping everything)."""
        if self.cost_usd is None or self.cost_usd_no_compaction is None:
            return None
        return self.cost_usd_no_compaction - self.cost_usd

    def as_dict(self, prefix_reuse: bool = True) -> dict:
        """The totals as one sweep row shows them: the columns the books declare (``columns.py``), in order."""
        layout = (tuple(self.problems), tuple(self.tokens), prefix_reuse, self.needed_later_items is not None,
                  self.cost_usd is not None, self.probe_items is not None, tuple(self.probes))
        plan = _PLANS.get(layout)
        if plan is None:
            cols = total_columns(layout[0], layout[1], prefix_reuse, layout[3], layout[4], probes=layout[5])
            plan = _PLANS[layout] = tuple((c.name, *self._reader(c)) for c in cols)
        out = {}
        for name, group, key, digits in plan:
            value = getattr(self, key) if group is None else getattr(self, group)[key]
            out[name] = round(value, digits) if digits is not None and value is not None else value
        return out

    def _reader(self, column: Column) -> tuple[str | None, str, int | None]:
        """Where a column's value is: ``(None, field, digits)`` or ``(dict field, key, digits)``.

        A sweep writes thousands of rows of one layout: where each column is read from is worked
        out once per layout (``_PLANS``), not once per row.
        """
        name = column.name
        for group, prefix in (("problems", "problems_"), ("tokens", "cumulative_"), ("probes", "probe_")):
            if name.startswith(prefix) and name[len(prefix):] in getattr(self, group):
                return group, name[len(prefix):], None
        return None, _FIELD_OF_COLUMN.get(name, name), column.digits


_PLANS: dict[tuple, tuple] = {}  # a row's layout (its dicts' keys and which books) -> how to read each column
_TOTAL_FIELDS: dict[type, frozenset] = {}  # a Totals class -> its field names (``fields`` is slow to ask)
_FIELD_OF_COLUMN = {"requests": "n_requests", "compactions": "n_compactions"}  # a count's column -> its field
