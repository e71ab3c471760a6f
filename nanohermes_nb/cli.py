"""``nanohermes-nb``: the ledger, the history check, one compaction, and sweeps, from a shell.

Any unreadable or malformed input exits 2 with one line naming the file and where
it broke; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

__all__ = ["main", "write_json_atomic"]

EXIT_OK, EXIT_PROBLEMS, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like bad input
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _int_list(text: str) -> list[int]:
    try:
        values = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected non-negative integers, got {text!r}")
    return values


def _nonneg(text: str) -> int:
    values = _int_list(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"expected one integer, got {text!r}")
    return values[0]


def write_json_atomic(path: str | os.PathLike, data: Any) -> None:
    """Write JSON to a temporary file beside ``path`` and rename it: never half-written."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _summarizer(name: str):
    from .summarizers import ENV_BASE_URL, ExtractiveSummarizer, OpenAICompatibleSummarizer, PlaceholderSummarizer

    if name == "extractive":
        return ExtractiveSummarizer()
    if name == "placeholder":
        return PlaceholderSummarizer()
    llm = OpenAICompatibleSummarizer.from_env()
    if llm is None:
        raise SystemExit(f"nanohermes-nb: error: --summarizer llm needs {ENV_BASE_URL} to be set")
    return llm


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--budget", type=_nonneg, default=120_000, help="session budget (default 120000)")
    p.add_argument("--keep-recent", type=_nonneg, default=10, help="messages kept after compaction (default 10)")
    p.add_argument("--summarizer", choices=("extractive", "llm", "placeholder"), default="extractive",
                   help="extractive (offline, default), llm (NANOHERMES_LLM_* env), placeholder")
    p.add_argument("--summary-role", choices=("system", "user"), default="system")
    p.add_argument("--cut", choices=("forward", "backward"), default="forward")
    p.add_argument("--excerpt-tool-calls", action="store_true", help="put name(arguments) in the excerpt")


