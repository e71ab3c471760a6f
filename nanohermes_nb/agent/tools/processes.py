"""Shell commands for ``run_command`` and ``start_task`` that leave nothing behind.

Each command runs in a new session, so it leads its own process group, with stdin
closed and its output read by a thread that keeps the first bytes and throws the
rest away (a child writing 50 MB never blocks on a full pipe). When the command
ends, or is ended, ``Job.end`` kills what it left running. The job's processes are:

1. its process group and session, while the finished shell is still unreaped
   (``waitid`` with ``WNOWAIT``), so its pid, the group id, cannot have been reused;
2. every process whose environment carries the job's own mark
   (``NANOHERMES_JOB=<random id>``, inherited by every descendant), of any user
   when running as root (a child may change its uid): this reaches children that
   left the group with ``setsid`` or a double fork;
3. every descendant of those, by parent links.

``Job.end`` stops each one with SIGSTOP as it finds it and searches again until
nothing new turns up and all have stopped (a stopped process can neither fork nor
exit, so its children stay its children), then kills them all. A process that
leaves the session, clears its environment and whose parent exits before the
search (``env -i setsid`` from a process that ends at once) escapes; so does one
started by another service (``systemd-run``, ``at``). cgroups would close that gap
but are rarely delegated to an ordinary user. These tools run commands with the
caller's rights and are no sandbox (see ``docs/safety.md``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...context.clamp import utf8_boundary
from .cgroup import ENTER, JobCgroup

__all__ = ["Job", "Drain", "MARK_VARIABLE"]

MARK_VARIABLE = "NANOHERMES_JOB"
USE_CGROUPS = True  # a cgroup per job where one can be made (see cgroup.py); else the /proc search
FREEZE_SECONDS = 5.0  # the longest Job.end searches for processes that keep forking
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


@dataclass(frozen=True)
class _Proc:
    """What /proc/<pid>/stat says of one process."""

    pid: int
    state: str
    ppid: int
    group: int
    session: int
    started: int  # clock ticks after boot

    @property
    def live(self) -> bool:
        return self.state not in ("Z", "X")


def _stat(pid: int) -> _Proc | None:
    """The stat line of a process, or None when it is gone (read with two system calls:
    a scan of /proc reads hundreds of them while a job may be forking)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    fields = data.rsplit(b")", 1)[-1].split()
    if len(fields) < 20:
        return None
    return _Proc(pid, fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))


def _stat_fields(pid: int) -> tuple[str, int, int] | None:
    """(state, process group, start time in clock ticks) of a process, or None when it is gone."""
    proc = _stat(pid)
    return None if proc is None else (proc.state, proc.group, proc.started)


def _carries(pid: int, needle: bytes) -> bool:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return environ.startswith(needle) or b"\0" + needle in environ


def stragglers(leader: int, mark: str, since: int = 0, known: frozenset[int] = frozenset(),
               on_found: Callable[[int], object] | None = None) -> list[int]:
    """Live processes of the job led by ``leader``, other than the leader and this process.

    One of them is: in the leader's group or session; carrying ``mark`` in its
    environment (this reaches one that left with ``setsid`` or a double fork, of
    whatever user: as root a child may change its uid); or a descendant of the
    leader, of ``known`` or of another one found (this reaches one that cleared its
    environment while its parent is still there, e.g. stopped by ``Job.end``).
    Only processes started at or after ``since`` (clock ticks) can be descendants,
    so only their environment is read. ``on_found`` is called on each one as soon as
    it is found, so ``Job.end`` can stop it before it forks again.
    """
    if not _PROC.is_dir():
        return []
    needle = f"{MARK_VARIABLE}={mark}\0".encode()
    me, uid, root = os.getpid(), os.getuid(), os.geteuid() == 0
    members, table = {leader, *known}, []
    found: list[int] = []

    def take(proc: _Proc) -> None:
        members.add(proc.pid)
        if proc.live and proc.pid != leader:
            found.append(proc.pid)
            if on_found is not None:
                on_found(proc.pid)

    for pid in _newest_first():
        proc = _stat(pid) if pid != me else None
        if proc is None or proc.started < since:
            continue
        table.append(proc)
        if (proc.pid in members or proc.ppid in members or proc.group == leader or proc.session == leader
                or (proc.live and (root or _owned_by(proc.pid, uid)) and _carries(proc.pid, needle))):
            take(proc)
    children: dict[int, list[_Proc]] = {}
    for proc in table:
        children.setdefault(proc.ppid, []).append(proc)
    stack = list(members)
    while stack:  # descendants listed before their parent (pids wrap around)
        for child in children.get(stack.pop(), ()):
            if child.pid not in members:
                take(child)
                stack.append(child.pid)
    return sorted(set(found))


