"""Wrong implementations for notebook 16 (exercise 16.3, a sweep row)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "16.3",
        "sums size_before, not what each request sent",
        replace=(('int(r["size"].sum())', 'int(r["size_before"].sum())'),),
    ),
    W(
        "16.3",
        "ignores keep_recent",
        replace=(("policy=nh.NanoHermesPolicy(keep_recent=keep_recent)", "policy=nh.NanoHermesPolicy()"),),
    ),
    W(
        "16.3",
        "'>=' for '>': a compaction that lands exactly on the budget is ineffective",
        replace=(('(acted["size_after"] > budget)', '(acted["size_after"] >= budget)'),),
    ),
    W("16.3", "counts no compaction as ineffective", replace=(('int((acted["size_after"] > budget).sum())', "0"),)),
]
