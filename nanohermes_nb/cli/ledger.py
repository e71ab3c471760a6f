"""``ledger`` (one row per model request, or per turn) and ``check`` (is the history legal?).

The default ledger path reads plain rows (``Ledger.records()``), so it imports
neither pandas nor pyarrow; ``--by-turn`` builds the per-turn frame with pandas.
"""

from __future__ import annotations

from ..views.tables import text_table
from .common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    comment,
    load,
    plural,
    policy_named,
    policy_options,
    pricing_named,
    print_json,
    records,
    say,
    summarizer_named,
    table_width,
)

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


def totals_lines(ledger) -> list[str]:
    t = ledger.totals
    unit = ledger.unit
    first = (f"{plural(t.requests, 'request')}, peak request {t.peak_request:,} {unit} (request "
             f"{t.peak_request_number}); {plural(t.compactions, 'event')} ({ledger.policy}), "
             f"{plural(t.summarizer_calls, 'summarizer call')}")
    second = (f"cumulative input {t.cumulative_input:,} {unit} vs {t.cumulative_input_no_compaction:,} without "
              f"compaction (saving {t.saving_share:.0%})")
    bad = {p: n for p, n in t.problems.items() if n}
    if bad:
        second += "; history rejected by " + ", ".join(f"{p} ({plural(n, 'problem')} at worst)" for p, n in bad.items())
    elif t.problems:
        second += "; history legal for " + ", ".join(t.problems)
    texts = [first, second]
    if t.cost_usd is not None:
        texts.append(f"{t.pricing}: {t.cost_usd:.4f} USD ({t.summarizer_cost_usd:.4f} for the summarizer) vs "
                     f"{t.cost_usd_no_compaction:.4f} without compaction; cache-hit rate {t.cache_hit_rate:.0%} "
                     f"({t.cache_hit_rate_no_compaction:.0%} without)")
    return [line for text in texts for line in comment(text)]


def ledger_command(args) -> int:
    """Replay the transcript and print its ledger (``--json``: every column), totals and caveat."""
    from ..engine.ledger import replay

    messages = load(args.file)
    policy = policy_named(args.policy, policy_options(args))
    pricing = pricing_named(args.pricing)
    ledger = replay(messages, budget=args.budget, summarizer=summarizer_named(args.summarizer), unit=args.unit,
                    policy=policy, pricing=pricing)
    if args.by_turn:
        frame = _by_turn(ledger)
        rows, names = records(frame), [str(c) for c in frame.columns]
    else:  # the plain rows: no pandas on the default path
        rows, names = records(ledger.records()), list(ledger.rows)
    if args.json:
        print_json(rows)
        return EXIT_OK
    width = table_width(args)
    lines, legend = _ledger_table(args, ledger.unit, pricing is not None, rows, names, width)
    for note in ledger.notes:
        say(comment(note, width))
    say(comment(legend, width))
    say(lines)
    say(totals_lines(ledger))
    if "usage_cost_usd" in ledger.rows:  # issue 24: the reported totals beside the estimate
        from ..engine.bill import bill_lines

        say([line for text in bill_lines(messages) for line in comment(text)])
    say(comment(ledger.caveat))
    return EXIT_OK


def _ledger_table(args, unit: str, priced: bool, rows: list[dict], names: list[str],
                  width: int | None) -> tuple[list[str], str]:
    """The table's lines (the default columns, or all with ``--wide``) and the legend above it."""
    columns = names if args.wide else list(BY_TURN_COLUMNS if args.by_turn else LEDGER_COLUMNS)
    if priced and not args.wide and not args.by_turn:
        columns += ["cached_tokens", "cost_usd"]
    if "usage_cost_usd" in names and not args.wide and not args.by_turn:  # issue 24: the log's bill
        columns += ["usage_prompt_tokens", "usage_cached_tokens", "usage_cost_usd"]
    lines, hidden = text_table(rows, columns, width=width, shrink="action")
    more = len(names) - len(columns) + len(hidden)
    if args.by_turn:
        legend = "largest_sent: largest request sent; check_saw: largest context the compaction check saw"
    else:
        legend = "size: context sent; size_before: what the compaction check saw"
    legend += f"; {unit}"
    if more:
        legend += f"; --wide shows {plural(more, 'more column')}"
    return lines, legend


# ---------------------------------------------------------------- check


def check_command(args) -> int:
    from ..context.history import check_history

    problems = check_history(load(args.file), args.profile)
    if args.json:
        print_json([{"index": p.index, "code": p.code, "reason": p.reason} for p in problems])
    else:
        say(f"{args.file}: {p}" for p in problems)
    return EXIT_PROBLEMS if problems else EXIT_OK

