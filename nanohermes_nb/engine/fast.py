"""The accelerations: what makes a sweep fast, kept apart from the rules it speeds up.

``context/`` states the rules as the article does: compaction reads the excerpt of the dropped
messages and asks the summarizer (``compaction.PLAIN_EXCERPTS``); the history checker walks a context
message by message (``history.HistoryChecker``). A sweep replays one transcript under many settings,
so the same work recurs. This module does it once per recorded transcript and answers the same, faster
(``retention_bits`` does the same for the retention score):

- ``TranscriptExcerpts``: an ``ExcerptReader`` over one transcript. A dropped stretch of the
  transcript is read from excerpt records built once, and the offline summarizer's summary of it
  from an index of those records (``span_summary``), so a compaction costs what the summary holds,
  not what it dropped. Summaries are remembered with the transcript, not the summarizer.
- ``HistoryBaseline``, ``HistoryWalk``, ``ProfileCounts``: the history checker run once over the whole
  transcript; after an event, what the policy wrote, then the transcript until it agrees with the baseline.
- ``SessionCache``: all of it for one recorded transcript, by name.

``tests/test_fast.py`` holds each equal to the plain code on every corpus transcript.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from ..context.compaction import Record, ask_summarizer, excerpt_records, records_of
from ..context.history import HistoryChecker
from ..context.metrics import TextIndex, first_user_goal, goal_terms
from ..context.needed import IdentifierIndex
from ..context.probes import ProbeIndex
from ..context.summarizers import ExtractiveSummarizer, Features, Summarizer, carried_items
from ..policies.base import summary_prefixes
from .retention_bits import RetentionBits

__all__ = ["SessionCache", "TranscriptExcerpts", "RecordRun", "RunRecords", "span_summary",
           "HistoryBaseline", "HistoryWalk", "ProfileCounts", "written_signature"]

# --- the excerpt of a stretch of the transcript, and its summary --------------------------------------------


@dataclass(frozen=True)
class RecordRun(Sequence):
    """``records[lo:hi]``: a stretch of one transcript's excerpt records, read in place."""

    records: Sequence[Record]
    lo: int
    hi: int
    tool_calls: bool = False

    def __len__(self) -> int:
        return self.hi - self.lo

    def __getitem__(self, k):
        return self.records[self.lo:self.hi][k]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records[self.lo:self.hi])


class RunRecords(Sequence):
    """An excerpt's records as those of some leading messages (``head``), then a run of the transcript's."""

    __slots__ = ("head", "run")

    def __init__(self, head: list[Record], run: RecordRun) -> None:
        self.head, self.run = head, run

    def __len__(self) -> int:
        return len(self.head) + len(self.run)

    def __getitem__(self, k):
        return list(self)[k]

    def __iter__(self) -> Iterator[Record]:
        return chain(self.head, self.run)


class _TranscriptRecords:
    """One transcript's excerpt records, built as far as a run has asked, and where each message's start."""

    def __init__(self, transcript: Sequence[Mapping[str, Any]], tool_calls: bool) -> None:
        self.transcript, self.tool_calls = transcript, tool_calls
        self.records: list[Record] = []
        self.starts = [0]

    def run(self, p: int, q: int) -> RecordRun:
        for m in self.transcript[len(self.starts) - 1:q]:
            self.records.extend(records_of(m, self.tool_calls))
            self.starts.append(len(self.records))
        return RecordRun(self.records, self.starts[p], self.starts[q], self.tool_calls)


