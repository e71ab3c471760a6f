"""Cases the exercises' checks build for the edges their prose names, where the real data never goes.

A check compares the learner's function with the package's on real data. Real data rarely lands
exactly on a boundary (a gap of exactly the cache's lifetime, a switch of model in a vendored log),
so a check adds cases built for it. Those that need the package's internals are built here, so the
check cell stays short and uses only what its notebook has taught.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cache_rule_edges"]


def cache_rule_edges(calibration: Any) -> Any:
    """Five requests at the edges of the cache rule, estimated with ``calibration``'s own fit and rule.

    A first request; one exactly one TTL after it (it reads the previous prompt); one a second past
    the TTL (it reads nothing); one on another model (nothing); and one whose prompt is smaller than
    the previous one (it reads at most its own). Returns the ``Calibration`` of these five, whose
    ``rows`` hold the package's ``est_cached`` for each (exercise 20.1).
    """
    from ..engine.calibrate import RequestFacts, calibrate_facts
    from ..transcripts.base import ReportedUsage

    ttl = calibration.rule.ttl

    def billed(prompt: int) -> ReportedUsage:
        return ReportedUsage(prompt_tokens=prompt, completion_tokens=10)

    edges = [RequestFacts(0, 0.0, "claude-a", 1_000, 10, usage=billed(20_000)),
             RequestFacts(1, ttl, "claude-a", 1_500, 10, usage=billed(21_000)),
             RequestFacts(2, 2 * ttl + 1, "claude-a", 1_600, 10, usage=billed(21_500)),
             RequestFacts(3, 2 * ttl + 10, "claude-b", 1_700, 10, usage=billed(22_000)),
             RequestFacts(4, 2 * ttl + 20, "claude-b", 200, 10, usage=billed(8_000))]
    return calibrate_facts(edges, None, rule=calibration.rule, fit=calibration.fit)
