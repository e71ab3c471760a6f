"""Wrong implementations for notebook 17 (exercise 17.4, Cline's halving of the conversation)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "17.4",
        "halves messages, not pairs (an odd count can go)",
        replace=(
            ("end = start + 2 * pairs - 1", 'end = start + (rest // 2 if keep == "half" else rest * 3 // 4) - 1'),
        ),
    ),
    W("17.4", "starts at message 1 (drops the first reply)", replace=(("start = 2", "start = 1"),)),
    W(
        "17.4",
        "rounds up instead of down",
        replace=(
            ('pairs = rest // 4 if keep == "half" else rest * 3 // 4 // 2',
             'pairs = -(-rest // 4) if keep == "half" else -(-rest * 3 // 8)'),
        ),
    ),
    W(
        "17.4",
        "quarter deletes a quarter, not three quarters",
        replace=(("else rest * 3 // 4 // 2", "else rest // 4 // 2"),),
    ),
    W(
        "17.4",
        "end exclusive instead of inclusive",
        replace=(("end = start + 2 * pairs - 1", "end = start + 2 * pairs"),),
    ),
]
