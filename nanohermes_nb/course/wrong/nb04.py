"""Wrong implementations for notebook 04 (exercise 4.1, the shared prefix of two requests)."""

from . import WrongImplementation as W

WRONG = [
    W("4.1", "counts characters, not bytes", replace=(('+ "]").encode("utf-8")', '+ "]")'),)),
    W(
        "4.1",
        "an empty request still shares its '['",
        replace=(("    if not previous or not current:\n        return 0", "    if False:\n        return 0"),),
    ),
    W("4.1", "messages joined without commas", replace=(('",".join', '"".join'),)),
    W(
        "4.1",
        "counts the first differing byte too",
        replace=(("    return n", "    return n + 1 if n < min(len(a), len(b)) else n"),),
    ),
]
