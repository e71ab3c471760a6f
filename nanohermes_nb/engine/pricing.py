"""What a request costs in dollars: prices per million tokens and each provider's caching rule.

The article counts cost in characters; a bill counts tokens, and every major
provider now charges less for the part of a prompt whose beginning repeats an
earlier request (a prompt cache). ``Pricing`` holds one model's prices and the
rule its provider uses to decide how many leading tokens of a request are read
from the cache:

- ``openai``: automatic for prompts of 1,024 tokens or more; the cached part is
  the longest shared prefix rounded down to a multiple of 128 tokens.
- ``anthropic``: explicit breakpoints (at most 4). The ledger puts two where an
  agent would, at the end of the system message and at the end of each request;
  a request reads the longest cached prefix an earlier request wrote and writes
  the rest up to its end (at ``cache_write``, 1.25x the input price by default).
  A prefix shorter than the model's minimum (1,024 tokens on Sonnet) is neither
  written nor read.
- ``gemini``: implicit caching of the shared prefix above a per-model minimum.
- ``deepseek``: automatic, counted in 64-token units (see ``docs`` in
  ``data/pricing.csv`` for what the stored documentation says today).
- ``none``: no cache; every input token at the input price.

Named presets live in ``data/pricing.csv`` with the URL each price and rule was
read from and the date; prices change, so the file is data and the values a
user passes win (``get_pricing("gpt-4.1", input=1.5)``). Token counts come from
the project's exact offline tokenizers (``o200k`` by default); for providers
whose tokenizer is not public the count is an estimate with an OpenAI one.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Pricing", "PricingError", "CACHE_RULES", "RULE_DEFAULTS", "TOKEN_UNITS", "PRICING_CSV",
           "pricing_presets", "get_pricing", "pricing_table", "rounded_sum", "sent_each"]

CACHE_RULES = ("openai", "anthropic", "gemini", "deepseek", "none")
# per rule: (min_cached_tokens, step) when a preset or the user gives none
RULE_DEFAULTS: dict[str, tuple[int, int]] = {
    "openai": (1024, 128),
    "anthropic": (1024, 1),
    "gemini": (2048, 1),
    "deepseek": (64, 64),
    "none": (0, 1),
}
ANTHROPIC_WRITE_FACTOR = 1.25
TOKEN_UNITS = ("o200k", "cl100k", "tokens_approx")
PRICING_CSV = Path(__file__).resolve().parents[2] / "data" / "pricing.csv"
_CSV_COLUMNS = ("name", "provider", "model", "input", "cached_input", "output", "cache_write", "cache",
                "min_cached_tokens", "step", "tokens", "price_source", "cache_source", "stored_page_date",
                "read_on", "notes")


class PricingError(ValueError):
    """A pricing file or value that cannot be used; the message names the file and the place."""


@dataclass(frozen=True)
class Pricing:
    """One model's prices in USD per million tokens, and its provider's caching rule.

    ``cached_input`` is the price of a token read from the cache, ``cache_write``
    (Anthropic) the price of a token written to it (default 1.25x ``input``).
    ``min_cached_tokens`` and ``step`` default to the rule's (``RULE_DEFAULTS``):
    a shared prefix below the minimum is not cached, one above it is rounded
    down to a multiple of ``step``. ``tokens`` is the tokenizer that counts
    (``o200k``, ``cl100k`` or ``tokens_approx``).
    """

    input: float
    cached_input: float
    output: float
    cache_write: float | None = None
    cache: str = "openai"
    min_cached_tokens: int | None = None
    step: int | None = None
    tokens: str = "o200k"
    name: str = "custom"
    model: str = ""
    source: str = ""  # where the prices were read
    cache_source: str = ""  # where the caching rule was read
    read_on: str = ""

    def __post_init__(self) -> None:
        if self.cache not in CACHE_RULES:
            raise PricingError(f"unknown cache rule {self.cache!r}; use one of {', '.join(CACHE_RULES)}")
        if self.tokens not in TOKEN_UNITS:
            raise PricingError(f"unknown token unit {self.tokens!r}; use one of {', '.join(TOKEN_UNITS)}")
        write = self.cache_write
        if write is None:
            write = self.input * ANTHROPIC_WRITE_FACTOR if self.cache == "anthropic" else self.input
        for field_name, value in (("input", self.input), ("cached_input", self.cached_input),
                                  ("output", self.output), ("cache_write", write)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise PricingError(f"{field_name} must be a finite price >= 0 (USD per million tokens), got {value!r}")
        minimum, step = RULE_DEFAULTS[self.cache]
        minimum = minimum if self.min_cached_tokens is None else self.min_cached_tokens
        step = step if self.step is None else self.step
        if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 0:
            raise PricingError(f"min_cached_tokens must be an integer >= 0, got {minimum!r}")
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise PricingError(f"step must be an integer >= 1, got {step!r}")
        object.__setattr__(self, "cache_write", float(write))
        object.__setattr__(self, "min_cached_tokens", minimum)
        object.__setattr__(self, "step", step)

    @property
    def minimum(self) -> int:
        """The smallest prefix the rule caches, in tokens (``min_cached_tokens`` with the rule's default filled in)."""
        return int(self.min_cached_tokens or 0)

    @property
    def rounding(self) -> int:
        """The cached prefix is rounded down to a multiple of this (``step`` with the rule's default filled in)."""
        return int(self.step or 1)

    @property
    def caches(self) -> bool:
        return self.cache != "none"

    def cached(self, shared: int) -> int:
        """Tokens of a shared prefix of ``shared`` tokens the rule reads from the cache."""
        if not self.caches or shared <= 0 or shared < self.minimum:
            return 0
        return shared - shared % self.rounding

    def cost(self, input_tokens: int, cached_tokens: int = 0, output_tokens: int = 0,
             cache_write_tokens: int = 0) -> float:
        """USD for one request: ``input_tokens`` counts every prompt token (cached and written ones included)."""
        uncached = input_tokens - cached_tokens - cache_write_tokens
        return (uncached * self.input + cached_tokens * self.cached_input
                + cache_write_tokens * (self.cache_write or 0.0) + output_tokens * self.output) / 1e6

    def replace(self, **changes: Any) -> Pricing:
        """The same pricing with some values changed (the user's values win)."""
        if changes.get("cache") not in (None, self.cache):  # a new rule brings its own defaults
            changes.setdefault("min_cached_tokens", None)
            changes.setdefault("step", None)
            changes.setdefault("cache_write", None)
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        rule = self.cache if self.caches else "no cache"
        extra = f", writes ${self.cache_write:g}" if self.cache == "anthropic" else ""
        return (f"{self.name}: ${self.input:g} in, ${self.cached_input:g} cached{extra}, ${self.output:g} out "
                f"per 1M tokens; {rule} (min {self.min_cached_tokens:,}, step {self.step}); tokens {self.tokens}")


def _number(text: str, path: Path, line: int, column: str, kind: type = float) -> Any:
    text = text.strip()
    if text == "":
        return None
    try:
        value = kind(text)
    except ValueError:
        raise PricingError(f"{path}: line {line}, column {column!r}: not a number: {text!r}") from None
    return value


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        raw = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise PricingError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PricingError(f"{path}: not UTF-8 (byte {exc.start})") from None
    reader = csv.DictReader(raw.splitlines())
    missing = [c for c in ("name", "input", "cached_input", "output", "cache") if c not in (reader.fieldnames or [])]
    if missing:
        raise PricingError(f"{path}: line 1: missing column(s) {', '.join(missing)}")
    return list(reader)


def pricing_presets(path: str | Path | None = None) -> dict[str, Pricing]:
    """The named presets of a pricing file (default ``data/pricing.csv``), in file order."""
    path = Path(path) if path is not None else PRICING_CSV
    out: dict[str, Pricing] = {}
    for line, row in enumerate(_read_csv(path), start=2):
        name = (row.get("name") or "").strip()
        if not name:
            raise PricingError(f"{path}: line {line}: empty name")
        if name in out:
            raise PricingError(f"{path}: line {line}: preset {name!r} appears twice")
        try:
            out[name] = Pricing(
                _number(row["input"], path, line, "input"), _number(row["cached_input"], path, line, "cached_input"),
                _number(row["output"], path, line, "output"),
                cache_write=_number(row.get("cache_write") or "", path, line, "cache_write"),
                cache=(row.get("cache") or "").strip(),
                min_cached_tokens=_number(row.get("min_cached_tokens") or "", path, line, "min_cached_tokens", int),
                step=_number(row.get("step") or "", path, line, "step", int),
                tokens=(row.get("tokens") or "").strip() or "o200k",
                name=name, model=(row.get("model") or "").strip(),
                source=(row.get("price_source") or "").strip(),
                cache_source=(row.get("cache_source") or "").strip(), read_on=(row.get("read_on") or "").strip())
        except PricingError as exc:
            if str(exc).startswith(str(path)):
                raise
            raise PricingError(f"{path}: line {line} ({name}): {exc}") from None
    return out


def get_pricing(pricing: str | Pricing, **overrides: Any) -> Pricing:
    """A ``Pricing`` from a preset name or an instance; ``overrides`` replace its values (user values win)."""
    if isinstance(pricing, Pricing):
        base = pricing
    elif isinstance(pricing, str):
        presets = pricing_presets()
        if pricing not in presets:
            raise PricingError(f"unknown pricing preset {pricing!r}; known: {', '.join(presets)}")
        base = presets[pricing]
    else:
        raise TypeError(f"pricing must be a preset name or a Pricing, got {type(pricing).__name__}")
    return base.replace(**overrides) if overrides else base


def pricing_table(path: str | Path | None = None):
    """The pricing file as a DataFrame: every preset with its sources and dates."""
    from .frames import frame

    path = Path(path) if path is not None else PRICING_CSV
    rows = _read_csv(path)
    return frame(rows, [c for c in _CSV_COLUMNS if rows and c in rows[0]])


# --- sums over a stretch of requests, for the ledger's cost book -------------------------------------------------


def _residue_counts(session: Any, unit: str, step: int, threshold: int) -> list[int]:
    """Prefix counts over requests of ``prefix(unit)[reply[j]] % step >= threshold`` (cached per session)."""
    def counts() -> list[int]:
        import numpy as np

        residues = np.asarray(_residues(session, unit, step))
        return np.concatenate(([0], np.cumsum(residues >= threshold))).tolist()

    return session.cache.residue_counts(unit, step, threshold, counts)


def _residues(session: Any, unit: str, step: int) -> list[int]:
    return session.cache.residues(unit, step, lambda: [a % step for a in sent_each(session, unit)])


def sent_each(session: Any, unit: str) -> list[int]:
    """``prefix(unit)[reply[j]]`` for every request ``j`` (what it sends before any event), cached."""
    def values() -> list[int]:
        p = session.prefix(unit)
        return [p[i] for i in session.reply]

    return session.cache.sent_each(unit, values)


def rounded_sum(session: Any, unit: str, base: int, j0: int, j1: int, minimum: int, step: int) -> int:
    """``sum(g(base + a[j]) for j in j0..j1)``, ``g(x) = 0 if x < minimum else x - x % step``, in O(1).

    ``a[j]`` is what request ``j`` sends before any event (``prefix(unit)[reply[j]]``);
    ``base + a[j]`` is what it sends in a stretch whose context is ``base``
    tokens off the transcript. The sizes rise with ``j``, so the requests under
    the minimum come first (found by bisection); the rounding loss of the rest
    is the sum of their residues, from prefix sums of ``a[j] % step`` and a
    per-threshold count built once per session (at most ``step`` of them).
    """
    if j1 < j0:
        return 0
    a = sent_each(session, unit)
    lo = bisect_left(a, max(minimum, 1) - base, j0, j1 + 1)
    n = j1 - lo + 1
    if n <= 0:
        return 0
    sums = session.sent_sums(unit)
    total = n * base + sums[j1 + 1] - sums[lo]
    if step == 1:
        return total
    s = base % step
    residues = session.residue_sums(unit, step, lambda: _residues(session, unit, step))
    loss = n * s + residues[j1 + 1] - residues[lo]
    if s:
        counts = _residue_counts(session, unit, step, step - s)
        loss -= step * (counts[j1 + 1] - counts[lo])
    return total - loss

