"""engine/fast.py: every acceleration gives what the plain rule gives, on every transcript of every corpus.

The plain code is context/: ``compaction.PLAIN_EXCERPTS`` (every message's excerpt
records, one summarizer call on them) and ``history.HistoryChecker`` run over the
whole context. The fast code reads a transcript's records once, summarizes a
stretch from an index, checks the history once and then only what an event changed.
"""

import dataclasses
import itertools
import json
import pickle
import random

import pandas as pd
import pytest
from builders import assistant, session, tool, user

import nanohermes_nb as nh
from nanohermes_nb import ExtractiveSummarizer, replay
from nanohermes_nb.context.compaction import PLAIN_EXCERPTS, SUMMARY_HEADER, excerpt_records, summarize_dropped
from nanohermes_nb.context.history import PROFILES, HistoryChecker
from nanohermes_nb.engine.fast import RunRecords, SessionCache, TranscriptExcerpts, span_summary
from nanohermes_nb.engine.ledger import Replay, walk
from nanohermes_nb.engine.recorded import RecordedSession
from nanohermes_nb.engine.settings import Settings

SUMMARIZING = ["nanohermes", "codex", "hermes_agent", "langchain_summarize"]


def stub(excerpt):
    return "S"


def _heads(msgs, p):
    """What may stand before a run of the transcript in a dropped span: nothing, a summary of what came
    before (in either role), or a message of no transcript."""
    earlier = ExtractiveSummarizer().summarize_records(excerpt_records(msgs[1:p])) or "nothing"
    note = f"{SUMMARY_HEADER}\n{earlier}"
    return [[], [{"role": "system", "content": note}], [{"role": "user", "content": note}],
            [{"role": "assistant", "content": "I will edit src/app/views.py next. Then run tests/test_views.py."}]]


def test_a_run_read_in_place_summarizes_as_its_records_do(corpus):
    """A dropped stretch of the transcript is read from records built once and summarized from an index of
    them (``span_summary``): records and summaries equal the plain ones, for heads of every kind and for summary
    limits small enough that a run's new items fall short."""
    rng = random.Random(7)
    shapes = [{}, {"max_decisions": 1, "max_paths": 2}, {"max_words": 40}]
    checked = 0
    for path in corpus.files:
        msgs = RecordedSession.of(nh.load_transcript(path)).messages
        for tool_calls in (False, True):
            fast = TranscriptExcerpts(msgs)
            for _ in range(10):
                p = rng.randrange(1, len(msgs))
                q = rng.randrange(p + 1, len(msgs) + 1)
                for head_msgs in _heads(msgs, p):
                    dropped = head_msgs + msgs[p:q]
                    records = fast.records(dropped, tool_calls=tool_calls)
                    assert isinstance(records, RunRecords) and len(records.run) == len(excerpt_records(msgs[p:q],
                                                                                         tool_calls=tool_calls))
                    assert list(records) == excerpt_records(dropped, tool_calls=tool_calls) == list(
                        PLAIN_EXCERPTS.records(dropped, tool_calls=tool_calls))
                    for shape in shapes:
                        s = ExtractiveSummarizer(**shape)
                        plain = s.summarize_records(list(records))
                        index = fast._index(s, records.run)
                        assert span_summary(s, records.head, records.run, index) == plain
                        assert fast.ask(s, records) == plain == PLAIN_EXCERPTS.ask(s, list(records))
                    read = summarize_dropped(dropped, excerpt_tool_calls=tool_calls, excerpts=fast)
                    assert read == summarize_dropped(dropped, excerpt_tool_calls=tool_calls)
                    checked += 1
    assert checked


def test_a_list_that_is_not_one_run_of_the_transcript_is_read_message_by_message():
    msgs = session(6, body="see src/a.py")
    fast = TranscriptExcerpts(msgs)
    for dropped in ([], msgs[1:3] + [{"role": "user", "content": "new"}], [dict(m) for m in msgs[1:4]]):
        records = fast.records(dropped, tool_calls=False)  # no run of the transcript's own messages ends the list
        assert not isinstance(records, RunRecords) and records == excerpt_records(dropped)
    for dropped, k in ((msgs[3:5] + msgs[1:2], 2), (msgs[1:3] + [{"role": "user", "content": "new"}] + msgs[3:5], 3),
                       ([dict(m) for m in msgs[1:3]] + msgs[3:5], 2), (msgs[1:5], 0)):
        records = fast.records(dropped, tool_calls=False)  # the run that ends it is read in place, the rest plainly
        assert isinstance(records, RunRecords) and records.head == excerpt_records(dropped[:k])
        assert list(records) == excerpt_records(dropped)
    records = fast.records(msgs[1:4], tool_calls=False)
    # a summarizer that is not the offline one gets the excerpt text, as the plain reader gives it
    seen = []
    assert fast.ask(lambda text: seen.append(text) or "S", records) == "S"
    assert seen == ["".join(f"{r}: {t}\n" for r, t in excerpt_records(msgs[1:4]))]


