"""Compaction: when the session outgrows its budget, swap the old part for a summary.

``compact`` reproduces NanoHermes (SPEC sections 3 and 4) by default and never
touches the caller's list. Three options, off by default, each teach a fix:

- ``summary_role="user"``: Gemini and Anthropic reject a system message after the
  first, so the summary travels as a user message instead.
- ``excerpt_tool_calls=True``: render each call as ``name(arguments)`` in the
  excerpt, the article's own suggestion, so the summarizer sees which file was
  read or edited.
- ``cut="backward"``: move the cut back to the assistant message that owns the
  tool results (keeping more) instead of forward past them (keeping less).

How the excerpt is read and the summarizer asked is one seam, ``ExcerptReader``:
``PLAIN_EXCERPTS`` does it as SPEC 4 states it. A replay hands the policies a
reader over the recorded transcript that gives the same answers faster
(``engine/fast.py``, tested equal on every corpus).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .budgets import DEFAULT_BUDGETS, over_budget
from .messages import calls_of, render_call, role_of, text_of
from .sizing import Meter, message_size
from .summarizers import ExtractiveSummarizer, Summarizer, default_summarizer

__all__ = [
    "SUMMARY_HEADER",
    "PLACEHOLDER_NOTE",
    "CUT_DIRECTIONS",
    "naive_cut",
    "find_cut",
    "find_cut_backward",
    "build_excerpt",
    "Record",
    "records_of",
    "excerpt_records",
    "excerpt_text",
    "ExcerptReader",
    "PlainExcerpts",
    "PLAIN_EXCERPTS",
    "compact",
    "compact_at",
    "CompactionResult",
    "summarize_dropped",
    "ask_summarizer",
    "rust_trim",
    "RUST_WHITESPACE",
    "is_summary_message",
]

SUMMARY_HEADER = "[Earlier conversation summary]"
PLACEHOLDER_NOTE = "[Earlier conversation was omitted to keep the context small]"
CUT_DIRECTIONS = ("forward", "backward")
SUMMARY_ROLES = ("system", "user", "assistant")

# Rust's str::trim strips Unicode White_Space; Python's str.strip() also strips
# U+001C..U+001F. Use Rust's set so the excerpt is byte-identical to the original.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def rust_trim(text: str) -> str:
    return text.strip(RUST_WHITESPACE)


def naive_cut(messages: Sequence[Mapping[str, Any]], keep_recent: int = DEFAULT_BUDGETS.keep_recent) -> int:
    """Where the cut falls before any adjustment: ``len - keep_recent`` (never below 0)."""
    return max(len(messages) - keep_recent, 0)


def find_cut(messages: Sequence[Mapping[str, Any]], keep_recent: int = DEFAULT_BUDGETS.keep_recent) -> int:
    """The first kept message: the naive cut moved forward past tool results (SPEC 3.2)."""
    start = naive_cut(messages, keep_recent)
    while start < len(messages) and role_of(messages[start]) == "tool":
        start += 1
    return start


def find_cut_backward(messages: Sequence[Mapping[str, Any]], keep_recent: int = DEFAULT_BUDGETS.keep_recent) -> int:
    """The naive cut moved back to the assistant message that owns the tool results."""
    start = naive_cut(messages, keep_recent)
    while 0 < start < len(messages) and role_of(messages[start]) == "tool":
        start -= 1
    return start


Record = tuple[str, str]  # one line of the excerpt: (role, text)


def records_of(m: Mapping[str, Any], tool_calls: bool = False) -> tuple[Record, ...]:
    """One message's lines in the excerpt: its trimmed text (when any), then with ``tool_calls`` each call."""
    role = role_of(m)
    role = role if isinstance(role, str) else "?"
    content = rust_trim(text_of(m))
    records: tuple[Record, ...] = ((role, content),) if content else ()
    if tool_calls:
        records += tuple((role, render_call(call)) for call in calls_of(m))
    return records


def excerpt_records(messages: Sequence[Mapping[str, Any]], *, tool_calls: bool = False) -> list[Record]:
    """The excerpt as ``(role, text)`` records, one per line it will hold."""
    return [r for m in messages for r in records_of(m, tool_calls)]


