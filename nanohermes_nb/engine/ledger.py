"""Replay a recorded transcript through a context policy and keep the books (SPEC 5).

Every assistant message in a transcript was produced by one model request. The
replay rebuilds the context that request would have carried under a policy
(NanoHermes's compaction by default) and records its size, the running input
cost, and every event. Counterfactual caveat: the replay assumes the recorded
future did not depend on what was dropped.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context.budgets import DEFAULT_BUDGETS
from ..context.metrics import Retention
from ..context.needed import NeededLater
from ..context.summarizers import Summarizer
from ..policies import Event, Policy, PolicyEnv
from ..transcripts.session import SessionLike
from .bill import BillBook, has_bill
from .books import (
    Book,
    HistoryBook,
    NeededLaterBook,
    PrefixBook,
    RetentionBook,
    SizeBook,
    TokenBook,
    merge_fields,
)
from .columns import request_columns
from .frames import frame
from .modelbook import cost_book
from .probebook import ProbeBook
from .recorded import Context, RecordedSession, prepare
from .settings import Settings
from .totals import Totals

__all__ = ["replay", "reference_replay", "walk", "Ledger", "LedgerEvent", "Totals", "CAVEAT", "prepare", "Replay"]

CAVEAT = (
    "Counterfactual replay: it assumes the recorded future did not depend on what was "
    "dropped. A real agent with less context might have acted differently."
)
@dataclass(frozen=True)
class LedgerEvent:
    """An event with where it happened, what it removed, and what survived."""

    request: int
    turn: int
    event: Event
    context_after: tuple
    problems: dict = field(default_factory=dict)  # profile -> problems in the context right after
    retention: Retention | None = None
    needed_later: NeededLater | None = None  # with needed_later=True
    cost: dict = field(default_factory=dict)  # with pricing: the summarizer's request, in tokens and USD
    probes: tuple = ()  # with probes=True: the survival ledger of what it removed (``survival.Fate`` each)

    # the event's fields, read from the event (named one by one: no attribute forwarding)
    policy = property(lambda self: self.event.policy)
    kind = property(lambda self: self.event.kind)
    size_before = property(lambda self: self.event.size_before)
    size_after = property(lambda self: self.event.size_after)
    removed = property(lambda self: self.event.removed)
    inserted = property(lambda self: self.event.inserted)
    cut = property(lambda self: self.event.cut)
    naive_cut = property(lambda self: self.event.naive_cut)
    note = property(lambda self: self.event.note)
    summarizer_calls = property(lambda self: self.event.summarizer_calls)
    summarizer_tokens = property(lambda self: self.event.summarizer_tokens)  # issue 27: measured (prompt, completion)
    failure = property(lambda self: self.event.failure)
    detail = property(lambda self: self.event.detail)
    dropped_count = property(lambda self: self.event.dropped_count)

    @property
    def dropped(self) -> list:
        return list(self.event.removed)


@dataclass(frozen=True)
class Ledger:
    """The books of one replay: a row per request, every event, and totals.

    ``rows`` holds the request table as plain columns (name -> one value per
    request, in order); ``requests`` is the same table as a pandas DataFrame,
    built on first use, so a replay (and the CLI) never needs pandas.
    ``settings`` is the ``Settings`` the replay ran with (``replay(messages, ledger.settings)``
    gives the same ledger); a live run's ledger (``live``) carries the live policy and the
    ``model`` it ran against.
    """

    rows: dict  # column name -> values, one per request
    compactions: list
    totals: Totals
    settings: Settings
    notes: list
    messages: list = field(repr=False, default_factory=list)
    final_context: list = field(repr=False, default_factory=list)
    caveat: str = CAVEAT
    bases: list = field(repr=False, default_factory=list)
    live: bool = False  # the ledger of a live run (``agent.session.live_ledger_of``), not of a replay
    model: str = ""  # a live run's model (its ``repr``)

    @functools.cached_property
    def requests(self) -> Any:
        """The request table as a DataFrame (text columns keep Python strings: ``frames.frame``)."""
        return frame(self.rows, list(self.rows))

    def records(self) -> list[dict]:
        """The request table as one dict per request, without pandas."""
        names = list(self.rows)
        if not names:
            return []
        return [dict(zip(names, values, strict=True)) for values in zip(*self.rows.values(), strict=False)]

    @property
    def unit(self) -> str:
        return self.settings.unit

    @property
    def budget(self) -> int:
        return self.settings.budget

    @property
    def policy(self) -> str:
        """The policy's name (``settings.policy`` is the configured policy itself)."""
        return self.settings.policy.name

    @property
    def policy_label(self) -> str:
        """The policy's name with the options that differ from its defaults: ``nanohermes(keep_recent=4)``."""
        return self.settings.policy.label

    @property
    def keep_recent(self) -> int | None:
        """The policy's ``keep_recent`` (None for a policy without one)."""
        return self.settings.policy.option("keep_recent")

    @property
    def summarizer_label(self) -> str:
        """Who wrote the summaries, in words."""
        summarizer = self.settings.summarizer
        return repr(summarizer) if summarizer is not None else "extractive (offline)"

    def contexts(self):
        """Each request's context, in order: rebuilt from the events, no policy re-run."""
        for request in range(1, len(self.bases) + 1):
            yield self.context(request)

    def context(self, request: int) -> list:
        """The context sent with request number ``request`` (1-based, as in ``requests``)."""
        if not 1 <= request <= len(self.bases):
            raise IndexError(f"request {request} is not in 1..{len(self.bases)}")
        event, start, stop = self.bases[request - 1]
        head = list(self.compactions[event].context_after) if event >= 0 else []
        return head + self.messages[start:stop]

    def by_turn(self):
        """The article's turn table: turn, messages, serialized size, action, size after."""

        req = self.requests
        out = []
        if len(req):
            events = {e.request: e for e in self.compactions}
            for turn, group in req.groupby("turn", sort=True):
                last = group.iloc[-1]
                actions = []
                for idx in group["index"]:
                    calls = self.messages[idx].get("tool_calls") or []
                    for c in calls:
                        fn = c.get("function", {}) if isinstance(c, Mapping) else {}
                        actions.append(str(fn.get("name", "?")))
                action = _summarize_actions(actions) or "reply"
                compacted = [events[r] for r in group["request"] if r in events]
                for e in compacted:
                    action += f"; over budget: {e.kind} (dropped {e.dropped_count})"
                out.append({
                    "turn": int(turn),
                    "requests": len(group),
                    "messages": int(last["messages"]) + 1 + _tool_results(self.messages, int(last["index"])),
                    "size": int(group["size_before"].max()),
                    "action": action,
                    "compacted": bool(compacted),
                    "size_after": int(last["size_after"]),
                })
        return frame(out, ["turn", "requests", "messages", "size", "action", "compacted", "size_after"])

    def with_columns(self, **columns: Sequence[Any]) -> Ledger:
        """A copy whose request table has extra columns after the others, one value per request in order.

        What only a live run knows (the token usage an endpoint reported) joins
        the books' columns this way; the ledger itself is not changed.
        """
        from dataclasses import replace

        n = self.totals.n_requests
        rows = dict(self.rows)
        for name, values in columns.items():
            if len(values) != n:
                raise ValueError(f"column {name!r} has {len(values)} values for {n} requests")
            rows[name] = values
        return replace(self, rows=rows)

    def summary(self) -> str:
        t = self.totals
        unit = self.unit
        return (
            f"{t.n_requests} requests, peak {t.peak_request:,} {unit} (request {t.peak_request_number}), "
            f"{t.n_compactions} events ({self.policy}), {t.summarizer_calls} summarizer calls, "
            f"cumulative input {t.cumulative_input:,} {unit} vs {t.cumulative_input_no_compaction:,} "
            f"without compaction (saving {t.saving_share:.0%})"
        )

    def _repr_html_(self) -> str:
        head = f"<p><b>Ledger</b> — {html.escape(self.summary())}</p>"
        notes = "".join(f"<p><i>{html.escape(n)}</i></p>" for n in self.notes + [self.caveat])
        table = self.requests.to_html(index=False, max_rows=40)
        return head + notes + table


