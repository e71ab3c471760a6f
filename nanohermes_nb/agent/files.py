"""Reading a file from the workspace or the user's folders without trusting what it is.

A name on disk can be a named pipe (reading it waits for a writer that never
comes), a link to ``/dev/zero`` (endless) or a sparse file of gigabytes that
holds a few bytes of text. ``read_regular`` opens without blocking, checks on the
open descriptor that it is a regular file, and reads at most ``limit`` bytes plus
one, so the caller knows whether the file went on, whatever its declared size.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from ..context.clamp import utf8_boundary

__all__ = ["NotRegularFile", "Capped", "read_regular", "file_kind"]

_CHUNK = 1 << 16
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class NotRegularFile(OSError):
    """The path names something other than a regular file; ``kind`` says what, in words."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is {kind}")
        self.kind = kind


@dataclass(frozen=True)
class Capped:
    """At most ``limit`` bytes of a file; ``more`` when it went on past them."""

    data: bytes
    more: bool
    size: int  # the size fstat reported (a sparse file's holes count)


def file_kind(mode: int) -> str:
    """What a non-regular ``st_mode`` is, in words."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | os.PathLike[str], limit: int) -> Capped:
    """The first ``limit`` bytes of the regular file at ``path`` (links followed).

    Raises ``NotRegularFile`` for a pipe, device, socket or directory (checked on
    the opened descriptor, so a file swapped after a check is caught too) and
    ``OSError`` when it cannot be opened. Reads ``limit + 1`` bytes at most; a file
    that goes on is cut at a UTF-8 character boundary at or before ``limit``.
    """
    fd = os.open(path, _FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(os.fsdecode(path), file_kind(info.st_mode))
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) <= limit:
        return Capped(data, False, info.st_size)
    return Capped(data[:utf8_boundary(data, limit)], True, info.st_size)