def _newest_first() -> list[int]:
    """The pids in /proc, most recently created first.

    The listing is a snapshot and reading every stat line takes long on a busy machine
    (0.25 s for 1,000 processes here): a process that forks and exits every 10 ms is
    only ever caught near the top. Pids are handed out upwards and wrap around, so the
    newest are those at or below the last one given, counting down, then the rest.
    """
    pids = [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    try:
        last = int((_PROC / "sys" / "kernel" / "ns_last_pid").read_text())
    except (OSError, ValueError):
        last = max(pids, default=0)
    pids.sort(reverse=True)
    return [pid for pid in pids if pid <= last] + [pid for pid in pids if pid > last]


def _owned_by(pid: int, uid: int) -> bool:
    try:
        return (_PROC / str(pid)).stat().st_uid == uid
    except OSError:
        return False


class Job:
    """One shell command in its own process group, output drained and capped.

    ``stderr_cap=None`` merges stderr into stdout (a background task). ``end()``
    kills the group and every marked descendant and reaps the shell; it returns how
    many processes other than the shell were still running.
    """

    def __init__(self, command: str, cwd: Path, stdout_cap: int, stderr_cap: int | None) -> None:
        self.mark = uuid.uuid4().hex
        env = {**os.environ, MARK_VARIABLE: self.mark}
        self.cgroup = JobCgroup.create(self.mark) if USE_CGROUPS else None
        argv = ["/bin/sh", "-c", command] if self.cgroup is None else ["/bin/sh", "-c", ENTER, str(self.cgroup.path),
                                                                       command]
        try:
            self.proc = subprocess.Popen(
                argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if stderr_cap is None else subprocess.PIPE, start_new_session=True, env=env)
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.remove(0.0)
            raise
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

        Every process of the job is stopped (SIGSTOP) as it is found, and the search is
        repeated until it finds nothing new and every one found has stopped: a stopped
        process can neither fork nor exit, so its children keep it as their parent and
        are found in turn (a chain whose every generation ``setsid``s the next and exits
        10 ms later escaped the old search). Then all are killed with the group.
        """
        with self._lock:
            if self.cgroup is not None:
                if self.cgroup.holds(self.proc.pid):
                    return self._end_cgroup(self.cgroup)
                self.cgroup.remove(0.0, kill=True)  # the shell could not move in: search /proc
            killed: set[int] = set()
            give_up = time.monotonic() + FREEZE_SECONDS
            while True:
                stopped = self._freeze(killed, give_up)
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                for pid in stopped:
                    _signal(pid, signal.SIGKILL)
                fresh = stopped - killed
                killed |= stopped
                # a process exiting can orphan a group holding stopped processes: the kernel
                # then sends them SIGHUP and SIGCONT, and one may fork before its SIGKILL lands
                if not fresh or time.monotonic() >= give_up:
                    break
            self.proc.wait()
            self.killed_stragglers += len(killed)
            return len(killed)

    def _end_cgroup(self, group: JobCgroup) -> int:
        """Kill the job's cgroup, which nothing the command started can have left; reap the shell."""
        others = [pid for pid in group.pids() if pid != self.proc.pid]
        group.kill()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        group.remove(FREEZE_SECONDS, kill=True)
        self.killed_stragglers += len(others)
        return len(others)

    def _freeze(self, known: set[int], give_up: float) -> set[int]:
        """Stop the job's processes until a search, begun once every one found so far had
        stopped, finds nothing new (a process stopped before the search began cannot have
        forked one the search missed)."""
        stopped: set[int] = set()
        while time.monotonic() < give_up:
            _wait_stopped(stopped, give_up)
            found = stragglers(self.proc.pid, self.mark, self.since, frozenset(stopped | known),
                               on_found=lambda pid: _signal(pid, signal.SIGSTOP))
            new = [pid for pid in found if pid not in stopped]
            if not new:
                break
            stopped.update(new)
        return stopped

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


def _running(pid: int) -> bool:
    """Alive and able to run user code: a SIGSTOP takes effect a moment after it is sent.

    A process in uninterruptible sleep (D: a vfork parent whose child was stopped, a
    disk wait) counts as stopped: its pending SIGSTOP stops it before it runs again.
    """
    proc = _stat(pid)
    return proc is not None and proc.state in ("R", "S", "I", "W")


def _wait_stopped(pids: set[int], give_up: float) -> None:
    """Until none of ``pids`` runs (one a sibling sent SIGCONT is stopped again)."""
    delay = 0.0005
    while time.monotonic() < give_up:
        running = [pid for pid in pids if _running(pid)]
        if not running:
            return
        for pid in running:
            _signal(pid, signal.SIGSTOP)
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
