"""When would each agent have compacted this session? The trigger timeline, and compaction loops.

For a recorded session, each agent rule (``policies.AGENT_RULES``) is replayed on the
session's own token counts with its own trigger for the session's model: its window and
reserve from ``policies/agent_windows.py``, its threshold from ``rule.trigger(window)``.
The result says at which requests each rule fires, what the context would have been
under it, and whether it loops (fires again within ``LOOP_WITHIN`` requests); beside it,
what the agent itself did (``Transcript.compactions``, read from its log) and what
NanoHermes's rule does (the article's 120,000 bytes).

Token counts: ``prompt_tokens`` is the one function that says how many tokens a request
sent, as the agents read it from their bill: the reported prompt where the log has one,
else the o200k meter of the context (``engine/whatif`` is building a calibrated estimate;
it can be put behind this function). The replay counts the transcript's own messages in
o200k; what a request sends beyond them (system prompt, tool definitions) is the hidden
prefix, estimated as the median of reported minus metered over the requests before the
agent's first own compaction, and taken off each rule's threshold.

Counterfactual caveat, as every replay: the recorded future is assumed not to depend on
what a rule would have dropped.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._deprecated import renamed
from ..context.budgets import DEFAULT_BUDGETS
from ..policies import AGENT_RULES, resolve_policy
from ..policies.agent_windows import ONE_MILLION, ModelWindow, Trigger, window_for
from ..transcripts.session import Session, SessionLike
from .ledger import replay
from .recorded import RecordedSession

__all__ = ["LOOP_WITHIN", "TOKEN_UNIT", "RuleTimeline", "TriggerTimeline", "prompt_tokens", "session_model",
           "session_window", "hidden_prefix", "trigger_timeline", "loops", "loop_table", "real_compactions",
           "REAL", "NANOHERMES"]

LOOP_WITHIN = 3  # a compaction followed by another within this many requests is a loop
TOKEN_UNIT = "o200k"  # the project's meter where the log reports no usage
REAL = "log"  # the lane of the agent's own compactions
NANOHERMES = "nanohermes"


def prompt_tokens(session: RecordedSession) -> tuple[list[int], list[str]]:
    """Each request's prompt tokens and where the number comes from (``reported`` or ``o200k``).

    The one place that says what a request cost in tokens: swap it for a calibrated
    estimate and the whole timeline follows.
    """
    prefix = session.prefix(TOKEN_UNIT)
    tokens, sources = [], []
    for i in session.reply:
        q = session.reported.get(i)
        usage = q.usage if q is not None else None
        if usage is not None and usage.prompt_tokens:
            tokens.append(int(usage.prompt_tokens))
            sources.append("reported")
        else:
            tokens.append(prefix[i])
            sources.append(TOKEN_UNIT)
    return tokens, sources


def real_compactions(transcript: SessionLike, session: RecordedSession) -> list[int]:
    """The requests (1-based) right after each of the agent's own compactions read from its log."""
    log = Session.of(transcript)
    shift = len(session.messages) - len(log.messages)
    out = []
    for c in log.compactions:
        index = int(c.message) + shift
        out.append(sum(1 for i in session.reply if i < index) + 1)
    return [r for r in out if r <= session.n_requests]


def session_model(transcript: SessionLike) -> str:
    """The model most of the session's requests name ("" when the log names none)."""
    models = [q.model for q in Session.of(transcript).requests if q.model]
    return max(set(models), key=models.count) if models else ""


def session_window(transcript: SessionLike, tokens: Sequence[int] = (), model: str | None = None) -> ModelWindow:
    """The session model's window; a log that reports more than it (or a compaction that did) ran the
    1M-token variant (Claude Code's ``[1m]``), which its model name does not say."""
    log = Session.of(transcript)
    window = window_for(model if model is not None else session_model(log))
    seen = max([*tokens, *(c.pre_tokens or 0 for c in log.compactions)], default=0)
    if seen > window.context_window:
        return dataclasses.replace(window, context_window=max(ONE_MILLION, seen),
                                   source=window.source + "; the log reports more: the 1M variant")
    return window


