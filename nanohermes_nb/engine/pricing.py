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
  ``nanohermes_nb/resources/pricing.csv`` for what the stored documentation says today).
- ``none``: no cache; every input token at the input price.

Named presets live in ``nanohermes_nb/resources/pricing.csv`` with the URL each price and rule was
read from and the date; prices change, so the file is data and the values a
user passes win (``get_pricing("gpt-4.1", input=1.5)``). Token counts come from
the project's exact offline tokenizers (``o200k`` by default); for providers
whose tokenizer is not public the count is an estimate with an OpenAI one.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..resources import resource_path

__all__ = ["Pricing", "PricingError", "CACHE_RULES", "RULE_DEFAULTS", "TOKEN_UNITS", "PRICING_CSV",
           "pricing_presets", "get_pricing", "pricing_table", "rounded_sum", "sent_each", "PARTS", "MAX_PRICE",
           "csv_number", "read_csv_rows"]

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
ANTHROPIC_HOUR_WRITE_FACTOR = 2.0  # a one-hour cache write: 2x the input price (Anthropic's pricing page)
# No price per million tokens comes near this (the dearest models list about $150 out); a larger one is a
# typo or damage, and with 10**12-token counts it would overflow a float sum to inf.
MAX_PRICE = 1_000_000.0
TOKEN_UNITS = ("o200k", "cl100k", "tokens_approx")
PRICING_CSV = resource_path("pricing.csv")
_CSV_COLUMNS = ("name", "provider", "model", "input", "cached_input", "output", "cache_write", "cache_write_1h",
                "cache", "min_cached_tokens", "step", "tokens", "price_source", "cache_source", "stored_page_date",
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
    cache_write_1h: float | None = None  # a one-hour cache write (Anthropic: 2x input); default cache_write
    above_tokens: int | None = None  # a prompt of more tokens is billed whole at the ``above`` prices
    above: tuple[float, float, float, float, float] | None = None  # input, cached, write, write 1h, output

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
            _check_price(field_name, value)
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
        hour = self.cache_write_1h
        if hour is None:
            hour = self.input * ANTHROPIC_HOUR_WRITE_FACTOR if self.cache == "anthropic" else write
        _check_price("cache_write_1h", hour)
        object.__setattr__(self, "cache_write_1h", float(hour))
        if (self.above is None) != (self.above_tokens is None):
            raise PricingError("above_tokens and above are given together or not at all")
        if self.above is not None:
            if isinstance(self.above_tokens, bool) or not isinstance(self.above_tokens, int) or self.above_tokens < 1:
                raise PricingError(f"above_tokens must be an integer >= 1, got {self.above_tokens!r}")
            if not isinstance(self.above, tuple) or len(self.above) != 5:
                raise PricingError("above must be 5 prices: input, cached input, cache write, 1h write, output")
            for k, value in enumerate(self.above):
                _check_price(f"above[{k}]", value)

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
             cache_write_tokens: int = 0, cache_write_1h_tokens: int = 0) -> float:
        """USD for one request: ``input_tokens`` counts every prompt token (cached and written ones included);
        ``cache_write_1h_tokens`` is the part of ``cache_write_tokens`` written for one hour."""
        return sum(self.parts(input_tokens, cached_tokens, output_tokens, cache_write_tokens,
                              cache_write_1h_tokens).values())

    def parts(self, input_tokens: int, cached_tokens: int = 0, output_tokens: int = 0, cache_write_tokens: int = 0,
              cache_write_1h_tokens: int = 0, reasoning_tokens: int = 0) -> dict[str, float]:
        """Where one request's dollars went: ``PARTS`` (uncached input, cache writes for 5 minutes and for
        an hour, cache reads, output, and the reasoning part of the output, billed at the output price).

        A prompt over ``above_tokens`` is billed whole at the ``above`` prices (Anthropic's long-context
        and OpenAI's over-272k rates apply to the entire request, not to the tokens past the threshold).
        """
        price_in, price_read, price_write, price_hour, price_out = (
            self.above if self.above is not None and input_tokens > (self.above_tokens or 0)
            else (self.input, self.cached_input, self.cache_write or 0.0, self.cache_write_1h or 0.0, self.output))
        hour = min(cache_write_1h_tokens, cache_write_tokens)
        reasoning = min(reasoning_tokens, output_tokens)
        return {"input": (input_tokens - cached_tokens - cache_write_tokens) * price_in / 1e6,
                "cache_write_5m": (cache_write_tokens - hour) * price_write / 1e6,
                "cache_write_1h": hour * price_hour / 1e6,
                "cache_read": cached_tokens * price_read / 1e6,
                "output": (output_tokens - reasoning) * price_out / 1e6,
                "reasoning": reasoning * price_out / 1e6}

    def replace(self, **changes: Any) -> Pricing:
        """The same pricing with some values changed (the user's values win)."""
        if changes.get("cache") not in (None, self.cache):  # a new rule brings its own defaults
            changes.setdefault("min_cached_tokens", None)
            changes.setdefault("step", None)
            changes.setdefault("cache_write", None)
            changes.setdefault("cache_write_1h", None)
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        rule = self.cache if self.caches else "no cache"
        extra = f", writes ${self.cache_write:g}" if self.cache == "anthropic" else ""
        return (f"{self.name}: ${self.input:g} in, ${self.cached_input:g} cached{extra}, ${self.output:g} out "
                f"per 1M tokens; {rule} (min {self.min_cached_tokens:,}, step {self.step}); tokens {self.tokens}")


