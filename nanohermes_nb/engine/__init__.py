"""The replay engine: a recorded session walked under a policy, request by request.

``recorded`` (a session prepared once), ``books`` and ``costbook`` (what each request
records), ``ledger`` (one replay), ``sweep`` (many settings at once: its ``grid``,
``running`` and ``sinks``; ``compare`` sums it per policy), ``pricing``
(dollars from dated price tables), ``frames`` (the tables they return), ``fast``
(the indices and caches that make sweeps fast, tested equal to the plain rules).
"""

from .._lazy import submodule as _submodule


def __getattr__(name: str):
    return _submodule(__name__, name)
