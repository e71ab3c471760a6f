"""One model of a session's cost: the provider's tokens and dollars of every request, free-running.

Used by everything that prices an agent log or a replay of one (``ledger``, ``whatif``,
``compare_policies``, the sweep over agent logs, notebook 20), so that two tables of the same
session never disagree. *When* is kept apart from *what*:

- ``steps_of_facts``: the recorded trajectory as ``Step`` s. Beside the context the log shows,
  each step carries ``hidden``: the context the provider counts that the messages do not show,
  as o200k tokens grown since the request before. A reply's thinking enters at its *full* size,
  measured by its signature (``logmeta``; ``Priors.thinking`` tokens per signature character),
  in place of the summary or empty text the log shows; models that keep only the last turn's
  thinking (Haiku up to 4.5, Sonnet up to 4.5, Opus up to 4.1) drop it at a new user turn
  (https://platform.claude.com/docs/en/build-with-claude/extended-thinking, "Thinking block
  preservation by model"). What Claude Code injected (attachment and meta records) counts as
  it was logged; a log that does not record injections grows by ``Priors.unlogged`` per request,
  and each of the agent's own compactions restores ``Priors.restored`` (files, plan, skills);
- ``SessionFit`` (per session, from its first ``FIT_REQUESTS`` billed requests only): the hidden
  prefix (system prompt and tool schemas), the provider's token scale (Claude tokens per o200k
  token; 1 for OpenAI, whose tokenizer is o200k), the output scale, the reasoning an OpenAI
  reply leaves in the context for the rest of its turn, the share of cache writes made for one
  hour, and the context a session opens on that its file does not show (``unseen``: it leaves
  at the first compaction);
- ``Priors`` (across sessions, learned leave-one-session-out by ``validation``, shipped in
  ``nanohermes_nb/resources/cost_priors.json``);
- ``predict``: per ``Step`` the provider's prompt, cache read, 5-minute and 1-hour cache writes,
  uncached input and output tokens. Within the time-to-live the provider reads the previous
  prompt, times ``Priors.read_share``: OpenAI's cache is best-effort; Anthropic reads the whole
  prefix (2,405 tool-loop requests of the real logs: median shortfall 2 tokens) but rewrites
  it now and then at a user turn or falls back to an earlier breakpoint, which no log foresees
  and the share spreads as a rate. At a new user turn OpenAI reads only up to where the turn
  before began (its reasoning items are dropped). Nothing in it reads the bill beyond the
  fit's first requests: it is the model a what-if runs, and ``validation`` measures exactly it;
- ``request_dollars``: each request priced by its own model; an unpriced model gives None, never $0.

The *bill-anchored* estimate (``predict(anchor=...)``, ``calibrate``) explains a recorded
session; the free-running one predicts.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .calibrate import FIT_REQUESTS, TTL_SECONDS, RequestFacts, least_squares
from .imagetokens import IMAGE_TOKENS, ProviderMeter, image_tokens  # noqa: F401  (re-exported: their old home)

if TYPE_CHECKING:
    from ..transcripts.base import ReportedUsage
    from ..transcripts.session import SessionLike
    from .pricing import Pricing
    from .recorded import RecordedSession

__all__ = ["Step", "SessionFit", "Priors", "Tokens", "predict", "request_dollars", "fit_for", "steps_of_facts",
           "provider_of", "load_priors", "PRIORS_FILE", "NO_PRIORS", "keeps_thinking", "THINKING_TOKENS"]

PRIORS_FILE = "cost_priors.json"
THINKING_TOKENS = 0.187  # o200k tokens of thinking per signature character, when no priors say (the corpus's)


@dataclass(frozen=True)
class Step:
    """One request of a trajectory as the model sees it (tokens in the project's unit, o200k).

    ``shared``: visible tokens at the start of this request's context that the request before
    also sent (the whole previous context while it only grew; what a compaction left in place
    after one); ``event``: the start of the context was rewritten since the request before;
    ``reply``: the reply's size as the provider counts it (its hidden thinking included);
    ``hidden``: context the messages do not show, grown since the request before (see the
    module docstring; it restarts at an event).
    """

    time: float | None
    model: str
    visible: float
    shared: float
    reply: float
    event: bool = False
    turn_start: bool = False
    hidden: float = 0.0


@dataclass(frozen=True)
class Tokens:
    """The provider's tokens of one request as predicted (``prompt`` counts every input token)."""

    prompt: float
    cached: float
    write_5m: float
    write_1h: float
    output: float

    @property
    def write(self) -> float:
        return self.write_5m + self.write_1h

    @property
    def uncached(self) -> float:
        return self.prompt - self.cached - self.write


@dataclass(frozen=True)
class Priors:
    """What the model learned on *other* sessions (``validation.learn_priors``), by agent.

    ``hidden``: the median hidden prefix of sessions that open on their own start;
    ``first_read``: the share of it a first request reads from a cache other sessions warmed
    (``agent:1h`` / ``agent:default`` by the session's cache lifetime); ``read_share``: reads
    over the rule's expected reads mid-session;
    ``uncached``: the uncached input tokens per request of an Anthropic prompt;
    ``rewrite`` (none shipped: ``validation.ABLATIONS``): the share of the warm context a user
    turn loses on average; ``thinking``: o200k tokens of thinking per signature character; ``unlogged``: o200k tokens
    per request a log that does not record the agent's injections misses; ``restored``: o200k
    tokens an agent's own compaction restores beyond its summary; ``compact_read``: the share
    of the hidden prefix read from the cache right after a compaction; ``band``: the 90th
    percentile of the leave-one-session-out |cost error| (``band_sessions`` sessions);
    ``source``: what they were learned on.
    """

    hidden: Mapping[str, float] = field(default_factory=dict)
    first_read: Mapping[str, float] = field(default_factory=dict)
    read_share: Mapping[str, float] = field(default_factory=dict)
    uncached: Mapping[str, float] = field(default_factory=dict)
    thinking: Mapping[str, float] = field(default_factory=dict)
    unlogged: Mapping[str, float] = field(default_factory=dict)
    restored: Mapping[str, float] = field(default_factory=dict)
    compact_read: Mapping[str, float] = field(default_factory=dict)
    rewrite: Mapping[str, float] = field(default_factory=dict)
    band: Mapping[str, float] = field(default_factory=dict)
    band_sessions: Mapping[str, int] = field(default_factory=dict)
    sessions: int = 0
    source: str = ""

    def get(self, table: str, agent: str, default: float) -> float:
        value = getattr(self, table).get(agent)
        return default if value is None else float(value)

    def as_json(self) -> str:
        return json.dumps({k: (dict(sorted(v.items())) if isinstance(v, Mapping) else v)
                           for k, v in asdict(self).items()}, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Priors:
        data = json.loads(text)
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


NO_PRIORS = Priors(source="none")


def load_priors() -> Priors:
    """The priors shipped with the package (``nanohermes_nb/resources/cost_priors.json``); none if it is missing."""
    from ..resources import resource_path

    path = resource_path(PRIORS_FILE)
    try:
        return Priors.from_json(path.read_text(encoding="utf-8"))
    except OSError:
        return NO_PRIORS


@dataclass(frozen=True)
class SessionFit:
    """The per-session part of the model, from its first billed requests (see the module docstring)."""

    hidden: float
    scale: float
    output_scale: float
    unseen: float = 0.0
    ttl: float = TTL_SECONDS["anthropic"]
    share_1h: float = 0.0
    first_read: float = 0.0  # tokens the first request is expected to read from a cache others warmed
    cold_read: float = 0.0  # the same after an idle gap or a model switch: the part other sessions keep warm
    points: int = 0
    reasoning: float = 0.0  # OpenAI: tokens each reply's reasoning adds to the context for the rest of its turn

    def prompt(self, visible: float, unseen: bool = True) -> float:
        return self.hidden + (self.unseen if unseen else 0.0) + self.scale * visible


def provider_of(agent: str) -> str:
    """``anthropic`` for Claude Code, ``openai`` for Codex and the rest (the cache rule that applies)."""
    return "anthropic" if agent == "claude_code" else "openai"


def agent_of(provider: str) -> str:
    return "claude_code" if provider == "anthropic" else "codex_cli"


_CLAUDE = re.compile(r"claude-(?:(\d+)-(?:(\d)-)?(opus|sonnet|haiku)|(opus|sonnet|haiku)-(\d+)(?:-(\d)(?!\d))?)")


def keeps_thinking(model: str) -> bool:
    """Whether the model keeps earlier turns' thinking in its context (Opus 4.5+, Sonnet 4.6+, newer families).

    Haiku up to 4.5, Sonnet up to 4.5, Opus up to 4.1 and every Claude 3 keep only the last turn's
    (extended-thinking docs, "Thinking block preservation by model"); a family the docs name
    later (fable, mythos) or an unknown name keeps them.
    """
    m = _CLAUDE.search(model.lower())
    if m is None:
        return True
    family = m.group(3) or m.group(4)
    version = (int(m.group(1) or m.group(5)), int(m.group(2) or m.group(6) or 0))
    limit = {"opus": (4, 5), "sonnet": (4, 6), "haiku": (4, 6)}[family]
    return version >= limit


def _billed(facts: Sequence[RequestFacts], n: int = FIT_REQUESTS) -> list[RequestFacts]:
    return [f for f in facts if f.usage is not None][:n]


def steps_of_facts(facts: Sequence[RequestFacts], provider: str, priors: Priors | None = None,
                   agent: str | None = None) -> list[Step]:
    """The recorded trajectory as ``Step``s (each shares the whole previous context, or the kept start),
    with the hidden context and the replies' full sizes of the module docstring."""
    priors = NO_PRIORS if priors is None else priors
    agent = agent or agent_of(provider)
    k = priors.get("thinking", agent, THINKING_TOKENS)
    unlogged, restored = priors.get("unlogged", agent, 0.0), priors.get("restored", agent, 0.0)
    out: list[Step] = []
    previous: RequestFacts | None = None
    turn_visible = 0.0  # visible context of the first request of the current user turn
    dropped = 0.0  # thinking a last-turn-only model drops at the next user turn
    for f in facts:
        if previous is None:
            shared = 0.0
        elif f.compacted:
            shared = float(f.kept)
        elif provider == "openai" and f.turn_start:
            shared = min(turn_visible, float(previous.visible))
        else:
            shared = float(previous.visible)
        hidden, dropped = _unshown(f, previous, provider, k, unlogged, restored, dropped)
        reply = f.reply - f.shown_thinking + k * f.thinking if f.thinking else float(f.reply)
        out.append(Step(f.time, f.model, float(f.visible), shared, reply, f.compacted, f.turn_start, hidden))
        if previous is None or f.turn_start or f.compacted:
            turn_visible = float(f.visible)
        previous = f
    return out


def _unshown(f: RequestFacts, previous: RequestFacts | None, provider: str, k: float, unlogged: float,
             restored: float, dropped: float) -> tuple[float, float]:
    """Hidden context grown at request ``f`` (o200k), and the thinking a last-turn-only model still holds."""
    if provider != "anthropic":
        return 0.0, 0.0
    hidden = f.injected or 0.0
    if f.compacted:
        return hidden + restored, 0.0
    if previous is None:
        return hidden, 0.0
    if previous.thinking:
        full = k * previous.thinking
        hidden += full - previous.shown_thinking  # the full thinking in place of the text the log shows
        dropped += 0.0 if keeps_thinking(f.model) else full
    if f.turn_start and dropped:
        hidden, dropped = hidden - dropped, 0.0
    if f.injected is None:
        hidden += unlogged
    return hidden, dropped


def fit_for(facts: Sequence[RequestFacts], agent: str, priors: Priors, *, continued: float | None = None,
            writes_1h: Mapping[int, float] | None = None, steps: Sequence[Step] | None = None,
            replies: Sequence[Any] | None = None) -> SessionFit | None:
    """The session's fit on its first ``FIT_REQUESTS`` billed requests before any compaction.

    ``prompt - reasoning = hidden + scale * (visible + hidden growth)`` by least squares
    (OpenAI: scale 1, the hidden prefix the median remainder); ``steps``: the session's
    ``steps_of_facts`` (made here from ``priors`` when not given). ``continued``: seconds between
    the file's first record and its first request when the file opens midway through a
    conversation (``logmeta.SessionMeta.continued``). A fitted intercept above 1.5x the agent's
    typical hidden prefix is context the file does not show (``unseen``): read from the cache
    at the first request when a conversation it continues went on within the time-to-live, gone
    at the first compaction. ``writes_1h``: per request index, the 1-hour share of its cache
    writes. ``replies``: the recorded replies' usage (the labelled variant of ``predict``).
    """
    provider = provider_of(agent)
    steps = steps if steps is not None else steps_of_facts(facts, provider, priors, agent)
    first = _billed(facts)
    reasoning = _reasoning_rate(first) if provider == "openai" else 0.0
    points = _points(facts, steps, provider, reasoning, replies)
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    if provider == "openai":
        hidden, scale = statistics.median(y - x for x, y in zip(xs, ys, strict=True)), 1.0
    else:
        hidden, scale = least_squares(xs, ys)
    if not 0.5 <= scale <= 3.0 or hidden < 0:  # too few or too alike points: keep the first request's ratio
        scale, hidden = 1.0, max(0.0, ys[0] - xs[0])
    shown = sum(steps[f.index].reply for f in first)
    output_scale = sum(f.usage.completion_tokens for f in first) / shown if shown else 1.0
    share_1h = _share_1h(first, writes_1h)
    ttl = TTL_SECONDS["openai"] if provider == "openai" else (
        TTL_SECONDS["anthropic_1h"] if share_1h >= 0.5 else TTL_SECONDS["anthropic"])
    unseen = 0.0
    logged = "logged" if facts and facts[0].injected is not None else "unlogged"
    typical = priors.hidden.get(f"{agent}:{logged}", priors.hidden.get(agent))
    if typical and hidden > 1.5 * typical:
        hidden, unseen = float(typical), hidden - float(typical)
    key = f"{agent}:{'1h' if ttl > TTL_SECONDS['anthropic'] and provider == 'anthropic' else 'default'}"
    cold = min(1.0, priors.get("first_read", key, priors.get("first_read", agent, 0.0))) * hidden
    warm = cold
    if unseen and continued is not None and continued <= ttl:
        warm = hidden + unseen  # the conversation it continues had just written it
    return SessionFit(hidden, scale, output_scale, unseen, ttl, share_1h, warm, cold, len(points), reasoning)


def _reasoning_rate(first: Sequence[RequestFacts]) -> float:
    """Mean reasoning tokens per reply on the fit's requests (an OpenAI reply's reasoning stays for its turn)."""
    return sum(float(f.usage.reasoning_tokens or 0) for f in first) / len(first) if first else 0.0


def _points(facts: Sequence[RequestFacts], steps: Sequence[Step], provider: str, reasoning: float,
            replies: Sequence[Any] | None) -> list[tuple[float, float]]:
    """(visible + hidden growth, prompt - reasoning in context) of the fit's requests, before any compaction."""
    out: list[tuple[float, float]] = []
    grown = held = 0.0
    for f, s in zip(facts, steps, strict=True):
        if f.compacted and out:
            break
        grown += s.hidden
        if provider == "openai" and f.index > 0:
            held = 0.0 if s.turn_start else held + _reasoning_of(replies, f.index - 1, reasoning)
        if f.usage is not None and f.usage.prompt_tokens > 0:
            out.append((f.visible + grown, f.usage.prompt_tokens - held))
        if len(out) >= FIT_REQUESTS:
            break
    return out


def _reasoning_of(replies: Sequence[ReportedUsage | None] | None, j: int, rate: float) -> float:
    r = replies[j] if replies is not None and j < len(replies) else None
    return rate if r is None else float(r.reasoning_tokens)


def _share_1h(first: Sequence[RequestFacts], writes_1h: Mapping[int, float] | None) -> float:
    written = [(f, f.usage.cache_write_tokens) for f in first if f.usage.cache_write_tokens > 0]
    total = sum(w for _, w in written)
    if not writes_1h or not total:
        return 0.0
    return sum(writes_1h.get(f.index, 0.0) * w for f, w in written) / total


def predict(steps: Sequence[Step], fit: SessionFit, priors: Priors, agent: str, step: int = 1,
            anchor: Sequence[Any] | None = None, replies: Sequence[Any] | None = None) -> list[Tokens]:
    """Every request's provider tokens, free-running: no bill is read (see the module docstring).

    ``step``: the provider's rounding of a cache hit (OpenAI: 128-token blocks). ``anchor`` (the
    *bill-anchored* variant, for explaining a recorded session only): per request the reported
    usage of the request before it, or None; where given, the previous prompt is that bill.
    ``replies`` (labelled variant): per request the recorded reply's usage; its completion is
    the output and its reasoning what it leaves in an OpenAI context (both are billed numbers).
    """
    openai = provider_of(agent) == "openai"
    share = priors.get("read_share", agent, 1.0)
    tail = 0.0 if openai else priors.get("uncached", agent, 0.0)
    compact, rewrite = priors.get("compact_read", agent, 1.0), priors.get("rewrite", agent, 0.0)
    out: list[Tokens] = []
    unseen = True
    grown = held = prev_prompt = prev_free = turn_prompt = prev_grown = 0.0
    previous: Step | None = None
    for j, s in enumerate(steps):
        if s.event:
            unseen, grown, held = False, 0.0, 0.0
        elif openai and previous is not None:
            held = 0.0 if s.turn_start else held + (fit.reasoning if replies is None else
                                                    _reasoning_of(replies, j - 1, fit.reasoning))
        grown += s.hidden
        free = prompt = fit.prompt(s.visible + grown, unseen) + held
        before = anchor[j] if anchor is not None and previous is not None and not s.event else None
        if before is not None and s.model == previous.model:  # type: ignore[union-attr]
            prompt = before.prompt_tokens + free - prev_free  # the previous bill plus the growth since
        last = before.prompt_tokens if before is not None else prev_prompt
        expected = _expected(s, previous, fit, last, turn_prompt, prev_grown, unseen, openai, compact)
        if rewrite and s.turn_start and expected == last:  # a rate of rewrites at user turns (not shipped)
            expected -= rewrite * max(0.0, last - fit.cold_read)
        read = max(0.0, min(expected * share, prompt - tail))
        if step > 1:
            read = float(int(read) - int(read) % step)
        output = fit.output_scale * s.reply
        if replies is not None and j < len(replies) and replies[j] is not None:
            output = float(replies[j].completion_tokens)
        out.append(_split(prompt, read, fit, openai, tail, output))
        if previous is None or s.turn_start or s.event:
            turn_prompt = prompt
        previous, prev_prompt, prev_free, prev_grown = s, prompt, free, grown
    return out


def _expected(s: Step, previous: Step | None, fit: SessionFit, prev_prompt: float, turn_prompt: float,
              prev_grown: float, unseen: bool, openai: bool, compact: float) -> float:
    """The cache read the rule expects before the read share: see the module docstring."""
    if previous is None:
        return fit.first_read
    if s.model != previous.model or (s.time is not None and previous.time is not None
                                     and s.time - previous.time > fit.ttl):
        return fit.cold_read  # cold: what other sessions keep warm
    if s.event:
        return (fit.hidden * (1.0 if openai else compact)) + fit.scale * s.shared
    if openai and s.turn_start:
        return min(turn_prompt, prev_prompt)  # the turn before's reasoning items are dropped
    if s.shared >= previous.visible:
        return prev_prompt
    return fit.prompt(s.shared + prev_grown, unseen)


def _split(prompt: float, read: float, fit: SessionFit, openai: bool, tail: float, output: float) -> Tokens:
    if openai:
        return Tokens(prompt, read, 0.0, 0.0, output)
    write = max(0.0, prompt - read - tail)
    return Tokens(prompt, read, write * (1 - fit.share_1h), write * fit.share_1h, output)


def request_dollars(tokens: Tokens, pricing: Pricing | None) -> float | None:
    """USD of one predicted request at ``pricing`` (None when the model has no price): 1-hour writes at 2x input.

    Anthropic bills a 1-hour cache write at twice the base input price and a 5-minute one at 1.25x
    (https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "pricing"); a table row that
    gives its own 1-hour price (``cache_write_1h``) wins.
    """
    if pricing is None:
        return None
    hour = pricing.cache_write_1h
    hour = 2.0 * pricing.input if hour is None or (isinstance(hour, float) and math.isnan(hour)) else hour
    base = pricing.cost(round(tokens.prompt), round(tokens.cached), round(tokens.output), round(tokens.write_5m))
    return base + round(tokens.write_1h) * (hour - pricing.input) / 1e6


def provider_session(transcript: SessionLike, unit: str = "o200k") -> RecordedSession:
    """``RecordedSession.of(transcript)`` whose ``unit`` meter counts images as the provider bills them."""
    from .recorded import RecordedSession

    return RecordedSession.of(transcript, meters={unit: ProviderMeter(unit)})
