"""Command line: ``python3 -m logstat LOG [--top N] [--status] [--json | --csv | --markdown]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from . import export
from .parse import ParseError, parse_lines
from .report import render_status, render_top_paths, status_counts, top_paths


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="logstat", description="Reports over an access log.")
    p.add_argument("log", type=Path, help="access log in the Combined Log Format ('-' for stdin)")
    p.add_argument("--top", type=int, default=10, metavar="N", help="paths to show (default 10)")
    p.add_argument("--status", action="store_true", help="also show requests per status class")
    p.add_argument("--strict", action="store_true", help="stop at the first malformed line")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the report as JSON")
    fmt.add_argument("--csv", action="store_true", help="print the top paths as CSV")
    fmt.add_argument("--markdown", action="store_true", help="print the weekly-mail summary as Markdown")
    return p


def _read(path: Path) -> list[str]:
    if str(path) == "-":
        return sys.stdin.read().splitlines()
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.top < 1:
        print("logstat: --top must be at least 1", file=sys.stderr)
        return 2
    try:
        records = list(parse_lines(_read(args.log), strict=args.strict))
    except OSError as e:
        print(f"logstat: cannot read {args.log}: {e.strerror}", file=sys.stderr)
        return 2
    except ParseError as e:
        print(f"logstat: {e}", file=sys.stderr)
        return 1
    top = top_paths(records, args.top)
    if args.json:
        print(export.to_json(records, top))
        return 0
    if args.csv:
        print(export.to_csv(top), end="")
        return 0
    if args.markdown:
        print(export.to_markdown(records, top), end="")
        return 0
    print(f"{len(records)} requests")
    print()
    print(render_top_paths(top))
    if args.status:
        print()
        print(render_status(status_counts(records)))
    return 0
