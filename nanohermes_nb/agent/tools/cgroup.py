"""A cgroup (v2) of its own for one shell command, when the machine lets this process make one.

A process cannot leave its cgroup by ``setsid``, a double fork, clearing its
environment or changing its uid: every descendant of a command moved into a fresh
cgroup stays in it, and writing ``1`` to its ``cgroup.kill`` (Linux 5.14+) ends them
all at once. ``Job`` uses one when it can (root, or a delegated cgroup tree such as
systemd gives a user session) and falls back to searching /proc otherwise; a /proc
search can be outrun on a busy machine by a chain of processes that each start the
next in a new session and exit within milliseconds.

The command's shell moves itself in before it runs the command (``ENTER``), so
nothing it starts can be outside; whether the move worked is read back from
``/proc/<pid>/cgroup`` (a zombie still shows its cgroup).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["JobCgroup", "ENTER"]

# run as: /bin/sh -c ENTER <cgroup folder> <command>; a failed move only leaves the command outside
ENTER = '{ echo $$ > "$0/cgroup.procs"; } 2>/dev/null; exec /bin/sh -c "$1"'
_PREFIX = "nanohermes-job-"


def _own_cgroup_folder() -> Path | None:
    """The folder of this process's cgroup in a mounted cgroup2 hierarchy, if there is one."""
    try:
        own = next(line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines() if line.startswith("0::"))
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except (OSError, StopIteration):
        return None
    for line in mounts:
        fields = line.split()
        if " - cgroup2 " not in line or len(fields) < 5:
            continue
        root, mount_point = fields[3], fields[4]
        if own == root or own.startswith(root.rstrip("/") + "/"):
            return Path(mount_point) / own[len(root):].lstrip("/")
    return None


class JobCgroup:
    """One job's cgroup folder: made, read, killed and removed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._relative = ""

    @classmethod
    def create(cls, mark: str) -> JobCgroup | None:
        """A new empty cgroup beside nothing else, or None where cgroups cannot be made or killed."""
        base = _own_cgroup_folder()
        if base is None:
            return None
        path = base / f"{_PREFIX}{mark}"
        try:
            path.mkdir()
        except OSError:
            return None
        group = cls(path)
        if not (path / "cgroup.kill").exists():  # before Linux 5.14: no way to end them all at once
            group.remove(0.0)
            return None
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mine = next((line[3:] for line in own if line.startswith("0::")), "/")
        group._relative = f"{mine.rstrip('/')}/{path.name}"
        return group

    def holds(self, pid: int) -> bool:
        """Whether ``pid`` (alive or a zombie) is in this cgroup."""
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError:
            return False
        return f"0::{self._relative}" in lines

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill(self) -> bool:
        """SIGKILL to every process in the cgroup, at once; False if the kernel refused."""
        try:
            (self.path / "cgroup.kill").write_text("1")
            return True
        except OSError:
            return False

    def remove(self, wait: float, kill: bool = False) -> bool:
        """Remove the folder once its processes are gone (waiting at most ``wait`` seconds);
        with ``kill``, kill whatever is still in it on every try."""
        give_up, delay = time.monotonic() + wait, 0.001
        while True:
            if kill:
                self.kill()
            try:
                os.rmdir(self.path)
                return True
            except FileNotFoundError:
                return True
            except OSError:  # EBUSY: killed processes not yet gone
                if time.monotonic() >= give_up:
                    return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
