"""Predictions of part five: notebooks 21 to 26."""

from __future__ import annotations

from ...context.compaction import compact, is_summary_message
from ...context.metrics import retention
from ...context.quality import isolate, stale_reads
from ...context.sizing import context_size
from ...engine.ledger import replay
from ..exercises import Wrong, close_to
from . import Judge


def p21_2(share, *, table):
    """Of the steps in the largest quarter of contexts, the share whose relevant share is under a tenth."""
    largest = table.loc[table["size bin"] == table["size bin"].cat.categories[-1], "relevant share"]
    close_to(share, float((largest < 0.1).mean()), rel=0.3, what="your share")


def p22_2(stale_bytes, *, session):
    """The bytes of stale file text the last request of the whole session would carry, had it never compacted."""
    close_to(stale_bytes, sum(s.bytes for s in stale_reads(session)), rel=0.2, what="your byte count")


def p23_1(codex_prefix, *, after):
    """The tokens most Codex compactions leave cached for the next request."""
    close_to(codex_prefix, after.loc[after["agent"] == "Codex", "cached"].median(), rel=0.1, what="your token count")


def p24_2(still_compacts, *, session, work):
    """Whether the replay still compacts with only the largest turn's tool work handed off."""
    if not isinstance(still_compacts, bool):
        raise Wrong("answer True or False")
    largest = max(work, key=lambda w: context_size(session[w[0] : w[1]]))
    if still_compacts != (replay(isolate(session, largest[0], largest[1], largest[2])).totals.n_compactions > 0):
        raise Wrong("the yes/no answer is the other one")


def goal_share_without_copy(conversations, after_batches, keep_recent):
    """Of the forced compactions (keeping ``keep_recent``) where the goal was dropped, the share whose kept context
    still names it once the summary's verbatim Goal: line is taken out."""
    kept_goal = []
    for msgs in conversations.values():
        for n in after_batches(msgs):
            result = compact(msgs[:n], force=True, keep_recent=keep_recent)
            if not result.compacted or result.failure:
                continue
            kept = list(result.messages)
            k = next(i for i, m in enumerate(kept) if is_summary_message(m))
            lines = [ln for ln in kept[k]["content"].splitlines() if not ln.startswith("Goal:")]
            score = retention(
                msgs[1 : result.cut], [*kept[:k], {**kept[k], "content": "\n".join(lines)}, *kept[k + 1 :]]
            )
            if score.goal_at_stake:
                kept_goal.append(score.goal_kept)
    return sum(kept_goal) / len(kept_goal)


def p26_2(goal_share, *, conversations, after_batches):
    """Without the Goal: line and keeping 4 messages instead of 10, the share of compactions that keep the goal."""
    close_to(goal_share, goal_share_without_copy(conversations, after_batches, 4), rel=0.3, what="your share")


JUDGES: dict[str, Judge] = {"21.2": p21_2, "22.2": p22_2, "23.1": p23_1, "24.2": p24_2, "26.2": p26_2}
