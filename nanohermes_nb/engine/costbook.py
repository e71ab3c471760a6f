"""The cost book: tokens and dollars of every request under a ``Pricing``.

The ledger's loop feeds it like every other book (``books``): a stretch of
requests sent while the context only grew, then an event. Between two events a
request shares the whole previous request with the cache, so a stretch is
summed in O(1) from the session's prefix sums (``pricing.rounded_sum``). After
an event, the first request is compared with the earlier requests, one stretch
end at a time, the common prefixes between consecutive ends sparing most
comparisons; the summarizer's extra request is costed at the event.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import compress, repeat
from operator import eq, ge
from typing import Any

from ..context.compaction import RUST_WHITESPACE, SUMMARY_HEADER, excerpt_records
from ..context.messages import calls_of
from ..context.sizing import TOKENS_PER_MESSAGE, Meter, count_tokens, serialize, strings_in
from ..context.summarizers import summary_prompt
from ..policies.base import Event
from .books import Book
from .columns import COST_REQUEST
from .pricing import Pricing, rounded_sum, sent_each
from .recorded import Context, RecordedSession
from .segments import BPE_UNITS, CUT, last_cut, segments
from .stretchends import NO_MESSAGE, UNSET, StretchEnd, message_at, message_key, same_message, shared_prefix

__all__ = ["CostBook"]


class CostBook(Book):
    """Tokens and dollars of every request under one ``Pricing`` (see ``pricing``).

    A request's ``input_tokens`` are its context's tokens (every message as the
    project counts it: its strings plus 3 framing tokens); ``cached_tokens`` the
    part the provider's rule reads from the cache: the longest prefix, in whole
    messages, shared with any earlier request of the run (``anthropic``: the
    longest prefix an earlier request wrote at a breakpoint, the end of the
    system message or the end of a request); ``cache_write_tokens`` (Anthropic)
    the rest up to the request's end, written at the write price;
    ``output_tokens`` the recorded reply's tokens.

    Between two events a request shares the whole previous request, so a
    stretch is summed in O(1) from prefix sums (``pricing.rounded_sum``); only
    the first request after an event is compared with the earlier requests, one
    stretch end at a time, using the longest common prefixes between
    consecutive stretch ends to skip most comparisons.
    """

    def __init__(self, session: RecordedSession, rows: bool, pricing: Pricing,
                 excerpt_tool_calls: bool = False) -> None:
        super().__init__(session, rows)
        self.pricing = pricing
        u = self.unit = pricing.tokens
        self.p = session.prefix(u)
        meter = session.meter(u)
        self.meter = meter.size if isinstance(meter, Meter) else meter  # the bound method: called for every head
        self.sent = session.sent_sums(u)
        self.a = sent_each(session, u)
        self.outs = session.reply_sums(u)
        self.excerpt_tool_calls = excerpt_tool_calls
        self.policy_wrote: set[int] = set()  # ids of the messages this run's policy wrote (summaries, placeholders)
        self.head = 0
        self.first = 0  # what the first request of the next stretch reads from the cache
        self.ends: list[StretchEnd] = []
        self.needs: list[int] = []  # needs[s]: ends[s].need, so ``_read`` picks the ends worth a look in C
        self.gaps: list[int | None] = []  # gaps[s]: messages ends[s] and ends[s + 1] share (None: not known yet)
        self.branch: list[Any] = []  # branch[s]: message gaps[s] of ends[s] (``UNSET``: not looked up yet)
        self.pending_gap: int | None = None
        # where ``_lcps`` must look once ``x`` shares only its first message with an end (nearly always, after a
        # compaction): the ends whose gap is unknown or 0, or 1 with a branch message not keyed (``odd``), and
        # those whose gap is 1, by their branch message's key (``ones``); every other end keeps that 1
        self.odd: list[int] = []
        self.ones: dict[Any, list[int]] = {}
        self.slow: list[StretchEnd] | None = None  # earlier ends the next stretch may match past its first request
        self.after_event = False
        self.per_request = False  # ``_request`` hears of every request walked (a subclass sets it)
        self.input = self.cached = self.written = self.output = 0
        self.s_input = self.s_output = 0

    # -- a stretch: requests r0..r1, the context only growing ------------------------------------------------

    def stretch(self, ctx: Context, r0: int, r1: int) -> None:
        base = self.head - self.p[ctx.start]
        continued = self.ends and not self.after_event  # the policy declined: the same context goes on growing
        if continued:
            self.first = self.pricing.cached(base + self.a[r0 - 1])
            if self.slow is not None:
                self.first = max(self.first, self._read(self._context(ctx, r0), self.slow))
        if self.rows or self.slow is not None:
            sums = self._walk(ctx, base, r0, r1)
        else:
            sums = _stretch_sums(self.session, self.pricing, base, r0, r1, self.first)
            if self.per_request:
                self._requests(base, r0, r1, self.first)
        n, c, w, o = sums
        self.input, self.cached, self.written, self.output = (
            self.input + n, self.cached + c, self.written + w, self.output + o)
        if continued:
            last = self.ends[-1]
            self.ends[-1] = StretchEnd(last.head, last.start, self.session.reply[r1], last.base, last.r0, r1,
                                       last.need)
        else:
            reply = self.session.reply
            end = StretchEnd(ctx.head, ctx.start, reply[r1], base, r0, r1, len(ctx.head) - ctx.start + reply[r0])
            self._add_end(end, self.pending_gap)
        self.first, self.pending_gap, self.after_event = 0, None, False  # ``slow`` holds until the next event

    def _walk(self, ctx: Context, base: int, r0: int, r1: int) -> tuple[int, int, int, int]:
        """Request by request (rows, or a stretch that may match an older request further than its predecessor)."""
        pr = self.pricing
        anthropic = pr.cache == "anthropic"
        totals = [0, 0, 0, 0]
        previous = 0
        for r in range(r0, r1 + 1):
            n = base + self.a[r]
            if r == r0:
                read = self.first
            else:
                read = pr.cached(previous)
                if self.slow is not None:
                    read = max(read, self._read(self._context(ctx, r), self.slow))
            write = n - read if anthropic and n >= pr.minimum else 0
            out = self.outs[r + 1] - self.outs[r]
            for i, v in enumerate((n, read, write, out)):
                totals[i] += v
            if self.rows:
                c = self.cols
                values = (n, read, write, out, pr.cost(n, read, out, write), 0.0)
                for name, value in zip(COST_REQUEST, values, strict=True):
                    c.setdefault(name, []).append(value)
            elif self.per_request:
                self._request(n, read, out)
            previous = n
        return tuple(totals)  # type: ignore[return-value]

    def _request(self, sent: int, read: int, out: int) -> None:
        """One request of a walked stretch, in order, when ``per_request`` is set (``modelbook.ModelBook``)."""

    def _requests(self, base: int, r0: int, r1: int, first: int) -> None:
        """A stretch summed in O(1), request by request, when ``per_request`` is set: each request sends ``base``
        plus what it sends before any event, the first reads ``first``, every later one the rule's share of the
        request before (as ``_walk`` reads them)."""
        a, outs, cached = self.a, self.outs, self.pricing.cached
        sent = [base + a[r] for r in range(r0, r1 + 1)]
        for n, read, out in zip(sent, [first, *map(cached, sent[:-1])],
                                [outs[r + 1] - outs[r] for r in range(r0, r1 + 1)], strict=True):
            self._request(n, read, out)

    def _context(self, ctx: Context, r: int) -> list:
        return ctx.messages(self.session.messages, self.session.reply[r])

    # -- the first request after an event: compared with every earlier stretch end ----------------------------

    def _add_end(self, end: StretchEnd, gap: int | None) -> None:
        """A new stretch end; ``gap``: what it shares with the previous end (None: not known yet)."""
        if self.ends:
            k = len(self.gaps)
            self.gaps.append(gap)
            b: Any = UNSET
            if gap == 1:
                b = message_at(self.ends[k], self.session.messages, 1)  # the previous end is final now
                if b is not NO_MESSAGE:
                    key = message_key(b)
                    if key is None:
                        self.odd.append(k)
                    else:
                        self.ones.setdefault(key, []).append(k)
            elif gap is None or gap < 1:
                self.odd.append(k)
            self.branch.append(b)
        self.ends.append(end)
        self.needs.append(end.need)

    def _next_look(self, k: int, key: Any) -> int:
        """The newest end at or before ``k`` that may not share exactly one message with ``x`` (-1: none)."""
        odd = self.odd
        i = bisect_right(odd, k) - 1
        j = odd[i] if i >= 0 else -1
        same = self.ones.get(key)
        if same:
            i = bisect_right(same, k) - 1
            if i >= 0 and same[i] > j:
                j = same[i]
        return j

    def _lcps(self, x: Sequence) -> list[int]:
        """Messages ``x`` shares with each stretch end, newest first, via the ends' own common prefixes.

        ``gaps[k]`` (what ends ``k`` and ``k + 1`` share) and ``branch[k]``
        (end ``k``'s message where it leaves end ``k + 1``) are kept, so an
        older end is compared with ``x`` only where ``x`` reaches that branch:
        ``lcp(x, A) = min(lcp(x, B), lcp(A, B))`` when those two differ; when
        they are equal, ``x`` goes on along ``A`` only if its next message is
        ``A``'s branch message (rare).
        """
        t = self.session.messages
        ends, gaps, branch = self.ends, self.gaps, self.branch
        m = len(ends) - 1
        out = [0] * (m + 1)
        cur = out[m] = shared_prefix(x, ends[m].view(t))
        nx = len(x)
        xd = x[cur] if cur < nx else None
        key: Any = UNSET
        k = m - 1
        while k >= 0:
            if cur == 1 and nx > 1:  # skip, in C, the ends that share exactly the first message with x
                if key is UNSET:
                    key = message_key(xd)
                if key is not None:
                    j = self._next_look(k, key)
                    if j < k:
                        out[j + 1:k + 1] = repeat(1, k - j)
                        k = j
                        if k < 0:
                            break
            d = gaps[k]
            if d is None:
                d = gaps[k] = shared_prefix(ends[k].view(t), ends[k + 1].view(t))
            if cur != d:
                if d < cur:
                    cur = d
                    xd = x[cur]
                    key = UNSET
            elif d < nx:
                b = branch[k]
                if b is UNSET:
                    b = branch[k] = message_at(ends[k], t, d)
                if b is not NO_MESSAGE and (xd is b or xd == b):
                    cur = shared_prefix(x, ends[k].view(t), d + 1)  # they go on together: compare further (rare)
                    xd = x[cur] if cur < nx else None
                    key = UNSET
            out[k] = cur
            k -= 1
        return out

    def _read(self, x: Sequence, ends: Sequence[StretchEnd], lcps: Sequence[int] | None = None,
              size: Any = None) -> int:
        """Tokens of ``x`` the rule reads from what ``ends`` (and their stretches) put in the cache."""
        pr, s = self.pricing, self.session
        if not pr.caches or not ends:
            return 0
        t = s.messages
        size = size or self.meter
        lcps = lcps if lcps is not None else [shared_prefix(x, e.view(t)) for e in ends]
        if pr.cache != "anthropic":
            return pr.cached(sum(size(m) for m in x[:max(lcps)]))
        minimum, reply, a = pr.minimum, s.reply, self.a
        system = size(x[0]) if x else 0
        # the breakpoint at the end of the system message, when any earlier request shares it
        best = system if system >= minimum and max(lcps) >= 1 else 0
        needs = self.needs if ends is self.ends else [e.need for e in ends]
        # only the ends whose stretch's first request is a prefix of x
        for e, shared in compress(zip(ends, lcps, strict=True), map(ge, lcps, needs)):
            stop = shared - len(e.head) + e.start  # where the shared prefix ends in the transcript
            j = bisect_right(reply, stop, e.r0, e.r1 + 1) - 1  # the longest such request of the stretch
            n = e.base + a[j]
            if n >= minimum and n > best:
                best = n
        return pr.cached(best)

    def event(self, k: int, before: Context, after: Context, event: Event) -> dict[str, Any]:
        s = self.session
        inserted = {id(m) for m in event.inserted}
        self.policy_wrote |= inserted

        def size(m: Any) -> int:
            return self._inserted_tokens(m) if id(m) in inserted else self.meter(m)

        self.head = self._head_after(k, before, after, event, inserted)
        self.after_event = True
        fields = self._summarizer(event)
        if k + 1 < s.n_requests:
            x = after.messages(s.messages, s.reply[k + 1])
            lcps = self._lcps(x)
            self.first = self._read(x, self.ends, lcps=lcps, size=size)
            self.pending_gap = lcps[-1] if lcps[-1] < len(x) else None
            # x is a whole prefix of a longer earlier context that goes on with the transcript's next message:
            # later requests of this stretch may share more with it than with their predecessor (rare)
            nxt, nx = s.messages[s.reply[k + 1]], len(x)
            whole = compress(zip(self.ends, lcps, strict=True), map(eq, lcps, repeat(nx)))
            slow = [e for e, n in whole if len(e) > n and same_message(e.view(s.messages)[n], nxt)]
            self.slow = slow or None
        else:
            self.slow = None
        if self.rows:
            self.cols["summarizer_cost_usd"][k] = fields["cost"]["summarizer_cost_usd"]
        return fields

    def _head_after(self, k: int, before: Context, after: Context, event: Event, inserted: set[int]) -> int:
        """Tokens of the context the event left: the context before it, less what it removed, plus what it wrote.

        That is the sum over the new context whenever the new context is the old one less ``removed`` plus
        ``inserted`` (``make_event`` finds both by identity), and the quicker one when the event changed fewer
        messages than it left (a policy that clears a few results in a long context); else, or where the counts
        do not say so, the new context is counted message by message. A message the policy wrote counts as
        written (``_inserted_tokens``), which is the meter's count.
        """
        stop = self.session.end[k]
        meter, written = self.meter, self._inserted_tokens
        changed = len(event.removed) + len(event.inserted)
        if changed < len(after.head) and \
                len(after.head) == len(before.head) + stop - before.start - len(event.removed) + len(event.inserted):
            wrote = self.policy_wrote  # a message a policy wrote is known by its content, not yet by the meter
            return (self.head - self.p[before.start] + self.p[stop]
                    - sum(written(m) if id(m) in wrote else meter(m) for m in event.removed)
                    + sum(map(written, event.inserted)))
        return sum(written(m) if id(m) in inserted else meter(m) for m in after.head)

    # -- the summarizer's extra request ----------------------------------------------------------------------

    def _summarizer(self, event: Event) -> dict[str, Any]:
        pr = self.pricing
        calls, tin, tout = event.summarizer_calls, 0, 0
        if calls and event.summarizer_tokens is not None:  # measured by the summarizer (issue 27)
            tin, tout = event.summarizer_tokens
        elif calls:
            tin = calls * self._prompt_tokens()
            known = self.session.cache.excerpt_tokens(self.unit, self.excerpt_tool_calls)
            for m in event.removed:  # a transcript message counted before: its count (``_excerpt_tokens``)
                hit = known.get(id(m))
                tin += hit[1] if hit is not None and hit[0] is m else self._excerpt_tokens(m)
            if not event.failure and event.note:
                note = event.note
                if note.startswith(SUMMARY_HEADER + "\n"):
                    note = note[len(SUMMARY_HEADER) + 1:]
                tout = self._text_tokens(note)
        self.s_input += tin
        self.s_output += tout
        return {"cost": {"summarizer_input_tokens": tin, "summarizer_output_tokens": tout,
                         "summarizer_cost_usd": pr.cost(tin, 0, tout)}}

    def _text_tokens(self, text: str) -> int:
        """Tokens of a text, remembered per session (a sweep meets the same summary under many settings).

        In a BPE unit a new text is counted line by line (``segments``): a
        summary repeats the lines of other summaries, so most of its lines are
        counted already.
        """
        cache = self.session.cache.text_tokens(self.unit)
        n = cache.get(text)
        if n is None:
            if self.unit in BPE_UNITS:
                n = 0
                for part in segments(text):
                    k = cache.get(part)
                    if k is None:
                        k = cache[part] = count_tokens(part, self.unit)
                    n += k
            else:
                n = count_tokens(text, self.unit)
            cache[text] = n
        return n

    def _inserted_tokens(self, message: Any) -> int:
        """Tokens of a message a policy wrote, remembered by content (the same summary recurs across settings)."""
        cache = self.session.cache.message_tokens(self.unit)
        plain = isinstance(message, dict) and message.keys() == {"role", "content"} \
            and isinstance(message["content"], str) and isinstance(message["role"], str)
        # a plain {role, content} message (a summary) is keyed by those two, sparing its JSON text
        key: Any = (message["role"], message["content"]) if plain else serialize(message)
        n = cache.get(key)
        if n is None:
            if plain and self.unit in BPE_UNITS:  # the meter's count: framing plus each string
                n = TOKENS_PER_MESSAGE + self._text_tokens(message["role"]) + self._text_tokens(message["content"])
            else:
                n = self.meter(message)
            cache[key] = n
        return n

    def _prompt_tokens(self) -> int:
        """The summarizer's system message plus the framing of the user message that carries the excerpt."""
        return self.session.cache.summary_prompt_tokens(self.unit, lambda: (
            self.meter({"role": "system", "content": summary_prompt()}) + TOKENS_PER_MESSAGE
            + count_tokens("user", self.unit)))

    def _excerpt_tokens(self, message: Any) -> int:
        """Tokens of one message's lines in the excerpt (``role: text``), once per message and session.

        A transcript message is remembered by identity; one the policy wrote
        (a summary dropped by a later event) is new under every setting but
        recurs by content across them, so its lines are remembered as a text.
        """
        if id(message) in self.policy_wrote:
            # a summary: a plain {role, content} message, its lines the same in every setting
            key = message_key(message)
            known = self.session.cache.written_excerpt_tokens(self.unit) if key is not None else None
            n = known.get(key) if known is not None else None
            if n is None:
                lines = self._lines(message)
                n = self._text_tokens(lines) if lines else 0
                if known is not None:
                    known[key] = n
            return n
        cache = self.session.cache.excerpt_tokens(self.unit, self.excerpt_tool_calls)
        hit = cache.get(id(message))
        if hit is None or hit[0] is not message:
            n = self._excerpt_from_meter(message)
            if n is None:  # by content: a policy's copy of the message (a pruned one) has the same lines
                lines = self._lines(message)
                n = self._text_tokens(lines) if lines else 0
            hit = cache[id(message)] = (message, n)
        return hit[1]

    def _excerpt_from_meter(self, message: Any) -> int | None:
        """A transcript message's excerpt tokens from the count the meter already made of its content.

        The meter counted each string of the message; the excerpt line is
        ``role: content\n``, the content trimmed. Both split at the content's
        first and last line break that the count splits at (``segments``), so
        only the first and last lines are counted again, each as the meter and
        as the excerpt saw it. None where that does not apply or would not spare
        work (one line, parts, tool calls in the excerpt, first and last lines or
        other strings too long to count again): count the line whole.
        """
        if self.unit not in BPE_UNITS or type(message) is not dict:
            return None
        if self.excerpt_tool_calls and calls_of(message):  # without calls, its lines are the same either way
            return None
        content, role = message.get("content"), message.get("role")
        if type(content) is not str or type(role) is not str:
            return None
        start = len(content) - len(content.lstrip(RUST_WHITESPACE))
        end = len(content.rstrip(RUST_WHITESPACE))
        if start >= end:
            return 0  # nothing but whitespace: no line
        text = content[start:end]
        first = CUT.search(text)
        if first is None:
            return None
        others = [x for key, value in message.items() if key != "content" for x in strings_in(value)]
        if sum(map(len, others)) * 4 > len(content):
            return None
        f, last = first.end(), last_cut(text)
        if 2 * (f + len(text) - last) > len(text):  # the first and last lines are most of it: count it whole
            return None
        whole = self.meter(message) - TOKENS_PER_MESSAGE - sum(map(self._text_tokens, others))
        unit = self.unit
        return (whole - count_tokens(content[:start + f], unit) - count_tokens(content[start + last:], unit)
                + count_tokens(f"{role}: {text[:f]}", unit) + count_tokens(text[last:] + "\n", unit))

    def _lines(self, message: Any) -> str:
        return "".join(f"{role}: {text}\n" for role, text in
                       excerpt_records([message], tool_calls=self.excerpt_tool_calls))

    # -- totals ----------------------------------------------------------------------------------------------

    def totals(self) -> dict[str, Any]:
        pr, s = self.pricing, self.session
        n, c, w, o = s.cache.uncompacted_cost(
            pr, lambda: _stretch_sums(s, pr, 0, 0, s.n_requests - 1, 0) if s.n_requests else (0, 0, 0, 0))
        agent = pr.cost(self.input, self.cached, self.output, self.written)
        summarizer = pr.cost(self.s_input, 0, self.s_output)
        return {
            "pricing": pr.name, "input_tokens": self.input, "cached_tokens": self.cached,
            "cache_write_tokens": self.written, "output_tokens": self.output,
            "summarizer_input_tokens": self.s_input, "summarizer_output_tokens": self.s_output,
            "cost_usd": agent + summarizer, "summarizer_cost_usd": summarizer,
            "cost_usd_no_compaction": pr.cost(n, c, o, w),
            "cache_hit_rate": self.cached / self.input if self.input else 0.0,
            "cache_hit_rate_no_compaction": c / n if n else 0.0,
        }


def _stretch_sums(session: RecordedSession, pricing: Pricing, base: int, r0: int, r1: int,
                  first: int) -> tuple[int, int, int, int]:
    """Input, cached, written and output tokens of requests ``r0..r1`` of one stretch, in O(1).

    Request ``r0`` reads ``first``; every later one reads the previous request
    (the rule's minimum and step applied); Anthropic writes each request's
    tokens past what it read, when the request reaches the minimum.
    """
    u = pricing.tokens
    sent = session.sent_sums(u)
    n = (r1 - r0 + 1) * base + sent[r1 + 1] - sent[r0]
    outs = session.reply_sums(u)
    o = outs[r1 + 1] - outs[r0]
    if not pricing.caches:
        return n, 0, 0, o
    c = first + rounded_sum(session, u, base, r0, r1 - 1, pricing.minimum, pricing.rounding)
    w = 0
    if pricing.cache == "anthropic":
        w = rounded_sum(session, u, base, r0, r1, pricing.minimum, 1) - c
    return n, c, w, o