def build_parser() -> argparse.ArgumentParser:
    from .policies import POLICIES
    from .sizing import UNITS

    parser = _Parser(prog="nanohermes-nb", description="Replay, check and compact agent transcripts.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("ledger", help="replay a transcript and print one row per model request")
    p.add_argument("file")
    _common(p)
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--policy", choices=sorted(POLICIES), default="nanohermes")
    p.add_argument("--by-turn", action="store_true", help="print the per-turn table instead")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("check", help="exit 0 if the history is legal, 1 with one line per problem")
    p.add_argument("file")
    p.add_argument("--profile", choices=("openai", "anthropic", "gemini"), default="openai")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("compact", help="compact a transcript once, as one context")
    p.add_argument("file")
    _common(p)
    p.add_argument("--force", action="store_true", help="compact even under the budget (/compact)")
    p.add_argument("-o", "--output", help="write the compacted message list here (JSON)")
    p.add_argument("--show", action="store_true", help="print the before/after table")
    p.add_argument("--verify", action="store_true", help="print the article's verification checklist")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("sweep", help="replay files or folders under many settings")
    p.add_argument("paths", nargs="+")
    p.add_argument("--budgets", type=_int_list, default=[120_000])
    p.add_argument("--keep-recent", type=_int_list, default=[10])
    p.add_argument("--policies", default="nanohermes", help="comma-separated policy names")
    p.add_argument("--unit", choices=UNITS, default="bytes")
    p.add_argument("--summarizer", choices=("extractive", "llm", "placeholder"), default="extractive")
    p.add_argument("--retention", action="store_true", help="add the retention score")
    p.add_argument("--csv", help="also write the table to this CSV file")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    return parser


def _load(path: str):
    from .transcripts import load_transcript

    return load_transcript(path)


def _cmd_ledger(args) -> int:
    from .ledger import replay

    messages = _load(args.file)
    ledger = replay(messages, budget=args.budget, keep_recent=args.keep_recent,
                    summarizer=_summarizer(args.summarizer), unit=args.unit, policy=args.policy,
                    summary_role=args.summary_role, cut=args.cut,
                    excerpt_tool_calls=args.excerpt_tool_calls)
    frame = ledger.by_turn() if args.by_turn else ledger.requests
    if args.json:
        print(frame.to_json(orient="records", force_ascii=False))
        return EXIT_OK
    for note in ledger.notes:
        print(f"# {note}")
    print(frame.to_string(index=False))
    print(f"# {ledger.summary()}")
    print(f"# {ledger.caveat}")
    return EXIT_OK


def _cmd_check(args) -> int:
    from .history import check_history

    problems = check_history(_load(args.file), args.profile)
    if args.json:
        print(json.dumps([{"index": p.index, "code": p.code, "reason": p.reason} for p in problems]))
    else:
        for p in problems:
            print(f"{args.file}: {p}")
    return EXIT_PROBLEMS if problems else EXIT_OK


def _cmd_compact(args) -> int:
    from .compaction import compact
    from .report import compaction_rows, text_table

    messages = _load(args.file)
    result = compact(list(messages), budget=args.budget, keep_recent=args.keep_recent,
                     summarizer=_summarizer(args.summarizer), force=args.force,
                     summary_role=args.summary_role, excerpt_tool_calls=args.excerpt_tool_calls,
                     cut=args.cut)
    if args.output:
        write_json_atomic(args.output, result.messages)
    if args.json:
        print(json.dumps({
            "compacted": result.compacted, "cut": result.cut, "naive_cut": result.naive_cut,
            "dropped": result.dropped_count, "note": result.note, "failure": result.failure,
            "size_before": result.size_before, "size_after": result.size_after,
            "reason": result.reason, "messages": len(result.messages),
        }, ensure_ascii=False))
    else:
        print(result.describe())
        if args.show:
            print(text_table(compaction_rows(result)))
        if args.verify and result.compacted:
            from .metrics import verify_compaction

            for c in verify_compaction(result):
                print(f"{'ok  ' if c.result else 'FAIL'} {c.check}: {c.expectation}" + (f" ({c.detail})" if c.detail else ""))
        if args.output:
            print(f"wrote {len(result.messages)} messages to {args.output}")
    return EXIT_OK


def _cmd_sweep(args) -> int:
    from .sweep import sweep

    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    from .policies import POLICIES

    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        print(f"nanohermes-nb: error: unknown policy {unknown[0]!r}; known: {', '.join(sorted(POLICIES))}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    from .transcripts import load_transcript, load_transcripts

    named = []
    for raw in args.paths:
        p = Path(raw)
        loaded = load_transcripts(p) if p.is_dir() else [load_transcript(p)]
        named.extend((Path(t.path).name, t) for t in loaded)
    progress = None if not args.no_progress else False
    if progress is None and len(named) > 1:
        progress = True
    frame = sweep(named, budgets=args.budgets, keep_recent=args.keep_recent, policies=policies,
                  summarizer=_summarizer(args.summarizer), unit=args.unit, retention=args.retention,
                  progress=progress)
    if args.csv:
        tmp = Path(args.csv).with_name(f".{Path(args.csv).name}.tmp")
        frame.to_csv(tmp, index=False)
        os.replace(tmp, args.csv)
    if args.json:
        print(frame.to_json(orient="records", force_ascii=False))
    else:
        print(frame.to_string(index=False))
    return EXIT_OK


_COMMANDS = {"ledger": _cmd_ledger, "check": _cmd_check, "compact": _cmd_compact, "sweep": _cmd_sweep}


def main(argv: Sequence[str] | None = None) -> int:
    from .transcripts import TranscriptError

    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except TranscriptError as exc:
        print(f"nanohermes-nb: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        name = getattr(exc, "filename", None) or ""
        print(f"nanohermes-nb: error: {name}{': ' if name else ''}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("nanohermes-nb: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