class TranscriptExcerpts:
    """The ``ExcerptReader`` a replay hands its policies: the plain reader's answers, read from one transcript.

    ``records`` finds the longest run of the transcript's own messages that ends
    the list and reads its records from those built once; ``ask`` summarizes such a run with ``span_summary`` when the
    summarizer is the offline one, and remembers every summary it made.
    """

    def __init__(self, transcript: Sequence[Mapping[str, Any]]) -> None:
        self.transcript = transcript
        self._position: dict[int, int] | None = None
        self._records: dict[bool, _TranscriptRecords] = {}
        self._indices: dict[tuple[bool, type], _SpanIndex] = {}
        self.summaries: dict[tuple, str | None] = {}

    def locate(self, messages: Sequence[Mapping[str, Any]]) -> tuple[int, int, int] | None:
        """``(k, p, q)`` when ``messages[k:]`` are the transcript's own ``transcript[p:q]`` (the same objects) and
        ``messages[k - 1]`` is not ``transcript[p - 1]``; None when the list does not end with one of them."""
        if not messages:
            return None
        transcript = self.transcript
        if self._position is None:
            self._position = {id(m): i for i, m in enumerate(transcript)}
        last = self._position.get(id(messages[-1]))
        if last is None or transcript[last] is not messages[-1]:
            return None
        k, p = len(messages) - 1, last
        while k > 0 and p > 0 and messages[k - 1] is transcript[p - 1]:
            k, p = k - 1, p - 1
        return k, p, last + 1

    def records(self, messages: Sequence[Mapping[str, Any]], *, tool_calls: bool) -> Sequence[Record]:
        found = self.locate(messages)
        if found is None:
            return excerpt_records(messages, tool_calls=tool_calls)
        k, p, q = found
        book = self._records.get(tool_calls)
        if book is None:
            book = self._records[tool_calls] = _TranscriptRecords(self.transcript, tool_calls)
        return RunRecords(excerpt_records(messages[:k], tool_calls=tool_calls), book.run(p, q))

    def ask(self, summarizer: Summarizer, records: Sequence[Record]) -> Any:
        if not isinstance(summarizer, ExtractiveSummarizer):
            return ask_summarizer(summarizer, list(records))
        shape = (type(summarizer), summarizer.max_words, summarizer.max_decisions, summarizer.max_paths)
        if (isinstance(records, RunRecords) and len(records.run)
                and summarizer.max_decisions > 0 and summarizer.max_paths > 0):  # [-0:] keeps all: the plain fold
            head, run = records.head, records.run
            key: tuple = (shape, run.tool_calls, len(head), hash(tuple(head)), run.lo, run.hi)
            return self._remember(key, lambda: span_summary(summarizer, head, run, self._index(summarizer, run)))
        plain = list(records)
        return self._remember((shape, len(plain), hash(tuple(plain))), lambda: summarizer.summarize_records(plain))

    def _index(self, summarizer: ExtractiveSummarizer, run: RecordRun) -> _SpanIndex:
        key = (run.tool_calls, type(summarizer))  # a subclass may read records its own way: its own index
        index = self._indices.get(key)
        if index is None:
            index = self._indices[key] = _SpanIndex(summarizer.features, run.records)
        return index

    def _remember(self, key: tuple, make: Callable[[], str | None]) -> str | None:
        """A summary made once per key (keyed by counts and hashes: no text is kept alive for the key)."""
        if key in self.summaries:
            return self.summaries[key]
        hit = make()
        if len(self.summaries) >= 50_000:
            self.summaries.clear()
        self.summaries[key] = hit
        return hit


def span_summary(summarizer: ExtractiveSummarizer, head: list[Record], run: RecordRun,
                 index: _SpanIndex) -> str | None:
    """``summarizer.summarize_records(head + list(run))``, without walking the run.

    What the summary takes from a stretch (the first goal, the last few new
    decisions and paths, the last assistant and tool records) is read from
    ``index``, built once over the whole transcript's records.
    """
    lo, hi = run.lo, run.hi
    index.extend(hi)
    feats = [summarizer.features(r, t) for r, t in head if t]
    if not feats and index.texts[hi] == index.texts[lo]:
        return None
    carried = next((f.carried for f in feats if f.carried), None)
    if carried is None:
        carried = index.first(index.carried_at, lo, hi, lambda f: f.carried, {})
    goal = next((f.goal for f in feats if f.goal is not None), None)
    if goal is None:
        goal = index.first(index.goal_at, lo, hi, lambda f: f.goal, "")
    decisions = _last_distinct(carried_items(carried, "Decisions") + [d for f in feats for d in f.decisions],
                               index.decisions, index.decision_start[lo], index.decision_start[hi],
                               summarizer.max_decisions)
    paths = _last_distinct(carried_items(carried, "Files") + [p for f in feats for p in f.paths],
                           index.paths, index.path_start[lo], index.path_start[hi], summarizer.max_paths)
    last_assistant = index.last(index.last_assistant, lo, hi, feats, "assistant")
    last_tool = index.last(index.last_tool, lo, hi, feats, "tool")
    return summarizer.compose(carried, goal, decisions, paths, last_assistant, last_tool)


