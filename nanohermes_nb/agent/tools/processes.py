"""Shell commands for ``run_command`` and ``start_task`` that leave nothing behind.

Each command runs in a new session, so it leads its own process group, with stdin
closed and its output read by a thread that keeps the first bytes and throws the
rest away (a child writing 50 MB never blocks on a full pipe). When the command
ends, or is ended, ``Job.end`` kills what it left running:

1. the whole process group, while the finished shell is still unreaped (``waitid``
   with ``WNOWAIT``), so its pid, which is the group id, cannot have been reused;
2. every process, of this user, whose environment carries the job's own mark
   (``NANOHERMES_JOB=<random id>``, inherited by every descendant): this reaches
   children that left the group with ``setsid`` or a double fork.

A process that both leaves the group and clears its environment (``env -i setsid``)
escapes; these tools run commands with the caller's rights and are no sandbox (see
``docs/safety.md``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from ...context.clamp import utf8_boundary

__all__ = ["Job", "Drain", "MARK_VARIABLE"]

MARK_VARIABLE = "NANOHERMES_JOB"
_CHUNK = 1 << 16
_PROC = Path("/proc")


def _cut_captured(buf: bytes, total: int, cap: int) -> tuple[bytes, int]:
    """The kept head of a captured stream (never splitting a character) and bytes not shown."""
    if total <= cap:
        return buf, 0
    end = utf8_boundary(buf, cap)
    return buf[:end], total - end


class Drain(threading.Thread):
    """Reads a pipe to EOF, keeping the first ``cap`` bytes and counting the rest.

    Reading never stops at the cap: a child blocked on a full pipe would never exit.
    """

    def __init__(self, stream: Any, cap: int) -> None:
        super().__init__(daemon=True)
        self.fd = stream.fileno()
        self.stream = stream
        self.cap = cap
        self.keep = cap + 4  # a few spare bytes so the cut can land on a character boundary
        self.buf = bytearray()
        self.total = 0
        self.lock = threading.Lock()

    def run(self) -> None:
        try:
            while True:
                chunk = os.read(self.fd, _CHUNK)
                if not chunk:
                    break
                with self.lock:
                    room = self.keep - len(self.buf)
                    if room > 0:
                        self.buf += chunk[:room]
                    self.total += len(chunk)
        except OSError:
            pass
        finally:
            try:
                self.stream.close()
            except OSError:
                pass

    def snapshot(self) -> tuple[str, int]:
        """Kept text so far and the number of bytes not shown."""
        with self.lock:
            kept, cut = _cut_captured(bytes(self.buf), self.total, self.cap)
        return kept.decode("utf-8", "replace"), cut


def _stat_fields(pid: int) -> tuple[str, int, int] | None:
    """(state, process group, start time in clock ticks) of a process, or None when it is gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[2]), int(fields[19])


def _carries(pid: int, needle: bytes) -> bool:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return environ.startswith(needle) or b"\0" + needle in environ


def stragglers(leader: int, mark: str, since: int = 0) -> list[int]:
    """Live processes in ``leader``'s group, or carrying ``mark``, other than the leader.

    Only processes started at or after ``since`` (clock ticks, as in /proc) can be
    descendants, so only their environment is read.
    """
    if not _PROC.is_dir():
        return []
    needle = f"{MARK_VARIABLE}={mark}\0".encode()
    me, uid, found = os.getpid(), os.getuid(), []
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit() or int(entry.name) in (me, leader):
            continue
        pid = int(entry.name)
        fields = _stat_fields(pid)
        if fields is None or fields[0] in ("Z", "X") or fields[2] < since:
            continue
        if fields[1] == leader:
            found.append(pid)
            continue
        try:
            mine = entry.stat().st_uid == uid
        except OSError:
            continue
        if mine and _carries(pid, needle):
            found.append(pid)
    return found


class Job:
    """One shell command in its own process group, output drained and capped.

    ``stderr_cap=None`` merges stderr into stdout (a background task). ``end()``
    kills the group and every marked descendant and reaps the shell; it returns how
    many processes other than the shell were still running.
    """

    def __init__(self, command: str, cwd: Path, stdout_cap: int, stderr_cap: int | None) -> None:
        self.mark = uuid.uuid4().hex
        env = {**os.environ, MARK_VARIABLE: self.mark}
        self.proc = subprocess.Popen(
            command, shell=True, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if stderr_cap is None else subprocess.PIPE, start_new_session=True, env=env)
        self.out = Drain(self.proc.stdout, stdout_cap)
        self.err = None if stderr_cap is None else Drain(self.proc.stderr, stderr_cap)
        for drain in self.drains:
            drain.start()
        fields = _stat_fields(self.proc.pid)
        self.since = fields[2] if fields else 0  # descendants start no earlier than the shell
        self.killed_stragglers = 0
        self._lock = threading.Lock()

    @property
    def drains(self) -> list[Drain]:
        return [d for d in (self.out, self.err) if d is not None]

    def wait_exit(self, timeout: float | None) -> bool:
        """True once the shell has exited (left unreaped), False when ``timeout`` passed first."""
        pid = self.proc.pid
        if timeout is None:
            try:
                os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                pass  # already reaped
            return True
        deadline, delay = time.monotonic() + timeout, 0.001
        while True:
            try:
                if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
                    return True
            except ChildProcessError:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.05)

    def end(self) -> int:
        """Kill everything the command started, reap the shell; processes found besides it.

        The processes are listed before the group is killed (a killed one may be gone
        before a later look), then listed again while anything is still forking.
        """
        with self._lock:
            killed: set[int] = set()
            found = stragglers(self.proc.pid, self.mark, self.since)
            for _ in range(5):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                for pid in found:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                killed.update(found)
                if not found:  # nothing besides the shell: nothing left that could fork
                    break
                time.sleep(0.01)
                found = [p for p in stragglers(self.proc.pid, self.mark, self.since) if p not in killed or _alive(p)]
            self.proc.wait()
            self.killed_stragglers += len(killed)
            return len(killed)

    def join(self, timeout: float) -> bool:
        """Wait for the output to reach its end; False if something still holds a pipe."""
        end = time.monotonic() + timeout
        for drain in self.drains:
            drain.join(timeout=max(end - time.monotonic(), 0.0))
        return not any(d.is_alive() for d in self.drains)

    def status(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "running"
        if code < 0:
            return f"killed (signal {-code})"
        return f"exited (code {code})"


def _alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")
