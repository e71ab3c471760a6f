"""Wrong implementations for notebook 22 (exercise 22.1, the clash detector)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "22.1",
        "a re-read does not clear staleness",
        replace=(("                stale.pop(path, None)", "                pass"),),
    ),
    W(
        "22.1",
        "remembers the first read of a path, not the last",
        replace=(("last_read[path] = i", "last_read.setdefault(path, i)"),),
    ),
    W(
        "22.1",
        "a later write moves the change",
        replace=(("if path not in stale and writes_file(call, path):", "if writes_file(call, path):"),),
    ),
    W(
        "22.1",
        "weighs the writing message, not the read",
        replace=(("message_size(context[at])", "message_size(context[i])"),),
    ),
    W(
        "22.1",
        "sorted by the change, not by the read",
        replace=(("key=lambda s: s.read_at", "key=lambda s: s.changed_at"),),
    ),
]
