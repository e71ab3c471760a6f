"""Wrong implementations for notebook 24 (exercise 24.1, the hand-off to a sub-agent)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "24.1",
        "accepts a stretch that stops inside a batch of results",
        replace=((' and (end == len(messages) or messages[end].get("role") != "tool")', ""),),
    ),
    W(
        "24.1",
        "accepts a stretch that starts on a tool result",
        replace=(('messages[start].get("tool_calls")', "True"),),
    ),
    W("24.1", "writes the range with its end included", replace=(('f"{start}-{end - 1}"', 'f"{start}-{end}"'),)),
    W(
        "24.1",
        "names the call after the stretch's end",
        replace=(('f"call_isolated_{start}"', 'f"call_isolated_{end}"'),),
    ),
    W(
        "24.1",
        "the hand-off message has no content",
        replace=(('"content": "", "tool_calls"', '"content": None, "tool_calls"'),),
    ),
]
