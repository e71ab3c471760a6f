"""Wrong implementations for notebook 11 (exercise 11.1, the excerpt)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "11.1",
        "keeps a line for a message with no text",
        replace=(("        if text:", "        if text is not None:"),),
    ),
    W("11.1", "the text is not trimmed", replace=(("rust_trim(text_of(m))", "text_of(m)"),)),
    W(
        "11.1",
        "a role that is not a string is written as it is",
        replace=(('m.get("role") if isinstance(m.get("role"), str) else "?"', 'm.get("role")'),),
    ),
    W("11.1", "lists the tool calls even when not asked to", replace=(("        if tool_calls:", "        if True:"),)),
    W(
        "11.1",
        "the calls come before the text",
        source=r"""
def my_build_excerpt(messages, tool_calls=False):
    lines = []
    for m in messages:
        role = m.get("role") if isinstance(m.get("role"), str) else "?"
        if tool_calls:
            lines += [f"{role}: {render_call(call)}\n" for call in calls_of(m)]
        text = rust_trim(text_of(m))
        if text:
            lines.append(f"{role}: {text}\n")
    return "".join(lines)
""",
    ),
]
