"""Wrong implementations for notebook 03 (exercise 3.4, the bytes JSON escaping adds)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "3.4",
        "forgets \\b and \\f (counts them as \\u escapes)",
        replace=((r"""'\n"\\\t\r\b\f'""", r"""'\n"\\\t\r'"""),),
    ),
    W("3.4", "escapes the space too (<= 0x20)", replace=(("ord(ch) < 0x20", "ord(ch) <= 0x20"),)),
    W(
        "3.4",
        "escapes DEL (U+007F) as well",
        replace=(("5 if ord(ch) < 0x20", r'5 if ord(ch) < 0x20 or ch == "\x7f"'),),
    ),
    W("3.4", "a \\u escape adds 6 bytes, not 5", replace=(("else 5 if", "else 6 if"),)),
]
