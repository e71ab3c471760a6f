"""The tools as the model sees them: names, descriptions, JSON schemas, and the check of a call's arguments.

``tool_specs(budgets)`` builds the seven schemas advertised to the model (their
descriptions quote the caps of the given budgets); ``check_args`` turns a call's
arguments (a JSON string or a mapping) into a dict that fits its schema, or a
``ToolError`` that the dispatcher shows the model as ``error: ...``.
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...context.budgets import DEFAULT_BUDGETS, Budgets

ARROW = "\u2192"  # read_file numbers lines as N→text
DEFAULT_COMMAND_TIMEOUT = 120.0  # seconds, run_command `timeout` default

__all__ = ["ToolError", "ToolSpec", "tool_specs", "TOOL_SPECS", "TOOL_NAMES", "check_args"]


class ToolError(Exception):
    """A bad tool call: shown to the model as ``error: <message>``, never raised by dispatch."""


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about one tool: name, description, JSON-schema parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def as_openai(self) -> dict[str, Any]:
        """The ``tools`` entry of an OpenAI-compatible chat request."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": json.loads(json.dumps(self.parameters)),
            },
        }


def _schema(props: dict[str, dict[str, Any]], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False}


def tool_specs(budgets: Budgets = DEFAULT_BUDGETS) -> tuple[ToolSpec, ...]:
    """The seven tool specs, their descriptions quoting the caps of ``budgets``."""
    b = budgets
    return (
        ToolSpec("read_file",
                 f"Read a text file of the workspace as numbered lines `N{ARROW}text`. "
                 f"Files over {b.max_file_bytes} bytes are refused. At most "
                 f"{b.read_max_lines} lines per call; use offset/limit for the rest.",
                 _schema({"path": {"type": "string", "description": "path relative to the workspace"},
                          "offset": {"type": "integer", "minimum": 1,
                                     "description": "first line to show, 1-based (default 1)"},
                          "limit": {"type": "integer", "minimum": 1,
                                    "description": f"lines to show (default {b.read_max_lines})"}},
                         ["path"])),
        ToolSpec("grep",
                 "Search file contents with a regular expression (RE2 syntax, like Rust's regex: "
                 "no backreferences or look-around); rows are "
                 f"`path:line: text`. Skips .git, binary files and files over "
                 f"{b.grep_max_file_bytes} bytes; stops after {b.grep_max_matches} matches.",
                 _schema({"pattern": {"type": "string", "description": "regular expression (RE2 syntax)"},
                          "path": {"type": "string",
                                   "description": "file or folder to search, relative (default: workspace)"}},
                         ["pattern"])),
        ToolSpec("glob",
                 "List workspace files matching a glob pattern (`*`, `?`, `[..]`, `**` for any "
                 f"depth), sorted; at most {b.glob_max_paths} paths.",
                 _schema({"pattern": {"type": "string", "description": "e.g. `**/*.py`"}},
                         ["pattern"])),
        ToolSpec("run_command",
                 "Run a shell command in the workspace and wait for it. Returns the exit code, "
                 f"stdout and stderr (each cut to {b.command_capture_bytes} bytes).",
                 _schema({"command": {"type": "string"},
                          "timeout": {"type": "number", "exclusiveMinimum": 0,
                                      "description": f"seconds (default {DEFAULT_COMMAND_TIMEOUT:g})"}},
                         ["command"])),
        ToolSpec("start_task",
                 "Start a long-running shell command in the background; returns a task id. "
                 f"Its first {b.task_capture_bytes} bytes of output are kept.",
                 _schema({"command": {"type": "string"}}, ["command"])),
        ToolSpec("task_output",
                 "Status (running / exited) and output so far of a background task.",
                 _schema({"id": {"type": "string", "description": "id returned by start_task"}},
                         ["id"])),
        ToolSpec("web_fetch",
                 "Fetch an http(s) URL; HTML becomes readable text. The body is read up to "
                 f"{b.web_max_response_bytes} bytes and the text cut to max_chars.",
                 _schema({"url": {"type": "string"},
                          "max_chars": {"type": "integer", "minimum": 1,
                                        "description": f"default {b.web_max_chars}"}},
                         ["url"])),
    )


TOOL_SPECS: tuple[ToolSpec, ...] = tool_specs(DEFAULT_BUDGETS)
TOOL_NAMES: tuple[str, ...] = tuple(s.name for s in TOOL_SPECS)
_SPEC_BY_NAME = {s.name: s for s in TOOL_SPECS}


_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxother = 80
_BRIEF.maxlevel = 3


def _brief(value: Any) -> str:
    """A short repr for an error message: a list nested 5,000 deep or a 1 MB string stays short."""
    return _BRIEF.repr(value)


def check_args(name: str, args: Any) -> dict[str, Any]:
    """The call's arguments as a dict, checked against the tool's schema."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as e:
            raise ToolError(f"{name}: arguments are not valid JSON ({e.msg} at column {e.colno})") from None
        except RecursionError:  # the decoder recurses per level: 5,000 nested arrays
            raise ToolError(f"{name}: arguments are nested too deeply to read") from None
        except ValueError as e:  # e.g. an integer of more than 4,300 digits
            raise ToolError(f"{name}: arguments hold a number too long to read ({str(e).split(':')[0]})") from None
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ToolError(f"{name}: arguments must be an object, got {type(args).__name__}")
    schema = _SPEC_BY_NAME[name].parameters
    props = schema["properties"]
    unknown = sorted(k for k in args if k not in props)
    if unknown:
        raise ToolError(f"{name}: unknown argument {_brief(unknown[0])} (expected {', '.join(props)})")
    for key in schema["required"]:
        if key not in args or args[key] is None:
            raise ToolError(f"{name}: missing required argument {key!r}")
    out: dict[str, Any] = {}
    for key, value in args.items():
        if value is None:
            continue
        kind = props[key]["type"]
        if kind == "string" and not isinstance(value, str):
            if key == "id" and isinstance(value, int) and not isinstance(value, bool):
                value = str(value)
            else:
                raise ToolError(f"{name}: argument {key!r} must be a string, got {type(value).__name__}")
        if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            raise ToolError(f"{name}: argument {key!r} must be an integer, got {_brief(value)}")
        if kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ToolError(f"{name}: argument {key!r} must be a number, got {_brief(value)}")
        out[key] = value
    return out
