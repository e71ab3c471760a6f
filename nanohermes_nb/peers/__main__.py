"""``python -m nanohermes_nb.peers [PATH ...] [--stride K] [--policies a,b]``: the agreement table, as Markdown.

PATH: transcript files or folders (default: the vendored sample, data/transcripts/).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .._checkout import missing_checkout, require_checkout
from ..transcripts import iter_transcript_paths
from . import agreement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nanohermes_nb.peers", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="transcript files or folders (default: data/transcripts/)")
    parser.add_argument("--stride", type=int, default=1, help="compare every K-th tool-batch point (default 1: all)")
    parser.add_argument("--policies", help="comma-separated policy names (default: every peer)")
    args = parser.parse_args(argv)
    if not args.paths:  # the vendored sample lives in the repository, not in a wheel
        missing = missing_checkout("python -m nanohermes_nb.peers without PATH")
        if missing is not None:
            print(f"error: {missing}", file=sys.stderr)
            return 2
        args.paths = [str(require_checkout("the vendored sample") / "data" / "transcripts")]
    files = [f for p in args.paths for f in (iter_transcript_paths(Path(p)) if Path(p).is_dir() else [Path(p)])]
    started = time.perf_counter()
    table = agreement(files, policies=args.policies.split(",") if args.policies else None, stride=args.stride)
    header = "| " + " | ".join(table.columns) + " |"
    print(header)
    print("|" + "---|" * len(table.columns))
    for row in table.itertuples(index=False):
        print("| " + " | ".join("" if v is None or v != v else (f"{v:,}" if isinstance(v, int) else str(v))
                                for v in row) + " |")
    print(f"\n{len(files)} transcripts, every {args.stride} point(s); {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
