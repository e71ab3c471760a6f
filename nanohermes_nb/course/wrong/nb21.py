"""Wrong implementations for notebook 21 (exercise 21.1, the relevant share)."""

from . import WrongImplementation as W

WRONG = [
    W("21.1", "counts the system message too", replace=(("body = context[1:]", "body = context"),)),
    W(
        "21.1",
        "a share of messages, not of bytes",
        replace=(
            (
                "return context_size([m for m in body if message_identifiers(m) & wanted]) / total",
                "return len([m for m in body if message_identifiers(m) & wanted]) / len(body)",
            ),
        ),
    ),
    W(
        "21.1",
        "0, not None, when nothing follows the system message",
        replace=(
            (
                "    if not wanted or not total:\n        return None",
                "    if not total:\n        return 0.0\n    if not wanted:\n        return None",
            ),
        ),
    ),
    W(
        "21.1",
        "a message must name every identifier of the step",
        replace=(("message_identifiers(m) & wanted", "wanted <= message_identifiers(m)"),),
    ),
]
