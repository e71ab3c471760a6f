"""Wrong implementations for notebook 15 (exercise 15.3, recent messages intact)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "15.3",
        "compares dicts, so key order is ignored",
        source="""
def my_recent_intact(result):
    return result.messages[2:] == result.source[result.cut:]
""",
    ),
    W(
        "15.3",
        "compares from one message after the cut",
        replace=(("result.source[result.cut:]", "result.source[result.cut + 1:]"),),
    ),
    W(
        "15.3",
        "serializes with sorted keys",
        replace=(('separators=(",", ":"))', 'separators=(",", ":"), sort_keys=True)'),),
    ),
    W(
        "15.3",
        "compares only how many messages were kept",
        source="""
def my_recent_intact(result):
    return len(result.messages) - 2 == len(result.source) - result.cut
""",
    ),
]