def excerpt_text(records: Sequence[Record]) -> str:
    """The excerpt's text: one ``role: text`` line per record."""
    return "".join(f"{role}: {text}\n" for role, text in records)


def build_excerpt(messages: Sequence[Mapping[str, Any]], *, tool_calls: bool = False) -> str:
    """The summarizer's input: one ``role: text`` line per message with text (SPEC 4).

    Tool call names and arguments are left out, as in the original; with
    ``tool_calls=True`` each call is added as ``role: name(arguments)``.
    """
    return excerpt_text(excerpt_records(messages, tool_calls=tool_calls))


def ask_summarizer(summarizer: Summarizer, records: Sequence[Record]) -> Any:
    """The one summarizer call on the excerpt ``records``.

    The offline ``ExtractiveSummarizer`` reads the records themselves (the lines it
    would parse back out of the text); any other summarizer gets the text.
    Exceptions propagate: each policy has its own rule for a failed call.
    """
    if isinstance(summarizer, ExtractiveSummarizer):
        return summarizer.summarize_records(records)
    return summarizer(excerpt_text(records))


class ExcerptReader(Protocol):
    """How compaction reads the excerpt of some messages and asks the summarizer about it."""

    def records(self, messages: Sequence[Mapping[str, Any]], *, tool_calls: bool) -> Sequence[Record]:
        """The excerpt's records (``excerpt_records``)."""
        ...

    def ask(self, summarizer: Summarizer, records: Sequence[Record]) -> Any:
        """The summarizer's reply on records this reader gave (``ask_summarizer``)."""
        ...


class PlainExcerpts:
    """The ``ExcerptReader`` of SPEC 4 as stated: every message's records, one call on them."""

    def records(self, messages: Sequence[Mapping[str, Any]], *, tool_calls: bool) -> Sequence[Record]:
        return excerpt_records(messages, tool_calls=tool_calls)

    def ask(self, summarizer: Summarizer, records: Sequence[Record]) -> Any:
        return ask_summarizer(summarizer, records)


PLAIN_EXCERPTS = PlainExcerpts()


def is_summary_message(message: Mapping[str, Any], prefixes: Sequence[str] = ()) -> bool:
    """True for a note compaction inserted (the lab's summary or placeholder), or a summary opening with one
    of ``prefixes``.

    Other systems open their summaries their own way; this module does not know them.
    ``policies.summary_prefixes()`` collects the openings the registered policies
    declare, and ``policies.is_summary_message`` asks with all of them.
    """
    content = message.get("content") if isinstance(message, Mapping) else None
    return isinstance(content, str) and (
        content.startswith(SUMMARY_HEADER + "\n") or content == PLACEHOLDER_NOTE
        or content.startswith(tuple(prefixes))
    )


@dataclass(frozen=True)
class _Summary:
    note: str
    called: bool
    failure: str | None


def summarize_dropped(
    dropped: Sequence[Mapping[str, Any]],
    summarizer: Summarizer | None = None,
    *,
    excerpt_tool_calls: bool = False,
    excerpts: ExcerptReader = PLAIN_EXCERPTS,
) -> _Summary:
    """Excerpt, one summarizer call, and the note; any failure gives the placeholder."""
    summarizer = summarizer or _default()
    records = excerpts.records(dropped, tool_calls=excerpt_tool_calls)
    if not len(records):
        return _Summary(PLACEHOLDER_NOTE, False, "the dropped messages carry no text (empty excerpt)")
    try:
        reply = excerpts.ask(summarizer, records)
    except Exception as exc:  # any failure of the extra call must not break the agent loop
        return _Summary(PLACEHOLDER_NOTE, True, f"{type(exc).__name__}: {exc}")
    if reply is None:
        return _Summary(PLACEHOLDER_NOTE, True, "the summarizer returned nothing")
    if not isinstance(reply, str):
        return _Summary(PLACEHOLDER_NOTE, True, f"the summarizer returned {type(reply).__name__}, not text")
    reply = rust_trim(reply)
    if not reply:
        return _Summary(PLACEHOLDER_NOTE, True, "the summarizer returned an empty reply")
    return _Summary(f"{SUMMARY_HEADER}\n{reply}", True, None)