def walk(session: RecordedSession, policy: Policy, env: PolicyEnv,
         books: Sequence[Book], record: bool = True) -> tuple[Context, list[LedgerEvent]]:
    """The article's agent loop, re-enacted over a recorded session (SPEC 5).

    Each request sends the context; the assistant's reply is appended, then, if
    it called tools, their results; then the trigger is checked and, over
    budget, the policy acts. Between two events the context only grows, so the
    loop goes from one trigger to the next and hands each stretch of requests to
    the books at once. ``record`` False (totals only, a sweep) keeps no event records: the books
    are told of each event all the same.
    """
    context = Context()  # the transcript from messages[0], nothing rewritten yet
    events: list[LedgerEvent] = []
    request = 0
    while request < session.n_requests:
        over = session.first_over_budget(context, request, env.unit, env.budget)  # checked after every tool batch
        last = session.n_requests - 1 if over is None else over
        for book in books:
            book.stretch(context, request, last)  # each request sends the context; reply and tool results appended
        if over is not None:  # over budget after request `over`'s tool batch: the policy acts
            stop = session.end[over]
            size = context.size + session.grown(env.unit, context.start, stop)
            new, event = policy.compact(context.messages(session.messages, stop), env, size)
            if event is not None:
                after = Context(tuple(new), stop, event.size_after, context.events + 1)
                if record:
                    found = merge_fields(book.event(over, context, after, event) for book in books)
                    events.append(LedgerEvent(over + 1, session.turn[over], event, after.head, **found))
                else:
                    for book in books:
                        book.event(over, context, after, event)
                context = after
        request = last + 1
    for book in books:
        book.finish(context)
    return context, events


