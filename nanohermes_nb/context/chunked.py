"""Fitting a summary request to the summarizer's context window: chunks, then their summaries.

The article sends the whole excerpt in one request (SPEC 4); a model with a small
window (SmolLM2's 8,192 tokens against a 40,000-token excerpt of a real transcript)
answers HTTP 400 and the compaction falls back to the placeholder. That stays the
default. ``fit_summary`` is the named option that fits instead:

1. the excerpt fits the window (prompt + excerpt + ``reply_tokens``): one request,
   exactly the article's;
2. otherwise the excerpt is cut at record boundaries (a ``role: text`` line; a record
   longer than a chunk is cut at a character boundary) into chunks that each fit,
   every chunk is summarized with the same prompt, and the chunk summaries, in order,
   are summarized again (a round more while they still do not fit).

Tokens are estimated from UTF-8 bytes (``bytes_per_token``, 3 by default: below what
English text and code average in common tokenizers, so the estimate errs large). A
server that still says the request is too long (OpenAI's wording ``maximum context
length is N tokens ... requested M tokens``, llama.cpp's ``Requested tokens (M)
exceed context window of N``) teaches the real ratio: the fit starts again with it
(at most ``max_attempts`` times). ``SummaryCost`` records what it cost: requests,
prompt and completion tokens (the server's own counts where it reported them) and
seconds.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["SummaryCost", "MeasuredSummarizer", "summary_cost", "WindowExceeded", "fit_summary", "split_excerpt",
           "merge_input", "window_exceeded"]

# what one request returned: the summary text and the server's (prompt_tokens, completion_tokens), each None
# when not reported
Answer = tuple[str, "int | None", "int | None"]

_OPENAI = re.compile(r"maximum context length is (\d+) tokens.*?requested (\d+) tokens(?: \((\d+) in the messages)?",
                     re.I | re.S)
_LLAMA = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)", re.I)


class WindowExceeded(RuntimeError):
    """The server refused a request as longer than its window (``window``, ``requested``: tokens, or None)."""

    def __init__(self, reason: str, window: int | None = None, requested: int | None = None) -> None:
        super().__init__(reason)
        self.window, self.requested = window, requested
        self.sent_bytes: int | None = None  # the request's excerpt bytes, when the chunking loop sent it


def window_exceeded(reason: str) -> WindowExceeded | None:
    """The ``WindowExceeded`` a server's error text describes, or None when it says something else."""
    m = _OPENAI.search(reason)
    if m:
        requested = int(m.group(3) or m.group(2))
        return WindowExceeded(reason, int(m.group(1)), requested)
    m = _LLAMA.search(reason)
    if m:
        return WindowExceeded(reason, int(m.group(2)), int(m.group(1)))
    if "context_length_exceeded" in reason or "context length" in reason.lower():
        return WindowExceeded(reason)
    return None


