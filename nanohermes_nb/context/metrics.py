"""What a policy kept of what mattered: the retention score.

The summary prompt asks to keep the user's goal and the changed file paths. The
retention score checks exactly that, without a model: of the goal and the file
paths mentioned in the messages a policy removed, which are still present in the
context it kept (the summary included)?
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .compaction import PLACEHOLDER_NOTE, SUMMARY_HEADER, is_summary_message
from .history import check_history
from .messages import calls_of, text_of
from .sizing import serialize
from .summarizers import find_paths

__all__ = ["Check", "verify_compaction", "Retention", "retention", "TextIndex", "goal_terms", "first_user_goal",
           "context_text", "GOAL_TERM_SHARE", "terms_in", "message_paths", "message_path_set",
           "message_terms"]

# The goal counts as kept when this share of its distinctive words is still present.
GOAL_TERM_SHARE = 0.6
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}|[\u4e00-\u9fff]{2,}")
_STOP = frozenset(
    "this that with from have will should would could there their they them then than what when "
    "where which while your about into only also just like make sure please need want using used "
    "were been being does done each other some such more most very here following consider "
    "description issue task".split()
)


def first_user_goal(messages: Iterable[Mapping[str, Any]], summary_prefixes: Sequence[str] = ()) -> str:
    """The first real user message's text (a summary note is not a goal).

    ``summary_prefixes``: how other systems' summaries open (``policies.summary_prefixes()``),
    so that a summary such a policy wrote in the user role is not taken for the goal.
    """
    for m in messages:
        if isinstance(m, Mapping) and m.get("role") == "user" and not is_summary_message(m, summary_prefixes):
            text = text_of(m).strip()
            if text:
                return text
    return ""


def goal_terms(goal: str, limit: int = 12) -> list[str]:
    """The goal's first distinctive words (lowercased, no stop words, no repeats)."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(goal):  # stop at the limit: a task statement can be long
        w = match.group(0).lower()
        if w not in _STOP:
            seen.setdefault(w, None)
        if len(seen) >= limit:
            break
    return list(seen)


def _text_parts(message: Mapping[str, Any]) -> list[str]:
    """A message's text content, then each tool call's arguments."""
    parts = [text_of(message)]
    for c in calls_of(message):
        fn = c.get("function") if isinstance(c, Mapping) else None
        if isinstance(fn, Mapping):
            parts.append(str(fn.get("arguments", "")))
    return parts


def context_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """All text a model would read in a context: contents and tool-call arguments."""
    return "\n".join(part for m in messages for part in _text_parts(m))


def _is_word_char(ch: str) -> bool:
    return ch == "_" or "a" <= ch <= "z" or "0" <= ch <= "9" or "A" <= ch <= "Z"


