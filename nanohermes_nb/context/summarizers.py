"""The one extra model call of compaction, and an offline stand-in for it.

A summarizer is any callable ``excerpt -> str | None``. ``compact`` treats ``None``,
an empty string or an exception as failure and falls back to the placeholder note.

- ``OpenAICompatibleSummarizer``: one non-streaming chat-completions request, no
  tools, temperature 0 by default (SPEC section 4), over ``transport.ChatClient``
  (total deadline, bounded reply, checked key). Every failure raises
  ``SummarizerError`` with a reason that never contains the API key.
- ``ExtractiveSummarizer``: the offline default. Deterministic, no network; keeps
  the four things the summary prompt asks for (goal, decisions, file paths,
  current state) in at most 300 words.
"""

from __future__ import annotations

import functools
import re
import sys
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Summarizer",
    "RecordSummarizer",
    "SummarizerError",
    "summary_prompt",
    "ExtractiveSummarizer",
    "RecordRun",
    "PlaceholderSummarizer",
    "default_summarizer",
    "parse_excerpt",
    "find_paths",
]

Summarizer = Callable[[str], str | None]  # excerpt text -> summary, or None for "no summary"


@runtime_checkable
class RecordSummarizer(Protocol):
    """A summarizer that can also read the excerpt as ``(role, text)`` records, skipping the text.

    ``compact`` hands such a summarizer the records directly, and a stretch of a
    transcript's records as a run it need not walk (``summarize_span``): the same
    summary as the text, faster. ``ExtractiveSummarizer`` is one.
    """

    def __call__(self, excerpt: str) -> str | None: ...

    def summarize_records(self, records: list[tuple[str, str]]) -> str | None: ...

    def summarize_span(self, head: list[tuple[str, str]], run: RecordRun) -> str | None: ...


def summary_prompt(max_words: int = 300) -> str:
    """The summarizer's system prompt: the four things to keep, a word cap, no preamble."""
    return (
        "You condense the earlier part of a coding agent's conversation so the agent can "
        "carry on without it. Summarize the excerpt you are given. Keep: the user's goal; "
        "the key decisions and why they were taken; every file path that was changed; the "
        f"current state of the task and the next step. Stay under {max_words} words. "
        "Answer with the summary text only, no introduction."
    )


class SummarizerError(RuntimeError):
    """A summarizer call that failed; the message is the recorded reason."""


class PlaceholderSummarizer:
    """A summarizer that always fails: every compaction gets the placeholder note."""

    def __call__(self, excerpt: str) -> None:
        return None

    def __repr__(self) -> str:
        return "PlaceholderSummarizer()"


# --- the offline extractive summarizer ----------------------------------------------

# the last alternative is the record role a policy uses to hand over a previous summary
PREVIOUS_SUMMARY_ROLE = "previous summary (update it with the turns below)"
_ROLE_LINE = re.compile(
    r"^(system|developer|user|assistant|tool|function|\?|" + re.escape(PREVIOUS_SUMMARY_ROLE) + r"): ", re.M)
_PATH = re.compile(
    r"(?<![\w/.-])"
    r"((?:[\w.-]+/)+[\w.-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}"  # dir/…/file.ext (an extension starts with a letter)
    r"|[\w-]+\.(?:py|rs|js|ts|tsx|jsx|go|java|c|h|cc|cpp|hpp|rb|php|md|txt|toml|yaml|yml|json|cfg|ini|sh|html|css|sql|lock|csv|ipynb))"
    r"(?![\w/])"
)
_NUMERIC = re.compile(r"[\d.]+")
# Both alternatives start with whitespace; saying so first lets the engine skip other positions
# at once (a third faster, the same splits).
_SENTENCE = re.compile(r"(?=\s)(?:(?<=[.!?。！？])\s+|\n+)")
# The lookahead names every alternative's first letter: the engine then skips
# positions that cannot start a match (about 30% faster, the same matches).
_DECISION = re.compile(
    r"(?=[bdwicpglsfaurn决改因计修使])"
    r"\b(decid\w*|will|instead|because|chose|choose|plan|going to|let me|i'll|should|need to|"
    r"fix\w*|chang\w*|updat\w*|replac\w*|add\w*|remov\w*|us(?:e|ing))\b"
    r"|决定|改为|因为|计划|修改|使用",
    re.I,
)
_SUMMARY_HEAD = "[Earlier conversation summary]"
_MISSING = object()


