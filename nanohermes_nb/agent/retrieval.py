"""Memory retrieval: a tokenizer for English, code and Chinese, and BM25 over the remembered entries.

``tokenize`` splits identifiers (``camelCase``, ``snake_case``) and, with jieba when it
is installed, Chinese words (else single CJK characters); ``MemoryIndex`` ranks entries
by BM25 for ``MemoryStore.search``.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the entries are memory's; memory imports this module
    from .memory import MemoryEntry


# --------------------------------------------------------------------------- tokenizer

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef\U00030000-\U0003134f"
_TOKEN_RE = re.compile(
    rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W{_CJK}]+(?:[./\\:#@-][^\W{_CJK}]+)*)"
)
_JOINERS = re.compile(r"[./\\:#@_-]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_EN_STOP = frozenset(
    "a an and are as at be by do for from has have i in is it its of on or so that the "
    "this to was we were will with you your".split()
)
_ZH_STOP = frozenset("的 了 是 在 和 与 或 也 就 都 而 及 着 吗 呢 吧 啊 把 被 让 给 这 那 我 你 他 她 它".split())


@functools.cache
def _jieba() -> Any:
    """jieba, imported on first Chinese text, with its startup log silenced."""
    import jieba

    jieba.setLogLevel(logging.ERROR)
    logging.getLogger("jieba").setLevel(logging.ERROR)
    jieba.initialize()
    return jieba


def _word_tokens(word: str) -> list[str]:
    """A word or identifier/path: the whole lowered token, plus its parts when it has any."""
    low = word.lower()
    out = [] if low in _EN_STOP else [low]
    parts = [p for p in _JOINERS.split(word) if p]
    pieces: list[str] = []
    for part in parts:
        pieces.extend(_CAMEL.findall(part) if part.isascii() else [part])
    if len(pieces) > 1:
        out.extend(p.lower() for p in pieces
                   if (len(p) > 1 or p.isdigit()) and p.lower() not in _EN_STOP)
    return out


def tokenize(text: str) -> list[str]:
    """BM25 terms: lowered English words, identifiers and paths (whole and split), jieba-cut Chinese."""
    tokens: list[str] = []
    for m in _TOKEN_RE.finditer(text):
        if m.group("cjk"):
            tokens.extend(t for t in _jieba().lcut_for_search(m.group("cjk"))
                          if t.strip() and t not in _ZH_STOP)
        else:
            tokens.extend(_word_tokens(m.group("word")))
    return tokens


# --------------------------------------------------------------------------- retrieval


class MemoryIndex:
    """A BM25 index (bm25s) over a fixed list of entries; rank them for a query."""

    def __init__(self, entries: Sequence[MemoryEntry]) -> None:
        import bm25s

        self.entries = tuple(entries)
        self._bm25 = None
        if self.entries:
            self._bm25 = bm25s.BM25()
            corpus = [tokenize(f"{e.kind} {e.text}") for e in self.entries]
            self._bm25.index(corpus, show_progress=False)

    def scored(self, query: str, k: int) -> list[tuple[MemoryEntry, float]]:
        """The ``k`` best entries with their scores; zero scores dropped, ties to the newer entry."""
        if self._bm25 is None or k <= 0:
            return []
        terms = [t for t in tokenize(query) if t in self._bm25.vocab_dict and t]
        if not terms:
            return []
        scores = self._bm25.get_scores(terms)
        order = sorted(range(len(self.entries)), key=lambda i: (-float(scores[i]), -i))
        return [(self.entries[i], float(scores[i])) for i in order[:k] if scores[i] > 0]

    def search(self, query: str, k: int) -> list[MemoryEntry]:
        return [e for e, _ in self.scored(query, k)]

