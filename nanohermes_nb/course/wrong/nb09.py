"""Wrong implementations for notebook 09 (exercise 9.3, the article's token estimate)."""

from . import WrongImplementation as W

WRONG = [
    W("9.3", "rounds down", replace=(("math.ceil(", "math.floor("),)),
    W(
        "9.3",
        "rounds the Latin and CJK parts up apart",
        replace=(
            (
                'math.ceil((len(text) - cjk) / ratio["latin"] + cjk / ratio["cjk"])',
                'math.ceil((len(text) - cjk) / ratio["latin"]) + math.ceil(cjk / ratio["cjk"])',
            ),
        ),
    ),
    W("9.3", "one ratio for every character", replace=(('cjk / ratio["cjk"]', 'cjk / ratio["latin"]'),)),
    W(
        "9.3",
        "adds one instead of rounding up: an exact whole number gains a token",
        replace=(("math.ceil(", "1 + int("),),
    ),
    W(
        "9.3",
        "counts the content, not the message's JSON",
        replace=(("text = nh.context.sizing.serialize(message)", 'text = str(message.get("content") or "")'),),
    ),
]