_DEFAULT: list[Summarizer] = []


def _default() -> Summarizer:
    if not _DEFAULT:
        _DEFAULT.append(default_summarizer())
    return _DEFAULT[0]


@dataclass(frozen=True)
class CompactionResult:
    """What one ``compact`` call did. ``cut`` is None when nothing happened."""

    messages: list
    dropped: list
    cut: int | None
    note: str | None
    reason: str
    naive_cut: int
    adjusted_cut: int
    size_before: int
    size_after: int
    budget: int
    keep_recent: int
    summarizer_called: bool = False
    failure: str | None = None
    forced: bool = False
    summary_role: str = "system"
    cut_direction: str = "forward"
    source: list = field(default_factory=list, repr=False)

    @property
    def compacted(self) -> bool:
        return self.cut is not None

    @property
    def dropped_count(self) -> int:
        return len(self.dropped)

    @property
    def summary_message(self) -> dict | None:
        return self.messages[1] if self.compacted else None

    def rows(self) -> list[dict]:
        """Before/after rows: every input message plus the inserted summary, with status."""
        rows: list[dict] = []
        cut = self.cut if self.cut is not None else len(self.source)  # no compaction: every message kept
        moved = self.compacted and self.naive_cut != cut
        for i, m in enumerate(self.source):
            if not self.compacted or i == 0 or i >= cut:
                status = "kept"
                after = i if not self.compacted or i == 0 else i - cut + 2
            else:
                status = "dropped"
                after = None
            marker = ""
            if self.compacted and i == cut:
                marker = "cut"
            if moved and i == self.naive_cut:
                marker = "naive cut"
            rows.append({"before": i, "after": after, "status": status, "marker": marker, "message": m})
            if self.compacted and i == 0:
                rows.append({"before": None, "after": 1, "status": "summary", "marker": "",
                             "message": self.messages[1]})
        return rows

    def describe(self) -> str:
        """One line on what happened and why."""
        if not self.compacted:
            return f"no compaction: {self.reason}"
        how = "summary" if self.note and self.note.startswith(SUMMARY_HEADER) else "placeholder"
        cut = self.cut if self.cut is not None else len(self.source)
        text = (
            f"compacted: dropped {self.dropped_count} messages (1..{cut - 1}), cut at {cut}"
            f" (naive {self.naive_cut}), {how} inserted; {self.size_before:,} -> {self.size_after:,}"
        )
        if self.failure:
            text += f"; summarizer failed: {self.failure}"
        return text

    def _repr_html_(self) -> str:
        from .display import compaction_html

        return compaction_html(self)


def _apply_cut(source: list, cut: int, *, size: int, size_of: Callable[[Mapping[str, Any]], int], naive: int,
               adjusted: int, summarizer: Summarizer | None, summary_role: str, excerpt_tool_calls: bool,
               budget: int, keep_recent: int, force: bool, cut_direction: str, reason: str,
               excerpts: ExcerptReader = PLAIN_EXCERPTS) -> CompactionResult:
    """Steps 4–5 of SPEC section 3: swap ``source[1:cut]`` for one summary message."""
    dropped = source[1:cut]
    summary = summarize_dropped(dropped, summarizer, excerpt_tool_calls=excerpt_tool_calls, excerpts=excerpts)
    note_message = {"role": summary_role, "content": summary.note}
    kept = size_of(source[0]) + sum(map(size_of, source[cut:]))  # the few recent messages, not the many old
    return CompactionResult(
        messages=[source[0], note_message] + source[cut:],
        dropped=dropped,
        cut=cut,
        note=summary.note,
        reason=reason,
        naive_cut=naive,
        adjusted_cut=adjusted,
        size_before=size,
        size_after=kept + size_of(note_message),
        budget=budget,
        keep_recent=keep_recent,
        summarizer_called=summary.called,
        failure=summary.failure,
        forced=force,
        summary_role=summary_role,
        cut_direction=cut_direction,
        source=source,
    )