def _is_han(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


def _token_at(text: str, i: int, term: str) -> bool:
    """Whether ``term`` found at ``i`` is a whole token of ``_WORD`` there."""
    end = i + len(term)
    if _is_han(term[0]):  # a run of Han characters: nothing Han on either side
        return (i == 0 or not _is_han(text[i - 1])) and (end == len(text) or not _is_han(text[end]))
    if end < len(text) and _is_word_char(text[end]):
        return False
    k = i - 1
    while k >= 0 and "0" <= text[k] <= "9":  # a token starts at the run's first letter or underscore
        k -= 1
    return k < 0 or not _is_word_char(text[k])


def terms_in(text: str, terms: Sequence[str]) -> frozenset:
    """The goal terms that occur in ``text`` as whole words (as ``_WORD`` splits the lowercased text).

    A substring search finds each candidate, a look at its two ends confirms it:
    the same answer as tokenizing the whole text, without the regular expression.
    """
    lower = text.lower()
    found = set()
    for term in terms:
        i = lower.find(term)
        while i >= 0:
            if _token_at(lower, i, term):
                found.add(term)
                break
            i = lower.find(term, i + 1)
    return frozenset(found)


def message_paths(message: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths a message mentions (its content, then each tool call's arguments), sorted, interned."""
    return tuple(sys.intern(p) for p in sorted(message_path_set(message)))


def message_path_set(message: Mapping[str, Any], by_line: bool = False) -> set[str]:
    """The set of paths a message mentions (``message_paths`` unsorted).

    ``by_line``: each line of each part is looked up on its own (``find_paths`` remembers texts): the
    same paths, since none holds whitespace; cheaper for the summaries a policy writes at every event,
    which repeat most of their lines.
    """
    # part by part: no path crosses the line that would join them, and the content's
    # paths are then the ones the summarizer already found (find_paths remembers)
    parts = _text_parts(message)
    if by_line:
        parts = [line for part in parts for line in part.split("\n")]
    return {p for part in parts for p in find_paths(part)}


def message_terms(message: Mapping[str, Any], terms: Sequence[str]) -> frozenset:
    """The goal ``terms`` a message contains as whole words (its content, then each tool call's arguments)."""
    return frozenset().union(*(terms_in(part, terms) for part in _text_parts(message))) if terms else frozenset()


@dataclass(frozen=True)
class Retention:
    """Items at stake in one event and the ones the kept context still carries."""

    goal_at_stake: bool
    goal_kept: bool
    paths: tuple[str, ...]
    paths_kept: tuple[str, ...]

    @property
    def items(self) -> int:
        return int(self.goal_at_stake) + len(self.paths)

    @property
    def kept(self) -> int:
        return int(self.goal_at_stake and self.goal_kept) + len(self.paths_kept)

    @property
    def score(self) -> float | None:
        return self.kept / self.items if self.items else None

    @property
    def lost(self) -> tuple[str, ...]:
        missing = tuple(p for p in self.paths if p not in self.paths_kept)
        return (("<goal>",) if self.goal_at_stake and not self.goal_kept else ()) + missing


class TextIndex:
    """Per-message paths and goal words, each computed once per message object in a run, when first asked.

    It keeps little: the paths a message mentions (as shared, interned strings)
    and which of the goal's ``terms`` it contains, so a long replay does not hold
    a second copy of every message's words.
    """

    def __init__(self, terms: Sequence[str] = ()) -> None:
        self.terms = tuple(terms)
        self._paths: dict[int, tuple[Mapping[str, Any], tuple[str, ...]]] = {}
        self._words: dict[int, tuple[Mapping[str, Any], frozenset]] = {}

    def paths(self, message: Mapping[str, Any]) -> tuple[str, ...]:
        """The paths a message mentions, sorted."""
        hit = self._paths.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        paths = message_paths(message)
        self._paths[id(message)] = (message, paths)
        return paths

    def goal_words(self, message: Mapping[str, Any]) -> frozenset:
        """The goal terms this message contains."""
        hit = self._words.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        words = message_terms(message, self.terms)
        self._words[id(message)] = (message, words)
        return words


def retention(
    removed: Sequence[Mapping[str, Any]],
    kept: Sequence[Mapping[str, Any]],
    goal: str | None = None,
    index: TextIndex | None = None,
    summary_prefixes: Sequence[str] = (),
) -> Retention:
    """Score what ``kept`` still carries of the goal and paths found in ``removed``.

    ``goal`` defaults to the first user message among ``removed``; the goal is at
    stake only when that message was removed. A path counts as kept when a kept
    message mentions it; the goal when ``GOAL_TERM_SHARE`` of its distinctive
    words appear in kept messages. ``summary_prefixes``: other systems' summary
    openings (``policies.summary_prefixes()``), so that a removed summary in the
    user role is not taken for the user's goal.
    """
    removed_goal = first_user_goal(removed, summary_prefixes)
    goal = removed_goal if goal is None else goal
    at_stake = bool(removed_goal) and bool(goal)
    terms = goal_terms(goal) if goal else []
    if index is None or index.terms != tuple(terms):
        index = TextIndex(terms)
    # Both questions stop reading kept messages once answered (the summary, read first, often
    # answers them): the answers are the same as reading every kept message.
    goal_kept = False
    if at_stake:
        if terms:
            present: set[str] = set()
            for m in kept:
                present.update(index.goal_words(m))
                if len(present) / len(terms) >= GOAL_TERM_SHARE:
                    goal_kept = True
                    break
        else:
            goal_kept = any(goal.strip() in text_of(m) for m in kept)
    paths: dict[str, None] = {}
    for m in removed:
        for p in index.paths(m):
            paths.setdefault(p, None)
    path_list = tuple(paths)
    missing = set(path_list)
    for m in kept:
        if not missing:
            break
        missing.difference_update(index.paths(m))
    return Retention(at_stake, goal_kept, path_list, tuple(p for p in path_list if p not in missing))


@dataclass(frozen=True)
class Check:
    """One line of the article's verification checklist."""

    check: str
    expectation: str
    result: bool
    detail: str = ""


def verify_compaction(result: Any, *, budget: int | None = None, profile: str = "openai") -> list[Check]:
    """The article's checklist for one compaction, automated.

    Legality of the history and of the cut, the summary at index 1, the budget
    effective, the recent messages intact byte for byte, something recent kept,
    and two offline proxies for "the model still knows the goal and the paths":
    the retention score of the kept context (summary included).
    """
    budget = result.budget if budget is None else budget
    msgs, source = result.messages, result.source
    if not result.compacted:
        return [Check("compacted", "compaction happened", False, result.reason)]
    problems = check_history(msgs, profile)
    first = next((m for m in msgs[1:] if m.get("role") != "system"), None)
    note = msgs[1].get("content") if len(msgs) > 1 else None
    tail_ok = [serialize(m) for m in msgs[2:]] == [serialize(m) for m in source[result.cut:]]
    kept = retention(result.dropped, msgs)
    lost_paths = [p for p in kept.lost if p != "<goal>"]
    return [
        Check("history legality", f"no problem for {profile}'s pairing rules", not problems,
              "; ".join(str(p) for p in problems[:3])),
        Check("cut legality", "first non-system message is not a tool message",
              first is None or first.get("role") != "tool", f"first kept: {first.get('role') if first else 'none'}"),
        Check("summary present", "messages[1] is the summary or the placeholder",
              isinstance(note, str) and (note.startswith(SUMMARY_HEADER + "\n") or note == PLACEHOLDER_NOTE),
              "placeholder" if note == PLACEHOLDER_NOTE else ""),
        Check("budget effective", f"size after < {budget:,}", result.size_after < budget,
              f"{result.size_before:,} -> {result.size_after:,}"),
        Check("recent messages intact", "kept tail == original tail, byte for byte", tail_ok,
              f"{len(msgs) - 2} kept from message {result.cut}"),
        Check("something recent kept", "at least one message after the summary", len(msgs) > 2, ""),
        Check("goal known (proxy)", "the goal is still readable in the kept context",
              kept.goal_kept or not kept.goal_at_stake,
              "goal not dropped" if not kept.goal_at_stake else ("kept" if kept.goal_kept else "lost")),
        Check("paths known (proxy)", "every dropped path is still named", not lost_paths,
              ", ".join(lost_paths[:5]) + (" …" if len(lost_paths) > 5 else "")),
    ]
