"""The price of a model: a dated snapshot of LiteLLM's table, hand rows where it has none, one look-up.

ccusage prices a log from LiteLLM's model table, and the ``litellm`` wheel ships that table
(``litellm/model_prices_and_context_window_backup.json``). The package carries a snapshot of the rows
it needs (``resources/litellm_prices.json``: the direct-API chat models of Anthropic, OpenAI, Google,
DeepSeek and Mistral, their standard-tier prices, with the litellm version, the wheel's sha256 and the
day it was taken); ``make prices`` refreshes it from a wheel (``refresh``). Where that table has no
row, ``resources/model_prices_manual.csv`` has one written by hand, each with its source and the day
it was read; a model neither names stays unpriced (``price_for_model`` gives None, and every table
and total says "unpriced"), never $0.

How the table and the presets relate: a preset (``pricing.csv``) is a name for a model's prices *plus*
the caching rule a replay needs (minimum, step, tokenizer). The table is where a model's prices come
from; a preset that names a model the table prices carries the same prices (``tests/test_prices.py``
holds them equal). ``price_for_model(model)`` is the one look-up: the table's row for the model
(its 1-hour write price and long-prompt tier included), named and ruled as the preset of that model
when there is one; else the preset alone. A caller's own presets (``presets=``) win over both.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._files import write_text_atomic
from ..resources import resource_path
from .pricing import Pricing, PricingError, pricing_presets

__all__ = ["LITELLM_SNAPSHOT", "MANUAL_PRICES", "model_key", "model_prices", "price_for_model", "price_table",
           "snapshot_info", "refresh", "select_rows"]

LITELLM_SNAPSHOT = resource_path("litellm_prices.json")
MANUAL_PRICES = resource_path("model_prices_manual.csv")
TABLE_IN_WHEEL = "litellm/model_prices_and_context_window_backup.json"
# LiteLLM's provider -> the caching rule of engine.pricing
_RULES = {"anthropic": "anthropic", "openai": "openai", "gemini": "gemini", "vertex_ai-language-models": "gemini",
          "deepseek": "deepseek", "mistral": "none"}
_PREFIXED = ("gemini", "deepseek", "mistral")  # providers whose direct-API rows LiteLLM names "provider/model"
_FIELDS = ("litellm_provider", "mode", "input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
           "cache_creation_input_token_cost", "cache_creation_input_token_cost_above_1hr")
_TIERED = ("input_cost_per_token", "cache_read_input_token_cost", "cache_creation_input_token_cost",
           "cache_creation_input_token_cost_above_1hr", "output_cost_per_token")
_TIERS = (200_000, 272_000)  # LiteLLM's "_above_200k_tokens" / "_above_272k_tokens" fields
_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_PROVIDER_PREFIX = re.compile(r"^[a-z0-9_.-]+/")
_MANUAL_COLUMNS = ("model", "provider", "input", "cached_input", "cache_write", "cache_write_1h", "output", "cache",
                   "source", "read_on", "basis")


def model_key(name: str) -> str:
    """A model name as compared: lower case, no provider prefix, no date suffix, dots as dashes.

    ``claude-opus-4-5-20251101`` and ``anthropic/claude-opus-4.5`` are both ``claude-opus-4-5``;
    nothing else is guessed (``gpt-5.5`` never falls back to ``gpt-5``).
    """
    name = _PROVIDER_PREFIX.sub("", name.strip().lower())
    return _DATE_SUFFIX.sub("", name).replace(".", "-")


# ---------------------------------------------------------------- the snapshot, and its refresh from a wheel


def select_rows(table: Mapping[str, Any]) -> dict[str, dict]:
    """The rows the package keeps from LiteLLM's table: direct-API chat models priced per token.

    Kept: a row of provider ``anthropic`` or ``openai`` named without a prefix, and of ``gemini``,
    ``deepseek`` or ``mistral`` (with or without their ``provider/`` prefix; Google's unprefixed rows
    are LiteLLM's ``vertex_ai-language-models``), in mode ``chat`` or ``responses``, with an input price.
    Kept of each: the standard-tier prices (no batch, flex or priority ones) and the long-prompt tiers.
    """
    out: dict[str, dict] = {}
    for name, row in table.items():
        if not isinstance(row, dict) or row.get("mode") not in ("chat", "responses"):
            continue
        provider = row.get("litellm_provider")
        prefix, _, rest = name.partition("/")
        direct = "/" not in name and provider in _RULES or rest and "/" not in rest and prefix in _PREFIXED \
            and provider == prefix
        if not direct or not isinstance(row.get("input_cost_per_token"), (int, float)):
            continue
        kept = {k: row[k] for k in _FIELDS if k in row}
        for tier in _TIERS:
            kept.update({f"{k}_above_{tier // 1000}k_tokens": row[f"{k}_above_{tier // 1000}k_tokens"]
                         for k in _TIERED if f"{k}_above_{tier // 1000}k_tokens" in row})
        out[name] = kept
    return dict(sorted(out.items()))


def refresh(wheel: str | os.PathLike, out: str | os.PathLike = LITELLM_SNAPSHOT, taken_on: str = "") -> dict:
    """Write the snapshot of ``wheel``'s price table to ``out`` (atomically); returns what was written.

    Only the JSON inside the wheel is read: nothing of litellm is installed or imported.
    """
    import datetime

    wheel = Path(wheel)
    raw = wheel.read_bytes()
    match = re.match(r"litellm-([^-]+)-", wheel.name)
    if match is None:
        raise PricingError(f"{wheel}: not a litellm wheel (litellm-VERSION-...whl)")
    try:
        with zipfile.ZipFile(wheel) as z:
            table = json.loads(z.read(TABLE_IN_WHEEL))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise PricingError(f"{wheel}: no readable {TABLE_IN_WHEEL} ({exc})") from None
    snapshot = {"source": f"https://pypi.org/project/litellm/{match.group(1)}/ ({TABLE_IN_WHEEL})",
                "litellm_version": match.group(1), "wheel": wheel.name,
                "wheel_sha256": hashlib.sha256(raw).hexdigest(),
                "taken_on": taken_on or datetime.date.today().isoformat(), "models_in_table": len(table),
                "selection": (select_rows.__doc__ or "").split("\n\n")[1].strip().replace("\n    ", " "),
                "models": select_rows(table)}
    # package data, readable by all like the rest of the checkout
    write_text_atomic(out, json.dumps(snapshot, indent=1, sort_keys=False) + "\n", mode=0o644)
    _snapshot.cache_clear()
    model_prices.cache_clear()
    return snapshot


@functools.lru_cache(maxsize=1)
def _snapshot() -> dict:
    try:
        data = json.loads(LITELLM_SNAPSHOT.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PricingError(f"{LITELLM_SNAPSHOT}: cannot read the price snapshot ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise PricingError(f"{LITELLM_SNAPSHOT}: not a price snapshot (no 'models' object)")
    return data


def snapshot_info() -> dict:
    """Where the snapshot came from: litellm version, wheel, sha256, the day it was taken, the rows kept."""
    data = _snapshot()
    return {k: v for k, v in data.items() if k != "models"} | {"models_kept": len(data["models"])}


def _per_million(row: Mapping[str, Any], key: str, default: float | None = None) -> float | None:
    value = row.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return default
    return round(value * 1e6, 9)  # 2e-07 per token is 0.2 per million, not 0.19999999999999998


def _from_litellm(name: str, row: Mapping[str, Any], source: str, taken_on: str) -> Pricing:
    """One snapshot row as a ``Pricing`` (USD per million tokens; the provider's caching rule)."""
    rule = _RULES.get(str(row.get("litellm_provider")), "none")
    price_in = _per_million(row, "input_cost_per_token") or 0.0
    read = _per_million(row, "cache_read_input_token_cost", price_in if rule == "none" else None)
    write = _per_million(row, "cache_creation_input_token_cost")
    hour = _per_million(row, "cache_creation_input_token_cost_above_1hr")
    above_tokens, above = None, None
    for tier in _TIERS:
        tiered = {k: _per_million(row, f"{k}_above_{tier // 1000}k_tokens") for k in _TIERED}
        if tiered["input_cost_per_token"] is not None:
            above_tokens = tier
            base = (price_in, read if read is not None else price_in, write, hour,
                    _per_million(row, "output_cost_per_token"))
            above = tuple(t if t is not None else b if b is not None else price_in
                          for t, b in zip(tiered.values(), base, strict=True))
            break
    return Pricing(price_in, read if read is not None else price_in, _per_million(row, "output_cost_per_token") or 0.0,
                   cache_write=write if rule == "anthropic" else None, cache=rule,
                   cache_write_1h=hour if rule == "anthropic" else None, name=name, model=name, source=source,
                   read_on=taken_on, above_tokens=above_tokens, above=above)  # type: ignore[arg-type]


def _manual() -> list[tuple[str, Pricing, str]]:
    """The hand rows: (model, its Pricing, the basis of its price)."""
    from .pricing import csv_number, read_csv_rows

    rows = []
    for line, row in enumerate(read_csv_rows(MANUAL_PRICES, _MANUAL_COLUMNS), start=2):
        model = (row.get("model") or "").strip()
        source, read_on = (row.get("source") or "").strip(), (row.get("read_on") or "").strip()
        if not model or not source.startswith("https://") or len(read_on) != 10:
            raise PricingError(f"{MANUAL_PRICES}: line {line}: a hand row needs a model, an https source and "
                               "the day it was read (YYYY-MM-DD)")
        num = functools.partial(csv_number, path=MANUAL_PRICES, line=line)
        p = Pricing(num(row["input"], column="input"), num(row["cached_input"], column="cached_input"),
                    num(row["output"], column="output"), cache=row["cache"].strip(),
                    cache_write=num(row.get("cache_write") or "", column="cache_write"),
                    cache_write_1h=num(row.get("cache_write_1h") or "", column="cache_write_1h"),
                    name=model, model=model, source=source, read_on=read_on)
        rows.append((model, p, (row.get("basis") or "").strip()))
    return rows


@functools.lru_cache(maxsize=1)
def model_prices() -> Mapping[str, Pricing]:
    """Every priced model by ``model_key``: the LiteLLM snapshot (an unprefixed row wins over a
    ``provider/`` one), then the hand rows for models it lacks."""
    data = _snapshot()
    source, taken = f"{data.get('source', 'LiteLLM')}, snapshot {data.get('taken_on', '')}", data.get("taken_on", "")
    out: dict[str, Pricing] = {}
    for name, row in sorted(data["models"].items(), key=lambda kv: "/" in kv[0]):
        out.setdefault(model_key(name), _from_litellm(name, row, source, taken))
    for model, p, _ in _manual():
        out.setdefault(model_key(model), p)
    return out


# ---------------------------------------------------------------- the one look-up


_INDEX: dict[int, tuple[Mapping[str, Pricing], dict[str, Pricing]]] = {}  # id -> (that very mapping, its index)


def _index(presets: Mapping[str, Pricing]) -> dict[str, Pricing]:
    """Presets by ``model_key`` of their name and model, built once per mapping (checked by identity: an id is
    reused once its mapping is gone)."""
    cached = _INDEX.get(id(presets))
    if cached is None or cached[0] is not presets:
        if len(_INDEX) >= 8:
            _INDEX.clear()
        index: dict[str, Pricing] = {}
        for name, p in presets.items():
            for alias in (name, p.model):
                if alias:
                    index.setdefault(model_key(alias), p)
        cached = _INDEX[id(presets)] = (presets, index)
    return cached[1]


def price_for_model(model: str | None, presets: Mapping[str, Pricing] | None = None) -> Pricing | None:
    """The price of ``model`` (see the module docstring), or None when nothing prices it.

    ``presets``: a caller's own presets, searched first; the package's presets (the default) are the
    table's prices with a replay's caching rule, so they only name and rule the table's row.
    """
    if not model:
        return None
    key = model_key(model)
    default = pricing_presets()
    if presets is not None and presets is not default:
        own = _index(presets).get(key)
        if own is not None:
            return own
    preset = _index(default).get(key)
    row = model_prices().get(key)
    if row is None:
        return preset
    if preset is None:
        return row
    return row.replace(name=preset.name, min_cached_tokens=preset.min_cached_tokens, step=preset.step,
                       tokens=preset.tokens, cache_source=preset.cache_source)


def price_table(models: list[str] | None = None):
    """The table as a DataFrame, one row per model (or per name in ``models``, "unpriced" where none):
    USD per million tokens, the long-prompt tier, where each price came from and on which day."""
    from .frames import frame

    names = models if models is not None else sorted(model_prices())
    rows: list[dict[str, Any]] = []
    for name in names:
        p = price_for_model(name)
        if p is None:
            rows.append({"model": name, "priced": "unpriced"})
            continue
        rows.append({"model": name, "priced": p.name, "input": p.input, "cached_input": p.cached_input,
                     "cache_write_5m": p.cache_write, "cache_write_1h": p.cache_write_1h, "output": p.output,
                     "above_tokens": p.above_tokens, "cache": p.cache, "source": p.source, "read_on": p.read_on})
    columns = ["model", "priced", "input", "cached_input", "cache_write_5m", "cache_write_1h", "output",
               "above_tokens", "cache", "source", "read_on"]
    return frame(rows, columns)


def main(argv: list[str] | None = None) -> int:
    """``python -m nanohermes_nb.engine.prices WHEEL [OUT]``: refresh the snapshot from a litellm wheel."""
    args = sys.argv[1:] if argv is None else argv
    if not args or len(args) > 2 or not args[0].endswith(".whl"):
        print("usage: python -m nanohermes_nb.engine.prices litellm-VERSION-...whl [OUT.json]", file=sys.stderr)
        return 2
    try:
        snap = refresh(args[0], args[1] if len(args) > 1 else LITELLM_SNAPSHOT)
    except (PricingError, OSError) as exc:
        print(f"prices: {exc}", file=sys.stderr)
        return 2
    print(f"prices: {len(snap['models'])} of {snap['models_in_table']:,} models from litellm "
          f"{snap['litellm_version']} ({snap['wheel_sha256'][:12]}), taken {snap['taken_on']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
