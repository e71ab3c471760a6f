"""A fake clock for the tests: time that passes only when the code under test sleeps (or reads it).

``transport.fetch``, ``ChatClient``, ``OpenAICompatibleModel`` and
``OpenAICompatibleSummarizer`` take ``clock=`` (``time.monotonic``) and, except
``fetch``, ``sleep=`` (``time.sleep``). A test hands them a ``FakeClock``: a retry
after ``Retry-After: 1`` then "waits" one second at once, and the test asserts the
waits asked for (``clock.sleeps``) instead of timing the call. ``tick`` advances the
clock on every reading, so a deadline passes after a known number of readings (a
total deadline read once per received chunk) without any real waiting.

``wait_until`` is the one real wait the test modules use: a poll, bounded by a
deadline, for a real process or server to reach a state.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class FakeClock:
    """``clock()`` reads ``now`` (then adds ``tick``); ``clock.sleep(s)`` adds ``s`` and records it."""

    now: float = 1000.0
    tick: float = 0.0
    sleeps: list[float] = field(default_factory=list)
    readings: int = 0

    def __call__(self) -> float:
        value = self.now
        self.now += self.tick
        self.readings += 1
        return value

    def sleep(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"sleep length must be non-negative, got {seconds}")
        self.sleeps.append(seconds)
        self.now += seconds

    @property
    def slept(self) -> float:
        """Seconds slept in all."""
        return sum(self.sleeps)


def wait_until(done: Callable[[], bool], within: float = 10.0, every: float = 0.02) -> bool:
    """Poll ``done()`` until it is true or ``within`` seconds have passed; whether it became true.

    For a test that waits on a real process or server (a pid file written, a process gone):
    the deadline only bounds the wait, it is never asserted as a speed. Test modules call
    this instead of ``time.sleep`` (tests/test_tiers.py checks they never sleep themselves).
    """
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() >= deadline:
            return bool(done())
        time.sleep(every)
    return True
