"""``ledger`` (one row per model request, or per turn) and ``check`` (is the history legal?).

The default ledger path reads plain rows (``Ledger.records()``), so it imports
neither pandas nor pyarrow; ``--by-turn`` builds the per-turn frame with pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..views.tables import text_table
from .common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    UsageError,
    comment,
    load,
    plural,
    policy_named,
    policy_options,
    pricing_named,
    print_json,
    records,
    say,
    settings_named,
    summarizer_named,
    table_width,
)

if TYPE_CHECKING:
    from ..transcripts.session import Session

# The default ledger table: the SPEC columns a reader needs, in this order (--wide: all).
LEDGER_COLUMNS = ("request", "turn", "messages", "size", "size_before", "event", "dropped", "size_after",
                  "cumulative_input")
BY_TURN_COLUMNS = ("turn", "requests", "messages", "largest_sent", "check_saw", "action", "compacted",
                   "size_after")


def _by_turn(ledger):
    """The per-turn table, with the two sizes side by side and named for what they are.

    ``largest_sent`` is the largest request sent in the turn (what "peak" counts);
    ``check_saw`` (``size`` in ``Ledger.by_turn``) is the largest context the
    compaction check measured, reply and tool results included, which may exceed
    the budget just before a compaction.
    """
    frame = ledger.by_turn()
    sent = ledger.requests.groupby("turn")["size"].max()
    frame.insert(frame.columns.get_loc("size"), "largest_sent", [int(sent[t]) for t in frame["turn"]])
    return frame.rename(columns={"size": "check_saw"})


def totals_lines(ledger, dollars: bool = True, verbose: bool = True) -> list[str]:
    """The totals under a ledger; ``dollars=False`` leaves out the cost book's own dollars (an agent log's
    replay is priced by the cost model instead, never by the uncalibrated count beside its bill);
    ``verbose=False`` leaves out which providers would accept the replayed history (``check`` says)."""
    t = ledger.totals
    unit = ledger.unit
    first = (f"{plural(t.n_requests, 'request')}, peak request {t.peak_request:,} {unit} (request "
             f"{t.peak_request_number}); {plural(t.n_compactions, 'event')} ({ledger.policy}), "
             f"{plural(t.summarizer_calls, 'summarizer call')}")
    second = (f"cumulative input {t.cumulative_input:,} {unit} vs {t.cumulative_input_no_compaction:,} without "
              f"compaction (saving {t.saving_share:.0%})")
    bad = {p: n for p, n in t.problems.items() if n}
    if verbose and bad:
        second += "; history rejected by " + ", ".join(f"{p} ({plural(n, 'problem')} at worst)" for p, n in bad.items())
    elif verbose and t.problems:
        second += "; history legal for " + ", ".join(t.problems)
    texts = [first, second]
    if t.cost_usd is not None and dollars:
        texts.append(f"{t.pricing}: {t.cost_usd:.4f} USD ({t.summarizer_cost_usd:.4f} for the summarizer) vs "
                     f"{t.cost_usd_no_compaction:.4f} without compaction; cache-hit rate {t.cache_hit_rate:.0%} "
                     f"({t.cache_hit_rate_no_compaction:.0%} without)")
    return [line for text in texts for line in comment(text)]


def ledger_command(args) -> int:
    """Replay the transcript and print its ledger (``--json``: every column), totals and caveat."""
    from ..engine.ledger import replay
    from ..engine.recorded import RecordedSession
    from ..policies import PolicyError
    from ..transcripts.session import Session

    if getattr(args, "triggers", False):  # issue 37: when each agent's rule would have compacted
        from .triggers import triggers_command

        return triggers_command(args)
    messages = Session.of(load(args.file))
    policy = policy_named(args.policy, policy_options(args))
    pricing = pricing_named(args.pricing)
    billed = messages.billed
    # issue 33: an agent log's session measures images as the provider bills them, and a priced replay of it is
    # priced by the one cost model (``modelbook``), whose fit is made once here for the replay and the lines below
    session = RecordedSession.of(messages)
    settings = settings_named("ledger", budget=args.budget, summarizer=summarizer_named(args.summarizer),
                              unit=args.unit, policy=policy, pricing=pricing)
    try:
        ledger = replay(session, settings)
    except PolicyError as exc:  # the policy cannot work on this history (cline_rule with no user message)
        raise UsageError(f"{args.file}: {exc}") from None
    if args.by_turn:
        frame = _by_turn(ledger)
        rows, names = records(frame), [str(c) for c in frame.columns]
    else:  # the plain rows: no pandas on the default path
        rows, names = records(ledger.records()), list(ledger.rows)
        if messages.agent:  # issue 33: the agent's own compactions in `event`
            rows, names = (agent_rows(messages, rows, len(ledger.messages) - len(messages.messages)),
                           [*names, "replay_event"])
    if args.json:
        print_json(rows)
        return EXIT_OK
    width = table_width(args)
    lines, legend = _ledger_table(args, ledger.unit, pricing is not None, rows, names, width)
    for note in ledger.notes if args.verbose else ():  # e.g. the empty system message prepended
        say(comment(note, width))
    say(comment(legend, width))
    say(lines)
    say(totals_lines(ledger, dollars=not billed, verbose=args.verbose))
    if billed:  # issue 24: the reported totals beside the estimate; issue 33: one cost model, with its band
        say([line for text in _bill_texts(messages, session, ledger, pricing) for line in comment(text, width)])
    say(comment(ledger.caveat, width))
    return EXIT_OK


def _bill_texts(messages, session, ledger, pricing) -> list[str]:
    """The bill, the cost model's prediction of the recorded trajectory, and (priced) the replay's dollars."""
    from ..engine.bill import bill_lines, model_line
    from ..engine.modelbook import model_of

    model = model_of(session)
    texts = bill_lines(messages, model)
    if pricing is not None:
        texts.insert(1, model_line(ledger, messages, model) or "")
        own = model.prices.get(model.main) if model is not None else None
        if model is not None and model.main and (own is None or own.name != pricing.name):
            texts.insert(2, f"--pricing {pricing.name} switches dollars on; on an agent log each request is "
                            f"priced at the model its log names ({model.main}), as billed")
    return [t for t in texts if t]


def _ledger_table(args, unit: str, priced: bool, rows: list[dict], names: list[str],
                  width: int | None) -> tuple[list[str], str]:
    """The table's lines (the default columns, or all with ``--wide``) and the legend above it."""
    columns = names if args.wide else list(BY_TURN_COLUMNS if args.by_turn else LEDGER_COLUMNS)
    if priced and not args.wide and not args.by_turn and "usage_cost_usd" not in names:
        columns += ["cached_tokens", "cost_usd"]  # beside a bill, only the cost model's dollars (issue 33)
    if "usage_cost_usd" in names and not args.wide and not args.by_turn:  # issue 24: the log's bill
        columns += ["usage_prompt_tokens", "usage_cached_tokens", "usage_cost_usd"]
    if "replay_event" in names and not args.wide:
        columns.insert(columns.index("event") + 1, "replay_event")
    lines, hidden = text_table(rows, columns, width=width, shrink="action",
                               keep=_kept(columns))
    more = len(names) - len(columns) + len(hidden)
    if args.by_turn:
        legend = "largest_sent: largest request sent; check_saw: largest context the compaction check saw"
    else:
        legend = "size: context sent; size_before: what the compaction check saw"
        if "replay_event" in names:
            legend += "; event: the agent's own compactions, read from its log; replay_event: the replay's"
    legend += f"; {unit}"
    if more:
        legend += f"; --wide shows {plural(more, 'more column')}"
    return lines, legend


