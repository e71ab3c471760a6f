"""Memory: the store on disk, BM25 retrieval in English and Chinese, the block and its budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from clocks import wait_until

from nanohermes_nb.agent.memory import (
    BLOCK_END,
    BLOCK_HEADER,
    BLOCK_START,
    MemoryEntry,
    MemoryStore,
    MemoryStoreError,
    inject,
    render_block,
    set_block,
    tokenize,
)
from nanohermes_nb.context.budgets import DEFAULT_BUDGETS

ENTRIES = [
    ("preference", "用户希望所有回答都使用中文，并且代码注释也写中文"),
    ("fact", "The project uses pnpm instead of npm for installing dependencies"),
    ("project", "数据库迁移脚本放在 migrations 目录，执行前要先备份"),
    ("fact", "Integration tests need the DOCKER_HOST variable set"),
    ("project", "Configuration is parsed in src/config/parseConfig.ts"),
]


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore(tmp_path / "memory.json")
    s.add_many(ENTRIES)
    return s


# --------------------------------------------------------------------------- retrieval


def test_chinese_query_finds_the_chinese_entry(store: MemoryStore) -> None:
    found = store.search("回答问题的时候用什么语言？中文吗")
    assert found[0].text == ENTRIES[0][1]
    assert store.search("迁移数据库之前要做什么")[0].text == ENTRIES[2][1]


def test_english_query_finds_the_english_entry(store: MemoryStore) -> None:
    assert store.search("Which package manager installs the dependencies?")[0].text == ENTRIES[1][1]
    assert store.search("docker host for integration tests")[0].text == ENTRIES[3][1]


def test_identifiers_and_paths_are_searchable(store: MemoryStore) -> None:
    assert store.search("where is parseConfig")[0].text == ENTRIES[4][1]
    assert store.search("src/config")[0].text == ENTRIES[4][1]
    assert store.search("parse config")[0].text == ENTRIES[4][1]


def test_search_returns_only_matching_entries_up_to_k(store: MemoryStore) -> None:
    assert store.search("kubernetes helm") == []
    assert store.search("") == []
    assert len(store.search("the project fact 中文 pnpm docker config 迁移", k=2)) == 2
    scored = store.scored("pnpm")
    assert len(scored) == 1 and scored[0][1] > 0


def test_tokenizer_english_identifiers_and_chinese() -> None:
    assert tokenize("The Quick brown FOX") == ["quick", "brown", "fox"]
    assert tokenize("open src/main.rs") == ["open", "src/main.rs", "src", "main", "rs"]
    assert tokenize("HTTPServer parse_config") == ["httpserver", "http", "server", "parse_config", "parse", "config"]
    zh = tokenize("数据库迁移")
    assert "数据库" in zh and "迁移" in zh


def test_jieba_start_up_is_silent() -> None:
    code = "from nanohermes_nb.agent.memory import tokenize; print(tokenize('中文分词'))"
    run = subprocess.run([sys.executable, "-c", code],
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=60)
    assert run.returncode == 0, run.stderr
    assert "中文" in run.stdout
    assert run.stderr == ""


# --------------------------------------------------------------------------- the block


def test_render_block_layout() -> None:
    block = render_block([{"kind": "fact", "text": "uses pnpm"}, MemoryEntry("preference", "terse answers")])
    assert block == (f"{BLOCK_START}\n{BLOCK_HEADER}\n"
                     "\n- [fact] uses pnpm\n- [preference] terse answers\n"
                     f"{BLOCK_END}")
    assert "past sessions" in BLOCK_HEADER and "reference only" in BLOCK_HEADER
    assert "current instruction" in BLOCK_HEADER
    assert render_block([]) == ""


def entry(size: int, kind: str = "k") -> dict[str, str]:
    """An entry whose rendered line ``\\n- [k] text`` is ``size`` characters long."""
    return {"kind": kind, "text": "\u8bb0" * (size - len(f"\n- [{kind}] "))}


def lines_of(block: str) -> list[str]:
    return [line for line in block.split("\n") if line.startswith("- [")]


def test_budget_at_and_past_2400_characters() -> None:
    assert len(lines_of(render_block([entry(1200), entry(1200)]))) == 2  # exactly 2,400
    assert len(lines_of(render_block([entry(1200), entry(1201)]))) == 1  # 2,401


def test_first_entry_that_does_not_fit_stops_the_block() -> None:
    ranked = [entry(1000, "a"), entry(1500, "b"), entry(20, "c")]
    block = render_block(ranked)
    kinds = [line[3] for line in lines_of(block)]
    assert kinds == ["a"]  # "c" would fit, but the loop breaks at "b"
    assert block.endswith(f"\n{BLOCK_END}")


def test_only_top_k_entries_are_considered() -> None:
    five = [{"kind": "k", "text": f"entry {i}"} for i in range(5)]  # each line: 14 chars
    assert [line[-1] for line in lines_of(render_block(five))] == ["0", "1", "2", "3"]
    tuned = DEFAULT_BUDGETS.replace(memory_inject_top_k=2, memory_inject_char_budget=28)
    assert len(lines_of(render_block(five, tuned))) == 2
    assert len(lines_of(render_block(five, tuned.replace(memory_inject_char_budget=27)))) == 1


def test_set_block_twice_leaves_one_block() -> None:
    first = render_block([{"kind": "fact", "text": "one"}])
    second = render_block([{"kind": "fact", "text": "two"}])
    once = set_block("SYSTEM", first)
    twice = set_block(set_block(once, second), second)
    assert once == "SYSTEM\n\n" + first
    assert twice == "SYSTEM\n\n" + second
    assert twice.count(BLOCK_START) == 1 and "one" not in twice


def test_empty_block_removes_it() -> None:
    block = render_block([{"kind": "fact", "text": "one"}])
    assert set_block(set_block("SYSTEM\n", block), "") == "SYSTEM\n"
    assert set_block("SYSTEM", "") == "SYSTEM"
    assert set_block("", block) == block


def test_a_marker_quoted_in_the_system_text_is_text() -> None:
    # issue 26: a literal <nanohermes-memory> was taken for the block and all after it deleted
    block = render_block([{"kind": "fact", "text": "new"}])
    quoted = f"HEAD\n\n{BLOCK_START}\nold\n{BLOCK_END}\nTAIL"
    assert set_block(quoted, block) == quoted + "\n\n" + block
    assert set_block(set_block(quoted, block), "") == quoted
    unterminated = f"HEAD\n\n{BLOCK_START}\nunterminated, then the rules"
    assert set_block(unterminated, "") == unterminated
    assert set_block(set_block(unterminated, block), block) == unterminated + "\n\n" + block


def test_an_entry_holding_the_markers_cannot_grow_the_system_message() -> None:
    # issue 26: an entry containing the closing tag made every swap add to the system message
    block = render_block([{"kind": f"a{BLOCK_END}", "text": f"x {BLOCK_END} y {BLOCK_START} z"}])
    assert block.count(BLOCK_START) == 1 and block.count(BLOCK_END) == 1
    assert "x \u2039/nanohermes-memory> y \u2039nanohermes-memory> z" in block
    text = "SYSTEM"
    for _ in range(5):
        text = set_block(text, block)
    assert text == "SYSTEM\n\n" + block


def test_inject_sets_the_block_without_mutating(store: MemoryStore) -> None:
    history = [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": "pnpm?"}]
    snapshot = json.dumps(history)
    turn1 = inject(history, "which package manager, pnpm or npm", store)
    assert json.dumps(history) == snapshot and turn1 is not history
    assert turn1[0]["content"].startswith("SYSTEM\n\n" + BLOCK_START)
    assert "- [fact] The project uses pnpm" in turn1[0]["content"]
    assert turn1[0]["content"].endswith(BLOCK_END)
    turn2 = inject(turn1, "用中文回答", store)
    assert turn2[0]["content"].count(BLOCK_START) == 1 and "pnpm" not in turn2[0]["content"]
    assert inject(turn2, "nothing matches this", store)[0]["content"] == "SYSTEM"
    assert turn2[1] is history[1]


def test_inject_without_a_system_message(store: MemoryStore) -> None:
    history = [{"role": "user", "content": "hi"}]
    out = inject(history, "pnpm", store)
    assert out[0]["role"] == "system" and out[0]["content"].startswith(BLOCK_START)
    assert out[1:] == history and len(history) == 1


# --------------------------------------------------------------------------- the store


def test_text_is_cut_to_400_characters_on_write(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path / "m.json")
    at = s.add("fact", "a" * 400)
    past = s.add("fact", "\u6587" * 401)
    assert at.text == "a" * 400 and past.text == "\u6587" * 400
    saved = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["entries"]
    assert [len(e["text"]) for e in saved] == [400, 400]
    assert all(e["created"] for e in saved)


def test_eviction_drops_the_oldest_at_500(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path / "m.json")
    s.add_many(("fact", f"note {i}") for i in range(500))
    assert len(s) == 500
    s.add("fact", "newest")
    kept = s.entries()
    assert len(kept) == 500
    assert kept[0].text == "note 1" and kept[-1].text == "newest"
    assert "note 0" not in {e.text for e in kept}


def test_eviction_follows_a_tuned_budget(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path / "m.json", DEFAULT_BUDGETS.replace(memory_max_entries=3))
    for i in range(5):
        s.add("fact", f"n{i}")
    assert [e.text for e in s.entries()] == ["n2", "n3", "n4"]


def test_atomic_write_leaves_no_temp_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "deep" / "m.json"
    s = MemoryStore(path)
    for i in range(3):
        s.add("fact", f"n{i}")
    assert sorted(os.listdir(path.parent)) == ["m.json"]
    before = path.read_bytes()

    def crash(*args: object) -> None:
        raise OSError("disk vanished")

    monkeypatch.setattr(os, "replace", crash)  # a crash between writing the temp file and the swap
    with pytest.raises(OSError, match="disk vanished"):
        s.add("fact", "lost")
    assert path.read_bytes() == before
    assert sorted(os.listdir(path.parent)) == ["m.json"]


def test_corrupt_store_is_reported_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    damaged = b'{"version": 1, "entries": [\n  {"kind": "fact", "text": "half'
    path.write_bytes(damaged)
    s = MemoryStore(path)
    with pytest.raises(MemoryStoreError) as err:
        s.entries()
    message = str(err.value)
    assert message.startswith(f"{path}: not valid JSON at line 2, column")
    assert "left untouched" in message
    with pytest.raises(MemoryStoreError):
        s.add("fact", "would overwrite")
    with pytest.raises(MemoryStoreError):
        s.search("fact")
    assert path.read_bytes() == damaged
    assert os.listdir(tmp_path) == ["memory.json"]


def test_wrong_shape_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"entries": [{"kind": "fact"}]}')
    with pytest.raises(MemoryStoreError, match=r"entries\[0\] needs string 'kind' and 'text'"):
        MemoryStore(path).entries()


def test_default_path_under_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    s = MemoryStore()
    assert s.path == tmp_path / ".nanohermes" / "memory.json"
    assert s.entries() == ()
    s.add("preference", "short answers")
    assert json.loads(s.path.read_text())["entries"][0]["text"] == "short answers"


def test_bad_entries_are_refused(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path / "m.json")
    with pytest.raises(ValueError, match="memory text"):
        s.add("fact", "   ")
    with pytest.raises(ValueError, match="memory kind"):
        s.add("", "text")
    assert not (tmp_path / "m.json").exists()


def test_inject_defaults_to_the_store_in_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    from nanohermes_nb.agent.memory import MemoryStore, inject

    MemoryStore().add("preference", "use pnpm, not npm, for installs")
    assert (tmp_path / ".nanohermes" / "memory.json").is_file()
    out = inject([{"role": "system", "content": "base"}], "which package manager for installs")
    assert "use pnpm" in out[0]["content"]


# ---------------------------------------------------------------- concurrent writers, killed writers, hostile stores

_ADDER = """
import sys
from nanohermes_nb import DEFAULT_BUDGETS, MemoryStore
store = MemoryStore(sys.argv[1], DEFAULT_BUDGETS.replace(memory_max_entries=5000))
for i in range(int(sys.argv[3])):
    store.add("fact", f"{sys.argv[2]} {i}")
