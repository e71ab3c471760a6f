"""``run``: the live agent loop on a task, one line per request; the session is written whatever happens."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..transcripts.base import printable
from .common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROBLEMS,
    UsageError,
    comment,
    err,
    output_path,
    plural,
    policy_named,
    policy_options,
    say,
    summarizer_named,
    write_json_atomic,
)
from .ledger import totals_lines


def _run_model(args):
    """The endpoint from --base-url / --model or the NANOHERMES_LLM_* variables; the key only from the environment."""
    from ..agent.models import (
        DEFAULT_MODEL,
        ENV_API_KEY,
        ENV_BASE_URL,
        ENV_MODEL,
        OpenAICompatibleModel,
    )
    from ..agent.transport import TransportError

    base_url = (args.base_url or os.environ.get(ENV_BASE_URL, "")).strip()
    if not base_url:
        raise UsageError(f"run needs an endpoint: set {ENV_BASE_URL} (and {ENV_API_KEY}, {ENV_MODEL}) or pass "
                         "--base-url")
    name = (args.model or os.environ.get(ENV_MODEL, "")).strip() or DEFAULT_MODEL
    try:
        return OpenAICompatibleModel(base_url, os.environ.get(ENV_API_KEY) or None, name, timeout=args.timeout)
    except (ValueError, TransportError) as exc:
        raise UsageError(str(exc)) from None


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """A warning the model gives (``CompatWarning``: it adapted to the server) is one line on stderr, when it comes."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *_, **__: err(f"nanohermes-nb: note: {message}")
        yield


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """SIGINT and SIGTERM wait until the block is done; the list names those that came.

    Used while the session file is written: a Ctrl-C that lands just as the
    temporary file appears no longer deletes it half-way (the finished session
    was lost). A second signal during the block still stops the program at once.
    """
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def hold(signum: int, frame: Any) -> None:
        if caught:  # asked twice: stop now
            raise KeyboardInterrupt
        caught.append(signum)

    previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield caught
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def run_command(args) -> int:
    from ..agent.loop import Agent

    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise UsageError(f"--workspace {args.workspace}: not a folder")
    output_path("-o", args.output)  # found out now, not after a long run
    model = _run_model(args)
    policy = policy_named(args.policy, policy_options(args))
    summarizer = None if args.summarizer == "model" else summarizer_named(args.summarizer)  # None: the model's
    agent = Agent(workspace, model, budget=args.budget, policy=policy, summarizer=summarizer, unit=args.unit)
    result = None
    try:
        say(comment(f"agent: {model!r}; workspace {agent.workspace}; budget {agent.budget:,} {agent.unit}, policy "
                    f"{agent.policy.label}. Its shell commands run in the workspace with your rights "
                    "(docs/safety.md)."))
        with _warnings_as_lines():
            result = agent.run(args.task, max_requests=args.max_requests,
                               on_request=lambda step: print(printable(step.line()), flush=True))
    except Exception as exc:  # a tool's or a model class's bug: the session so far is still written
        result = agent.result(f"stopped by an unexpected {type(exc).__name__}: {exc}")
    finally:  # whatever happened, the session is written, and a signal now cannot cut the write short
        with _signals_held() as caught:
            if result is None:
                result = agent.result("interrupted (KeyboardInterrupt); the session so far is kept")
            agent.close()
            write_json_atomic(args.output, result.to_json())
    if caught:
        say([f"wrote {plural(len(result.messages), 'message')} to {args.output}"])
        err(f"nanohermes-nb: interrupted; the session so far is in {args.output}")
        return EXIT_INTERRUPTED if caught[0] == signal.SIGINT else 128 + caught[0]
    say(totals_lines(result.ledger))
    say([f"wrote {plural(len(result.messages), 'message')} to {args.output}"])
    if result.error:
        err(f"nanohermes-nb: run stopped: {result.error}")
        return EXIT_INTERRUPTED if result.error.startswith("interrupted") else EXIT_PROBLEMS
    return EXIT_OK

