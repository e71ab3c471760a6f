"""Wrong implementations for notebook 01 (exercise 1.4, the message's size)."""

from . import WrongImplementation as W

WRONG = [
    W("1.4", "counts characters, not UTF-8 bytes", replace=(('.encode("utf-8"))', ")"),)),
    W("1.4", "escapes non-ASCII characters as \\u sequences", replace=(("ensure_ascii=False, ", ""),)),
    W("1.4", "keeps json.dumps's spaces after ',' and ':'", replace=((', separators=(",", ":")', ""),)),
    W(
        "1.4",
        "weighs the content alone",
        source="""
def my_message_size(message: dict) -> int:
    return len(str(message.get("content") or "").encode("utf-8"))
""",
    ),
]