def hidden_prefix(session: RecordedSession, tokens: Sequence[int], sources: Sequence[str],
                  first_real: int | None) -> int:
    """Median of reported minus metered prompt over the requests before the agent's first own compaction."""
    prefix = session.prefix(TOKEN_UNIT)
    stop = (first_real - 1) if first_real else len(tokens)
    gaps = [t - prefix[session.reply[r]] for r, (t, s) in enumerate(zip(tokens, sources, strict=True))
            if s == "reported" and r < stop]
    return max(0, int(statistics.median(gaps))) if gaps else 0


def loops(firings: Sequence[int], within: int = LOOP_WITHIN) -> int:
    """How many firings follow the one before within ``within`` requests."""
    return sum(1 for a, b in zip(firings, firings[1:], strict=False) if b - a <= within)


@dataclass(frozen=True)
class RuleTimeline:
    """One lane: a rule (or the log, or NanoHermes), where it fires, its loops, its context per request."""

    rule: str
    agent: str
    trigger: Trigger | None
    firings: tuple[int, ...]
    sizes: tuple[int, ...] = ()  # tokens each request sends under this rule (hidden prefix included)
    loops: int = 0
    note: str = ""

    def row(self) -> dict:
        t = self.trigger
        return {"rule": self.rule, "agent": self.agent, "window": t.window if t else None,
                "threshold": t.threshold if t else None, "reserve": t.reserve if t else None,
                "basis": t.basis if t else "", "fires": len(self.firings),
                "first": self.firings[0] if self.firings else None,
                "requests": ", ".join(map(str, self.firings)), "loops": self.loops, "note": self.note}


@dataclass(frozen=True)
class TriggerTimeline:
    """Every rule's lane over one session, on its token counts (``tokens``, per request)."""

    name: str
    model: str
    window: ModelWindow
    tokens: tuple[int, ...]
    sources: tuple[str, ...]
    hidden: int
    lanes: tuple[RuleTimeline, ...]
    within: int = LOOP_WITHIN
    uncompacted: tuple[int, ...] = ()  # what each request would send with no compaction at all (o200k + hidden)

    @property
    def n_requests(self) -> int:
        """How many model requests the session made."""
        return len(self.tokens)

    @property
    def requests(self) -> int:
        """Deprecated since 0.3.0: ``n_requests``."""
        return renamed(self, "requests", "n_requests")

    def lane(self, rule: str) -> RuleTimeline:
        return next(lane for lane in self.lanes if lane.rule == rule)

    def rows(self) -> list[dict]:
        return [lane.row() for lane in self.lanes]

    def table(self):
        """One row per lane (a DataFrame)."""
        from .frames import frame

        return frame(self.rows())

    def reported_share(self) -> float:
        return self.sources.count("reported") / len(self.sources) if self.sources else 0.0


def _lane(session: RecordedSession, rule: str, window: ModelWindow, hidden: int, summarizer: Any) -> RuleTimeline:
    policy = resolve_policy(rule)
    trigger = policy.trigger(window)  # type: ignore[attr-defined]
    options = policy.model_options(window)  # type: ignore[attr-defined]
    if "overflow_at" in {f.name for f in dataclasses.fields(policy)}:  # type: ignore[arg-type]
        options["overflow_at"] = max(trigger.threshold - hidden, 1)
    policy = dataclasses.replace(policy, **options)  # type: ignore[type-var]
    if trigger.basis == "every_request":
        budget = 0
    elif trigger.basis == "history":
        budget = trigger.threshold + session.prefix(TOKEN_UNIT)[1]  # the system prompt is outside the history
    else:
        budget = max(trigger.threshold - hidden - (1 if trigger.inclusive else 0), 0)
    ledger = replay(session, budget=budget, unit=TOKEN_UNIT, policy=policy, summarizer=summarizer,
                    retention=False, profiles=())
    firings = tuple(int(e.request) + 1 for e in ledger.compactions)  # the request that first sends the result
    firings = tuple(r for r in firings if r <= session.n_requests)
    sizes = tuple(int(s) + hidden for s in ledger.requests["size"])
    return RuleTimeline(rule, policy.agent, trigger, firings, sizes, loops(firings))  # type: ignore[attr-defined]