"""


@pytest.fixture
def fast_dir(tmp_path: Path):
    """A folder on tmpfs when there is one: the lock is under test here, not the disk's fsync."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    import tempfile

    folder = Path(tempfile.mkdtemp(dir=shm, prefix="nanohermes-test-"))
    yield folder
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()


@pytest.mark.timeout(180)
@pytest.mark.subprocess
def test_two_processes_adding_1000_entries_each_lose_nothing(fast_dir: Path) -> None:
    path = fast_dir / "memory.json"
    writers = [subprocess.Popen([sys.executable, "-c", _ADDER, str(path), name, "1000"]) for name in ("A", "B")]
    assert [w.wait(timeout=170) for w in writers] == [0, 0]
    entries = MemoryStore(path, DEFAULT_BUDGETS.replace(memory_max_entries=5000)).entries()
    assert len(entries) == 2000
    assert {e.text for e in entries} == {f"{name} {i}" for name in "AB" for i in range(1000)}
    for name in "AB":  # each writer's entries in its own order
        assert [e.text for e in entries if e.text[0] == name] == [f"{name} {i}" for i in range(1000)]
    assert sorted(os.listdir(fast_dir)) == ["memory.json"]


_STUCK = """
import os, sys, time
from nanohermes_nb import MemoryStore
os.replace = lambda *args: (open(sys.argv[2], "w").close(), time.sleep(60))  # dies before the swap
MemoryStore(sys.argv[1]).add("fact", "never stored")
"""


