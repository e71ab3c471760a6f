"""Wrong implementations for notebook 26 (exercise 26.1, the cookbook's trimming by turns)."""

from . import WrongImplementation as W

WRONG = [
    W("26.1", "max_turns 0 is not raised to 1", replace=(("max(1, int(max_turns))", "int(max_turns)"),)),
    W("26.1", "drops the system message", replace=(("return head + body[start:]", "return body[start:]"),)),
    W(
        "26.1",
        "keeps one turn too many",
        replace=(
            (
                "users[-max_turns] if len(users) >= max_turns else 0",
                "users[-max_turns - 1] if len(users) > max_turns else 0",
            ),
        ),
    ),
    W(
        "26.1",
        "with fewer turns than asked, keeps only the system message",
        replace=(("if len(users) >= max_turns else 0", "if len(users) >= max_turns else len(body)"),),
    ),
]
