"""Wrong implementations for notebook 05 (exercises 5.1, the AGENTS.md chain cut, and 5.4, the memory block)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "5.1",
        "'<' for '<=': a chain of exactly max_bytes is cut",
        replace=(("len(data) <= max_bytes", "len(data) < max_bytes"),),
    ),
    W(
        "5.1",
        "cuts characters, not bytes",
        source=r"""
def my_project_docs(parts, max_bytes):
    if not parts:
        return None
    joined = "\n\n".join(parts)
    if len(joined) <= max_bytes:
        return joined
    return joined[:max_bytes] + DOCS_TRUNCATED_NOTE
""",
    ),
    W(
        "5.1",
        "no step back: the cut character becomes U+FFFD",
        replace=(
            ('data[:utf8_boundary(data, max_bytes)].decode("utf-8")', 'data[:max_bytes].decode("utf-8", "replace")'),
        ),
    ),
    W("5.1", "parts joined by one newline", replace=((r'"\n\n".join(parts)', r'"\n".join(parts)'),)),
    W(
        "5.4",
        "continue, not break: a later, shorter entry slips in",
        replace=(("            break", "            continue"),),
    ),
    W(
        "5.4",
        "counts bytes, not characters",
        replace=(
            ("used + len(line) >", "used + len(line.encode()) >"),
            ("used += len(line)", "used += len(line.encode())"),
        ),
    ),
    W(
        "5.4",
        "'>=' for '>': a line that fits exactly is left out",
        replace=(("> budgets.memory_inject_char_budget", ">= budgets.memory_inject_char_budget"),),
    ),
    W("5.4", "ignores the top-k", replace=(("list(entries)[: budgets.memory_inject_top_k]", "list(entries)"),)),
    W(
        "5.4",
        "wraps an empty block in its markers",
        replace=(('    if not chosen:\n        return ""', '    if False:\n        return ""'),),
    ),
]