class _SpanIndex:
    """A transcript's excerpt records as the extractive summary reads them, for any stretch ``lo:hi``.

    Built record by record, only as far as a compaction has reached. Per record:
    its features; the decisions and paths in order, each with where the same one
    was last seen (a run's new ones are those last seen before it starts); and the
    last assistant and tool record up to each position.
    """

    def __init__(self, feature: Callable[[str, str], Features], records: Sequence[Record]) -> None:
        self.feature, self.records = feature, records
        self.feats: list[Features | None] = []
        self.texts = [0]  # records with text before each position
        self.decisions, self.decision_start = _Seen(), [0]
        self.paths, self.path_start = _Seen(), [0]
        self.carried_at: list[int] = []
        self.goal_at: list[int] = []
        self.last_assistant, self.last_tool = [-1], [-1]

    def extend(self, hi: int) -> None:
        for j in range(len(self.feats), hi):
            role, text = self.records[j]
            f = self.feature(role, text) if text else None
            self.feats.append(f)
            self.texts.append(self.texts[-1] + (f is not None))
            if f is not None:
                self.decisions.extend(f.decisions)
                self.paths.extend(f.paths)
                if f.carried:
                    self.carried_at.append(j)
                if f.goal is not None:
                    self.goal_at.append(j)
            self.decision_start.append(len(self.decisions.items))
            self.path_start.append(len(self.paths.items))
            self.last_assistant.append(j if f is not None and f.role == "assistant" else self.last_assistant[-1])
            self.last_tool.append(j if f is not None and f.role == "tool" else self.last_tool[-1])

    def first(self, positions: list[int], lo: int, hi: int, value: Callable[[Features], Any], default: Any) -> Any:
        """``value`` of the first record in ``lo:hi`` listed in ``positions``, else ``default``."""
        k = bisect_left(positions, lo)
        if k < len(positions) and positions[k] < hi:
            found = self.feats[positions[k]]
            assert found is not None  # positions list only records with features
            return value(found)
        return default

    def last(self, last_at: list[int], lo: int, hi: int, head: list[Features], role: str) -> Features | None:
        """The last record of ``role`` in the head then the run: the run's, else the head's."""
        j = last_at[hi]
        if j >= lo:
            return self.feats[j]
        return next((f for f in reversed(head) if f.role == role), None)


class _Seen:
    """Items in order, each with the position where the same item was last seen before (-1: never)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.previous: list[int] = []
        self._last: dict[str, int] = {}

    def extend(self, items: Sequence[str]) -> None:
        for item in items:
            self.previous.append(self._last.get(item, -1))
            self._last[item] = len(self.items)
            self.items.append(item)


def _last_distinct(head: list[str], seq: _Seen, a: int, b: int, n: int) -> list[str]:
    """``distinct(head + seq.items[a:b])[-n:]``, reading ``seq`` from ``b`` back only as far as it must.

    An item of ``a:b`` first appears there where it was not seen since before
    ``a``; walking back from ``b`` collects those (not already in ``head``) until
    ``n`` are found, and ``head``'s last ones fill the rest.
    """
    first = list(dict.fromkeys(head))
    known = set(first)
    items, previous = seq.items, seq.previous
    tail: list[str] = []
    q = b - 1
    while q >= a and len(tail) < n:
        if previous[q] < a and items[q] not in known:
            tail.append(items[q])
        q -= 1
    tail.reverse()
    need = n - len(tail)
    return (first[-need:] if need else []) + tail


# --- the history check: the transcript once, then only what an event changed ---------------------------------


class HistoryBaseline:
    """The history checker run once over the whole transcript, with its state after every message."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], reply: Sequence[int], profile: str) -> None:
        checker = HistoryChecker(profile)
        found, pend, state = [0], [0], [checker.state()]
        for m in messages:
            checker.feed(m)
            found.append(len(checker.found))
            pend.append(1 if checker.pending else 0)
            state.append(checker.state())
        self.found, self.pend, self.state = found, pend, state
        # per request: the count at the request, and what an O(1) range maximum needs
        self.found_at = [found[i] for i in reply]
        self.pend_at = [pend[i] for i in reply]
        self.run_start: list[int] = []  # first request of the run of equal found counts ending here
        self.last_pend: list[int] = []  # latest request up to here with an open call, or -1
        for r in range(len(reply)):
            same = r > 0 and self.found_at[r - 1] == self.found_at[r]
            self.run_start.append(self.run_start[r - 1] if same else r)
            self.last_pend.append(r if self.pend_at[r] else (self.last_pend[r - 1] if r else -1))

    def max_between(self, lo: int, hi: int) -> int:
        """Largest count over requests ``lo..hi``.

        Found problems only accumulate, so the largest found count is at ``hi``; an
        open call adds one, which matters only within the last run of equal found counts.
        """
        return self.found_at[hi] + (1 if self.last_pend[hi] >= max(lo, self.run_start[hi]) else 0)


