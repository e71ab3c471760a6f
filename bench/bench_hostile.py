"""The hardening bounds, measured side by side with what they replace (issue 12).

Run: .venv/bin/python bench/bench_hostile.py

- the generated hostile corpus (tests/hostile.py) through ``load_transcript``: files,
  refusals, the slowest small file and the slowest huge one;
- a 256 MiB gzip bomb fetched with a 2 MiB bound: peak traced memory of the
  streaming decoder here versus httpx's own decoding (``iter_bytes``, what
  ``web_fetch`` used), and the ratio;
- a server dripping one byte every 0.5 s: when the total deadline (2 s) ends the
  fetch, versus httpx's per-read timeout, which never fires (stopped at 6 s);
- ``(a+)+$`` over ``a`` * n + ``!``: RE2 (grep now) versus Python's ``re`` at sizes
  ``re`` can still finish, and RE2 alone at 100,000;
- one ``run_command`` of ``true``: the call including the sweep for leftovers.
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import hostile  # noqa: E402
import httpx  # noqa: E402
import re2  # noqa: E402
import servers  # noqa: E402

from nanohermes_nb import Tools, TranscriptError, load_transcript  # noqa: E402
from nanohermes_nb.agent.transport import TransportTimeout, fetch  # noqa: E402

MiB = 1 << 20


def corpus() -> None:
    with tempfile.TemporaryDirectory() as folder:
        cases = hostile.build_corpus(Path(folder) / "c")
        small, huge, refused = [], [], 0
        for case in cases:
            started = time.perf_counter()
            try:
                load_transcript(case.path)
            except TranscriptError:
                refused += 1
            (huge if case.huge else small).append((time.perf_counter() - started, case.name))
        print(f"hostile corpus: {len(cases)} files, {refused} refused with a TranscriptError, "
              f"{len(cases) - refused} other outcomes")
        print(f"  slowest small file {max(small)[0] * 1000:.1f} ms ({max(small)[1]}), "
              f"median {statistics.median(t for t, _ in small) * 1000:.2f} ms")
        print(f"  slowest huge file  {max(huge)[0] * 1000:.0f} ms ({max(huge)[1]})")


def _peak(call) -> tuple[int, object]:
    tracemalloc.start()
    try:
        result = call()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def _httpx_bounded(url: str, cap: int) -> int:
    """What web_fetch did before: httpx decodes, the loop stops past the cap."""
    body = bytearray()
    with httpx.Client(timeout=30) as client, client.stream("GET", url) as response:
        for chunk in response.iter_bytes(1 << 16):
            body += chunk
            if len(body) > cap:
                break
    return len(body)


def bomb(server: servers.Hostile) -> None:
    url = f"{server.url}/bomb"
    fetch("GET", f"{server.url}/text", timeout=5, max_bytes=MiB)
    new, reply = _peak(lambda: fetch("GET", url, timeout=30, max_bytes=2 * MiB))
    old, size = _peak(lambda: _httpx_bounded(url, 2 * MiB))
    print(f"gzip bomb ({servers.BOMB_BYTES // MiB} MiB inflated, {len(servers.bomb()) // 1024} KiB sent), "
          f"2 MiB bound: peak {new / MiB:.1f} MiB streaming decoder vs {old / MiB:.1f} MiB httpx iter_bytes "
          f"({old / new:.0f}x); kept {len(reply.body)} vs {size} bytes")


def drip(server: servers.Hostile) -> None:
    started = time.monotonic()
    try:
        fetch("GET", f"{server.url}/drip", timeout=2, max_bytes=MiB)
    except TransportTimeout:
        pass
    deadline = time.monotonic() - started
    outcome: dict[str, float] = {}

    def per_read() -> None:
        begun = time.monotonic()
        try:
            with httpx.Client(timeout=2) as client, client.stream("GET", f"{server.url}/drip") as response:
                for _ in response.iter_bytes():
                    if time.monotonic() - begun > 6:
                        break
        except httpx.TimeoutException:
            pass
        outcome["seconds"] = time.monotonic() - begun

    worker = threading.Thread(target=per_read, daemon=True)
    worker.start()
    worker.join(10)
    old = outcome.get("seconds", float("inf"))
    print(f"drip (1 byte / 0.5 s), timeout 2 s: total deadline ends it after {deadline:.2f} s; "
          f"httpx's per-read timeout was still reading after {old:.1f} s (stopped by hand)")


def redos() -> None:
    rx2 = re2.compile("(a+)+$")
    for n in (16, 20, 22):
        line = "a" * n + "!"
        started = time.perf_counter()
        re.search("(a+)+$", line)
        slow = time.perf_counter() - started
        started = time.perf_counter()
        rx2.search(line)
        fast = time.perf_counter() - started
        print(f"(a+)+$ over {n} a's: re {slow * 1000:.1f} ms, RE2 {fast * 1000:.3f} ms ({slow / fast:.0f}x)")
    started = time.perf_counter()
    rx2.search("a" * 100_000 + "!")
    print(f"(a+)+$ over 100,000 a's: RE2 {(time.perf_counter() - started) * 1000:.1f} ms "
          "(re: doubling per extra a, years)")


def commands() -> None:
    with tempfile.TemporaryDirectory() as folder, Tools(folder) as tools:
        times = []
        for _ in range(20):
            started = time.perf_counter()
            tools.run("run_command", {"command": "true"})
            times.append(time.perf_counter() - started)
        print(f"run_command 'true' including the leftover sweep: median {statistics.median(times) * 1000:.1f} ms")


def main() -> None:
    corpus()
    server = servers.Hostile()
    try:
        bomb(server)
        drip(server)
    finally:
        server.close()
    redos()
    commands()


if __name__ == "__main__":
    main()
