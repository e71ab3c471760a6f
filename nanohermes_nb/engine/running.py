"""How a sweep's transcripts run: in this process or on any executor, rows in the order given.

Any ``concurrent.futures.Executor`` works (``ProcessPoolExecutor`` for every core, a Dask
``client.get_executor()`` for a cluster). At most a window of transcripts is in flight, the
first ones submitted largest first; ``Progress`` draws a one-line bar as they come back.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

from ..transcripts.base import printable
from ..transcripts.session import Session, SessionLike
from .grid import Job, Skipped, Source, sweep_one
from .recorded import RecordedSession

__all__ = ["Progress", "results", "default_window"]


class Progress:
    """A one-line progress bar on stderr (only when asked, or when stderr is a terminal)."""

    def __init__(self, total: int, label: str = "sweep", enabled: bool | None = None, stream=None) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.start = time.perf_counter()

    def step(self, what: str = "") -> None:
        self.done += 1
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = time.perf_counter() - self.start
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s {printable(what[:40]):<40}")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def default_window(workers: int | None) -> int:
    """Transcripts in flight by default: 16 per worker (a result is a few rows: the cap is about idle workers)."""
    return max(2, 16 * (workers or os.cpu_count() or 2))


def _weight(src: Source) -> int:
    """How long a transcript will take, roughly: its size on disk (or its length in messages)."""
    if src.path is None:
        m = src.messages
        return 0 if m is None else len(m.messages) if isinstance(m, (RecordedSession, Session)) else len(m)
    try:
        return os.stat(src.path).st_size
    except OSError:  # a path only the workers can see
        return 0


def _travelling(session: RecordedSession) -> SessionLike:
    """What a worker needs to cut ``session`` again: the agent log it came from (its bill too), else its messages."""
    return session.source if session.source is not None else session.messages


def results(sources: list[Source], job: Job, executor: Any, window: int) -> Iterator[tuple[str, list | Skipped]]:
    """Each transcript's rows in the given order; at most ``window`` transcripts in flight.

    The first ``window`` transcripts are submitted largest first, so the longest one does not start last
    and leave the other workers idle at the end; rows are still yielded in the order given.
    """
    if executor is None:
        for src in sources:
            yield sweep_one(src, job)
        return
    # a measured session does not travel (its meters hold functions): the worker cuts and measures it again
    it = (Source(src.name, messages=_travelling(src.messages)) if isinstance(src.messages, RecordedSession) else src
          for src in sources)
    first = list(itertools.islice(it, window))
    futures: dict[int, Any] = {}
    for k in sorted(range(len(first)), key=lambda k: -_weight(first[k])):
        futures[k] = executor.submit(sweep_one, first[k], job)
    pending: deque = deque(futures[k] for k in range(len(first)))
    while pending:
        done = pending.popleft().result()
        nxt = next(it, None)
        if nxt is not None:
            pending.append(executor.submit(sweep_one, nxt, job))
        yield done