@pytest.mark.parametrize("policy", SUMMARIZING)
def test_a_replay_with_the_engines_reader_equals_one_with_the_plain_reader(corpus, policy):
    """The walk itself, fast reader against plain reader: the same events, the same contexts, the same notes,
    for every summarizing policy at two budgets on every transcript (the offline summarizer, whose summaries
    the fast reader computes its own way)."""
    events = 0
    for path in corpus.files:
        session_ = RecordedSession.of(nh.load_transcript(path))
        size = len(json.dumps(session_.messages))
        for budget in (max(2_000, size // 6), max(3_000, size // 3)):
            rep = Replay(session_, Settings(budget=budget, policy=policy, profiles=(), prefix_reuse=False,
                                            retention=False))
            fast_env = rep.env()
            assert isinstance(fast_env.excerpts, TranscriptExcerpts)
            plain_env = dataclasses.replace(fast_env, excerpts=PLAIN_EXCERPTS)
            fast_ctx, fast = walk(session_, rep.policy, fast_env, rep.books(rows=False))
            plain_ctx, plain = walk(session_, rep.policy, plain_env, rep.books(rows=False))
            assert fast_ctx == plain_ctx, (path.name, budget)
            assert [(e.request, e.event) for e in fast] == [(e.request, e.event) for e in plain], (path.name, budget)
            events += len(plain)
    assert events


def test_problem_counts_equal_a_full_check_of_every_context_sent(corpus):
    """The history book's counts, however they were shared between settings, equal a checker run over the
    whole context each request sent, for every profile (one session shared by all settings, as in a sweep)."""
    checked = 0
    for path in corpus.files:
        rec = RecordedSession.of(nh.load_transcript(path))
        for budget, keep in itertools.product((3_000, 6_000, 15_000), (1, 2, 3, 5)):
            ledger = replay(rec, budget=budget, retention=False, prefix_reuse=False,
                            policy=nh.NanoHermesPolicy(keep_recent=keep))
            for r in range(1, ledger.totals.n_requests + 1):
                context = ledger.context(r)
                for profile in PROFILES:
                    checker = HistoryChecker(profile)
                    for m in context:
                        checker.feed(m)
                    assert ledger.requests[f"problems_{profile}"].iloc[r - 1] == checker.problem_count(), \
                        (path.name, budget, keep, r, profile)
                    checked += 1
    assert checked


def test_history_checks_remembered_across_settings_equal_fresh_ones():
    """Settings that compact at the same place reuse one history check; each request's problem
    counts, per profile, equal those of a replay on a session that remembers nothing."""
    msgs = session(14, body="x" * 700, n_calls=2)
    msgs[9:9] = [assistant("a call never answered", ["lost"]), user("carry on")]  # problems to count
    msgs += [tool("stray", "a result nobody asked for"), user("and?"), assistant("ok")]
    shared = RecordedSession.of(msgs)
    runs = [(budget, keep, role) for budget in (3_000, 3_500, 4_000, 6_000) for keep in (2, 3, 5)
            for role in ("system", "user")]
    events, counted = 0, 0
    for budget, keep, role in runs:
        policy = nh.NanoHermesPolicy(keep_recent=keep, summary_role=role)
        remembered = replay(shared, budget=budget, policy=policy, summarizer=stub)
        fresh = replay(msgs, budget=budget, policy=policy, summarizer=stub)
        pd.testing.assert_frame_equal(remembered.requests, fresh.requests)
        assert [e.problems for e in remembered.compactions] == [e.problems for e in fresh.compactions]
        events += len(fresh.compactions)
        counted += sum(sum(e.problems.values()) for e in fresh.compactions)
    assert events and counted
    assert 0 < len(shared.cache.walks) < events * len(PROFILES)  # some checks were reused


def test_a_transcripts_summaries_are_kept_with_it_not_by_the_shared_summarizer():
    """A sweep over thousands of transcripts must not keep every transcript's summaries alive: the summaries
    are remembered in the transcript's own cache and go with it; the summarizer keeps none."""
    summarizer = ExtractiveSummarizer()
    rec = RecordedSession.of(session(12, body="x" * 900))
    ledgers = [replay(session(12, body=f"log {k} " * 150), budget=4_000, summarizer=summarizer) for k in range(20)]
    ledgers.append(replay(rec, budget=4_000, summarizer=summarizer))
    assert all(ledger.totals.summarizer_calls for ledger in ledgers)
    assert rec.cache.excerpts().summaries
    assert [f.name for f in dataclasses.fields(summarizer)] == ["max_words", "max_decisions", "max_paths", "_cache"]


def test_the_session_cache_is_named_and_travels_empty():
    """Every entry has a name; a pickled session (a process pool's) arrives with an empty cache."""
    rec = RecordedSession.of(session(12, body="see src/a.py " * 80))
    replay(rec, budget=4_000, retention=True, needed_later=True)
    assert rec.cache.history("openai") is rec.cache.history("openai")
    assert rec.cache.goal() is rec.cache.goal() and rec.cache.identifiers() is rec.cache.identifiers()
    assert rec.cache.excerpts().summaries and rec.cache.walks
    fresh = RecordedSession.of(rec.messages)  # a session that was not replayed yet (its meters are not picklable)
    fresh.cache.history("openai")
    fresh.cache.excerpts().ask(ExtractiveSummarizer(), fresh.cache.excerpts().records(fresh.messages[1:5],
                                                                                      tool_calls=False))
    assert fresh.cache.excerpts().summaries
    copy = pickle.loads(pickle.dumps(fresh))
    assert isinstance(copy.cache, SessionCache) and not copy.cache.excerpts().summaries
    assert copy.messages == rec.messages and copy.cache.history("openai").found == rec.cache.history("openai").found
    assert replay(copy, budget=4_000).totals == replay(rec, budget=4_000).totals


RETENTION_POLICIES = ["nanohermes", "codex", "hermes_agent", "clear_tool_uses", "observation_masking",
                      "langchain_summarize", "langchain_trim"]


def test_retention_counts_from_bit_masks_equal_the_retention_of_every_event(corpus):
    """A sweep counts retention from bit masks (``RetentionBits``); on every event of every transcript, under
    policies that cut, mask or summarize in either role, its counts equal ``retention``'s (the ledger's), and a
    replay's totals equal the ledger's totals (one session shared by all settings, as in a sweep)."""
    from nanohermes_nb.policies.base import summary_prefixes

    events = at_stake = 0
    for path, policy in itertools.product(corpus.files, RETENTION_POLICIES):
        rec = RecordedSession.of(nh.load_transcript(path))
        bits = rec.cache.retention_bits(summary_prefixes())
        size = len(json.dumps(rec.messages))
        for budget in (max(2_000, size // 6), max(3_000, size // 3)):
            settings = Settings(budget=budget, policy=policy, profiles=(), prefix_reuse=False)
            ledger = Replay(rec, settings).ledger()
            for ev in ledger.compactions:
                r = ev.retention
                assert bits.counts(ev.event.removed, ev.context_after) == (r.kept, r.items), (path.name, policy)
                events += 1
                at_stake += r.goal_at_stake
            assert Replay(rec, settings).totals().retention == ledger.totals.retention, (path.name, policy)
    assert events > 100 and at_stake > 10


def test_retention_counts_by_hand():
    """The bit masks on hand-built cases: a goal with no distinctive word, content as parts, a summary in the
    user role (not the goal), paths in tool-call arguments, runs of the transcript that do not end a list,
    a message a policy rewrote inside a run, and the same text written again in a new message."""
    from nanohermes_nb.context.metrics import retention
    from nanohermes_nb.engine.retention_bits import RetentionBits

    def check(msgs, goal, removed, kept):
        from nanohermes_nb.context.metrics import TextIndex, goal_terms

        bits = RetentionBits(msgs, goal, TextIndex(goal_terms(goal) if goal else []), ("## Summary",))
        want = retention(removed, kept, goal, TextIndex(goal_terms(goal) if goal else []), ("## Summary",))
        assert bits.counts(removed, kept) == (want.kept, want.items)
        return want

    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path": "src/a.py"}'}}]}
    goal = "rename the helper in src/a.py and src/b.py"
    msgs = [{"role": "system", "content": "sys"}, user(goal), call,
            tool("c1", "def f(): pass  # see lib/c.py"),
            {"role": "user", "content": [{"type": "text", "text": "also docs/readme.md"}]},
            assistant("done with src/b.py"), user("## Summary\nsrc/a.py"), assistant("ok lib/c.py")]
    summary = {"role": "user", "content": "## Summary\nrename helper in src/a.py"}
    r = check(msgs, goal, msgs[1:5], [msgs[0], summary, *msgs[5:]])
    assert r.goal_at_stake and r.goal_kept and r.items == 5 and r.kept == 4  # docs/readme.md lost
    assert check(msgs, goal, msgs[1:5], [msgs[0], *msgs[5:]]).kept == 3  # the goal lost with the summary
    check(msgs, goal, [summary, *msgs[2:4]], [msgs[0], dict(summary), *msgs[6:]])
    check(msgs, "?!", msgs[1:4], [msgs[0], *msgs[4:]])  # a goal without a distinctive word: found as text
    check(msgs, "?!", msgs[1:4], [msgs[0], {"role": "user", "content": "?!"}])
    check(msgs, "", msgs[1:6], msgs[6:])  # no goal at all
    masked = [*msgs[1:3], tool("c1", "<MASKED>"), *msgs[4:6]]  # a rewritten message inside a run
    check(msgs, goal, masked, [msgs[0], *masked, *msgs[6:]])
    check(msgs, goal, msgs[2:4] + msgs[5:6], msgs[6:7] + msgs[3:4])  # runs not at the end
    check(msgs, goal, [], msgs)
    check(msgs, goal, msgs[1:2], [])