@dataclass(frozen=True)
class SummaryCost:
    """What one summary cost: requests, tokens in and out, seconds, rounds (1: the excerpt fitted)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    rounds: int
    estimated: bool  # some token figure is an estimate (the server did not report it)

    def line(self) -> str:
        est = "~" if self.estimated else ""
        return (f"{self.calls} summarizer request{'s' if self.calls != 1 else ''} in {self.rounds} "
                f"round{'s' if self.rounds != 1 else ''}, {est}{self.prompt_tokens:,} prompt + "
                f"{est}{self.completion_tokens:,} completion tokens, {self.seconds:.1f} s")

    def as_dict(self) -> dict:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "seconds": round(self.seconds, 3), "rounds": self.rounds, "estimated": self.estimated}


@runtime_checkable
class MeasuredSummarizer(Protocol):
    """A summarizer that says what its last summary cost (``last_cost``; None: not measured)."""

    last_cost: SummaryCost | None

    def __call__(self, excerpt: str, /) -> str | None: ...


def summary_cost(summarizer: object) -> SummaryCost | None:
    """What ``summarizer``'s last summary cost, when it is a ``MeasuredSummarizer``; else None.

    Read as an attribute rather than by ``isinstance`` with the runtime-checkable protocol: that check
    inspects the protocol's members on every call (about 20 µs), and a sweep asks once per compaction.
    """
    cost = getattr(summarizer, "last_cost", None)
    return cost if isinstance(cost, SummaryCost) else None


def _estimate(text: str, bytes_per_token: float) -> int:
    return math.ceil(len(text.encode("utf-8")) / bytes_per_token)


def split_excerpt(excerpt: str, max_bytes: int) -> list[str]:
    """The excerpt in order as chunks of at most ``max_bytes`` UTF-8 bytes, cut between records where possible."""
    if max_bytes < 16:
        raise ValueError(f"a chunk must hold at least 16 bytes, got {max_bytes}")
    records = re.split(r"(?<=\n)(?=[\w?]+(?: [\w()]+)*: )", excerpt)
    chunks: list[str] = []
    current = ""
    for record in records:
        for piece in _pieces(record, max_bytes):
            if current and len((current + piece).encode("utf-8")) > max_bytes:
                chunks.append(current)
                current = ""
            current += piece
    if current:
        chunks.append(current)
    return chunks


def _pieces(text: str, max_bytes: int) -> list[str]:
    """``text`` cut at character boundaries into pieces of at most ``max_bytes`` bytes."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return [text]
    out, start = [], 0
    while start < len(data):
        end = min(start + max_bytes, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:  # not inside a character
            end -= 1
        out.append(data[start:end].decode("utf-8"))
        start = end
    return out


def merge_input(summaries: list[str]) -> str:
    """What the next round summarizes: the chunk summaries in order, each headed by its place."""
    n = len(summaries)
    return "".join(f"summary of part {k} of {n}: {s.strip()}\n" for k, s in enumerate(summaries, start=1))


@dataclass
class _Tally:
    calls: int = 0
    prompt: int = 0
    completion: int = 0
    estimated: bool = False
    rounds: int = 0


def fit_summary(excerpt: str, ask: Callable[[str, int], Answer], *, window: int, prompt: str,
                reply_tokens: int = 512, bytes_per_token: float = 3.0, max_attempts: int = 3,
                max_rounds: int = 6) -> tuple[str, SummaryCost]:
    """The summary of ``excerpt`` made by requests that each fit ``window`` tokens, and what it cost.

    ``ask(text, max_tokens)`` sends one summary request (``prompt`` as system message, ``text``
    as user message) and returns ``(summary, prompt_tokens, completion_tokens)``; it raises
    ``WindowExceeded`` when the server refused the length, anything else on another failure
    (which propagates: the compaction then uses the placeholder).
    """
    if window <= reply_tokens + 64:
        raise ValueError(f"a window of {window} tokens leaves no room beside {reply_tokens} reply tokens")
    started = time.perf_counter()
    tally = _Tally()

    def cost() -> SummaryCost:
        return SummaryCost(tally.calls, tally.prompt, tally.completion, time.perf_counter() - started,
                           tally.rounds, tally.estimated)

    try:
        for _attempt in range(max_attempts):
            try:
                text = _fit(excerpt, ask, tally, window, prompt, reply_tokens, bytes_per_token, max_rounds)
            except WindowExceeded as exc:
                bytes_per_token = _learn(exc, bytes_per_token)
                if exc.window and reply_tokens + 64 < exc.window < window:  # the server's own window is smaller
                    window = exc.window
                continue
            return text, cost()
        raise WindowExceeded(f"the summary requests still exceeded the window after {max_attempts} attempts")
    except Exception as exc:  # what the requests made so far cost goes with the failure
        exc.cost = cost()  # type: ignore[attr-defined]
        raise


def _learn(exc: WindowExceeded, bytes_per_token: float) -> float:
    """A smaller bytes-per-token ratio after a refusal: the server's own count where it gave one."""
    sent = exc.sent_bytes
    if exc.requested and sent:
        return min(bytes_per_token, sent / exc.requested) * 0.9
    return bytes_per_token * 0.6


def _fit(excerpt: str, ask: Callable[[str, int], Answer], tally: _Tally, window: int, prompt: str,
         reply_tokens: int, bytes_per_token: float, max_rounds: int) -> str:
    overhead = _estimate(prompt, bytes_per_token) + 16  # the chat template's framing of two messages
    room = window - reply_tokens - overhead
    if room < 32:
        raise ValueError(f"the summary prompt leaves no room in a window of {window} tokens")
    max_bytes = max(int(room * bytes_per_token), 16)
    text = excerpt
    for _round in range(max_rounds):
        tally.rounds += 1
        chunks = [text] if len(text.encode("utf-8")) <= max_bytes else split_excerpt(text, max_bytes)
        answers = [_one(chunk, ask, tally, reply_tokens, bytes_per_token, overhead) for chunk in chunks]
        if len(answers) == 1:
            return answers[0]
        text = merge_input(answers)
    raise WindowExceeded(f"the summaries did not fit the window after {max_rounds} rounds")


def _one(text: str, ask: Callable[[str, int], Answer], tally: _Tally, reply_tokens: int,
         bytes_per_token: float, overhead: int) -> str:
    tally.calls += 1
    try:
        summary, prompt_tokens, completion_tokens = ask(text, reply_tokens)
    except WindowExceeded as exc:
        exc.sent_bytes = len(text.encode("utf-8"))
        raise
    if prompt_tokens is None:
        prompt_tokens, tally.estimated = _estimate(text, bytes_per_token) + overhead, True
    if completion_tokens is None:
        completion_tokens, tally.estimated = _estimate(summary, bytes_per_token), True
    tally.prompt += prompt_tokens
    tally.completion += completion_tokens
    return summary
