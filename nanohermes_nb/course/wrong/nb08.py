"""Wrong implementations for notebook 08 (exercise 8.1, the trigger)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "8.1",
        "'<' for '<=': a context of exactly the budget compacts",
        replace=(("nh.context_size(messages) <= budget", "nh.context_size(messages) < budget"),),
    ),
    W(
        "8.1",
        "'<' for '<=' in the message count",
        replace=(("len(messages) <= keep_recent + 1", "len(messages) < keep_recent + 1"),),
    ),
    W(
        "8.1",
        "forced, it skips the cut's guard",
        replace=(
            ("return nh.find_cut(messages, keep_recent) > 1", "return force or nh.find_cut(messages, keep_recent) > 1"),
        ),
    ),
    W(
        "8.1",
        "the guard is 'past 0', not 'past 1'",
        replace=(("nh.find_cut(messages, keep_recent) > 1", "nh.find_cut(messages, keep_recent) > 0"),),
    ),
    W(
        "8.1",
        "weighs the contents, not the messages' JSON",
        replace=(("nh.context_size(messages)", 'sum(len(str(m.get("content") or "").encode()) for m in messages)'),),
    ),
]