def _safe_lane(session: RecordedSession, rule: str, window: ModelWindow, hidden: int, summarizer: Any) -> RuleTimeline:
    """A lane, or, when the rule cannot apply to this session (a one-line ``ValueError``), an empty lane saying why."""
    try:
        return _lane(session, rule, window, hidden, summarizer)
    except ValueError as exc:
        policy = resolve_policy(rule)
        return RuleTimeline(rule, policy.agent, policy.trigger(window), (), note=f"cannot apply: {exc}")  # type: ignore[attr-defined]


def _nanohermes(session: RecordedSession, summarizer: Any) -> RuleTimeline:
    ledger = replay(session, summarizer=summarizer, retention=False, profiles=())
    firings = tuple(r for r in (int(e.request) + 1 for e in ledger.compactions) if r <= session.n_requests)
    return RuleTimeline(NANOHERMES, "nanohermes", None, firings, (), loops(firings),
                        note=f"the article's rule: {DEFAULT_BUDGETS.context_char_budget:,} bytes of compact JSON")


def trigger_timeline(transcript: SessionLike, *, rules: Iterable[str] = AGENT_RULES, model: str | None = None,
                     summarizer: Any = None, name: str = "", nanohermes: bool = True) -> TriggerTimeline:
    """The trigger timeline of one session: every rule's firings on its token counts, the log's own beside them."""
    log = Session.of(transcript)
    session = RecordedSession.of(log)
    if not session.n_requests:
        raise ValueError("the session has no model request (no assistant message): nothing to time")
    tokens, sources = prompt_tokens(session)
    real = real_compactions(log, session)
    window = session_window(log, tokens, model)
    hidden = hidden_prefix(session, tokens, sources, real[0] if real else None)
    lanes = [_safe_lane(session, rule, window, hidden, summarizer) for rule in rules]
    if nanohermes:
        lanes.append(_nanohermes(session, summarizer))
    agent = log.agent
    if agent:
        lanes.append(RuleTimeline(REAL, agent, None, tuple(real), (), loops(real),
                                  note=f"{agent}'s own compactions, read from its log"))
    label = name or log.path or "session"
    prefix = session.prefix(TOKEN_UNIT)
    uncompacted = tuple(prefix[i] + hidden for i in session.reply)
    return TriggerTimeline(label, window.model, window, tuple(tokens), tuple(sources), hidden, tuple(lanes),
                           uncompacted=uncompacted)


def loop_table(transcripts: Iterable[tuple[str, SessionLike]], *, rules: Iterable[str] = AGENT_RULES,
               summarizer: Any = None, within: int = LOOP_WITHIN):
    """Per lane, over many sessions: sessions, firings, loops (a firing within ``within`` requests of the one
    before) and the sessions with at least one loop; the agents' own compactions as lanes named ``log:<agent>``."""
    from .frames import frame

    totals: dict[str, dict] = {}
    for name, transcript in transcripts:
        timeline = trigger_timeline(transcript, rules=rules, summarizer=summarizer, name=name)
        for lane in timeline.lanes:
            key = f"{REAL}:{lane.agent}" if lane.rule == REAL else lane.rule
            row = totals.setdefault(key, {"rule": key, "sessions": 0, "fired_in": 0, "firings": 0, "loops": 0,
                                          "looping_sessions": 0})
            n = loops(lane.firings, within)
            row["sessions"] += 1
            row["fired_in"] += bool(lane.firings)
            row["firings"] += len(lane.firings)
            row["loops"] += n
            row["looping_sessions"] += bool(n)
    return frame(list(totals.values()))
