"""ccusage, run on one log, and what it counts: the yardstick for the reported totals (``bill``).

``ccusage`` (npm, 18.x) sums Claude Code's ``message.usage``; ``@ccusage/codex``
sums Codex's ``token_count`` events. Both read a whole folder, so one log is
laid out alone in a temporary one (``projects/<name>/<name>.jsonl`` under
``CLAUDE_CONFIG_DIR``, ``sessions/YYYY/MM/DD/rollout-<name>.jsonl`` under
``CODEX_HOME``) and run with ``--offline --json``; nothing is written next to
the user's log.

What they count, read from the 18.0.11 sources and checked on the real logs
(``tests/test_ccusage.py``):

- Claude Code writes one record per content block of a response, each with the
  response's usage. ccusage keeps the *first* record of each ``message.id`` +
  ``requestId``; its input, cache-creation and cache-read tokens are the same on
  every record, but its ``output_tokens`` is often a streaming placeholder
  (1-5). The bill keeps the last record's, so output differs by exactly
  ``first_record_output`` (``claude_first_outputs``).
- Codex repeats some ``token_count`` events (same cumulative total).
  ``@ccusage/codex`` adds every event's ``last_token_usage`` (skipping all-zero
  ones) and so counts a repeated event twice; the bill counts it once.
- ccusage reads a log line by line with ``JSON.parse``: a line holding two records
  (a rollout appended to without its line break) fails to parse and is skipped
  whole; the bill reads both. So the difference is exactly the repeats, less the
  events on such lines (``codex_token_events``; ``unread=True`` gives those).
- Dollars: ccusage 18 prices every cache write at the 5-minute rate; the bill
  prices a 1-hour write (``cache_creation.ephemeral_1h_input_tokens``) at the
  1-hour rate, as Anthropic bills it (``bill.request_cost``), so the two differ
  by exactly that (``one_hour_surcharge``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CCUSAGE_VERSION", "ccusage_binary", "run_ccusage", "CcusageTotals", "claude_first_outputs",
           "codex_token_events", "CcusageError", "ccusage_claude_prices", "ccusage_claude_cost",
           "ccusage_prices", "ccusage_codex_cost", "one_hour_surcharge"]

CCUSAGE_VERSION = "18.0.11"
_TOOLS = Path(__file__).resolve().parents[2] / ".tools" / "npm" / "node_modules" / ".bin"
_BINARIES = {"claude_code": "ccusage", "codex_cli": "ccusage-codex"}


class CcusageError(RuntimeError):
    """ccusage is missing or failed; the message is one line."""


def ccusage_binary(agent: str) -> str | None:
    """Path of the ccusage executable for ``agent`` (``claude_code`` or ``codex_cli``), or None.

    The project-local install (``make ccusage`` puts it in ``.tools/npm``) wins over one on ``PATH``.
    """
    name = _BINARIES.get(agent)
    if name is None:
        raise ValueError(f"ccusage reads claude_code and codex_cli logs, not {agent!r}")
    local = _TOOLS / name
    if local.exists() and shutil.which("node"):
        return str(local)
    return shutil.which(name)


@dataclass(frozen=True)
class CcusageTotals:
    """ccusage's session totals for one log, in the bill's names."""

    input_tokens: int  # uncached prompt tokens (Codex: input less cached input)
    cache_write_tokens: int
    cached_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost_usd: float
    raw: dict  # the whole JSON report


def _layout(path: Path, agent: str, root: Path) -> dict[str, str]:
    """Copy the log where the tool looks; the environment that points it there."""
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in path.stem) or "session"
    if agent == "claude_code":
        folder = root / "projects" / stem
        folder.mkdir(parents=True)
        shutil.copyfile(path, folder / f"{stem}.jsonl")
        return {"CLAUDE_CONFIG_DIR": str(root)}
    folder = root / "sessions" / "2026" / "01" / "01"
    folder.mkdir(parents=True)
    shutil.copyfile(path, folder / f"rollout-2026-01-01T00-00-00-{stem}.jsonl")
    return {"CODEX_HOME": str(root)}


def run_ccusage(path: str | os.PathLike, agent: str, timeout: float = 120.0) -> CcusageTotals:
    """ccusage's ``session --offline --json`` totals for the one log at ``path``."""
    binary = ccusage_binary(agent)
    if binary is None:
        raise CcusageError(f"{_BINARIES[agent]} not found (make ccusage installs it with npm)")
    with tempfile.TemporaryDirectory(prefix="nh-ccusage-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
        env.update(_layout(Path(path), agent, Path(tmp)), TZ="UTC", NO_COLOR="1", HOME=tmp)
        try:
            done = subprocess.run([binary, "session", "--offline", "--json"], capture_output=True, text=True,
                                  env=env, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise CcusageError(f"{binary} took more than {timeout:g} s on {path}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise CcusageError(f"{binary} exited {done.returncode} on {path}: {last}")
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise CcusageError(f"{binary} printed no JSON for {path}") from None
    return _totals(report, agent)


def _totals(report: dict, agent: str) -> CcusageTotals:
    t = report.get("totals") or {}
    if agent == "claude_code":
        return CcusageTotals(t.get("inputTokens", 0), t.get("cacheCreationTokens", 0), t.get("cacheReadTokens", 0),
                             t.get("outputTokens", 0), 0, float(t.get("totalCost", 0.0)), report)
    cached = t.get("cachedInputTokens", 0)
    return CcusageTotals(t.get("inputTokens", 0) - cached, 0, cached, t.get("outputTokens", 0),
                         t.get("reasoningOutputTokens", 0), float(t.get("costUSD", 0.0)), report)


def _records(path: Path, with_shared_line: bool = False):
    """Every JSON object of a JSONL file, several per line when a line holds several (real Claude Code files);
    with ``with_shared_line``, (object, whether its line holds another object too) pairs."""
    decoder = json.JSONDecoder()
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            i, n = 0, len(line)
            found = []
            while i < n:
                while i < n and line[i].isspace():
                    i += 1
                if i >= n:
                    break
                try:
                    obj, i = decoder.raw_decode(line, i)
                except json.JSONDecodeError:
                    break
                if isinstance(obj, dict):
                    found.append(obj)
            for obj in found:
                yield (obj, len(found) > 1) if with_shared_line else obj


def claude_first_outputs(path: str | os.PathLike) -> dict[tuple, int]:
    """``output_tokens`` of the first record of every response (``message.id``, ``requestId``), as ccusage keeps it."""
    first: dict[tuple, int] = {}
    for rec in _records(Path(path)):
        msg = rec.get("message")
        if rec.get("type") != "assistant" or not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
            continue
        key = (msg.get("id"), rec.get("requestId"))
        if key not in first:
            first[key] = int(msg["usage"].get("output_tokens") or 0)
    return first


def codex_token_events(path: str | os.PathLike, unread: bool = False) -> list[tuple[dict[str, Any], bool]]:
    """Every Codex ``token_count`` event ccusage counts: its ``last_token_usage`` and whether it repeats the previous.

    A repeat carries the same cumulative ``total_token_usage`` as the event
    before it; all-zero usages (the marker after a compaction) are left out,
    as ccusage leaves them out, and so is an event on a line holding two
    records (ccusage's ``JSON.parse`` of the line fails; the bill reads both).
    ``unread=True`` gives those instead: what the bill has and ccusage has not.
    """
    out: list[tuple[dict, bool]] = []
    previous = None
    for rec, shared in _records(Path(path), with_shared_line=True):
        payload = rec.get("payload")
        if rec.get("type") != "event_msg" or not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info") or {}
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        repeat = total is not None and total == previous
        if total is not None:
            previous = total
        if not isinstance(last, dict):
            continue
        if not any(last.get(k) for k in ("input_tokens", "cached_input_tokens", "output_tokens",
                                         "reasoning_output_tokens")):
            continue
        if shared == unread:
            out.append((last, repeat))
    return out




# ---------------------------------------------------------------- ccusage's own dollars, recomputed


_TABLE_SCRIPT = r"""
const fs = require('fs');
const src = fs.readFileSync(process.argv[1], 'utf8');
const at = src.indexOf('const ' + process.argv[2] + ' = ');
if (at < 0) { process.exit(3); }
const start = src.indexOf('{', at);
let depth = 0, k = start;
for (; k < src.length; k++) { if (src[k] === '{') depth++; else if (src[k] === '}' && --depth === 0) break; }
process.stdout.write(JSON.stringify(Function('return (' + src.slice(start, k + 1) + ')')()));
"""
_PREFIXES = {"claude_code": ("anthropic/", "claude-3-5-", "claude-3-", "claude-", "openrouter/openai/"),
             "codex_cli": ("openai/", "azure/", "openrouter/openai/")}  # the names ccusage tries after the model's
_TABLES = {"claude_code": "PREFETCHED_CLAUDE_PRICING", "codex_cli": "PREFETCHED_CODEX_PRICING"}
_CODEX_ALIASES = {"gpt-5-codex": "gpt-5", "gpt-5.3-codex": "gpt-5.2-codex"}  # @ccusage/codex's alias map
_TIER = 200_000  # ccusage's DEFAULT_TIERED_THRESHOLD


def ccusage_prices(agent: str = "claude_code") -> dict:
    """ccusage's offline price table for ``agent`` (LiteLLM's, as shipped in the installed package), read with node."""
    binary = ccusage_binary(agent)
    node = shutil.which("node")
    if binary is None or node is None:
        raise CcusageError("ccusage or node not found (make ccusage installs it with npm)")
    dist = Path(os.path.realpath(binary)).parent
    for js in sorted(dist.glob("*.js")):
        done = subprocess.run([node, "-e", _TABLE_SCRIPT, str(js), _TABLES[agent]], capture_output=True, text=True,
                              timeout=60, check=False)
        if done.returncode == 0 and done.stdout:
            return json.loads(done.stdout)
    raise CcusageError(f"no {_TABLES[agent]} table in {dist}")


def ccusage_claude_prices() -> dict:
    """ccusage's offline Claude price table."""
    return ccusage_prices("claude_code")


def _match(model: str, table: dict, agent: str = "claude_code") -> dict | None:
    """ccusage's model look-up: the name, the name behind each provider prefix, then any substring either way."""
    for candidate in (model, *(p + model for p in _PREFIXES[agent])):
        if candidate in table:
            return table[candidate]
    lower = model.lower()
    for key, value in table.items():
        k = key.lower()
        if k in lower or lower in k:
            return value
    return None


def _tiered(tokens: int, base: float | None, above: float | None) -> float:
    if not tokens or tokens <= 0:
        return 0.0
    if tokens > _TIER and above is not None:
        return (tokens - _TIER) * above + (min(tokens, _TIER) * base if base is not None else 0.0)
    return tokens * base if base is not None else 0.0


def ccusage_claude_cost(path: str | os.PathLike, table: dict) -> float:
    """The dollars ccusage 18 reports for a Claude Code log, recomputed the way it computes them.

    Line by line (a line holding two records is skipped, as ``JSON.parse``
    skips it), the first record of each ``message.id`` + ``requestId``, its
    ``costUSD`` when the record has one, else its usage priced per record with
    the 200k-token tiers and the fast-mode multiplier.
    """
    seen: set[str] = set()
    total = 0.0
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            msg = rec.get("message") if isinstance(rec, dict) else None
            usage = msg.get("usage") if isinstance(msg, dict) else None
            counted = isinstance(usage, dict) and all(isinstance(usage.get(k), (int, float))
                                                      for k in ("input_tokens", "output_tokens"))
            if not isinstance(msg, dict) or not isinstance(usage, dict) or not counted:
                continue
            if msg.get("content") is not None and not isinstance(msg.get("content"), list):
                continue
            key = f"{msg.get('id')}:{rec.get('requestId')}" if msg.get("id") and rec.get("requestId") else None
            if key is not None and key in seen:
                continue
            if key is not None:
                seen.add(key)
            if isinstance(rec.get("costUSD"), (int, float)):
                total += rec["costUSD"]
                continue
            price = _match(msg.get("model") or "", table) if msg.get("model") else None
            if price is None:
                continue
            cost = (_tiered(usage.get("input_tokens", 0), price.get("input_cost_per_token"),
                            price.get("input_cost_per_token_above_200k_tokens"))
                    + _tiered(usage.get("output_tokens", 0), price.get("output_cost_per_token"),
                              price.get("output_cost_per_token_above_200k_tokens"))
                    + _tiered(usage.get("cache_creation_input_tokens") or 0,
                              price.get("cache_creation_input_token_cost"),
                              price.get("cache_creation_input_token_cost_above_200k_tokens"))
                    + _tiered(usage.get("cache_read_input_tokens") or 0, price.get("cache_read_input_token_cost"),
                              price.get("cache_read_input_token_cost_above_200k_tokens")))
            if usage.get("speed") == "fast":
                cost *= (price.get("provider_specific_entry") or {}).get("fast", 1)
            total += cost
    return total


def ccusage_codex_cost(report: dict, table: dict) -> float:
    """The dollars @ccusage/codex 18 reports, recomputed from its per-model token counts and its price table.

    Its look-up (name, provider prefixes, substring, then the alias map when
    nothing priced was found; an unknown model costs 0) and its formula:
    uncached input, cached input (at the input price when no cache price is
    listed) and output, each at the price per token.
    """
    total = 0.0
    for session in report.get("sessions") or ():
        for model, t in (session.get("models") or {}).items():
            price = _match(model, table, "codex_cli")
            alias = _CODEX_ALIASES.get(model)
            if alias is not None and (price is None or not any(
                    (price.get(k) or 0) > 0 for k in ("input_cost_per_token", "output_cost_per_token",
                                                       "cache_read_input_token_cost"))):
                found = _match(alias, table, "codex_cli")
                price = found if found is not None else price
            if price is None:
                continue
            inp, cached = t.get("inputTokens", 0), t.get("cachedInputTokens", 0)
            cached = min(cached, inp)
            in_price = price.get("input_cost_per_token") or 0.0
            cache_price = price.get("cache_read_input_token_cost")
            total += (max(inp - cached, 0) * in_price + cached * (in_price if cache_price is None else cache_price)
                      + t.get("outputTokens", 0) * (price.get("output_cost_per_token") or 0.0))
    return total


def one_hour_surcharge(requests: Any) -> float:
    """Dollars the bill charges above ccusage 18's pricing of the same counts: its 1-hour cache writes.

    ccusage prices every cache write at ``cache_creation_input_token_cost`` (the 5-minute price); the bill
    (``bill.request_cost``) prices a write made for one hour (``cache_write_1h_tokens``) at the 1-hour price,
    as Anthropic bills it. Over the requests whose model has a price here.
    """
    from .bill import price_for_model, request_cost

    total = 0.0
    for r in requests:
        u, p = r.usage, price_for_model(r.model)
        if u is None or p is None:
            continue
        total += (request_cost(u, p) or 0.0) - p.cost(u.prompt_tokens, u.cached_tokens, u.completion_tokens,
                                                      u.cache_write_tokens)
    return total