@dataclass(frozen=True)
class Replay:
    """One configured replay: a recorded session, a policy, the trigger, and which books to keep."""

    session: RecordedSession
    settings: Settings = Settings()

    # the settings read by name (a replay is configured by its Settings and nothing else)
    policy = property(lambda self: self.settings.policy)
    budget = property(lambda self: self.settings.budget)
    unit = property(lambda self: self.settings.unit)
    summarizer = property(lambda self: self.settings.summarizer)
    tokens = property(lambda self: self.settings.tokens)
    profiles = property(lambda self: self.settings.profiles)
    retention = property(lambda self: self.settings.retention)
    prefix_reuse = property(lambda self: self.settings.prefix_reuse)
    pricing = property(lambda self: self.settings.pricing)
    needed_later = property(lambda self: self.settings.needed_later)

    def books(self, rows: bool) -> list[Book]:
        s = self.session
        books: list[Book] = [SizeBook(s, rows, self.unit, self.budget)]
        if self.prefix_reuse:
            books.append(PrefixBook(s, rows, self.unit))
        books += [TokenBook(s, rows, u, self.unit) for u in self.tokens]
        if self.profiles:
            books.append(HistoryBook(s, rows, self.profiles))
        if self.retention:
            books.append(RetentionBook(s, rows))
        if self.needed_later:
            books.append(NeededLaterBook(s, rows))
        if self.settings.probes:
            books.append(ProbeBook(s, rows))
        if self.pricing is not None:
            books.append(cost_book(s, rows, self.pricing, bool(self.policy.option("excerpt_tool_calls", False))))
        if rows and self.settings.bill and has_bill(s):  # issue 24: the bill the transcript reports
            books.append(BillBook(s, rows))
        return books

    def env(self) -> PolicyEnv:
        s = self.session
        tokens = None if self.unit in ("cl100k", "o200k", "tokens_approx") else s.meter("cl100k")  # loads lazily
        # the excerpt reader over this transcript: a dropped stretch of it is read from records built once,
        # and its summaries are remembered with it (``fast.TranscriptExcerpts``)
        return PolicyEnv(self.budget, s.meter(self.unit), self.summarizer, self.unit, tokens,
                         excerpts=s.cache.excerpts())

    def totals(self) -> Totals:
        """Run the loop keeping totals only (what a sweep needs)."""
        books = self.books(rows=False)
        walk(self.session, self.policy, self.env(), books, record=False)
        return Totals.of(merge_fields(b.totals() for b in books))

    def ledger(self) -> Ledger:
        """Run the loop keeping a row per request and every event."""

        books = self.books(rows=True)
        final, events = walk(self.session, self.policy, self.env(), books)
        cols: dict[str, list] = {}
        for book in books:
            cols.update(book.cols)
        order = request_columns(self.profiles, self.tokens, self.prefix_reuse, self.pricing is not None,
                                any(isinstance(b, BillBook) for b in books))
        requests = {c: cols.get(c, []) for c in order}
        size_book = books[0]
        assert isinstance(size_book, SizeBook)  # Replay.books always starts with it
        return Ledger(requests, events, Totals.of(merge_fields(b.totals() for b in books)), self.settings,
                      list(self.session.notes), self.session.messages,
                      final.messages(self.session.messages, len(self.session.messages)), bases=size_book.bases)