def compact_at(
    messages: Sequence[Mapping[str, Any]],
    cut: int,
    *,
    keep_recent: int = DEFAULT_BUDGETS.keep_recent,
    summarizer: Summarizer | None = None,
    summary_role: str = "system",
    excerpt_tool_calls: bool = False,
    meter: Callable[[Mapping[str, Any]], int] | Meter | None = None,
) -> CompactionResult:
    """What ``compact`` would return had it cut at ``cut`` (the first kept message), no rule applied.

    It shows what a hand-placed cut would leave, legal or not. ``cut <= 1`` drops nothing.
    """
    source = list(messages)
    size_of = meter or message_size
    size = sum(size_of(m) for m in source)
    naive, rule = naive_cut(source, keep_recent), find_cut(source, keep_recent)
    cut = min(max(cut, 0), len(source))
    if cut <= 1:
        return CompactionResult(source, [], None, None, f"the cut lands on {cut} (<= 1): nothing old enough to drop",
                                naive, rule, size, size, 0, keep_recent, forced=True, summary_role=summary_role,
                                cut_direction="hand", source=source)
    return _apply_cut(source, cut, size=size, size_of=size_of, naive=naive, adjusted=rule, summarizer=summarizer,
                      summary_role=summary_role, excerpt_tool_calls=excerpt_tool_calls, budget=0,
                      keep_recent=keep_recent, force=True, cut_direction="hand",
                      reason=f"cut placed by hand at {cut}")


def compact(
    messages: Sequence[Mapping[str, Any]],
    *,
    budget: int = DEFAULT_BUDGETS.context_char_budget,
    keep_recent: int = DEFAULT_BUDGETS.keep_recent,
    summarizer: Summarizer | None = None,
    force: bool = False,
    summary_role: str = "system",
    excerpt_tool_calls: bool = False,
    cut: str = "forward",
    meter: Callable[[Mapping[str, Any]], int] | Meter | None = None,
    size: int | None = None,
    excerpts: ExcerptReader = PLAIN_EXCERPTS,
) -> CompactionResult:
    """Compact ``messages`` per SPEC section 3; the input list is never mutated.

    ``meter`` sizes one message (default: UTF-8 bytes of compact JSON); pass a
    ``Meter`` in another unit to trigger on characters or tokens instead.
    ``size`` is the context's size in that unit when the caller already knows it;
    ``excerpts`` reads the excerpt and asks the summarizer (``ExcerptReader``).
    """
    if cut not in CUT_DIRECTIONS:
        raise ValueError(f"cut must be one of {CUT_DIRECTIONS}, got {cut!r}")
    if summary_role not in SUMMARY_ROLES:
        raise ValueError(f"summary_role must be one of {SUMMARY_ROLES}, got {summary_role!r}")
    source = list(messages)
    size_of = meter or message_size
    if size is None:
        size = sum(size_of(m) for m in source)
    naive = naive_cut(source, keep_recent)
    start = find_cut(source, keep_recent) if cut == "forward" else find_cut_backward(source, keep_recent)

    def unchanged(reason: str) -> CompactionResult:
        return CompactionResult(source, [], None, None, reason, naive, start, size, size, budget,
                                keep_recent, forced=force, summary_role=summary_role,
                                cut_direction=cut, source=source)

    if not force:
        if not over_budget(size, budget):
            return unchanged(f"size {size:,} <= budget {budget:,}")
        if len(source) <= keep_recent + 1:
            return unchanged(f"only {len(source)} messages (<= keep_recent + 1 = {keep_recent + 1})")
    if start <= 1:
        return unchanged(f"the cut lands on {start} (<= 1): nothing old enough to drop")
    return _apply_cut(source, start, size=size, size_of=size_of, naive=naive, adjusted=start, summarizer=summarizer,
                      summary_role=summary_role, excerpt_tool_calls=excerpt_tool_calls, budget=budget,
                      keep_recent=keep_recent, force=force, cut_direction=cut,
                      reason="forced" if force else f"size {size:,} > budget {budget:,}",
                      excerpts=excerpts)