@dataclass(frozen=True)
class HistoryWalk:
    """A history check of a new context: what the policy wrote, then the transcript from ``start`` on.

    It feeds the unchanged messages until the checker's state equals the
    baseline's at the same message (``converged``, None if it never does) and
    keeps the problem count before each of them (``counts[i]`` before message
    ``start + i``), up to ``end``. Nothing in it depends on where the request
    is, so one walk serves every setting that compacts with the same written
    messages at the same place.
    """

    start: int
    end: int
    converged: int | None
    offset: int
    counts: tuple

    @classmethod
    def of(cls, written: Sequence, start: int, msgs: Sequence, base: HistoryBaseline, profile: str) -> HistoryWalk:
        checker = HistoryChecker(profile)
        for m in written:
            checker.feed(m)
        counts = []
        j = start
        while j < len(msgs) and checker.state() != base.state[j]:
            counts.append(checker.problem_count())
            checker.feed(msgs[j])
            j += 1
        counts.append(checker.problem_count())
        if checker.state() == base.state[j]:
            return cls(start, j, j, len(checker.found) - base.found[j], tuple(counts))
        return cls(start, j, None, 0, tuple(counts))


class ProfileCounts:
    """One profile's counts relative to its baseline, as left by the last event."""

    def __init__(self, base: HistoryBaseline) -> None:
        self.base = base
        self.offset = 0
        self.diverged: dict[int, int] = {}  # transcript position -> count, before the checker converged
        self.converged_at = 0
        self.max = 0

    def count(self, position: int) -> int:
        if position < self.converged_at:
            return self.diverged[position]
        return self.offset + self.base.found[position] + self.base.pend[position]

    def rebase(self, walk: HistoryWalk, stop: int) -> int:
        """Take the new context's counts from ``walk`` (its check after an event); the count at ``stop``.

        Before the walk converges, the counts are the walk's own; from there on,
        the baseline's shifted by a constant.
        """
        if walk.converged is not None and walk.converged < stop:  # agreed before the request: all the baseline's
            self.offset, self.converged_at, self.diverged = walk.offset, stop, {}
            return self.count(stop)
        self.diverged = {position: walk.counts[position - walk.start] for position in range(stop, walk.end)}
        if walk.converged is not None:
            self.offset, self.converged_at = walk.offset, walk.converged
        else:  # never converged: every later position is known explicitly
            self.diverged[walk.end] = walk.counts[walk.end - walk.start]
            self.converged_at = walk.end + 1
        return walk.counts[stop - walk.start]


def written_signature(messages: Sequence) -> tuple | None:
    """What a history checker reads of each message, as one key; None when it cannot be a key."""
    sig = tuple(HistoryChecker.reads(m) for m in messages)
    try:
        hash(sig)
    except TypeError:  # a role or call id that is a list or a dict, in a malformed log
        return None
    return sig


# --- everything above, once per recorded transcript -----------------------------------------------------------


