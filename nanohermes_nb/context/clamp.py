"""The last door every tool result passes: a byte cap that never splits a character.

``clamp`` reproduces NanoHermes exactly, including the note that says "chars" while
counting bytes (SPEC section 2). ``clamp_report`` exposes every step for teaching:
where the cut wanted to fall, how far it backed off to a UTF-8 boundary, and what
the note claims versus what was really omitted.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["clamp", "clamp_report", "ClampReport", "utf8_boundary", "cut_utf8"]

ELLIPSIS = "\u2026"


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def utf8_boundary(data: bytes, limit: int) -> int:
    """The largest index <= ``limit`` that does not split a UTF-8 character."""
    end = min(max(limit, 0), len(data))
    while 0 < end < len(data) and (data[end] & 0xC0) == 0x80:
        end -= 1
    return end


def cut_utf8(text: str, max_bytes: int) -> tuple[str, int]:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes at a character boundary.

    Returns the kept text and the number of bytes cut off.
    """
    data = _encode(text)
    if len(data) <= max_bytes:
        return text, 0
    end = utf8_boundary(data, max_bytes)
    return _decode(data[:end]), len(data) - end


@dataclass(frozen=True)
class ClampReport:
    """What ``clamp`` did to one text, step by step."""

    text: str  # the clamped result, note included
    kept: str  # the kept head, without the note
    note: str  # the appended note ('' when nothing was cut)
    max_bytes: int
    input_bytes: int
    input_chars: int
    kept_bytes: int
    kept_chars: int
    backoff_bytes: int  # bytes the cut moved back to land on a character boundary
    omitted_bytes: int  # the N the note prints
    omitted_chars: int  # what N would be if the note meant characters

    @property
    def truncated(self) -> bool:
        return bool(self.note)


def _note(omitted: int, unit_label: str) -> str:
    return f"\n{ELLIPSIS} output truncated ({omitted} {unit_label} omitted)"


def clamp_report(text: str, max_bytes: int = 20_000, *, unit_label: str = "chars") -> ClampReport:
    """Clamp ``text`` and report every step (see ``clamp``)."""
    data = _encode(text)
    if len(data) <= max_bytes:
        return ClampReport(text, text, "", max_bytes, len(data), len(text), len(data),
                           len(text), 0, 0, 0)
    end = utf8_boundary(data, max_bytes)
    kept = _decode(data[:end])
    omitted = len(data) - end
    note = _note(omitted, unit_label)
    return ClampReport(
        text=kept + note,
        kept=kept,
        note=note,
        max_bytes=max_bytes,
        input_bytes=len(data),
        input_chars=len(text),
        kept_bytes=end,
        kept_chars=len(kept),
        backoff_bytes=max_bytes - end,
        omitted_bytes=omitted,
        omitted_chars=len(text) - len(kept),
    )


def clamp(text: str, max_bytes: int = 20_000, *, unit_label: str = "chars") -> str:
    """Cap ``text`` at ``max_bytes`` UTF-8 bytes, cut on a character boundary, with a note.

    Unchanged when it fits. Otherwise the largest boundary <= ``max_bytes`` is kept
    and ``\\n… output truncated (N chars omitted)`` appended, where N counts bytes:
    the original's mislabel, kept by default. ``unit_label="bytes"`` fixes the word.
    """
    return clamp_report(text, max_bytes, unit_label=unit_label).text