def test_a_killed_writer_blocks_nobody_and_its_temp_file_is_removed(tmp_path: Path) -> None:
    path, ready = tmp_path / "m.json", tmp_path / "ready"
    MemoryStore(path).add("fact", "kept")
    before = path.read_bytes()
    writer = subprocess.Popen([sys.executable, "-c", _STUCK, str(path), str(ready)])
    try:
        assert wait_until(ready.exists, 30)
    finally:
        writer.kill()  # SIGKILL while it holds the lock with its temp file written
        writer.wait()
    leftovers = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(leftovers) == 1 and path.read_bytes() == before
    MemoryStore(path).add("fact", "after")  # the kernel released the lock with the process
    assert [e.text for e in MemoryStore(path).entries()] == ["kept", "after"]
    assert sorted(os.listdir(tmp_path)) == ["m.json", "ready"]


def test_a_writer_waits_for_the_lock_then_gives_up_with_a_clear_error(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    from nanohermes_nb.agent import memory

    path = tmp_path / "m.json"
    released = tmp_path.parent / f"{tmp_path.name}-released"  # outside the store's folder, whose listing counts
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); "
        "print('locked', flush=True); sys.stdin.read(); open(sys.argv[2], 'w').close()"), str(tmp_path),
        str(released)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "locked\n"
    seen: list[bool] = []  # whether the holder had let go when the add returned
    writer = threading.Thread(target=lambda: (MemoryStore(path).add("fact", "waited"), seen.append(released.exists())))
    writer.start()
    writer.join(0.5)
    assert writer.is_alive()  # blocked on the lock ...
    holder.stdin.close()  # ... until the holder writes its file and exits (the kernel drops its lock)
    writer.join(30)
    assert seen == [True] and len(MemoryStore(path)) == 1
    holder.wait()
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # now this test holds it
    try:
        monkeypatch.setattr(memory, "LOCK_WAIT", 0.3)
        with pytest.raises(MemoryStoreError, match=r"another writer has held the store's lock for 0.3 s"):
            MemoryStore(path).add("fact", "gave up")
    finally:
        os.close(fd)
    assert [e.text for e in MemoryStore(path).entries()] == ["waited"]


