"""Wrong implementations for notebook 27 (exercise 27.1, a probe's survival: kept, summarized or lost)."""

from . import WrongImplementation as W

WRONG = [
    W("27.1", "does not lower-case the summary", replace=(("lowered = summary.lower()", "lowered = summary"),)),
    W(
        "27.1",
        "compares whole words, never their first six letters",
        replace=(
            ("stem = lambda t: t.lower()[:6] if t.isalpha() and len(t) > 6 else t.lower()",
             "stem = lambda t: t.lower()"),
        ),
    ),
    W("27.1", "a probe with no key terms is summarized by them", replace=(("bool(probe.terms) and all(", "all("),)),
    W(
        "27.1",
        "kept when any evidence string is kept, not every one",
        replace=(("if all(e in kept for e in probe.evidence):", "if any(e in kept for e in probe.evidence):"),),
    ),
    W(
        "27.1",
        "summarized by one key term, not all of them",
        replace=(("all(stem(t) in lowered for t in probe.terms)", "any(stem(t) in lowered for t in probe.terms)"),),
    ),
]