def parse_excerpt(excerpt: str) -> list[tuple[str, str]]:
    """Split an excerpt back into ``(role, text)`` records."""
    records: list[tuple[str, str]] = []
    starts = list(_ROLE_LINE.finditer(excerpt))
    for k, m in enumerate(starts):
        end = starts[k + 1].start() if k + 1 < len(starts) else len(excerpt)
        records.append((m.group(1), excerpt[m.end():end].strip()))
    return records


def find_paths(text: str) -> list[str]:
    """File paths mentioned in ``text``, in order of first mention, without duplicates.

    A path never contains whitespace, and what the pattern looks at around a
    match is a path character or nothing, so the paths of a text are the paths
    of its words, in order. Words are looked up in a memo: tool outputs and
    summaries repeat the same words, so most are never matched twice.
    """
    # Whitespace at the ends holds no path: the stripped text is the key, so a message's raw text
    # (retention) and its trimmed excerpt line (the summarizer) share one entry.
    text = text.strip()
    key = (len(text), hash(text))  # a text's hash is kept on the string: asking twice costs nothing
    hit = _TEXT_PATHS.get(key)
    if hit is not None:
        return list(hit)
    found: dict[str, None] = {}
    memo = _WORD_PATHS
    for word in text.split():
        if "." not in word:
            continue
        hit = memo.get(word)
        if hit is None:
            hit = _word_paths(word)
            if len(word) <= 256:
                if len(memo) >= 200_000:
                    memo.clear()
                memo[word] = hit
        for p in hit:
            found.setdefault(p, None)
    if len(_TEXT_PATHS) >= 100_000:
        _TEXT_PATHS.clear()
    _TEXT_PATHS[key] = tuple(found)
    return list(found)


_WORD_PATHS: dict[str, tuple[str, ...]] = {}  # word -> its paths
_TEXT_PATHS: dict[tuple[int, int], tuple[str, ...]] = {}  # (length, hash) of a text -> its paths (no text kept)


def _word_paths(word: str) -> tuple[str, ...]:
    out = []
    for p in _PATH.findall(word):
        if p.startswith("./"):
            p = p[2:]
        if not p.startswith(("http", "www.")) and not _NUMERIC.fullmatch(p):
            out.append(p)
    return tuple(out)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _clip_words(text: str, n: int) -> str:
    words = text.split()
    return text if len(words) <= n else " ".join(words[:n]) + " …"


@dataclass(frozen=True)
class _Features:
    """What the extractive summarizer takes from one excerpt record."""

    role: str
    goal: str | None  # a user message's text clipped to 70 words, whitespace collapsed (None: not a goal)
    decisions: tuple[str, ...]
    paths: tuple[str, ...]
    last_sentence: str
    first_line: str
    carried: dict  # Goal/Decisions/Files/State lines of an earlier summary


def _features(role: str, text: str) -> _Features:
    carried: dict = {}
    if text.startswith(_SUMMARY_HEAD):
        for line in text.splitlines()[1:]:
            label, sep, value = line.partition(":")
            if sep and label in ("Goal", "Decisions", "Files", "State"):
                carried[label] = value.strip()
    decisions: tuple[str, ...] = ()
    last_sentence = ""
    if role == "assistant":
        sents = _sentences(text)
        decisions = tuple(_clip_words(x, 30) for x in sents if len(x) > 12 and _DECISION.search(x))
        last_sentence = sents[-1] if sents else ""
    first_line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    goal = _goal_line(text) if role == "user" and not carried and not text.startswith(_SUMMARY_HEAD) else None
    paths = tuple(sys.intern(p) for p in find_paths(text))  # shared strings: paths repeat across messages
    return _Features(role, goal, decisions, paths, last_sentence, first_line, carried)


@functools.lru_cache(maxsize=256)  # every summary of a transcript restates the same goal
def _goal_line(text: str) -> str:
    return " ".join(_clip_words(text, 70).split())


