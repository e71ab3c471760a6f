"""``nanohermes-nb``: the ledger, the history check, one compaction, and sweeps, from a shell.

One rule for every subcommand: a missing or unreadable path, a malformed file or
a bad option value exits 2 with one line naming the file or the option; never a
traceback. Text output is made for a terminal: tables fit ``COLUMNS`` (default
100) with a one-line legend (``--wide``: every column), counts are spelled with
the right plural, every piece of data passes through ``transcripts.base.printable``
(a transcript cannot send ESC or BEL to the terminal), and a character the
terminal cannot encode is printed as an escape instead of failing. ``--json``
(and ``--wide``, ``--csv``) give everything.

One module per command (``ledger`` with ``check``, ``compact``, ``sweep``, ``run``,
``sessions``), the grammar in ``parser``, what they share in ``common``. Each command
imports what it needs when it runs, so ``nanohermes-nb ledger`` imports neither
pandas, pyarrow nor httpx.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..views.tables import text_table
from .common import (
    EXIT_BAD_INPUT,
    EXIT_BUG,
    EXIT_INTERRUPTED,
    EXIT_OK,
    WIDTH,
    UsageError,
    err,
    plural,
    tolerant_streams,
    write_json_atomic,
)
from .compact import compact_command, verify_all
from .ledger import BY_TURN_COLUMNS, LEDGER_COLUMNS, check_command, ledger_command
from .parser import build_parser
from .report import report_command
from .run import run_command
from .sessions import sessions_command
from .sweep import SWEEP_COLUMNS, SWEEP_HEADERS, sweep_command
from .whatif import whatif_command

__all__ = ["main", "build_parser", "write_json_atomic", "text_table", "plural", "verify_all", "WIDTH",
           "LEDGER_COLUMNS", "BY_TURN_COLUMNS", "SWEEP_COLUMNS", "SWEEP_HEADERS"]

# Each command is one function of the parsed arguments returning the exit code.
_COMMANDS = {"ledger": ledger_command, "check": check_command, "compact": compact_command, "sweep": sweep_command,
             "run": run_command, "sessions": sessions_command, "whatif": whatif_command,
             "report": report_command}


def main(argv: Sequence[str] | None = None) -> int:
    """``nanohermes-nb ARGV``: the exit code; every error is one line on stderr, never a traceback."""
    from ..transcripts import TranscriptError

    tolerant_streams()
    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except (TranscriptError, UsageError) as exc:
        err(f"nanohermes-nb: error: {exc}")
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        name = getattr(exc, "filename", None) or ""
        err(f"nanohermes-nb: error: {name}{': ' if name else ''}{exc.strerror or exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err("nanohermes-nb: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line, not a traceback (NANOHERMES_DEBUG=1 shows it)
        if os.environ.get("NANOHERMES_DEBUG"):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        err(f"nanohermes-nb: internal error: {type(exc).__name__}{': ' if first else ''}{first:.300} "
            "(NANOHERMES_DEBUG=1 shows the traceback)")
        return EXIT_BUG


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
