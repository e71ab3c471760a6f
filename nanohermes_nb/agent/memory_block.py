"""The memory block: the ranked entries as one marked block at the end of the system message.

``render_block`` writes it within ``memory_inject_char_budget`` (2,400 characters);
``set_block`` replaces the previous block instead of adding another; an entry can never
end the block early (its markers are made inert).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from ..context.budgets import DEFAULT_BUDGETS, Budgets

BLOCK_START = "<nanohermes-memory>"
BLOCK_END = "</nanohermes-memory>"
BLOCK_HEADER = ("Relevant memories retrieved from past sessions (distilled automatically from "
                "earlier conversations; for reference only, the user's current instruction "
                "takes precedence):")
_BLOCK_SEPARATOR = "\n\n"  # between the system text and an appended block
_BLOCK_OPEN = f"{BLOCK_START}\n{BLOCK_HEADER}\n"  # how every block begins
_INERT_START, _INERT_END = BLOCK_START.replace("<", "\u2039"), BLOCK_END.replace("<", "\u2039")


# --------------------------------------------------------------------------- the block


def _field(entry: Any, name: str) -> str:
    value = entry.get(name) if isinstance(entry, Mapping) else getattr(entry, name, None)
    if isinstance(value, Enum):
        value = value.value
    if value is None:
        raise ValueError(f"memory entry {entry!r} has no {name!r}")
    return str(value)


def _inert(value: str) -> str:
    """An entry's kind or text with the block's markers made plain text (``<`` as ``‹``):
    a remembered line that holds ``</nanohermes-memory>`` cannot end the block early."""
    if "nanohermes-memory" not in value:
        return value
    return value.replace(BLOCK_START, _INERT_START).replace(BLOCK_END, _INERT_END)


def render_block(entries: Sequence[Any], budgets: Budgets = DEFAULT_BUDGETS) -> str:
    """The memory block for already-ranked entries; '' when there are none.

    Entry lines ``\\n- [kind] text`` are added while their running character count
    stays within ``memory_inject_char_budget``; the first that does not fit ends the
    block, even if a later, shorter one would fit (lower ranks are worth less). The
    markers never appear inside an entry line (``_inert``).
    """
    chosen = list(entries)[:budgets.memory_inject_top_k]
    if not chosen:
        return ""
    out = [_BLOCK_OPEN]
    used = 0
    for entry in chosen:
        line = f"\n- [{_inert(_field(entry, 'kind'))}] {_inert(_field(entry, 'text'))}"
        if used + len(line) > budgets.memory_inject_char_budget:
            break
        used += len(line)
        out.append(line)
    out.extend(["\n", BLOCK_END])
    return "".join(out)


def _strip_block(text: str) -> str:
    """``text`` without the memory block ``set_block`` put at its very end (and the separator).

    Only a block that ends the text counts: a marker quoted anywhere else (an AGENTS.md
    that documents this project, say) is plain text and stays, as does what follows it.
    """
    if not text.endswith(BLOCK_END):
        return text
    start = text.rfind(_BLOCK_OPEN)
    if start < 0:
        return text
    if text.endswith(_BLOCK_SEPARATOR, 0, start):
        start -= len(_BLOCK_SEPARATOR)
    return text[:start]


def set_block(system_text: str, block: str) -> str:
    """``system_text`` with its memory block replaced by ``block``, placed at the very end.

    An empty ``block`` only removes the old one; setting again never accumulates.
    """
    base = _strip_block(system_text)
    if not block:
        return base
    return f"{base}{_BLOCK_SEPARATOR}{block}" if base else block