@dataclass
class ExtractiveSummarizer:
    """Offline, deterministic summary: goal, decisions, file paths, current state.

    It does not understand the task; it selects text. The goal is the first user
    message (or the goal an earlier summary carried), decisions are assistant
    sentences that announce a choice, paths are every file path mentioned, the
    state is the last assistant sentence and the last tool result's first line.
    ``compact`` hands it the excerpt's records directly (``summarize_records``),
    which gives the same summary as parsing the excerpt text, faster in sweeps.
    """

    max_words: int = 300
    max_decisions: int = 5
    max_paths: int = 15
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def _feature(self, role: str, text: str) -> _Features:
        # keyed by length and hash, not the text itself: the cache must not keep a
        # second copy of every tool output alive (a 64-bit hash plus length collision
        # is far less likely than a cosmic-ray bit flip)
        key = (role, len(text), hash(text))
        hit = self._cache.get(key)
        if hit is None:
            hit = _features(role, text)
            if len(self._cache) < 100_000:
                self._cache[key] = hit
        return hit

    def __call__(self, excerpt: str) -> str | None:
        return self.summarize_records(parse_excerpt(excerpt))

    def summarize_records(self, records: list[tuple[str, str]]) -> str | None:
        """The summary of excerpt records ``(role, text)``; None when there are none.

        Deterministic, so a sweep that drops the same span under two settings
        reuses the first summary (keyed by the records' count and hash, which
        reads each text's hash kept on the string: the memo keeps no text alive).
        """
        return self._remember((len(records), hash(tuple(records))), lambda: self._summarize(records))

    def summarize_span(self, head: list[tuple[str, str]], run: RecordRun) -> str | None:
        """The same summary as ``summarize_records(head + list(run))``, without walking the run.

        ``run`` is a stretch of one transcript's excerpt records. What the summary
        takes from a stretch (the first goal, the last few new decisions and paths,
        the last assistant and tool records) is read from an index of the whole
        transcript built once, so a compaction costs what the summary holds, not
        what it dropped.
        """
        if not len(run) or self.max_decisions <= 0 or self.max_paths <= 0:  # [-0:] keeps all: the plain fold
            return self.summarize_records(list(head) + list(run))
        # remembered with the transcript (``run.shared``), not here: a sweep over thousands of transcripts
        # must not keep every transcript's summaries alive
        memo = run.shared.setdefault(("summaries", type(self), self.max_words, self.max_decisions, self.max_paths), {})
        key = (len(head), hash(tuple(head)), run.lo, run.hi)
        return self._remember(key, lambda: self._summarize_span(head, run), memo)

    def _remember(self, key: tuple, make: Callable[[], str | None], memo: dict | None = None) -> str | None:
        memo = self._memo if memo is None else memo
        hit = memo.get(key, _MISSING)
        if hit is _MISSING:
            hit = make()
            if len(memo) >= 50_000:
                memo.clear()
            memo[key] = hit
        return hit

    def _summarize(self, records: list[tuple[str, str]]) -> str | None:
        feats = [self._feature(r, t) for r, t in records if t]
        if not feats:
            return None
        carried = next((f.carried for f in feats if f.carried), {})
        goal = next((f.goal for f in feats if f.goal is not None), "")
        decisions = _distinct(_carried(carried, "Decisions") + [d for f in feats for d in f.decisions])
        paths = _distinct(_carried(carried, "Files") + [p for f in feats for p in f.paths])
        last_assistant = next((f for f in reversed(feats) if f.role == "assistant"), None)
        last_tool = next((f for f in reversed(feats) if f.role == "tool"), None)
        return self._compose(carried, goal, decisions[-self.max_decisions:], paths[-self.max_paths:],
                             last_assistant, last_tool)

    def _summarize_span(self, head: list[tuple[str, str]], run: RecordRun) -> str | None:
        key = ("extractive", type(self))  # a subclass may read records its own way: its own index
        index = run.shared.get(key)
        if index is None:
            index = run.shared[key] = _RunIndex(self._feature, run.records)
        lo, hi = run.lo, run.hi
        index.extend(hi)
        feats = [self._feature(r, t) for r, t in head if t]
        if not feats and index.texts[hi] == index.texts[lo]:
            return None
        carried = next((f.carried for f in feats if f.carried), None)
        if carried is None:
            carried = index.first(index.carried_at, lo, hi, lambda f: f.carried, {})
        goal = next((f.goal for f in feats if f.goal is not None), None)
        if goal is None:
            goal = index.first(index.goal_at, lo, hi, lambda f: f.goal, "")
        decisions = _last_distinct(_carried(carried, "Decisions") + [d for f in feats for d in f.decisions],
                                   index.decisions, index.decision_start[lo], index.decision_start[hi],
                                   self.max_decisions)
        paths = _last_distinct(_carried(carried, "Files") + [p for f in feats for p in f.paths],
                               index.paths, index.path_start[lo], index.path_start[hi], self.max_paths)
        last_assistant = index.last(index.last_assistant, lo, hi, feats, "assistant")
        last_tool = index.last(index.last_tool, lo, hi, feats, "tool")
        return self._compose(carried, goal, decisions, paths, last_assistant, last_tool)

    def _compose(self, carried: dict, goal: str, decisions: list[str], paths: list[str],
                 last_assistant: _Features | None, last_tool: _Features | None) -> str:
        if carried.get("Goal"):
            goal = _goal_line(carried["Goal"])
        state_bits = []
        if last_assistant is not None:
            state_bits.append(_clip_words(last_assistant.last_sentence, 35))
        if last_tool is not None:
            state_bits.append("last tool output: " + _clip_words(last_tool.first_line, 20))
        state = " ".join(state_bits) or carried.get("State") or "unknown"

        lines = [
            f"Goal: {goal or 'unknown'}",
            f"Decisions: {' | '.join(decisions) if decisions else 'none recorded'}",
            f"Files: {', '.join(paths) if paths else 'none mentioned'}",
            f"State: {state}",
        ]
        return _fit_words(lines, self.max_words)


