"""``nanohermes-nb report`` over a folder of agent logs, side by side with the floor of reading them (issue 33).

Run: .venv/bin/python bench/bench_report.py [DIR ...]

Over every agent log the report finds under DIR (default: ``../shared/agentlogs`` beside the checkout,
else the vendored ``data/agentlogs``), measured in one run, interleaved, best of several:

- the floor: read every file's bytes and ``json.loads`` every line (``raw_decode`` where a line holds two
  records; a Markdown history is only decoded), what any reader of the logs must do;
- ``load_transcript`` of every file (the package's reading, without the report);
- the report's default tables: ``usage_rows`` (find, read once, attach sub-agents, price each request)
  then ``summarize`` by day, project, model and session and ``money_parts``;
- the same with the ``tools`` table (``tool_outputs``: every tool result measured);
- the command itself, ``nanohermes-nb report DIR --json`` in a fresh interpreter (startup included).

Each figure is also given as a ratio to the floor, so it holds on another machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanohermes_nb.engine.usage_report import GROUPS, money_parts, summarize, tool_outputs, usage_rows  # noqa: E402
from nanohermes_nb.transcripts import TranscriptError, load_transcript  # noqa: E402
from nanohermes_nb.transcripts.agentlogs.discovery import session_files  # noqa: E402

REPEATS = 3


def floor(paths: list[Path]) -> None:
    """Read every file and parse every record: what any reader of the logs must do."""
    decoder = json.JSONDecoder()
    for path in paths:
        raw = path.read_bytes()
        if path.suffix == ".md":
            raw.decode("utf-8", errors="replace")
            continue
        for line in raw.split(b"\n"):
            if not line.strip():
                continue
            text = line.decode("utf-8", errors="replace")
            end, size = 0, len(text)
            while end < size:
                try:
                    _, end = decoder.raw_decode(text, end)
                except json.JSONDecodeError:
                    break
                while end < size and text[end] in " \t\r":
                    end += 1


def load_all(paths: list[Path]) -> None:
    for path in paths:
        try:
            load_transcript(path)
        except TranscriptError:
            pass


def report(roots: list[Path], tools: bool = False) -> None:
    found = usage_rows(roots, keep_sessions=tools)
    for by in GROUPS:
        summarize(found.rows, by)
    money_parts(found.rows)
    if tools:
        tool_outputs(found.sessions)


def command(roots: list[Path]) -> None:
    subprocess.run([sys.executable, "-m", "nanohermes_nb", "report", *map(str, roots), "--json"], check=True,
                   capture_output=True, timeout=900)


def main(roots: list[Path]) -> None:
    paths = session_files(roots)
    size = sum(p.stat().st_size for p in paths)
    found = usage_rows(roots)
    print(f"{', '.join(map(str, roots))}: {len(paths)} logs, {size / 1e6:.1f} MB, {len(found.rows):,} requests "
          f"with usage; best of {REPEATS} runs each, interleaved")
    jobs = {"floor (read + json.loads per record)": lambda: floor(paths),
            "load_transcript of every file": lambda: load_all(paths),
            "report, default tables": lambda: report(roots),
            "report, with the tools table": lambda: report(roots, tools=True),
            "nanohermes-nb report --json (process)": lambda: command(roots)}
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(REPEATS):
        for name, job in jobs.items():
            started = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - started)
    base = min(times["floor (read + json.loads per record)"])
    for name, values in times.items():
        t = min(values)
        print(f"  {name:40s} {t:7.2f} s  {t / base:5.1f}x the floor")


if __name__ == "__main__":
    given = [Path(a) for a in sys.argv[1:]]
    shared = ROOT.parent / "shared" / "agentlogs"
    main(given or [shared if shared.is_dir() else ROOT / "data" / "agentlogs"])
