"""The summary cache under hostile files and two writers (issue 34).

Before: two processes autosaving to one file kept about 40 of 80 new summaries (the last writer's
file won); an entry with ``calls: "many"`` loaded, then crashed at its first hit; a cache path that is
``/dev/zero`` read past 1 GB, and one that is a FIFO hung. The FIFO and the device node here are made
in the test's own folder.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import stat

import pytest

from nanohermes_nb.context.cached import CachedSummarizer, excerpt_key

pytestmark = pytest.mark.timeout(60)


def _file(path, summaries: dict) -> None:
    path.write_text(json.dumps({"model": "m", "summaries": summaries}), encoding="utf-8")


@pytest.mark.parametrize("entry, fragment", [
    ({"summary": "s", "calls": "many"}, "'calls' must be a whole number >= 0, got \"many\""),
    ({"summary": "s", "prompt_tokens": -5}, "'prompt_tokens' must be a whole number >= 0, got -5"),
    ({"summary": "s", "rounds": True}, "'rounds' must be a whole number >= 0, got true"),
    ({"summary": "s", "seconds": "slow"}, "'seconds' must be a number >= 0"),
    ({"summary": "s", "estimated": "yes"}, "'estimated' must be true or false"),
    ({"summary": 3}, "has no 'summary' text"),
])
def test_a_bad_entry_is_refused_on_load_naming_the_file_and_the_entry(tmp_path, entry, fragment):
    path = tmp_path / "cache.json"
    _file(path, {"k" * 64: entry})
    with pytest.raises(ValueError) as caught:
        CachedSummarizer(path)
    message = str(caught.value)
    assert str(path) in message and f"summaries['{'k' * 64}']" in message and fragment in message
    assert "\n" not in message


def test_a_good_entry_still_loads_and_replays(tmp_path):
    path = tmp_path / "cache.json"
    _file(path, {excerpt_key("the excerpt"): {"summary": "short", "calls": 2, "seconds": 1.5, "estimated": True}})
    cache = CachedSummarizer(path)
    assert cache("the excerpt") == "short" and cache.last_cost.calls == 2


def test_a_fifo_or_a_device_as_the_cache_file_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(ValueError, match="named pipe"):
        CachedSummarizer(tmp_path / "fifo.json")
    try:
        os.mknod(tmp_path / "zero.json", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # what /dev/zero is
    except PermissionError:
        pytest.skip("mknod needs root (CI runs as root)")
    with pytest.raises(ValueError, match="character device"):
        CachedSummarizer(tmp_path / "zero.json")
    cache = CachedSummarizer(fallback=lambda excerpt: "s")
    cache("x")
    with pytest.raises(ValueError, match="zero.json: is a character device, not a regular file"):
        cache.save(tmp_path / "zero.json")
    assert stat.S_ISCHR(os.lstat(tmp_path / "zero.json").st_mode)


def _autosave(path: str, worker: int, count: int, start) -> None:
    start.wait()
    cache = CachedSummarizer(fallback=lambda excerpt: f"summary of {excerpt}", autosave=path)
    for k in range(count):
        cache(f"worker {worker} excerpt {k}")


def test_two_processes_autosaving_to_one_file_keep_every_summary(tmp_path):
    path = tmp_path / "shared.json"
    context = multiprocessing.get_context("fork")
    start = context.Event()
    workers = [context.Process(target=_autosave, args=(str(path), w, 40, start)) for w in range(2)]
    for w in workers:
        w.start()
    start.set()
    for w in workers:
        w.join(50)
    assert [w.exitcode for w in workers] == [0, 0]
    cache = CachedSummarizer(path)
    assert len(cache) == 80  # before: about 40, the last writer's
    assert cache("worker 1 excerpt 39") == "summary of worker 1 excerpt 39"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.json"]  # no lock or temporary file left


def test_save_merges_what_another_cache_wrote_meanwhile(tmp_path):
    path = tmp_path / "cache.json"
    first, second = (CachedSummarizer(fallback=lambda e: e.upper()) for _ in range(2))
    first("a")
    second("b")
    first.save(path)
    second.save(path)
    assert len(CachedSummarizer(path)) == 2 and len(second) == 2
