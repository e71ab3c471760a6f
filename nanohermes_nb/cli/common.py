"""What every subcommand shares: exit codes, the one-line usage error, output for a terminal, inputs.

Every piece of data printed passes through ``transcripts.base.printable`` (a
transcript cannot send ESC, BEL or a bidi override to the terminal); JSON output
escapes the same characters as ``\\uXXXX`` and stays valid.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

from .._files import OutputRefused, output_target, write_atomic
from ..transcripts.base import one_line, printable
from ..views.tables import DEFAULT_WIDTH, terminal_width

EXIT_OK, EXIT_PROBLEMS, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BUG = 70  # EX_SOFTWARE: an exception nobody expected (one line; NANOHERMES_DEBUG=1 shows the traceback)
WIDTH = DEFAULT_WIDTH  # columns of the default text output when COLUMNS does not say


class UsageError(Exception):
    """Options that do not go together (one line, exit 2)."""

# ---------------------------------------------------------------- files


def write_json_atomic(path: str | os.PathLike, data: Any, inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Write JSON to a temporary file beside ``path`` and rename it: never half-written.

    Only onto a regular file (or a new name) that is none of ``inputs`` (``_files.output_target``).
    """
    def dump(f: IO[bytes]) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
        try:
            f.write(text.encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate from a log: \uXXXX escapes read back the same
            f.write((json.dumps(data, ensure_ascii=True, indent=1) + "\n").encode("ascii"))

    write_atomic(path, dump, inputs)


# ---------------------------------------------------------------- text for a terminal


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 event``, ``2 events``, ``1,500 requests``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def comment(text: str, width: int | None = None) -> list[str]:
    """``# text`` wrapped to ``width`` columns (default: ``COLUMNS``, else 100)."""
    width = width or terminal_width()
    return ["# " + line for line in textwrap.wrap(text, width - 2, break_on_hyphens=False)] or ["#"]


def table_width(args) -> int | None:
    """The width a table fits: None with ``--wide``, else ``COLUMNS`` (default 100)."""
    return None if getattr(args, "wide", False) else terminal_width()


def say(lines: Iterable[str]) -> None:
    """Lines for the terminal, each through ``printable``: data never sends a control character."""
    for line in lines:
        print(printable(line))


def err(text: str) -> None:
    """One line on stderr, through ``printable``, any word longer than a line clipped (``clip_words``)."""
    print(printable(clip_words(text)), file=sys.stderr)


def plain(value: Any) -> Any:
    """A JSON-ready value: numpy scalars unwrapped, NaN and NA as null."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return None if str(value) in ("<NA>", "NaT") else str(value)


def records(frame) -> list[dict]:
    """JSON-ready rows of a DataFrame, or of a list of row dicts (what the ledger gives without pandas)."""
    rows = frame if isinstance(frame, list) else frame.to_dict(orient="records")
    return [{str(k): plain(v) for k, v in row.items()} for row in rows]


def print_json(data: Any) -> None:
    """JSON on stdout, as UTF-8 text when the stream can carry it, else with ``\\uXXXX`` escapes.

    A lone surrogate (``"\\ud800"`` in a log) or a non-UTF-8 terminal then still gets
    valid JSON that reads back to the same strings.
    """
    data = plain(data)
    text = json.dumps(data, ensure_ascii=False).translate(JSON_ESCAPES)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(data, ensure_ascii=True)
    print(text)


# json.dumps escapes C0 controls but not DEL, C1 (0x9b is an 8-bit CSI) or bidi overrides: \uXXXX, still valid JSON
JSON_ESCAPES = {c: f"\\u{c:04x}" for c in [0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                           *range(0x2066, 0x206A)]}


def tolerant_streams() -> None:
    """Never fail on a character the terminal cannot encode: print it as a backslash escape."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a detached or exotic stream
                pass


def summarizer_named(name: str | None):
    """The summarizer ``--summarizer`` names (None: not given, the library's default); ``llm`` reads the
    NANOHERMES_LLM_* variables (one-line error)."""
    from ..context.summarizers import ExtractiveSummarizer, PlaceholderSummarizer

    if name is None:
        return None
    if name == "extractive":
        return ExtractiveSummarizer()
    if name == "placeholder":
        return PlaceholderSummarizer()
    from ..agent.models import ENV_BASE_URL, OpenAICompatibleSummarizer  # httpx: only when an LLM is asked for
    from ..agent.transport import TransportError
    from ..context.summarizers import SummarizerError

    try:
        llm = OpenAICompatibleSummarizer.from_env()
    except (SummarizerError, TransportError, ValueError) as exc:  # a bad key or URL: one line, the key never shown
        raise UsageError(f"--summarizer llm: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if llm is None:
        raise UsageError(f"--summarizer llm needs {ENV_BASE_URL} to be set")
    return llm


def policy_named(name: str, options: dict):
    """The configured policy, or a one-line error naming the option it does not have."""
    from ..policies import resolve_policy

    try:
        return resolve_policy(name, **options)
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def given(**values: Any) -> dict[str, Any]:
    """The options given on the command line: those left None are the library's defaults (``Settings``)."""
    return {k: v for k, v in values.items() if v is not None}


def settings_named(where: str, **values: Any):
    """``Settings`` with what the command line gave (None: ``Settings``'s own default); a bad combination
    (an unknown unit, a negative budget) is a one-line usage error."""
    from ..engine.settings import Settings

    try:
        return Settings.of(None, where, **given(**values))
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def policy_options(args) -> dict:
    """The policy options given on the command line (None: not given, the policy's own default)."""
    return {"keep_recent": args.keep_recent, "summary_role": args.summary_role, "cut": args.cut,
            "excerpt_tool_calls": args.excerpt_tool_calls}


def pricing_named(name: str | None):
    """The preset named on the command line (None: no pricing); an unknown name is a one-line usage error."""
    if name is None:
        return None
    from ..engine.pricing import PricingError, get_pricing

    try:
        return get_pricing(name)
    except PricingError as exc:
        raise UsageError(str(exc)) from None


def load(path: str):
    """The transcript at ``path``; what an agent log left out is said on stderr in one line."""
    from ..transcripts import load_transcript

    transcript = load_transcript(path)
    if transcript.skipped:  # an agent log read in part: say what was left out, in one line
        print(printable(one_line(f"nanohermes-nb: {path}: skipped: {'; '.join(transcript.skipped)}")),
              file=sys.stderr)
    return transcript


def output_path(option: str, path: str, inputs: Sequence[str | os.PathLike] = ()) -> None:
    """An output is written only onto a regular file (or a new name in a folder that exists) that is none
    of the inputs: found out before any work (a device node, a FIFO or the input itself is refused)."""
    try:
        output_target(path, inputs)
    except OSError as exc:  # OutputRefused, or a name the system refuses (too long, a NUL)
        raise UsageError(f"{option} {exc if isinstance(exc, OutputRefused) else f'{path}: {exc}'}") from None


def clip(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters with the count of what was left out (an option value can be 100 KB)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


_LONG_WORD = re.compile(r"\S{1001,}")


def clip_words(text: str) -> str:
    """Every run of more than 1,000 characters without a space (longer than any sane path) clipped to 200."""
    return _LONG_WORD.sub(lambda m: clip(m.group(0)), text) if len(text) > 1000 else text