def _kept(columns: list[str]) -> list[str]:
    """The columns a narrow table keeps longest, the first longest: the bill's dollars, its other columns,
    then the agent's own compactions (issue 33)."""
    usage = [c for c in columns if c.startswith("usage_")]
    return sorted(usage, key=lambda c: c != "usage_cost_usd") + ["event"]


def _compaction_name(c) -> str:
    return {"auto": "auto compaction", "manual": "manual compaction", "restart": "restart"}.get(c.trigger,
                                                                                               "compaction")


def agent_rows(transcript: Session, rows: list[dict], shift: int) -> list[dict]:
    """An agent log's ledger rows with the agent's own compactions in ``event`` and the replay's in
    ``replay_event`` (issue 33); ``usage_cost_usd`` says ``unpriced`` where the request's model has no price.

    A compaction the log records at message ``m`` is shown on the first request after it (a row's
    message is its ``index`` less ``shift``, the empty system message the replay may prepend)."""
    comps = sorted(transcript.compactions, key=lambda c: c.message)
    out, k = [], 0
    for row in rows:
        at = int(row.get("index", 0)) - shift
        names = []
        while k < len(comps) and comps[k].message <= at:
            names.append(_compaction_name(comps[k]))
            k += 1
        new = {**row, "replay_event": row.get("event", ""), "event": ", ".join(names)}
        if new.get("usage_prompt_tokens") is not None and new.get("usage_cost_usd") is None:
            new["usage_cost_usd"] = "unpriced"
        out.append(new)
    return out


# ---------------------------------------------------------------- check


def check_command(args) -> int:
    from ..context.history import check_history

    problems = check_history(load(args.file), args.profile)
    if args.json:
        print_json([{"index": p.index, "code": p.code, "reason": p.reason} for p in problems])
    else:
        say(f"{args.file}: {p}" for p in problems)
    return EXIT_PROBLEMS if problems else EXIT_OK

