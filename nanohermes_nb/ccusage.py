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
  ones) and so counts a repeated event twice; the bill counts it once. The
  difference is exactly the repeats (``codex_token_events``).
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
           "codex_token_events", "CcusageError"]

CCUSAGE_VERSION = "18.0.11"
_TOOLS = Path(__file__).resolve().parents[1] / ".tools" / "npm" / "node_modules" / ".bin"
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
    raw: dict


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
    return _totals(report.get("totals") or {}, agent)


def _totals(t: dict, agent: str) -> CcusageTotals:
    if agent == "claude_code":
        return CcusageTotals(t.get("inputTokens", 0), t.get("cacheCreationTokens", 0), t.get("cacheReadTokens", 0),
                             t.get("outputTokens", 0), 0, float(t.get("totalCost", 0.0)), t)
    cached = t.get("cachedInputTokens", 0)
    return CcusageTotals(t.get("inputTokens", 0) - cached, 0, cached, t.get("outputTokens", 0),
                         t.get("reasoningOutputTokens", 0), float(t.get("costUSD", 0.0)), t)


def _records(path: Path):
    """Every JSON object of a JSONL file, several per line when a line holds several (real Claude Code files)."""
    decoder = json.JSONDecoder()
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            i, n = 0, len(line)
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
                    yield obj


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


def codex_token_events(path: str | os.PathLike) -> list[tuple[dict[str, Any], bool]]:
    """Every Codex ``token_count`` event ccusage counts: its ``last_token_usage`` and whether it repeats the previous.

    A repeat carries the same cumulative ``total_token_usage`` as the event
    before it; all-zero usages (the marker after a compaction) are left out,
    as ccusage leaves them out.
    """
    out: list[tuple[dict, bool]] = []
    previous = None
    for rec in _records(Path(path)):
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
        out.append((last, repeat))
    return out
