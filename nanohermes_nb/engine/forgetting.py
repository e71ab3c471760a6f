"""What forgetting cost in real sessions: what an agent did right after each of its own compactions (issue 36).

For every compaction an agent's log records, the first ``window`` tool calls after it (20 by
default, as in the Codex report of 74 compactions in 5.9 hours, where 95% were followed by a
re-read; fewer when the next compaction comes first) are read for three signs of forgetting:

- **re-reads**: a file read before the compaction (anywhere earlier in the log) read again, with
  the tokens of what the second read returned (o200k, times the session's calibrated token scale
  when its bill allows a fit) and their dollars at the session's model prices: the first request
  writes them (Anthropic: the cache-write price; OpenAI: the input price) and every later request
  until the next compaction reads them again from the cache (``carried_usd``);
- **re-runs**: a shell command run before the compaction run again, word for word;
- **returns**: an earlier user request, answered before the compaction, whose key terms the agent's
  next actions name again while the open request's terms do not cover them (a lexical proxy).

Paths match when one is the other or ends with it (``list/data.go`` and its absolute path).
Counterfactual caveat (``ledger.CAVEAT``) in reverse: this is what the agent did, not what it
would have done with a better compaction; a re-read can be a check of a file that changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context.messages import call_name, calls_of, pair_tool_results, role_of, text_of
from ..context.probes import READ_TOOLS, is_request, key_terms
from ..context.shell import call_args, shell_command, shell_files
from ..context.survival import message_text
from ..transcripts.session import Session, SessionLike

__all__ = ["ReRead", "Aftermath", "aftermath", "read_paths", "same_path", "WINDOW"]

WINDOW = 20  # tool calls looked at after a compaction


@dataclass(frozen=True)
class ReRead:
    """A file read again after a compaction: where, how large, when it had been read before."""

    path: str
    index: int  # the message holding the call
    result: int  # the message holding what it returned (-1: no result)
    earlier: int  # the message of the earlier read it repeats
    tokens: int  # o200k tokens of what it returned
    provider_tokens: float = 0.0  # scaled by the session's fit
    usd: float = 0.0  # its first request: written (Anthropic) or read uncached
    carried_usd: float = 0.0  # read again from the cache by every later request until the next compaction


@dataclass(frozen=True)
class Aftermath:
    """What the agent did in the first ``window`` tool calls after one compaction."""

    at: int
    calls: int  # tool calls looked at
    rereads: tuple[ReRead, ...] = ()
    reruns: tuple[str, ...] = ()
    returns: tuple[str, ...] = ()  # earlier requests (first line) acted on again
    reads: int = 0  # reads in the window, re-reads or not
    pricing: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def reread_files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.path for r in self.rereads))

    @property
    def reread_tokens(self) -> int:
        return sum(r.tokens for r in self.rereads)

    @property
    def reread_usd(self) -> float:
        return sum(r.usd for r in self.rereads)

    @property
    def carried_usd(self) -> float:
        return sum(r.carried_usd for r in self.rereads)


def _norm(path: str) -> str:
    return path.strip().strip("'\"").replace("\\", "/").removeprefix("./").rstrip("/")


def same_path(a: str, b: str) -> bool:
    """One path is the other, or ends with it after a ``/`` (relative beside absolute)."""
    a, b = _norm(a), _norm(b)
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def read_paths(call: Any) -> list[str]:
    """The files a call reads: a read tool's path, an editor's ``view``, a shell reader's arguments."""
    name, args = call_name(call), call_args(call)
    if name in READ_TOOLS and isinstance(args.get(READ_TOOLS[name]), str):
        return [args[READ_TOOLS[name]]]
    if name == "str_replace_editor" and args.get("command") == "view" and isinstance(args.get("path"), str):
        return [args["path"]]
    command = shell_command(call)
    return list(shell_files(command)[0]) if command else []


def _calls(messages: Sequence[Mapping[str, Any]], lo: int, hi: int) -> list[tuple[int, int, Any]]:
    """``(message, position, call)`` for every call in ``messages[lo:hi]``, in order."""
    return [(i, k, c) for i in range(lo, hi) for k, c in enumerate(calls_of(messages[i]))]


def _results(messages: Sequence[Mapping[str, Any]]) -> dict[tuple[int, int], int]:
    return {v: k for k, v in pair_tool_results(messages).items()}


def _earlier(messages: Sequence[Mapping[str, Any]], at: int) -> tuple[dict[str, int], dict[str, int]]:
    """Files read and commands run before ``at``: each with the message of its last occurrence."""
    reads: dict[str, int] = {}
    commands: dict[str, int] = {}
    for i, _k, call in _calls(messages, 0, at):
        for p in read_paths(call):
            reads[_norm(p)] = i
        command = shell_command(call)
        if command:
            commands[" ".join(command.split())] = i
    return reads, commands


