"""Hostile input round two (issue 26): each fix measured side by side with what it replaced.

Run: .venv/bin/python bench/bench_hostile_agent.py

Every row runs in a forked child (tests/hostile_limits.py: own process group, a
timeout, a memory cap) and prints seconds and peak resident memory above the
child's start. "before" is the replaced code path, called directly:

- HTML to text: the standard library's ``HTMLParser`` (what ``html_to_text`` used)
  versus the linear walk, on pages of ``<a `` and of ``<li>x``;
- grep's pattern of nested groups: RE2 tracking capture groups versus
  ``never_capture`` (what grep asks now);
- glob of ``[`` * n: the old search for each ``]`` versus the new builder;
- a memory store holding one 10 MB hand-edited entry: BM25 over the entry as
  written versus the store's search (entries cut on read);
- a 3 GB sparse AGENTS.md: reading it whole (stopped at 256 MB) versus ``project_docs``.
"""

from __future__ import annotations

import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import re2  # noqa: E402
from hostile_limits import isolated  # noqa: E402

from nanohermes_nb.agent.memory import MemoryEntry, MemoryIndex, MemoryStore  # noqa: E402
from nanohermes_nb.agent.prompt import project_docs  # noqa: E402
from nanohermes_nb.agent.tools.matching import glob_regex  # noqa: E402
from nanohermes_nb.agent.tools.web import html_to_text  # noqa: E402

TIMEOUT = 60.0


def row(label: str, call, timeout: float = TIMEOUT) -> None:
    outcome = isolated(call, timeout=timeout, memory_mb=4096)
    state = f"killed at {timeout:.0f} s" if outcome.hung else f"{outcome.seconds:7.3f} s"
    extra = f" ({outcome.error[:60]})" if outcome.error else ""
    print(f"  {label:<58} {state:>16}  peak +{outcome.peak_mb:6.0f} MB{extra}")


def stdlib_html(doc: str) -> int:
    parser = HTMLParser(convert_charrefs=True)
    parser.feed(doc)
    parser.close()
    return 0


def html() -> None:
    print("HTML to text")
    for unit, sizes in (("<a ", (12_288, 24_576, 49_152, 2 * 1024 * 1024)), ("<li>x", (2 * 1024 * 1024,))):
        for size in sizes:
            doc = unit * (size // len(unit))
            if size <= 49_152 or unit != "<a ":
                label = f"HTMLParser   {unit!r} x {size // len(unit):,} ({size // 1024} KB)"
                row(label, lambda d=doc: stdlib_html(d))
            label = f"linear walk  {unit!r} x {size // len(unit):,} ({size // 1024} KB)"
            row(label, lambda d=doc: len(html_to_text(d)))


def grep_pattern() -> None:
    print("grep: a pattern of nested groups, searched over three lines")
    lines = ["xxxx", "abc", "a" * 100]
    for n in (2_500, 5_000, 10_000):
        pattern = "(" * n + "a" + ")" * n
        for capture in (True, False):
            def search(p: str = pattern, c: bool = capture) -> int:
                options = re2.Options()
                options.log_errors = False
                options.never_capture = not c
                rx = re2.compile(p, options)
                return sum(1 for line in lines if rx.search(line))

            row(f"{'groups tracked' if capture else 'never_capture '}  {2 * n + 1:,} characters", search)


def old_glob_scan(pattern: str) -> int:
    """The replaced builder's search for the ] of every [ (what made it quadratic)."""
    i, n, steps = 0, len(pattern), 0
    while i < n:
        if pattern[i] == "[":
            j = i + 1
            while j < n and pattern[j] != "]":
                j += 1
                steps += 1
        i += 1
    return steps


def glob_pattern() -> None:
    print("glob: '[' * n")
    for n in (10_000, 20_000, 40_000):
        row(f"old search for ]  n = {n:,}", lambda n=n: old_glob_scan("[" * n))
        row(f"new builder       n = {n:,}", lambda n=n: bool(glob_regex("[" * n)))


def memory() -> None:
    print("memory store: one hand-edited entry of 10 MB, searched")
    text = "pnpm " * 2_000_000
    row("BM25 over the entry as written", lambda: len(MemoryIndex([MemoryEntry("fact", text)]).search("pnpm", 4)))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.json"
        path.write_text('{"version": 1, "entries": [{"kind": "fact", "text": "' + text + '"}]}')
        row("MemoryStore.search (entries cut on read)", lambda: len(MemoryStore(path).search("pnpm")))


def sparse_docs() -> None:
    print("a 3 GB sparse AGENTS.md")
    with tempfile.TemporaryDirectory() as folder:
        ws = Path(folder)
        with open(ws / "AGENTS.md", "wb") as f:
            f.write(b"# rules\n")
            f.truncate(3 << 30)

        def read_whole() -> int:  # what project_docs did, stopped at 256 MB here
            with open(ws / "AGENTS.md", "rb") as f:
                return len(f.read(256 << 20))

        row("read whole (first 256 MB of 3 GB only)", read_whole)
        row("project_docs", lambda: len(project_docs(ws, home=ws / "home")))


def main() -> None:
    html()
    grep_pattern()
    glob_pattern()
    memory()
    sparse_docs()


if __name__ == "__main__":
    main()