def replay(messages: SessionLike | RecordedSession, settings: Settings | None = None,
           **changes: Any) -> Ledger:
    """Replay ``messages`` under ``settings`` and return its ledger (SPEC section 5).

    ``messages``: a list of message dicts, a ``Transcript`` or a ``Session`` (an agent log's reported
    usage then adds the bill's columns), or a ``RecordedSession`` cut already.

    ``settings`` defaults to ``Settings()`` (NanoHermes, 120,000 bytes); keyword
    ``changes`` are ``Settings`` fields (``replay(m, budget=60_000, pricing="gpt-4.1")``).
    A policy's own options go to the policy: ``policy=NanoHermesPolicy(keep_recent=4)``.
    """
    chosen = Settings.of(settings, "replay", **changes)
    session = messages if isinstance(messages, RecordedSession) else RecordedSession.of(messages)
    return Replay(session, chosen).ledger()


def reference_replay(
    messages: Sequence[Mapping[str, Any]],
    *,
    budget: int = DEFAULT_BUDGETS.context_char_budget,
    keep_recent: int = DEFAULT_BUDGETS.keep_recent,
    summarizer: Summarizer | None = None,
) -> list[dict]:
    """SPEC section 5 written as plainly as possible: every size re-serialized every time.

    Slow on purpose; it is the yardstick ``replay`` is tested and benchmarked against.
    """
    from ..context.compaction import compact
    from ..context.sizing import context_size

    msgs, _ = prepare(messages)
    ctx = [msgs[0]] if msgs else []
    rows: list[dict] = []
    cumulative, turn, i = 0, 0, 1
    while i < len(msgs):
        m = msgs[i]
        if m.get("role") == "user":
            turn += 1
        if m.get("role") != "assistant":
            ctx.append(m)
            i += 1
            continue
        size = context_size(ctx)
        cumulative += size
        row = {"request": len(rows) + 1, "turn": turn, "messages": len(ctx), "size": size,
               "cumulative_input": cumulative}
        ctx.append(m)
        i += 1
        result = None
        if m.get("tool_calls"):
            while i < len(msgs) and msgs[i].get("role") == "tool":
                ctx.append(msgs[i])
                i += 1
            result = compact(ctx, budget=budget, keep_recent=keep_recent, summarizer=summarizer)
        row["size_before"] = context_size(ctx)
        if result is not None and result.compacted:
            ctx = result.messages
        row.update(compacted=bool(result and result.compacted),
                   dropped=result.dropped_count if result else 0, size_after=context_size(ctx))
        rows.append(row)
    return rows


def _tool_results(messages: Sequence[Mapping[str, Any]], index: int) -> int:
    k = index + 1
    if not messages[index].get("tool_calls"):
        return 0
    while k < len(messages) and messages[k].get("role") == "tool":
        k += 1
    return k - index - 1


def _summarize_actions(names: list[str]) -> str:
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return ", ".join(n if c == 1 else f"{n} ×{c}" for n, c in counts.items())


