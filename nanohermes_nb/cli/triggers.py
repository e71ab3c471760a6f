"""``ledger FILE --triggers``: when each agent's rule would have compacted this session (``engine/triggers``)."""

from __future__ import annotations

from ..views.tables import text_table
from .common import EXIT_OK, UsageError, comment, load, print_json, say, table_width

TRIGGER_COLUMNS = ("rule", "window", "threshold", "reserve", "basis", "fires", "first", "loops", "requests")


def triggers_command(args) -> int:
    """One row per rule: its window and reserve for the session's model, the requests at which it fires."""
    from ..engine.triggers import LOOP_WITHIN, trigger_timeline

    messages = load(args.file)
    try:
        timeline = trigger_timeline(messages, name=str(args.file))
    except ValueError as exc:
        raise UsageError(f"{args.file}: {exc}") from None
    rows = timeline.rows()
    if args.json:
        print_json(rows)
        return EXIT_OK
    width = table_width(args)
    reported = timeline.reported_share()
    say(comment(f"model {timeline.model or 'unknown'}: window {timeline.window.context_window:,} tokens "
                f"({timeline.window.source}); {timeline.n_requests:,} requests, tokens "
                f"{'reported by the log' if reported == 1 else f'reported for {reported:.0%}, else o200k'}; "
                f"hidden prefix {timeline.hidden:,} tokens", width))
    lines, _hidden = text_table(rows, TRIGGER_COLUMNS, width=width, shrink="requests")
    say(comment(f"threshold and reserve in tokens; loops: a firing within {LOOP_WITHIN} requests of the one "
                "before; 'log' is the agent's own compactions", width))
    say(lines)
    say(comment("Counterfactual: each rule replayed on the recorded session; the recorded future is assumed "
                "not to depend on what it would have dropped.", width))
    return EXIT_OK
