"""Running one hostile case in a process of its own, under a timeout and a memory cap.

``isolated(call, timeout=..., memory_mb=...)`` forks; the child leads a new process
group, caps its address space (``RLIMIT_AS``: what it has now plus ``memory_mb``),
resets its peak-RSS mark (``/proc/self/clear_refs``), runs ``call()`` and sends back
its result, the seconds it took and its peak resident memory above what the fork
started with. The parent kills the whole group when ``timeout`` passes. So a case
that hangs, loops or balloons fails its own test with a figure, instead of taking
the test run (or the machine) with it.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MiB = 1 << 20


@dataclass(frozen=True)
class Outcome:
    value: Any  # what call() returned (JSON-able), or None
    error: str  # "" or the exception the child raised, one line
    seconds: float
    peak_mb: float  # peak resident memory of the child above its starting point
    hung: bool  # killed at the timeout

    def __str__(self) -> str:
        state = "hung" if self.hung else (f"raised {self.error}" if self.error else "returned")
        return f"{state} after {self.seconds:.2f} s, peak +{self.peak_mb:.0f} MB: {str(self.value)[:300]!r}"


def _status_kb(field: str) -> int:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _child(call: Callable[[], Any], memory_mb: int, write_fd: int) -> None:
    os.setpgid(0, 0)
    limit = _status_kb("VmSize") * 1024 + memory_mb * MiB
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    start_rss = _status_kb("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
    except OSError:
        pass
    started = time.monotonic()
    value, error = None, ""
    try:
        value = call()
    except BaseException as exc:  # noqa: BLE001 -- reported to the parent
        error = f"{type(exc).__name__}: {exc}"[:500] or traceback.format_exc(limit=1)
    seconds = time.monotonic() - started
    peak = max(_status_kb("VmHWM") - start_rss, 0) / 1024
    try:
        payload = json.dumps({"value": value, "error": error, "seconds": seconds, "peak_mb": peak})
    except (TypeError, ValueError):
        payload = json.dumps({"value": repr(value)[:2000], "error": error, "seconds": seconds, "peak_mb": peak})
    os.write(write_fd, payload.encode())
    os._exit(0)


def isolated(call: Callable[[], Any], *, timeout: float = 30.0, memory_mb: int = 1024) -> Outcome:
    """``call()`` in a forked child of its own process group, killed after ``timeout`` seconds."""
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child
        os.close(read_fd)
        try:
            _child(call, memory_mb, write_fd)
        finally:
            os._exit(70)
    os.close(write_fd)
    os.set_blocking(read_fd, False)
    chunks, hung, status = [], False, None
    while status is None:
        try:
            while chunk := os.read(read_fd, 1 << 16):
                chunks.append(chunk)
        except BlockingIOError:
            pass
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = raw
        elif time.monotonic() - started > timeout:
            for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    target()
                except ProcessLookupError:
                    pass
            status, hung = os.waitpid(pid, 0)[1], True
        else:
            time.sleep(0.01)
    try:
        while chunk := os.read(read_fd, 1 << 16):
            chunks.append(chunk)
    except BlockingIOError:
        pass
    os.close(read_fd)
    seconds = time.monotonic() - started
    if hung or not chunks:
        return Outcome(None, "" if hung else f"child died (status {status})", seconds, 0.0, hung)
    data = json.loads(b"".join(chunks))
    return Outcome(data["value"], data["error"], data["seconds"], data["peak_mb"], False)
