"""Wrong implementations for notebook 10 (exercises 10.1 the cut, 10.2 compact, 10.3 the backward cut)."""

from . import WrongImplementation as W

WRONG = [
    W("10.1", "moves back over tool results, not forward", replace=(("start += 1", "start -= 1"),)),
    W("10.1", "no floor at 0", replace=(("max(len(messages) - keep_recent, 0)", "len(messages) - keep_recent"),)),
    W(
        "10.1",
        "never moves past the last message (always keeps one)",
        replace=(("while start < len(messages) and", "while start < len(messages) - 1 and"),),
    ),
    W(
        "10.1",
        "keeps one message too many",
        replace=(("max(len(messages) - keep_recent, 0)", "max(len(messages) - keep_recent - 1, 0)"),),
    ),
    W("10.2", "the summary is not trimmed", replace=(('{summary.strip()}"', '{summary}"'),)),
    W(
        "10.2",
        "a blank summary is kept, not replaced by the placeholder",
        replace=(("if not isinstance(summary, str) or not summary.strip():", "if not isinstance(summary, str):"),),
    ),
    W(
        "10.2",
        "'<' for '<=': a context of exactly the budget compacts",
        replace=(("sum(size_of(m) for m in messages) <= budget", "sum(size_of(m) for m in messages) < budget"),),
    ),
    W(
        "10.2",
        "the note goes in as a user message",
        replace=(('{"role": "system", "content": note}', '{"role": "user", "content": note}'),),
    ),
    W(
        "10.2",
        "the summarizer's error is not caught",
        replace=(
            (
                "    except Exception:\n        return PLACEHOLDER",
                "    except ZeroDivisionError:\n        return PLACEHOLDER",
            ),
        ),
    ),
    W("10.3", "moves forward, not back", replace=(("start -= 1", "start += 1"),)),
    W(
        "10.3",
        "no floor at 0",
        replace=(("start = max(len(messages) - keep_recent, 0)", "start = len(messages) - keep_recent"),),
    ),
    W(
        "10.3",
        "looks past the end of the list",
        replace=(("while 0 < start < len(messages) and", "while 0 < start and"),),
    ),
    W(
        "10.3",
        "steps back one message only, not over the whole batch",
        replace=(
            (
                'while 0 < start < len(messages) and messages[start].get("role") == "tool":',
                'if 0 < start < len(messages) and messages[start].get("role") == "tool":',
            ),
        ),
    ),
]