PARTS = ("input", "cache_write_5m", "cache_write_1h", "cache_read", "output", "reasoning")


def _check_price(name: str, value: Any) -> None:
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or not 0 <= value <= MAX_PRICE):
        raise PricingError(f"{name} must be a price from 0 to {MAX_PRICE:,.0f} (USD per million tokens), "
                           f"got {value!r}")


def csv_number(text: str, path: Path, line: int, column: str, kind: type = float) -> Any:
    """One cell of a price file as ``kind`` (None when empty); else a ``PricingError`` naming file, line, column."""
    text = text.strip()
    if text == "":
        return None
    try:
        value = kind(text)
    except ValueError:
        raise PricingError(f"{path}: line {line}, column {column!r}: not a number: {text!r}") from None
    return value


def read_csv_rows(path: Path, required: tuple[str, ...] = ("name", "input", "cached_input", "output", "cache")
                  ) -> list[dict[str, str]]:
    """The rows of a pricing file, each with every column of its header; a row that does not parse is a
    ``PricingError`` naming the file and the line (short or long rows, a cell over csv's field limit)."""
    try:
        raw = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise PricingError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PricingError(f"{path}: not UTF-8 (byte {exc.start})") from None
    reader = csv.DictReader(raw.splitlines(), restkey=_EXTRA)
    try:
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise PricingError(f"{path}: line 1: missing column(s) {', '.join(missing)}")
        rows = []
        for row in reader:
            if _EXTRA in row or None in row.values():
                got = len(header) + len(row.get(_EXTRA) or ()) - sum(v is None for v in row.values())
                raise PricingError(f"{path}: line {reader.line_num}: {got} cells where the header has "
                                   f"{len(header)}")
            rows.append(row)
    except csv.Error as exc:
        raise PricingError(f"{path}: line {reader.line_num + 1}: not a CSV row ({str(exc)[:80]})") from None
    return rows


_EXTRA = "\0extra"  # DictReader's key for the cells past the header's


def pricing_presets(path: str | Path | None = None) -> Mapping[str, Pricing]:
    """The named presets of a pricing file (default ``nanohermes_nb/resources/pricing.csv``), in file order.

    The package's own file is read once per process and given read-only (the same mapping every call);
    another file is read each time, into a new dict.
    """
    if path is None:
        return _default_presets()
    return _read_presets(Path(path))


@functools.lru_cache(maxsize=1)
def _default_presets() -> Mapping[str, Pricing]:
    return MappingProxyType(_read_presets(PRICING_CSV))


def _read_presets(path: Path) -> dict[str, Pricing]:
    out: dict[str, Pricing] = {}
    for line, row in enumerate(read_csv_rows(path), start=2):
        name = (row.get("name") or "").strip()
        if not name:
            raise PricingError(f"{path}: line {line}: empty name")
        if name in out:
            raise PricingError(f"{path}: line {line}: preset {name!r} appears twice")
        try:
            out[name] = Pricing(
                csv_number(row["input"], path, line, "input"),
                csv_number(row["cached_input"], path, line, "cached_input"),
                csv_number(row["output"], path, line, "output"),
                cache_write=csv_number(row.get("cache_write") or "", path, line, "cache_write"),
                cache_write_1h=csv_number(row.get("cache_write_1h") or "", path, line, "cache_write_1h"),
                cache=(row.get("cache") or "").strip(),
                min_cached_tokens=csv_number(row.get("min_cached_tokens") or "", path, line, "min_cached_tokens", int),
                step=csv_number(row.get("step") or "", path, line, "step", int),
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
    rows = read_csv_rows(path)
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

