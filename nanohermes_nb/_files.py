"""Files the package reads and writes without trusting what a path names.

A path can name a FIFO (reading waits for a writer that never comes), ``/dev/zero`` (endless), a
device node or a FIFO given as an output (a rename would replace it with a regular file: as root,
``-o /dev/null`` would replace the machine's ``/dev/null``), a symbolic link (a rename replaces the
link, not the file it points to), or one of the command's own inputs (``-o X`` on input ``X``).

- ``read_regular``: the bytes of a regular file, opened without blocking and checked on the open
  descriptor, at most ``limit`` bytes (``TooLarge`` beyond);
- ``output_target``: where an output may be written: absent, or a regular file that is none of
  the inputs; a link is followed, so the file it names is the one replaced;
- ``AtomicOutput``: the one atomic writer. A temporary file beside the target (same folder, so the
  rename is atomic), renamed onto it by ``commit()`` after an fsync and a second check of the target,
  removed by ``discard()``; the file gets the target's permissions (a new one: ``0o666`` less the
  umask) unless a ``mode`` is given, and the folder is fsynced after the rename. Used as a ``with``
  block it commits when the block ends and discards when it raises; ``write_atomic`` (a callback
  given the binary file) and ``write_text_atomic`` are the short forms every writer of the package
  uses (the CLI's outputs, a sweep's CSV or Parquet file, the summary and memory stores, the price
  and prior snapshots, the course's pages and pictures, an unpacked model);
- ``locked``: an exclusive ``flock`` on the folder of a path, for read-merge-write by several
  processes (the summary cache).

Nothing here imports the rest of the package, so every layer may use it. Errors are ``OSError``
subclasses whose message is one line naming the path.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

__all__ = ["NotRegularFile", "TooLarge", "OutputRefused", "read_regular", "output_target", "AtomicOutput",
           "write_atomic", "write_text_atomic", "locked", "file_kind"]

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_CHUNK = 1 << 16


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a folder, where a regular file was wanted."""


class TooLarge(OSError):
    """A file larger than the reader accepts."""


class OutputRefused(OSError):
    """An output path that must not be written: not a regular file, or one of the inputs."""


def file_kind(mode: int) -> str:
    """What a ``st_mode`` that is not a regular file's is, in words."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), never blocking on a FIFO.

    Raises ``NotRegularFile`` for anything else (checked on the open descriptor, so a
    file swapped after a check is caught too), ``TooLarge`` when it holds more than
    ``limit`` bytes (``/dev/zero`` behind a link is not regular, so never read), and
    ``OSError`` when it cannot be opened.
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"{os.fsdecode(path)}: is {file_kind(info.st_mode)}, not a regular file")
        chunks, read, cap = [], 0, None if limit is None else limit + 1
        while cap is None or read < cap:
            chunk = os.read(fd, _CHUNK if cap is None else min(_CHUNK, cap - read))
            if not chunk:
                break
            chunks.append(chunk)
            read += len(chunk)
    finally:
        os.close(fd)
    if limit is not None and read > limit:
        raise TooLarge(f"{os.fsdecode(path)}: larger than {limit:,} bytes; not read")
    return b"".join(chunks)


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def output_target(path: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """The file an output to ``path`` replaces (a link resolved), refused unless it may be written.

    Absent (its folder must exist), or a regular file that is none of ``inputs`` (compared by
    device and inode, so ``./X``, ``a/../X`` and a link to ``X`` are all ``X``).
    """
    given = os.fsdecode(path)
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        if not target.parent.is_dir() and str(target.parent) != "":
            raise OutputRefused(f"{given}: no folder {target.parent}") from None
        return target
    if not stat.S_ISREG(info.st_mode):
        raise OutputRefused(f"{given}: is {file_kind(info.st_mode)}, not a regular file; only a regular file "
                            "(or a new name) is written")
    mine = (info.st_dev, info.st_ino)
    for source in inputs:
        if _identity(source) == mine:
            raise OutputRefused(f"{given}: is the input {os.fsdecode(source)}; an input is never overwritten")
    return target


class AtomicOutput:
    """A temporary file beside ``path`` (``tmp``, written by name), renamed onto ``path`` by ``commit()``.

    The target is checked when it opens and again right before the rename (``output_target``), so
    a FIFO or device put there meanwhile is not replaced either, nor any of ``inputs``. The temporary
    file is fsynced before the rename and the folder after it, so a crash leaves the old file or the
    new one, never half of one; ``discard()`` (or an exception in a ``with`` block) removes it. Its
    name is ``.<target name>.<random>.tmp``, so a store can find what a killed writer left.
    ``mode``: the permissions of the result; None keeps the target's, or ``0o666`` less the umask
    for a new file (what ``open`` would give it; ``mkstemp`` alone makes ``0o600``).
    """

    def __init__(self, path: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = (),
                 mode: int | None = None) -> None:
        self.inputs = list(inputs)
        self.target = output_target(path, self.inputs)
        self.mode = _mode_of(self.target) if mode is None else mode
        fd, tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp", dir=self.target.parent)
        os.close(fd)
        self.tmp = Path(tmp)

    def commit(self) -> Path:
        """Make the temporary file the target (or raise, leaving the target as it was); returns the target."""
        try:
            _fsync(self.tmp)
            os.chmod(self.tmp, self.mode)
            output_target(self.target, self.inputs)
            os.replace(self.tmp, self.target)
        except BaseException:
            self.discard()
            raise
        _fsync_folder(self.target.parent)
        return self.target

    def discard(self) -> None:
        """Remove the temporary file (the target is untouched)."""
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)

    def __enter__(self) -> AtomicOutput:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def write_atomic(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object],
                 inputs: Iterable[str | os.PathLike[str]] = (), mode: int | None = None) -> Path:
    """``write(f)`` into a binary temporary file beside the target, then one rename onto it (``AtomicOutput``).

    Returns the path written (a link's target: the link stays).
    """
    with AtomicOutput(path, inputs, mode) as out:
        with open(out.tmp, "wb") as f:
            write(f)
    return out.target


def write_text_atomic(path: str | os.PathLike[str], text: str, inputs: Iterable[str | os.PathLike[str]] = (),
                      mode: int | None = None) -> Path:
    """``text`` as UTF-8 onto ``path`` through ``write_atomic``."""
    data = text.encode("utf-8")
    return write_atomic(path, lambda f: f.write(data), inputs, mode)


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux), else set and restored."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_of(target: Path) -> int:
    """The permission bits an output gets: the existing file's, else a new file's."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every filesystem allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """An exclusive lock shared by every process that writes ``path``: ``flock`` on the folder that holds it.

    The folder, not a lock file beside ``path``, so nothing is left behind; every writer of that folder
    waits its turn, which is what a read-merge-write of one small file needs.
    """
    import fcntl

    fd = os.open(Path(path).parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
