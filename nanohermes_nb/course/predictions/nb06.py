"""Predictions of notebook 06: every tool has a cap."""

from __future__ import annotations

import re
import time

import nanohermes_nb as nh

from ..exercises import Wrong, same_value
from . import Judge


def p6_1(prediction, *, tools):
    """Whether read_file's "more lines" note reaches the model with fewer lines per call, and the note."""
    last = tools.dispatch("read_file", {"path": "wide.txt"}).splitlines()[-1]
    same_value(prediction, ("more lines" in last, last), "your (reaches?, note)")


def p6_2(prediction, *, tools, command):
    """Whose note reaches the model for a quieter command (the tool's or the door's), and its number."""
    last = tools.dispatch("run_command", command).splitlines()[-1]
    truth = ("tool" if "stdout truncated" in last else "door", int(re.search(r"\((\d+) ", last).group(1)))
    same_value(prediction, truth, "your (whose note, number)")


def p6_3(prediction, *, ws, command):
    """A background task's note (bytes not kept) and what the door lets through of its output."""
    if not isinstance(prediction, tuple) or len(prediction) != 2:
        raise Wrong("write a pair: (bytes not shown, bytes the model sees)")
    with nh.Tools(ws, command_timeout=10) as own:
        tid = re.search(r"\bt\d+\b", own.dispatch("start_task", command)).group(0)
        while own.run("task_output", {"id": tid}).startswith(f"task {tid}: running"):
            time.sleep(0.05)
        dropped = int(re.search(r"\((\d+) bytes not shown", own.run("task_output", {"id": tid})).group(1))
        seen = own.dispatch("task_output", {"id": tid}).count("w")
    same_value(prediction, (dropped, seen), "your (not shown, seen)")


JUDGES: dict[str, Judge] = {"6.1": p6_1, "6.2": p6_2, "6.3": p6_3}