def _returns(messages: Sequence[Mapping[str, Any]], at: int, stop: int) -> tuple[str, ...]:
    """Earlier answered requests whose own key terms the agent's actions in ``[at, stop)`` name again."""
    requests, answered = [], set()
    for i in range(at):
        m = messages[i]
        if is_request(m):
            requests.append(i)
        elif role_of(m) == "assistant" and text_of(m).strip() and not calls_of(m) and requests:
            answered.add(requests[-1])
    open_terms: set[str] = set()
    for r in reversed(requests):  # the open request, and the ones it continues ("yes", "ok, do it")
        own = key_terms(text_of(messages[r]), 6)
        open_terms |= {t.lower() for t in own}
        if len(own) >= 3:
            break
    actions = "\n".join(message_text(messages[i]) for i in range(at, stop)
                        if role_of(messages[i]) == "assistant").lower()
    back = []
    for r in sorted(answered - ({requests[-1]} if requests else set())):
        terms = [t for t in key_terms(text_of(messages[r]), 4) if t.lower() not in open_terms]
        if len(terms) >= 2 and sum(t.lower() in actions for t in terms) >= min(3, len(terms)):
            back.append(" ".join(text_of(messages[r]).split())[:120])
    return tuple(back)


def aftermath(messages: Sequence[Mapping[str, Any]], at: int, stop: int | None = None, *,
              window: int = WINDOW, tokens: Any = None) -> Aftermath:
    """The first ``window`` tool calls after a compaction at ``at`` (before ``stop``, the next one).

    ``tokens(text) -> int`` counts a result's tokens (default: o200k). Dollars are added by
    ``priced`` (``forgetting_report`` does both).
    """
    from ..context.sizing import count_tokens

    count = tokens or (lambda text: count_tokens(text, "o200k"))
    stop = len(messages) if stop is None else min(stop, len(messages))
    reads, commands = _earlier(messages, at)
    results = _results(messages)
    calls = _calls(messages, at, stop)[:window]
    rereads, reruns, n_reads = [], [], 0
    for i, k, call in calls:
        paths = read_paths(call)
        n_reads += bool(paths)
        for p in paths:
            hit = next((j for q, j in reads.items() if same_path(q, p)), None)
            if hit is not None:
                res = results.get((i, k), -1)
                size = count(text_of(messages[res])) if res >= 0 else 0
                rereads.append(ReRead(p, i, res, hit, size))
        command = shell_command(call)
        if command and " ".join(command.split()) in commands:
            reruns.append(" ".join(command.split()))
    last = calls[-1][0] + 1 if calls else at
    return Aftermath(at, len(calls), tuple(rereads), tuple(dict.fromkeys(reruns)),
                     _returns(messages, at, last), n_reads)


def priced(after: Aftermath, transcript: SessionLike, scale: float, next_at: int) -> Aftermath:
    """``after`` with each re-read's provider tokens and dollars at the model that read it."""
    from dataclasses import replace

    from .bill import price_for_model

    requests = Session.of(transcript).requests
    out, name = [], ""
    for r in after.rereads:
        later = [q for q in requests if q.message > r.index]
        pricing = price_for_model(later[0].model) if later else None
        if pricing is None:
            out.append(replace(r, provider_tokens=r.tokens * scale))
            continue
        name = pricing.name
        tokens = r.tokens * scale
        first = (pricing.cache_write if pricing.cache == "anthropic" else pricing.input) or 0.0
        carried = sum(1 for q in later[1:] if q.message < next_at)
        out.append(replace(r, provider_tokens=tokens, usd=tokens * first / 1e6,
                           carried_usd=tokens * carried * pricing.cached_input / 1e6))
    notes = after.notes if name or not after.rereads else after.notes + ("no price for the session's model",)
    return replace(after, rereads=tuple(out), pricing=name, notes=notes)


def aftermaths(transcript: SessionLike, window: int = WINDOW, scale: float = 1.0) -> list[Aftermath]:
    """``aftermath`` (priced) of every compaction the transcript records, each up to the next one."""
    log = Session.of(transcript)
    n = len(log.messages)
    places = [min(int(c.message), n) for c in log.compactions]
    out = []
    for k, at in enumerate(places):
        nxt = places[k + 1] if k + 1 < len(places) else n
        out.append(priced(aftermath(log.messages, at, nxt, window=window), log, scale, nxt))
    return out


def session_scale(transcript: SessionLike) -> tuple[float, str]:
    """The provider-tokens-per-o200k-token scale of the session's cost model, and where it came from."""
    from .whatif import SessionModel

    try:
        fit = SessionModel(transcript).fit
    except (ValueError, ZeroDivisionError, KeyError):
        fit = None
    if fit is None or fit.scale <= 0:
        return 1.0, "no fit (o200k tokens as they are)"
    return float(fit.scale), f"the session's fit ({fit.points} billed requests)"

