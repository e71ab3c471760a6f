"""Long-term memory: short entries on disk, BM25 retrieval, a small block at the end of messages[0].

The store is a JSON file (default ``~/.nanohermes/memory.json``) of at most
``memory_max_entries`` entries, each cut to ``memory_max_text_chars`` characters on
write; the oldest entries are evicted first. Writes are atomic and made under an
advisory lock, so concurrent writers lose nothing; a corrupt file is reported and
left alone. Each turn, ``inject`` retrieves the top entries for
the user's query (BM25 over English words and jieba-segmented Chinese), renders
them within ``memory_inject_char_budget`` characters, and swaps the block at the
end of the system message, so the rest of the prefix stays byte-identical.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import stat
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .._files import write_text_atomic
from ..context.budgets import DEFAULT_BUDGETS, Budgets
from .files import NotRegularFile, file_kind, read_regular
from .memory_block import BLOCK_END, BLOCK_HEADER, BLOCK_START, render_block, set_block
from .retrieval import MemoryIndex, tokenize

__all__ = [
    "MemoryEntry",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryIndex",
    "BLOCK_START",
    "BLOCK_END",
    "BLOCK_HEADER",
    "default_memory_path",
    "tokenize",
    "render_block",
    "set_block",
    "inject",
]

M = TypeVar("M", bound=Mapping[str, Any])  # a message type ``inject`` hands back as it was given
_STORE_VERSION = 1
LOCK_WAIT = 10.0  # seconds a writer waits for another one before giving up
# the store's layout: one entry per line, readable and diffable
_HEAD = f'{{\n "version": {_STORE_VERSION},\n "entries": [\n  '
_SEP = ",\n  "
_FOOT = "\n ]\n}\n"
_EMPTY = f'{{\n "version": {_STORE_VERSION},\n "entries": []\n}}\n'
_ENTRY_ROOM = 65_536  # bytes of store file allowed per entry of memory_max_entries
_LINE_CHARS = 16_384  # a store line longer than this was not written by this module
_CREATED_CHARS = 64


class MemoryStoreError(Exception):
    """The memory file cannot be used as it is; the message names the file and the place."""


@dataclass(frozen=True)
class MemoryEntry:
    """One remembered line: its kind (e.g. preference, fact, project) and its short text."""

    kind: str
    text: str
    created: str = ""  # ISO 8601 UTC, set when the store writes it


def default_memory_path() -> Path:
    """``~/.nanohermes/memory.json`` (follows $HOME)."""
    return Path.home() / ".nanohermes" / "memory.json"


# --------------------------------------------------------------------------- the store


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _capped(value: str, cap: int) -> str:
    """What a write would have kept of a hand-edited value: one line, ``cap`` characters
    (only the first ``4 * cap`` characters are looked at, so a 10 MB value costs no more)."""
    return _one_line(value[:4 * cap + 4])[:cap]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class MemoryStore:
    """Memory entries in one JSON file, oldest first; at most ``memory_max_entries``.

    Every read checks the file; every write is read-modify-write under an advisory
    ``flock`` on the store's folder (another writer waits, at most ``LOCK_WAIT``
    seconds), atomic (``_files.write_text_atomic``: temp file in the same folder, fsync, rename), and
    refused when the file on disk is unreadable, so a damaged store is never
    overwritten. Temp files left by a writer that was killed are removed by the
    next writer, under the lock (a live writer's temp file exists only while it
    holds the lock).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 budgets: Budgets = DEFAULT_BUDGETS) -> None:
        self.path = Path(path).expanduser() if path is not None else default_memory_path()
        self.budgets = budgets
        self._stamp: tuple[int, int, int] | None = None
        self._entries: tuple[MemoryEntry, ...] = ()
        self._index: MemoryIndex | None = None
        self._lines: dict[str, MemoryEntry] = {}  # a store line already parsed -> its entry
        self._texts: dict[MemoryEntry, str] = {}  # an entry -> its store line

    def __repr__(self) -> str:
        return f"MemoryStore({str(self.path)!r})"

    # ---- reading

    def _fail(self, what: str) -> MemoryStoreError:
        return MemoryStoreError(f"{self.path}: {what}; the file was left untouched")

    def _parse(self, raw: bytes) -> tuple[MemoryEntry, ...]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self._fail(f"not UTF-8 text (bad byte at offset {e.start})") from None
        if not text.strip():
            return ()
        known = self._parse_known(text)
        if known is not None:
            return known
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise self._fail(f"not valid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
        except RecursionError:
            raise self._fail("not a memory store: nested too deeply") from None
        except ValueError as e:  # e.g. an integer of more than 4,300 digits
            raise self._fail(f"not a memory store: {e}") from None
        items = data.get("entries") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise self._fail("expected an object with an 'entries' list")
        return tuple(self._entry(i, item) for i, item in enumerate(items))

    def _parse_known(self, text: str) -> tuple[MemoryEntry, ...] | None:
        """The entries of a file in the layout ``_write`` produces, reusing the lines seen
        before (a writer re-reads the store on every add); None for any other layout.

        Each line is a complete JSON object (JSON escapes line breaks inside strings),
        so header, lines and footer checked here make a valid document.
        """
        if not (text.startswith(_HEAD) and text.endswith(_FOOT)) or text == _EMPTY:
            return () if text == _EMPTY else None
        lines = text[len(_HEAD):-len(_FOOT)].split(_SEP)
        out = []
        for i, line in enumerate(lines):
            entry = self._lines.get(line)
            if entry is None:
                try:
                    item = json.loads(line)
                except (ValueError, RecursionError):
                    return None  # let the general parse report it
                entry = self._entry(i, item)
                if len(line) <= _LINE_CHARS:  # a hand-edited giant line is not kept, nor written back as it was
                    self._remember(line, entry)
            out.append(entry)
        return tuple(out)

    def _remember(self, line: str, entry: MemoryEntry) -> None:
        if len(self._lines) > 4 * max(self.budgets.memory_max_entries, 1000):
            self._lines.clear()
            self._texts.clear()
        self._lines[line] = entry
        self._texts[entry] = line

    def _line(self, entry: MemoryEntry) -> str:
        line = self._texts.get(entry)
        if line is None:
            line = json.dumps({"kind": entry.kind, "text": entry.text, "created": entry.created}, ensure_ascii=False)
            self._remember(line, entry)
        return line

    def _entry(self, i: int, item: Any) -> MemoryEntry:
        if not isinstance(item, dict):
            raise self._fail(f"entries[{i}] is not an object")
        kind, body, created = item.get("kind"), item.get("text"), item.get("created", "")
        if not isinstance(kind, str) or not isinstance(body, str):
            raise self._fail(f"entries[{i}] needs string 'kind' and 'text'")
        if created is None:
            created = ""
        if not isinstance(created, str):
            raise self._fail(f"entries[{i}] 'created' must be a string (an ISO 8601 time)")
        cap = self.budgets.memory_max_text_chars
        return MemoryEntry(_capped(kind, cap), _capped(body, cap), created[:_CREATED_CHARS])

    def _read(self, fresh: bool = False) -> tuple[tuple[int, int, int] | None, tuple[MemoryEntry, ...]]:
        """(stamp, entries) of the file as it is now; a missing file is an empty store.

        ``fresh`` skips the cache: a writer must not trust (mtime, size, inode), since
        a freed inode number can come back with the same size within one clock tick.
        """
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None, ()
        except OSError as e:
            raise self._fail(f"cannot be read ({e.strerror})") from None
        if not stat.S_ISREG(st.st_mode):
            raise self._fail(f"is not a regular file but {file_kind(st.st_mode)}")
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp == self._stamp and not fresh:
            return stamp, self._entries
        limit = self.max_file_bytes()
        if st.st_size > limit:  # refused from its size alone: a sparse 3 GB file is never read
            raise self._too_big(st.st_size, limit)
        try:
            capped = read_regular(self.path, limit)
        except NotRegularFile as e:  # swapped for a pipe or a device since the stat
            raise self._fail(f"is not a regular file but {e.kind}") from None
        except OSError as e:
            raise self._fail(f"cannot be read ({e.strerror})") from None
        if capped.more:  # it grew since the stat
            raise self._too_big(capped.size, limit)
        return stamp, self._parse(capped.data)

    def _too_big(self, size: int, limit: int) -> MemoryStoreError:
        return self._fail(f"is {size} bytes, more than a store of {self.budgets.memory_max_entries} "
                          f"entries can need ({limit} bytes)")

    def max_file_bytes(self) -> int:
        """The largest store file read: generous room per entry (writes keep lines far shorter),
        so a hand-edited giant entry still loads, and is cut, while a sparse 3 GB file is refused."""
        return max(self.budgets.memory_max_entries, 1) * _ENTRY_ROOM

    def entries(self) -> tuple[MemoryEntry, ...]:
        """The stored entries, oldest first (empty when the file does not exist yet)."""
        stamp, entries = self._read()
        if stamp != self._stamp or entries is not self._entries:
            self._stamp, self._entries, self._index = stamp, entries, None
        return self._entries

    def __len__(self) -> int:
        return len(self.entries())

    # ---- writing

    def _normalize(self, item: MemoryEntry | Mapping[str, Any] | tuple[str, str]) -> MemoryEntry:
        kind: Any
        text: Any
        created: Any  # what a caller gave: checked below
        if isinstance(item, MemoryEntry):
            kind, text, created = item.kind, item.text, item.created
        elif isinstance(item, Mapping):
            kind, text, created = item.get("kind"), item.get("text"), item.get("created", "")
        elif isinstance(item, tuple) and len(item) == 2:
            (kind, text), created = item, ""
        else:
            raise TypeError(f"a memory entry must be a MemoryEntry, a dict or (kind, text), got {item!r}")
        if not isinstance(kind, str) or not _one_line(kind):
            raise ValueError(f"memory kind must be a non-empty string, got {kind!r}")
        if not isinstance(text, str) or not _one_line(text):
            raise ValueError(f"memory text must be a non-empty string, got {text!r}")
        cap = self.budgets.memory_max_text_chars
        return MemoryEntry(_one_line(kind)[:cap], _one_line(text)[:cap], created or _now())

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive advisory lock on the store's folder (no lock file to leave behind)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        if not _lock(fd, LOCK_WAIT):
            raise MemoryStoreError(f"{self.path}: another writer has held the store's lock for "
                                   f"{LOCK_WAIT:g} s; nothing was written")
        try:
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _temp_prefix(self) -> str:
        return f".{self.path.name}."

    def _remove_stale_temps(self) -> None:
        """Temp files of writers that died mid-write (only called under the lock)."""
        prefix = self._temp_prefix()
        for entry in os.scandir(self.path.parent):
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp") and entry.is_file(follow_symlinks=False):
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass

    def _write(self, entries: Sequence[MemoryEntry]) -> None:
        """Replace the file atomically: a crash leaves the old file or the new one, never half."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = _HEAD + _SEP.join(self._line(e) for e in entries) + _FOOT if entries else _EMPTY
        write_text_atomic(self.path, payload, mode=0o600)  # its temp file: ``_temp_prefix()`` ... ``.tmp``

    def add_many(self, items: Iterable[MemoryEntry | Mapping[str, Any] | tuple[str, str]]
                 ) -> list[MemoryEntry]:
        """Append entries (text cut to ``memory_max_text_chars``), evict the oldest, write once.

        The file is read again under the lock, so an entry another process added
        in the meantime is kept.
        """
        new = [self._normalize(item) for item in items]
        with self._locked():
            self._remove_stale_temps()
            _, current = self._read(fresh=True)  # raises on an unreadable file: nothing is written
            entries = list(current) + new
            cap = self.budgets.memory_max_entries
            if len(entries) > cap:
                entries = entries[len(entries) - cap:]
            self._write(entries)
        return new

    def add(self, kind: str, text: str) -> MemoryEntry:
        """Remember one line; the oldest entry goes when the store is full."""
        return self.add_many([(kind, text)])[0]

    # ---- retrieval

    def index(self) -> MemoryIndex:
        """The BM25 index of the current entries (rebuilt only when the file changed)."""
        entries = self.entries()
        if self._index is None or self._index.entries is not entries:
            self._index = MemoryIndex(entries)
        return self._index

    def scored(self, query: str, k: int | None = None) -> list[tuple[MemoryEntry, float]]:
        """Top ``k`` entries (default ``memory_inject_top_k``) with their BM25 scores."""
        return self.index().scored(query, self.budgets.memory_inject_top_k if k is None else k)

    def search(self, query: str, k: int | None = None) -> list[MemoryEntry]:
        """Top ``k`` entries for ``query`` by BM25, best first; only entries sharing a term."""
        return [e for e, _ in self.scored(query, k)]


def _lock(fd: int, seconds: float) -> bool:
    """``flock(fd, LOCK_EX)`` waiting at most ``seconds``; False (fd closed) on timeout.

    The wait is a blocking ``flock`` in a helper thread: the kernel hands the lock
    to a waiter as soon as it is released, where polling with ``LOCK_NB`` would
    let a busy writer take it again and again and starve the others.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    state = {"given_up": False}
    guard = threading.Lock()
    got = threading.Event()

    def wait() -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with guard:
            if state["given_up"]:
                os.close(fd)  # too late: release it at once
                return
            got.set()

    threading.Thread(target=wait, daemon=True).start()
    if got.wait(seconds):
        return True
    with guard:
        if got.is_set():
            return True
        state["given_up"] = True
    return False



def inject(messages: Sequence[M], query: str, store: Any = None,
           budgets: Budgets = DEFAULT_BUDGETS) -> list[M | dict[str, Any]]:
    """A new message list whose system message carries the top-k memory block for ``query``.

    ``store`` is anything with ``search(query, k)``; by default the ``MemoryStore``
    at ``~/.nanohermes/memory.json``. The input list and its messages are never mutated.
    """
    store = MemoryStore() if store is None else store
    block = render_block(store.search(query, budgets.memory_inject_top_k), budgets)
    rest: list[M | dict[str, Any]] = list(messages)
    head = rest[0] if rest else None
    if isinstance(head, Mapping) and head.get("role") == "system":
        content = head.get("content", "")
        if not isinstance(content, str):
            raise TypeError("inject needs messages[0]['content'] to be a string")
        return [{**head, "content": set_block(content, block)}, *rest[1:]]
    if not block:
        return rest
    return [{"role": "system", "content": block}, *rest]
