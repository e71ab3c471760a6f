"""Wrong implementations for notebook 07 (exercise 7.1, clamp)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "7.1",
        "'<' for '<=': a text of exactly max_bytes is cut (and raises IndexError)",
        replace=(("if len(data) <= max_bytes:", "if len(data) < max_bytes:"),),
    ),
    W(
        "7.1",
        "caps characters, not bytes",
        source="""
def my_clamp(text: str, max_bytes: int = 20_000) -> str:
    if len(text) <= max_bytes:
        return text
    return text[:max_bytes] + f"\\n… output truncated ({len(text) - max_bytes} chars omitted)"
""",
    ),
    W(
        "7.1",
        "no step back: the broken character becomes U+FFFD",
        replace=(
            ("while end > 0 and (data[end] & 0b1100_0000) == 0b1000_0000:", "while False:"),
            ('data[:end].decode("utf-8")', 'data[:end].decode("utf-8", "replace")'),
        ),
    ),
    W(
        "7.1",
        "tests the byte before the cut, not the byte at it",
        replace=(("(data[end] & 0b1100_0000)", "(data[end - 1] & 0b1100_0000)"),),
    ),
    W(
        "7.1",
        "the note counts characters cut off",
        replace=(("omitted = len(data) - end", 'omitted = len(text) - len(data[:end].decode("utf-8"))'),),
    ),
]