@dataclass(frozen=True)
class RecordRun(Sequence):
    """``records[lo:hi]``: a stretch of one transcript's excerpt records, read in place.

    ``shared`` lives as long as ``records``: a summarizer keeps there what it
    derives from the whole transcript, and the summaries it has made of it.
    """

    records: Sequence[tuple[str, str]]
    lo: int
    hi: int
    shared: dict = field(repr=False, compare=False)

    def __len__(self) -> int:
        return self.hi - self.lo

    def __getitem__(self, k):
        return self.records[self.lo:self.hi][k]

    def __iter__(self):
        return iter(self.records[self.lo:self.hi])


class _RunIndex:
    """A transcript's excerpt records as the extractive summary reads them, for any stretch ``lo:hi``.

    Built record by record, only as far as a compaction has reached. Per record:
    its features; the decisions and paths in order, each with where the same one
    was last seen (a run's new ones are those last seen before it starts); and the
    last assistant and tool record up to each position.
    """

    def __init__(self, feature: Callable[[str, str], _Features], records: Sequence[tuple[str, str]]) -> None:
        self.feature, self.records = feature, records
        self.feats: list[_Features | None] = []
        self.texts = [0]  # records with text before each position
        self.decisions, self.decision_start = _Sequence(), [0]
        self.paths, self.path_start = _Sequence(), [0]
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

    def first(self, positions: list[int], lo: int, hi: int, value: Callable[[_Features], Any], default: Any) -> Any:
        """``value`` of the first record in ``lo:hi`` listed in ``positions``, else ``default``."""
        k = bisect_left(positions, lo)
        if k < len(positions) and positions[k] < hi:
            found = self.feats[positions[k]]
            assert found is not None  # positions list only records with features
            return value(found)
        return default

    def last(self, last_at: list[int], lo: int, hi: int, head: list[_Features], role: str) -> _Features | None:
        """The last record of ``role`` in the head then the run: the run's, else the head's."""
        j = last_at[hi]
        if j >= lo:
            return self.feats[j]
        return next((f for f in reversed(head) if f.role == role), None)


class _Sequence:
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


def _distinct(items: list[str]) -> list[str]:
    """``items`` without repeats, each where it first appears."""
    return list(dict.fromkeys(items))


def _last_distinct(head: list[str], seq: _Sequence, a: int, b: int, n: int) -> list[str]:
    """``_distinct(head + seq.items[a:b])[-n:]``, reading ``seq`` from ``b`` back only as far as it must.

    An item of ``a:b`` first appears there where it was not seen since before
    ``a``; walking back from ``b`` collects those (not already in ``head``) until
    ``n`` are found, and ``head``'s last ones fill the rest.
    """
    first = _distinct(head)
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


def _carried(carried: dict, label: str) -> list[str]:
    """The decisions or file paths an earlier summary carried, in order (without its "none" filler)."""
    sep, filler = _CARRIED_LISTS[label]
    return [x for x in (item.strip() for item in carried.get(label, "").split(sep)) if x and x != filler]


_CARRIED_LISTS = {"Decisions": (" | ", "none recorded"), "Files": (", ", "none mentioned")}


def _fit_words(lines: list[str], max_words: int) -> str:
    """Join lines, trimming the longest ones until the whole fits ``max_words``.

    A word is what ``split(" ")`` gives, and a line is only ever cut at its end,
    so the trimming runs on word counts and only a line that was cut is split.
    """
    counts = [ln.count(" ") + 1 for ln in lines]
    while sum(counts) > max_words:
        longest = max(range(len(counts)), key=counts.__getitem__)
        counts[longest] = min(counts[longest], max(2, counts[longest] - 10))
        if sum(counts) > max_words and all(c <= 2 for c in counts):
            break
    return "\n".join(ln if c == ln.count(" ") + 1 else " ".join(ln.split(" ")[:c])
                     for ln, c in zip(lines, counts, strict=True))


def default_summarizer() -> Summarizer:
    """The offline summarizer (deterministic, no network)."""
    return ExtractiveSummarizer()