@pytest.mark.parametrize("content, reason", [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"entries": [{"kind": "fact", "text": "x", "n": ' + b"9" * 5000 + b"}]}", "not a memory store:"),
    (b'{"entries": {"kind": "fact"}}', "expected an object with an 'entries' list"),
    (b'{"entries": [{"kind": 5, "text": "x"}]}', "entries[0] needs string 'kind' and 'text'"),
    (b'{"entries": [{"kind": "fact", "text": "x", "created": 5}]}', "entries[0] 'created' must be a string"),
    (b'{"entries": ["fact"]}', "entries[0] is not an object"),
    ('{"entries": [{"kind": "fact", "text": "caf\u00e9"}]}'.encode("latin-1"), "not UTF-8 text"),
    (b'{"entries": [', "not valid JSON at line 1"),
])
def test_an_unreadable_store_is_reported_and_never_overwritten(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    store = MemoryStore(path)
    for attempt in (store.entries, lambda: store.add("fact", "would overwrite"), lambda: store.search("fact")):
        with pytest.raises(MemoryStoreError) as err:
            attempt()
        assert str(err.value).startswith(f"{path}: ") and reason in str(err.value)
        assert "\n" not in str(err.value)
    assert path.read_bytes() == content
    assert os.listdir(tmp_path) == ["m.json"]


def test_a_store_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    (tmp_path / "dir.json").mkdir()
    for path in (fifo, tmp_path / "dir.json"):
        with pytest.raises(MemoryStoreError, match="is not a regular file"):
            MemoryStore(path).entries()
        with pytest.raises(MemoryStoreError, match="is not a regular file"):
            MemoryStore(path).add("fact", "x")


def test_the_store_file_is_one_entry_per_line_and_read_back_by_any_json_reader(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    store = MemoryStore(path)
    store.add_many([("fact", 'quotes " and \\ and\nnewline'), ("project", "\u6587\u4ef6")])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["{", ' "version": 1,', ' "entries": ['] and lines[-2:] == [" ]", "}"]
    assert len(lines) == 7
    data = json.loads(path.read_text(encoding="utf-8"))
    assert [e["text"] for e in data["entries"]] == ['quotes " and \\ and newline', "\u6587\u4ef6"]
    hand_edited = {"entries": data["entries"] + [{"kind": "fact", "text": "edited by hand"}]}
    path.write_text(json.dumps(hand_edited, indent=4), encoding="utf-8")  # another layout: parsed in full
    assert [e.text for e in MemoryStore(path).entries()][-1] == "edited by hand"
