"""Reading coding agents' own logs, side by side with the floor (issue 24).

Run: .venv/bin/python bench/bench_agentlogs.py [FILE ...]

For each log (default: the largest Claude Code and Codex logs of ``../shared/agentlogs``,
else the vendored ``data/agentlogs``): the floor (read the bytes, ``json.loads`` every
line), ``load_transcript`` alone, and ``load_transcript`` plus the default ledger
(``replay`` with its defaults), each the best of several runs, and their ratios to the
floor. The issue's bar: load + default ledger <= 15x the floor on the 4 MB Claude log.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanohermes_nb.engine.ledger import replay  # noqa: E402
from nanohermes_nb.transcripts import load_transcript  # noqa: E402

REPEATS = 5


def floor(path: Path) -> None:
    """What any reader of the log must do: read it and parse every record."""
    decoder = json.JSONDecoder()
    for line in path.read_bytes().split(b"\n"):
        if line.strip():
            text = line.decode("utf-8")
            try:
                json.loads(text)
            except json.JSONDecodeError:  # two records on one line
                decoder.raw_decode(text)


def best(fn, path: Path) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        fn(path)
        times.append(time.perf_counter() - started)
    return min(times)


def default_files() -> list[Path]:
    shared = ROOT.parent / "shared" / "agentlogs"
    folder = shared if shared.is_dir() else ROOT / "data" / "agentlogs"
    out = []
    for agent in ("claude-code", "codex"):
        logs = sorted((folder / agent).glob("*.jsonl"), key=lambda p: p.stat().st_size)
        if logs:
            out.append(logs[-1])
    return out


def main(paths: list[Path]) -> None:
    print(f"best of {REPEATS} runs each")
    for path in paths:
        base = best(floor, path)
        load = best(load_transcript, path)
        both = best(lambda p: replay(load_transcript(p)), path)
        t = load_transcript(path)
        print(f"{path.name}: {path.stat().st_size / 1e6:.1f} MB, {len(t)} messages, {len(t.requests)} requests")
        print(f"  floor (read + json.loads per line) {base * 1000:7.1f} ms")
        print(f"  load_transcript                    {load * 1000:7.1f} ms  {load / base:5.1f}x the floor")
        print(f"  load + default ledger              {both * 1000:7.1f} ms  {both / base:5.1f}x the floor")


if __name__ == "__main__":
    main([Path(a) for a in sys.argv[1:]] or default_files())