class SessionCache:
    """What the books and the policies work out once per recorded transcript, each under its own name.

    Every setting of a sweep replays the same ``RecordedSession``; what one
    setting worked out is here for the next. Built empty, filled on first use;
    a pickled session arrives with an empty one (a process pool rebuilds it).
    """

    def __init__(self, messages: list, reply: list[int]) -> None:
        self._messages, self._reply = messages, reply
        self.walks: dict[tuple, HistoryWalk] = {}  # (profile, written signature, start) -> the check after an event
        self._history: dict[str, HistoryBaseline] = {}
        self._excerpts: TranscriptExcerpts | None = None
        self._goal: tuple[str, TextIndex] | None = None
        self._identifiers: IdentifierIndex | None = None
        self._costs: dict[tuple, Any] = {}  # the members below, each under its own key

    def __reduce__(self) -> tuple:
        return SessionCache, (self._messages, self._reply)

    def history(self, profile: str) -> HistoryBaseline:
        """The transcript checked once under ``profile``."""
        base = self._history.get(profile)
        if base is None:
            base = self._history[profile] = HistoryBaseline(self._messages, self._reply, profile)
        return base

    def excerpts(self) -> TranscriptExcerpts:
        """The excerpt reader over this transcript (and the summaries it made)."""
        if self._excerpts is None:
            self._excerpts = TranscriptExcerpts(self._messages)
        return self._excerpts

    def goal(self) -> tuple[str, TextIndex]:
        """The user's goal (no registered policy's summary) and the index of its terms in any message."""
        if self._goal is None:
            goal = first_user_goal(self._messages, summary_prefixes())
            self._goal = goal, TextIndex(goal_terms(goal))
        return self._goal

    def retention_bits(self, prefixes: tuple[str, ...]) -> RetentionBits:
        """The retention counts over the transcript's goal (``retention_bits``), per set of summary openings."""
        return self._once(("retention_bits", prefixes), lambda: RetentionBits(self._messages, *self.goal(), prefixes))

    def identifiers(self) -> IdentifierIndex:
        """Where every identifier of the transcript is mentioned (the needed-later book)."""
        if self._identifiers is None:
            self._identifiers = IdentifierIndex(self._messages)
        return self._identifiers

    def probes(self) -> ProbeIndex:
        """Every message's probes and the open request at every position (the probe book, issue 36)."""
        return self._once(("probes",), lambda: ProbeIndex(self._messages, summary_prefixes()))

    # -- the cost book's and the pricing sums' counts (``costbook``, ``pricing``) ----------------------------------

    def text_tokens(self, unit: str) -> dict[str, int]:
        """Token counts of texts in ``unit`` by content (a sweep meets the same summary under many settings)."""
        return self._costs.setdefault(("text", unit), {})

    def message_tokens(self, unit: str) -> dict[Any, int]:
        """Token counts of messages a policy wrote, by content (``(role, content)`` or their JSON text)."""
        return self._costs.setdefault(("message", unit), {})

    def written_excerpt_tokens(self, unit: str) -> dict[tuple[str, str], int]:
        """Token counts of the excerpt lines of plain messages a policy wrote, by ``(role, content)``."""
        return self._costs.setdefault(("written excerpt", unit), {})

    def excerpt_tokens(self, unit: str, tool_calls: bool) -> dict[int, tuple[Any, int]]:
        """Token counts of transcript messages' excerpt lines, by identity (``id -> (message, tokens)``)."""
        return self._costs.setdefault(("excerpt", unit, tool_calls), {})

    def summary_prompt_tokens(self, unit: str, count: Callable[[], int]) -> int:
        """The summarizer's fixed prompt in ``unit`` (``count`` runs once per unit)."""
        return self._once(("summary_prompt", unit), count)

    def cost_model(self, build: Callable[[], Any]) -> Any:
        """The session's cost model (``modelbook.SessionModel``; ``build`` runs once)."""
        return self._once(("cost_model",), build)

    def uncompacted_cost(self, pricing: Any, sums: Callable[[], tuple[int, ...]]) -> tuple[int, ...]:
        """Input, cached, written and output tokens of the transcript replayed untouched under ``pricing``."""
        return self._once(("uncompacted", pricing), sums)

    def sent_each(self, unit: str, values: Callable[[], list[int]]) -> list[int]:
        """What each request sends before any event, in ``unit`` (``pricing.sent_each``)."""
        return self._once(("sent_each", unit), values)

    def residues(self, unit: str, step: int, values: Callable[[], list[int]]) -> list[int]:
        """``sent_each(unit)[j] % step`` for every request ``j``."""
        return self._once(("residues", unit, step), values)

    def residue_counts(self, unit: str, step: int, threshold: int, values: Callable[[], list[int]]) -> list[int]:
        """Prefix counts over requests of ``residues(unit, step)[j] >= threshold``."""
        return self._once(("residue_counts", unit, step, threshold), values)

    def _once(self, key: tuple, make: Callable[[], Any]) -> Any:
        value = self._costs.get(key)
        if value is None:
            value = self._costs[key] = make()
        return value
