"""Needed-later retention: what a cut removed that the recorded future asked for again.

The retention score (``metrics``) asks whether the goal and the paths of the
dropped messages survive; the recent messages often repeat them anyway. A
recorded transcript knows its own future: an identifier that a removed message
carried and that a message after the event point mentions again was evidently
still needed. For every event this module lists those identifiers and the share
of them the kept context (summary included) still names.

Identifiers, found in a message's text and its tool calls' arguments (the text
a model reads; tool names and call ids are left out, every call would repeat
them):

- file paths (``summarizers.find_paths``: ``dir/name.ext`` or a bare name with a
  known source extension);
- URLs (``http://`` or ``https://`` up to a space, quote or closing bracket;
  trailing ``.,;:!?`` dropped);
- function names: a name written as a call, ``name(`` or ``obj.method(``
  (``self.``/``this.``/``cls.`` stripped; at least 3 characters and not a common
  builtin or keyword), and a name after ``def``, ``class``, ``function``, ``fn``
  or ``func``;
- test names: ``test_…`` and ``Test…`` words and pytest node ids' ``::name`` parts;
- error names and codes: ``…Error``, ``…Exception``, ``…Warning``, the common
  errno names (``ENOENT``, ``EACCES``, …), and codes of 1 to 4 capitals and 3 to 5 digits (``E501``,
  ``TS2345``);
- ids: git-style hex hashes (7 to 40 hex digits with a letter and a digit),
  UUIDs and issue references (``#123``).

Limits: this is a lexical proxy. A name spelled differently (``app.py`` for
``src/app.py``, a paraphrase in the summary) counts as lost; a common word that
happens to look like an identifier counts as needed; a later mention proves the
identifier came up again, not that the agent needed the dropped message to
find it. And the counterfactual caveat applies: the recorded future was written
by an agent that still had the dropped messages.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .messages import calls_of, text_of
from .summarizers import find_paths

__all__ = ["identifiers", "message_identifiers", "IdentifierIndex", "NeededLater", "needed_later"]

# Each pattern that must not follow a word character starts with the character it matches, then looks
# back past it (``x(?<!\wx)`` rather than ``\bx``): the regex engine then skips ahead to the characters
# that can start a match instead of trying a look-behind at every position. The matches are the same
# (tests/test_needed_later.py holds them equal to the plain patterns on every corpus).
_URL = re.compile(r"https?://[^\s\"'<>`()\[\]{}\\]+")
_CALL = re.compile(r"(?<![\w.$])((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*)\(")
# def|class|function|fn|func after a non-word character
_DEF = re.compile(r"[cdf](?<!\w[cdf])(?:(?<=d)ef|(?<=c)lass|(?<=f)(?:unction|n|unc))\s+([A-Za-z_][A-Za-z0-9_]*)")
# test_... or Test..., after neither a word character nor / . -
_TEST = re.compile(r"([tT](?<![\w/.-][tT])(?:(?<=t)est_[A-Za-z0-9_]+|(?<=T)est[A-Z0-9_][A-Za-z0-9_]*))\b(?![./])")
_NODE = re.compile(r"::([A-Za-z_][A-Za-z0-9_]*)")
_ERRNO = ("ENOENT|EACCES|EEXIST|EISDIR|ENOTDIR|EPERM|EPIPE|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EADDRINUSE|ENOSPC|"
          "EINVAL|EBADF|EAGAIN|EMFILE|ENOTEMPTY|EROFS|EINTR|ENOMEM|EBUSY|EHOSTUNREACH|ENETUNREACH")
# ...Error|...Exception|...Warning, an errno name (every one starts with E), or 1-4 capitals and 3-5 digits
_ERROR = re.compile(r"([A-Z](?<!\w[A-Z])(?:[A-Za-z0-9]*(?:Error|Exception|Warning)|(?<=E)(?:"
                    + "|".join(e[1:] for e in _ERRNO.split("|")) + r")|[A-Z]{0,3}\d{3,5}))\b")
# 7-40 lower-case hex digits, neither after nor before a word character or -; with a digit and a letter
_HEX = re.compile(r"[0-9a-f](?<![\w-][0-9a-f])[0-9a-f]{6,39}(?![\w-])")
_UUID = re.compile(r"[0-9a-fA-F](?<!\w[0-9a-fA-F])[0-9a-fA-F]{7}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                   r"[0-9a-fA-F]{12}\b")
_ISSUE = re.compile(r"#(?<![\w&#]#)(\d{2,7})\b")  # #123, not after a word character, & or #
_RECEIVER = re.compile(r"^(?:self|this|cls)\.")
# calls that every program writes: too common to say a dropped message was needed
_COMMON_CALLS = frozenset(
    "print len str int float bool list dict set tuple range open super isinstance issubclass type repr "
    "format join split strip get append extend items keys values sorted enumerate zip map filter min max "
    "sum abs round any all hasattr getattr setattr iter next input exit log echo require import return "
    "if for while elif switch catch with assert not and or lambda print_function console.log "
    "assertEqual assertTrue assertFalse assertIn json.loads json.dumps".split()
)


_PROSE = frozenset("a an and the that this to of is in it for with which as was be or not are call calls "
                   "name names body is that we you it can will should".split())


def _calls(text: str) -> Iterable[str]:
    for m in _CALL.finditer(text):
        name = _RECEIVER.sub("", m.group(1))
        last = name.rsplit(".", 1)[-1]
        if len(last) >= 3 and name not in _COMMON_CALLS and last not in _COMMON_CALLS:
            yield name


def identifiers(text: str) -> frozenset:
    """The identifiers of one text, by the rules in the module docstring."""
    if not text:
        return frozenset()
    found: set[str] = set(find_paths(text))
    found.update(u.rstrip(".,;:!?") for u in _URL.findall(text))
    if "(" in text:
        found.update(_calls(text))
    found.update(n for n in _DEF.findall(text) if n.lower() not in _PROSE)  # "the function and the class"
    found.update(_TEST.findall(text))
    if "::" in text:
        found.update(_NODE.findall(text))
    found.update(_ERROR.findall(text))
    found.update(h for h in _HEX.findall(text) if not h.isdigit() and not h.isalpha())  # a digit and a letter
    if "-" in text:
        found.update(u.lower() for u in _UUID.findall(text))
    if "#" in text:
        found.update("#" + n for n in _ISSUE.findall(text))
    return frozenset(sys.intern(s) for s in found if s)


def _parts(message: Mapping[str, Any]) -> tuple[str, ...]:
    """The texts a message's identifiers are read from: its text content, then each tool call's arguments."""
    parts = [text_of(message)]
    for c in calls_of(message):
        fn = c.get("function") if isinstance(c, Mapping) else None
        if isinstance(fn, Mapping):
            parts.append(str(fn.get("arguments", "")))
    return tuple(parts)


def _of_parts(parts: Sequence[str]) -> frozenset:
    out: frozenset = frozenset()
    for part in parts:  # part by part: no identifier crosses the line that would join them
        out |= identifiers(part)
    return out


def message_identifiers(message: Mapping[str, Any]) -> frozenset:
    """The identifiers of a message's text content and its tool calls' arguments."""
    return _of_parts(_parts(message))


class IdentifierIndex:
    """Per-message identifier sets (each message read once) and where each identifier is last mentioned.

    Built once per transcript: ``last[identifier]`` is the index of the last
    transcript message that mentions it, so "is it mentioned after position p?"
    is one dictionary look-up.
    """

    def __init__(self, transcript: Sequence[Mapping[str, Any]]) -> None:
        self._cache: dict[int, tuple[Mapping[str, Any], frozenset]] = {}
        # by the texts they are read from: a message a policy wrote (a placeholder, a summary) is a new object
        # under every setting of a sweep, but its text recurs
        self._texts: dict[tuple[str, ...], frozenset] = {}
        last: dict[str, int] = {}
        for i, m in enumerate(transcript):
            for ident in self.of(m):
                last[ident] = i
        self.last = last

    def of(self, message: Mapping[str, Any]) -> frozenset:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        if isinstance(message, Mapping):
            parts = _parts(message)
            ids = self._texts.get(parts)
            if ids is None:
                ids = self._texts[parts] = _of_parts(parts)
        else:
            ids = frozenset()
        self._cache[id(message)] = (message, ids)
        return ids

    def mentioned_from(self, identifier: str, position: int) -> bool:
        """Whether a transcript message at ``position`` or later mentions ``identifier``."""
        return self.last.get(identifier, -1) >= position


@dataclass(frozen=True)
class NeededLater:
    """One event: the removed identifiers the recorded future mentions again, and those still kept."""

    removed: int  # distinct identifiers in the removed messages
    needed: tuple = ()  # of those, the ones a later message of the transcript mentions
    kept: tuple = ()  # of the needed, the ones the kept context (summary included) still names
    lost: tuple = field(default=())

    @property
    def items(self) -> int:
        return len(self.needed)

    @property
    def score(self) -> float | None:
        return len(self.kept) / len(self.needed) if self.needed else None


def needed_later(removed: Sequence[Mapping[str, Any]], kept: Sequence[Mapping[str, Any]], position: int,
                 index: IdentifierIndex) -> NeededLater:
    """Needed-later retention of one event whose future starts at transcript ``position``."""
    dropped: set[str] = set()
    for m in removed:
        dropped |= index.of(m)
    needed = sorted(i for i in dropped if index.mentioned_from(i, position))
    if not needed:
        return NeededLater(len(dropped))
    present = frozenset().union(*(index.of(m) for m in kept)) if kept else frozenset()
    still = tuple(i for i in needed if i in present)
    return NeededLater(len(dropped), tuple(needed), still, tuple(i for i in needed if i not in present))
