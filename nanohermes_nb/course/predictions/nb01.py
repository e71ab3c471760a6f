"""Predictions of notebook 01: what one request contains."""

from __future__ import annotations

import collections
from typing import Any

from ...agent.prompt import SystemConfig, system_content
from ...context.sizing import message_size
from ..exercises import Wrong, same_value
from . import Judge


def _sends_of_system(run, session) -> int:
    return sum(run.context(r)[0] == session[0] for r in run.requests["request"])


def p1_1(prediction, *, session, ledger, half, sys_sends):
    """How often messages[0] is sent at half the budget, and where the total input goes."""
    sends = _sends_of_system(half, session)
    truth = (
        "the same" if sends == sys_sends else "more" if sends > sys_sends else "fewer",
        "down" if half.totals.cumulative_input < ledger.totals.cumulative_input else "up",
    )
    same_value(prediction, truth, "your (messages[0], total input) prediction")


def p1_2(prediction, *, skills_copy, ws, home, cfg):
    """What a second skill adds to messages[0], from the learner's own skills folder."""
    if not (skills_copy / "release-notes" / "SKILL.md").is_file():
        raise Wrong("write skills_copy / 'release-notes' / 'SKILL.md' first")
    grown = SystemConfig(workspace=ws, home=home, skills_dir=skills_copy)
    growth = message_size({"role": "system", "content": system_content(grown)}) - message_size(
        {"role": "system", "content": system_content(cfg)}
    )
    same_value(prediction, growth, "your growth in bytes")


def p1_3(prediction: Any, *, session: Any, sent_contexts: Any) -> None:
    """Whether the message that cost the most over the session is also the largest one."""
    cost: collections.Counter = collections.Counter()
    for ctx in sent_contexts:
        for m in ctx:
            for i, s in enumerate(session):
                if m is s:
                    cost[i] += message_size(m)
    largest = max(range(len(session)), key=lambda i: message_size(session[i]))
    same_value(prediction, cost.most_common(1)[0][0] == largest, "your prediction")


JUDGES: dict[str, Judge] = {"1.1": p1_1, "1.2": p1_2, "1.3": p1_3}
