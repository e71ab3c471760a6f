"""Predictions of notebook 20: your own sessions."""

from __future__ import annotations

import dataclasses
from typing import Any

from ...engine.modelbook import SessionModel
from ...engine.whatif import whatif
from ..exercises import Wrong, same_value
from . import Judge


def _codex_predictions(transcript: Any) -> dict[str, tuple[Any, float, float | None]]:
    """The Codex session's recorded trajectory predicted by the model as shipped, and with its read share set to 1:
    each model, its uncached input tokens and its dollars (None where a model of the session has no price)."""
    learned = SessionModel(transcript)
    rule = SessionModel(transcript, priors=dataclasses.replace(
        learned.priors, read_share={**learned.priors.read_share, "codex_cli": 1.0}))
    return {name: (m, sum(x.uncached for x in m.predict(m.case.steps)), m.recorded_cost())
            for name, m in (("learned", learned), ("rule", rule))}


def p20_2(lower, *, transcript):
    """Which prediction of the Codex session has fewer uncached input tokens: the rule's or the learned read share's."""
    if lower not in ("rule", "learned"):
        raise Wrong('answer "rule" or "learned"')
    p = _codex_predictions(transcript)
    if lower != min(p, key=lambda name: p[name][1]):
        raise Wrong("the other one: is the learned read share above or below 1, and where does a prompt token "
                    "go when it is not read from the cache?")


def p20_3(more_often, dearer, *, table, transcript, model, budget):
    """At half the what-if budget: more compactions? more dollars?"""
    full = table[table["policy"] == "nanohermes"].iloc[0]
    half = whatif(transcript, budget=budget // 2, model=model, policies=["nanohermes"]).iloc[0]
    same_value(more_often, bool(half["compactions"] > full["compactions"]), "more compactions at half the budget")
    same_value(dearer, bool(half["cost_usd"] > full["cost_usd"]), "dearer at half the budget")


JUDGES: dict[str, Judge] = {"20.2": p20_2, "20.3": p20_3}
