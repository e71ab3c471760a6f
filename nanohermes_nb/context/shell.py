"""What a shell tool call runs, and the files it reads and writes (for probes and re-reads, issue 36).

Coding agents read and change files through the shell as often as through file tools (Codex reads
with ``sed -n '1,200p' path``, ``nl -ba``, ``cat``). ``shell_command`` finds the command text of a
call to any of the ``SHELL_TOOLS``; ``shell_files`` splits it at ``&&``, ``||``, ``;``, ``|`` and
newlines and names the files each step reads (``READERS``, ``sed`` without ``-i``) and writes
(``>``, ``>>``, ``tee``, ``sed -i``). A lexical reading: a path built from variables or globs is
not resolved, and a program that reads a file it is given (``python x.py``) does not count.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from typing import Any

from .messages import call_arguments, call_name

__all__ = ["SHELL_TOOLS", "READERS", "call_args", "shell_command", "shell_files", "shell_tokens"]

SHELL_TOOLS = {"Bash": "command", "bash": "command", "PowerShell": "command", "shell": "command", "exec": "command",
               "exec_command": "cmd", "local_shell": "command", "run_command": "command", "execute_bash": "command",
               "terminal": "command", "run_shell_command": "command"}
READERS = frozenset("cat nl head tail less more bat type Get-Content gc".split())
_REDIRECT = re.compile(r"\d?[<>]{1,2}|&>>?")
_REDIRECTED = re.compile(r"\d?[<>]|&>")
_WRITE_TO = re.compile(r"(?<![0-9&])>>?\s*([^\s;&|<>]+)")
_SEGMENTS = re.compile(r"&&|\|\||[;|\n]")
_SHELLY = re.compile(r"[<>$*{}()`]")
_NOT_A_PATH = re.compile(r"[\d,]+p?|\d+[,:]\d+|'.*'")
_SED_SCRIPT = re.compile(r"^(?:\d+,?\d*)?[sy]?/|^\d")


def call_args(call: Any) -> dict:
    """A call's arguments as a dict ({} when they are not a JSON object, e.g. a custom tool's free text)."""
    raw = call_arguments(call)
    try:
        value = json.loads(raw) if raw.lstrip().startswith("{") else {}
    except (ValueError, RecursionError):
        value = {}
    return value if isinstance(value, dict) else {}


def shell_command(call: Any) -> str | None:
    """The command text of a shell tool call (``Bash``, ``exec_command``, ``shell``'s argv), else None."""
    name = call_name(call)
    arg = SHELL_TOOLS.get(name)
    if arg is None:
        return None
    args = call_args(call)
    value = args.get(arg, args.get("command"))
    if isinstance(value, list):
        value = value[-1] if len(value) >= 3 and value[0] in ("bash", "sh", "zsh") else " ".join(map(str, value))
    return value.strip() if isinstance(value, str) and value.strip() else None


def shell_tokens(segment: str) -> list[str]:
    """A command's words as a POSIX shell splits them (plain whitespace when its quoting is broken)."""
    try:
        return shlex.split(segment, posix=True)
    except ValueError:
        return segment.split()


def _unredirected(tokens: list[str]) -> list[str]:
    """The tokens without redirections and their targets (``> out.txt``, ``2>/dev/null``, ``< in``)."""
    out, skip = [], False
    for t in tokens:
        if skip:
            skip = False
        elif _REDIRECT.fullmatch(t):
            skip = True
        elif not _REDIRECTED.match(t):
            out.append(t)
    return out


@functools.lru_cache(maxsize=8_192)  # a session runs the same commands again and again
def shell_files(command: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Files a shell command reads (``cat``, ``sed -n``, ``head`` ...) and writes (``>``, ``tee``, ``sed -i``)."""
    reads: list[str] = []
    writes = [m.group(1) for m in _WRITE_TO.finditer(command)
              if not m.group(1).startswith(("/dev/", "&"))]
    for segment in _SEGMENTS.split(command):
        tokens = [t for t in _unredirected(shell_tokens(segment))
                  if ("=" not in t or t.startswith("-")) and not _SHELLY.search(t)]
        while tokens and tokens[0] in ("do", "then", "sudo", "time", "xargs", "else"):
            tokens = tokens[1:]
        if not tokens:
            continue
        prog, rest = tokens[0].rsplit("/", 1)[-1], tokens[1:]
        paths = [t for t in rest if not t.startswith("-") and ("." in t or "/" in t or "\\" in t)
                 and not _NOT_A_PATH.fullmatch(t)]
        if prog == "sed":  # not its script (s/a/b/, /re/p, 1,20p)
            paths = [t for t in paths if not _SED_SCRIPT.match(t)]
        if prog == "tee" or (prog == "sed" and "-i" in rest):
            writes += paths
        elif prog in READERS or prog == "sed":
            reads += paths
    return tuple(reads), tuple(writes)
