"""The policy lab: each policy on histories where its behaviour is known, legality on
every real transcript, Hypothesis properties, and the metrics computed by hand."""

import copy
import dataclasses
import json

import pytest
from builders import SYSTEM, assistant, session, tool, tool_round, user
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import legal_histories

from nanohermes_nb import (
    check_history,
    context_size,
    load_transcript,
    message_size,
    replay,
    sweep,
)
from nanohermes_nb.context.compaction import PLACEHOLDER_NOTE
from nanohermes_nb.context.messages import text_of
from nanohermes_nb.context.metrics import GOAL_TERM_SHARE, goal_terms, retention
from nanohermes_nb.policies import (
    POLICIES,
    PREVIOUS_SUMMARY_ROLE,
    ClearToolUsesPolicy,
    CodexPolicy,
    Event,
    HermesAgentPolicy,
    LangChainTrimPolicy,
    ObservationMaskingPolicy,
    apply_policy,
    is_summary_message,
    repair_tool_pairs,
    resolve_policy,
    summary_prefixes,
)
from nanohermes_nb.policies.codex import CODEX_SUMMARY_PREFIX
from nanohermes_nb.policies.hermes_text import (
    MERGED_PRIOR_CONTEXT_HEADER as HERMES_MERGED,
)
from nanohermes_nb.policies.hermes_text import (
    SUMMARY_END_MARKER as HERMES_END,
)
from nanohermes_nb.policies.hermes_text import (
    SUMMARY_PREFIX as HERMES_PREFIX,
)
from nanohermes_nb.policies.hermes_text import (
    is_summary_content,
)

NEW_POLICIES = ["langchain_trim", "hermes_agent", "codex", "observation_masking", "clear_tool_uses",
                "langchain_summarize"]


def run(policy, ctx, budget, summarizer=lambda e: "S", token_meter=None):
    """The policy applied once under the one trigger: (new context, event)."""
    done = apply_policy(policy, ctx, budget=budget, summarizer=summarizer, tokens=token_meter)
    return done.messages, done.event


def tool_messages(ctx):
    return [m for m in ctx if m["role"] == "tool"]


# --- registry, parameters, trigger ---------------------------------------------------------


def test_docs_policies_counts_the_registry_and_places_every_lab_policy():
    """docs/policies.md says how many policies there are, of each kind, in words: they must be the registry's, and
    every lab policy must be named where the page says it is described (a section, or the opening paragraph)."""
    import re

    from nanohermes_nb.policies import AGENT_RULES

    words = dict(enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                           "fifteen sixteen seventeen eighteen nineteen twenty".split()))
    text = (ROOT / "docs" / "policies.md").read_text(encoding="utf-8")
    lab = [name for name in POLICIES if name not in AGENT_RULES]
    opening = text.split("\n## ", 1)[0]
    sections = re.findall(r"^## (\w+)", text, re.M)
    assert f"registers {words[len(POLICIES)]}." in opening and f"The lab's {words[len(lab)]} " in opening
    assert f"the {words[len(AGENT_RULES)]} agent rules" in opening
    assert f"{words[len(AGENT_RULES)].capitalize()} more policies reproduce the rule of an agent" in text
    ported = [name for name in lab if name in sections]
    assert f"the {words[len(ported)]} ports with a section each" in opening
    assert all(f"`{name}`" in opening for name in lab), "every lab policy is named where the page says it is"


def test_registry_has_every_policy_with_documented_tunable_constants():
    assert {"nanohermes", *NEW_POLICIES} <= set(POLICIES)
    for name in NEW_POLICIES:
        cls = POLICIES[name]
        assert cls.name == name and dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen
        doc = cls.__doc__
        assert "Source" in doc  # where the rule comes from
        undocumented = [f.name for f in dataclasses.fields(cls) if f.name not in doc]
        assert not undocumented, f"{name}: options the docstring does not name: {undocumented}"
        pol = resolve_policy(name)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(pol, dataclasses.fields(pol)[0].name, 1)
    assert HermesAgentPolicy().protect_first_n == 3 and HermesAgentPolicy().summary_target_ratio == 0.20
    assert CodexPolicy().user_message_max_tokens == 20_000
    assert ObservationMaskingPolicy().attention_window == 5
    assert ClearToolUsesPolicy().keep == 3 and ClearToolUsesPolicy().placeholder == "[cleared]"
    assert resolve_policy("clear_tool_uses", keep=1).keep == 1
    with pytest.raises(ValueError):
        LangChainTrimPolicy(target_share=1.5)


@pytest.mark.parametrize("name", NEW_POLICIES)
def test_every_policy_acts_only_over_budget(name):
    ctx = session(12, body="x" * 1000)
    size = context_size(ctx)
    pol = resolve_policy(name)
    new, ev = run(pol, ctx, size)  # size == budget: not over
    assert ev is None and new == ctx
    new, ev = run(pol, ctx, size - 1)
    assert isinstance(ev, Event) and ev.policy == name and new != ctx
    assert ev.size_before == size and ev.size_after == context_size(new)
    assert ev.kind in ("summary", "placeholder", "trim", "mask", "clear") and ev.detail
    removed_ids = {id(m) for m in ev.removed}
    assert all(id(m) not in {id(x) for x in new} for m in ev.removed)  # removed = no longer there as they were
    assert all(any(m is x for x in ctx) for m in ev.removed)
    assert all(not any(m is x for x in ctx) for m in ev.inserted) and removed_ids


# --- codex ---------------------------------------------------------------------------------


def test_codex_keeps_every_user_message_no_tool_traffic_and_a_user_summary():
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py")] + tool_round(0, "a" * 800, 2) + [user("also src/b.py")]
    ctx += tool_round(1, "b" * 800) + [{"role": "system", "content": "notice: sandbox restarted"}]
    ctx += tool_round(2, "c" * 800, 3)
    seen = []
    new, ev = run(CodexPolicy(), ctx, 2_000, lambda e: seen.append(e) or "did things")
    users = [m for m in ctx if m["role"] == "user"]
    assert new[0] is ctx[0]
    assert new[1:-1] == users and all(a is b for a, b in zip(new[1:-1], users, strict=True))
    assert not tool_messages(new) and not any(m["role"] == "assistant" for m in new)
    assert new[-1] == {"role": "user", "content": CODEX_SUMMARY_PREFIX + "\ndid things"}  # Codex's own prefix
    assert ev.kind == "summary" and ev.summarizer_calls == 1 and ev.inserted == (new[-1],)
    assert "read_file(" in seen[0]  # the summarizer saw the whole history, calls included
    assert check_history(new) == []
    # second compaction: the old summary is not a real user message; one summary remains
    ctx2 = new + tool_round(3, "d" * 2000)
    new2, ev2 = run(CodexPolicy(), ctx2, 2_000, lambda e: "again")
    assert new2[1:-1] == users and sum(is_summary_message(m) for m in new2) == 1
    assert new2[-1]["content"].endswith("again")


def test_codex_selects_user_messages_newest_first_within_the_token_budget():
    """Codex counts UTF-8 bytes / 4 (see tests/test_peers_codex.py for the cases from codex-rs)."""
    ctx = [dict(SYSTEM), user("aaaa"), *tool_round(0), user("bbbb"), *tool_round(1), user("cccc"), *tool_round(2)]
    new, _ = run(CodexPolicy(user_message_max_tokens=2), ctx, 10)
    # cccc (1 token) and bbbb (1) fill the budget: nothing is left for aaaa, not even a truncated one
    assert [m["content"] for m in new[1:-1]] == ["bbbb", "cccc"]
    long = "x" * 60  # 15 tokens
    ctx = [dict(SYSTEM), user(long), *tool_round(0), user("cccc"), *tool_round(1)]
    new, ev = run(CodexPolicy(user_message_max_tokens=10), ctx, 10)
    # 9 tokens left: 36 bytes kept, half head half tail, the 24 removed bytes are 6 tokens
    assert new[1]["content"] == "x" * 18 + "\u20266 tokens truncated\u2026" + "x" * 18
    assert new[2]["content"] == "cccc" and new[1] in ev.inserted
    # the lab's earlier reading counts with the token meter instead
    def tokens(m):  # one token per character
        return len(text_of(m))

    new, _ = run(CodexPolicy(user_message_max_tokens=8, token_count="meter"), ctx, 10, token_meter=tokens)
    assert new[2]["content"] == "cccc" and new[1]["content"].startswith("x") and "tokens truncated" in new[1]["content"]


# --- observation masking and clearing ------------------------------------------------------


def test_observation_masking_masks_outside_five_events_as_openhands_sends_it():
    """The default is OpenHands' own (see tests/test_peers_openhands.py for the proof against it):
    6 rounds of 2 calls are 24 events after system and user; results before event 21 are masked,
    each becomes a user message and its round's call message is no longer sent."""
    ctx = [dict(SYSTEM), user()] + [m for k in range(6) for m in tool_round(k, "out" * 200, n_calls=2)]
    before = copy.deepcopy(ctx)
    new, ev = run(ObservationMaskingPolicy(), ctx, 1_000)
    assert ctx == before
    # events: round k has calls at 2+4k, 3+4k and results at 4+4k, 5+4k; 26 events in all
    # -> results at events < 21 are masked: rounds 0..3 and the first result of round 4
    assert new[:2] == ctx[:2] and new[2:11] == [{"role": "user", "content": "\n\n<MASKED>"}] * 9
    assert new[11:] == ctx[-3:] and ev.kind == "mask"  # round 5 intact; round 4's second result went too
    assert len(ev.removed) == 5 + 10 and len(ev.inserted) == 9
    assert check_history(new) == []
    again, ev2 = run(ObservationMaskingPolicy(), new, 1)  # nothing new to mask: no event
    assert ev2 is None and again == new


def test_observation_masking_earlier_reading_leaves_exactly_five_tool_results():
    ctx = [dict(SYSTEM), user()] + [m for k in range(6) for m in tool_round(k, "out" * 200, n_calls=2)]
    new, ev = run(ObservationMaskingPolicy(window="tool_results", render="in_place"), ctx, 1_000)
    results = tool_messages(new)
    unmasked = [m for m in results if m["content"] != "<MASKED>"]
    assert len(results) == 12 and len(unmasked) == 5 and unmasked == tool_messages(ctx)[-5:]
    assert [m["tool_call_id"] for m in results] == [m["tool_call_id"] for m in tool_messages(ctx)]
    assert ev.kind == "mask" and len(ev.removed) == len(ev.inserted) == 7
    assert check_history(new) == []
    again, ev2 = run(ObservationMaskingPolicy(window="tool_results", render="in_place"), new, 1)
    assert ev2 is None and again == new


def test_clear_tool_uses_keeps_exactly_the_last_three_results():
    ctx = [dict(SYSTEM), user()] + [m for k in range(5) for m in tool_round(k, "r" * 300, n_calls=2)]
    new, ev = run(ClearToolUsesPolicy(), ctx, 1_000)
    results = tool_messages(new)
    intact = [m for m in results if m["content"] != "[cleared]"]
    last3 = tool_messages(ctx)[-3:]
    assert intact == last3 and all(a is b for a, b in zip(intact, last3, strict=True))
    assert len(results) == 10 and ev.kind == "clear" and len(ev.removed) == 7
    assert check_history(new) == []
    # excluded tools are never cleared; clearing inputs empties the call's arguments
    ctx = [dict(SYSTEM), user(), *tool_round(0, "r" * 300), *tool_round(1, "r" * 300)]
    ctx[2]["tool_calls"][0]["function"]["name"] = "keep_me"
    new, _ = run(ClearToolUsesPolicy(keep=0, exclude_tools=("keep_me",), clear_tool_inputs=True), ctx, 100)
    assert new[2] is ctx[2] and new[3] is ctx[3] and new[5]["content"] == "[cleared]"
    assert new[4]["tool_calls"][0]["function"]["arguments"] == "{}" != ctx[4]["tool_calls"][0]["function"]["arguments"]
    # clear_at_least (tokens) stops once enough is reclaimed, oldest first
    def tokens(m):
        return len(text_of(m))

    ctx = [dict(SYSTEM), user()] + [m for k in range(6) for m in tool_round(k, "r" * 100)]
    new, ev = run(ClearToolUsesPolicy(clear_at_least=150), ctx, 100, token_meter=tokens)
    assert [m["content"] == "[cleared]" for m in tool_messages(new)] == [True, True, False, False, False, False]


# --- langchain trim ------------------------------------------------------------------------


def test_langchain_trim_starts_on_a_user_message_and_fits_the_target():
    ctx = [dict(SYSTEM)]
    for t in range(5):
        ctx += [user(f"question {t}")] + tool_round(t, "z" * 400, 2) + [assistant(f"answer {t}")]
    budget = 4_000
    pol = LangChainTrimPolicy()
    new, ev = run(pol, ctx, budget)
    assert new[0] is ctx[0] and new[1]["role"] == "user"
    assert context_size(new) <= budget and ev.kind == "trim"
    start = len(ctx) - (len(new) - 1)
    assert new[1:] == ctx[start:]  # a suffix of the conversation, unchanged
    # it is the longest such suffix: the previous user message would not fit
    prev_user = max(i for i in range(1, start) if ctx[i]["role"] == "user")
    assert message_size(ctx[0]) + context_size(ctx[prev_user:]) > budget
    assert check_history(new) == []
    half, _ = run(LangChainTrimPolicy(target_share=0.5), ctx, budget)
    assert context_size(half) <= budget // 2 and half[1]["role"] == "user"
    # no user message fits: only the system message is left, as LangChain 1.x returns it
    ctx = [dict(SYSTEM), user("go"), *tool_round(0, "y" * 3000)]
    new, ev = run(pol, ctx, 1_000)
    assert new == [ctx[0]] and len(ev.removed) == 3


# --- hermes-agent ----------------------------------------------------------------------------


def hermes_session(rounds=12, body="x" * 1000):
    ctx = [dict(SYSTEM), user("Goal: rename the helper in src/app.py and keep tests green."),
           assistant("looking", ["h0"]), tool("h0", "small listing")]
    for k in range(rounds):
        ctx += tool_round(k, body, n_calls=1 + k % 3, say=f"step {k}: editing src/mod{k}.py")
    return ctx


def test_hermes_keeps_the_head_never_leaves_an_orphan_and_prunes_old_results():
    ctx = hermes_session()
    before = copy.deepcopy(ctx)
    seen = []
    new, ev = run(HermesAgentPolicy(), ctx, 10_000, lambda e: seen.append(e) or "S1")
    assert ctx == before
    assert check_history(new) == []
    # head: first 3 messages
    assert new[1:4] == ctx[1:4] and all(a is b for a, b in zip(new[1:4], ctx[1:4], strict=True))
    assert new[0]["content"].startswith(ctx[0]["content"])  # a compaction note appended to the system message
    # hermes' own summary format: its reference-only prefix, the answer, its end marker (no user ask to ground)
    assert new[4]["role"] == "user" and new[4]["content"] == f"{HERMES_PREFIX}\nS1\n\n{HERMES_END}"  # after a tool
    assert ev.kind == "summary" and ev.summarizer_calls == 1 and ev.cut is not None
    tail = new[5:]
    assert tail == ctx[len(ctx) - len(tail):] and len(tail) >= 3 and tail[0]["role"] != "tool"
    assert "[read_file] read src/file0.py from line 1 (1,004 chars)" in seen[0]  # pruned to one line
    assert "read_file(" in seen[0] and PREVIOUS_SUMMARY_ROLE not in seen[0]


def test_hermes_deduplicates_identical_tool_results():
    same = "identical output line\n" * 20  # 440 chars, over the 200-char floor
    ctx = hermes_session(rounds=4, body="y" * 900)
    ctx[5]["content"] = same  # an old result (round 0)
    ctx += [assistant("again", ["d1"]), tool("d1", same)]  # the same output, newest
    ctx += tool_round(9, "w" * 900)
    seen = []
    new, _ = run(HermesAgentPolicy(), ctx, 4_000, lambda e: seen.append(e) or "S")
    assert "[Duplicate tool output" in seen[0] and same.strip() not in seen[0]
    assert sum(m.get("content") == same for m in new) == 1  # the newest copy is kept verbatim
    assert check_history(new) == []


def test_hermes_second_compaction_updates_the_previous_summary():
    first, _ = run(HermesAgentPolicy(), hermes_session(), 10_000, lambda e: "S1")
    ctx = first + [user("Next: rename the helper in src/mod3.py too.")]
    ctx += [m for k in range(20, 28) for m in tool_round(k, "q" * 1000, n_calls=2)]
    seen = []
    new, ev = run(HermesAgentPolicy(), ctx, 10_000, lambda e: seen.append(e) or "S2")
    assert seen[0].startswith(f"{PREVIOUS_SUMMARY_ROLE}: S1\n")  # the old summary's body, marked as the one to update
    assert seen[0].count("S1") == 1 and HERMES_PREFIX not in seen[0]
    summaries = [m for m in new if is_summary_content(m["content"])]
    assert len(summaries) == 1 and "S2" in summaries[0]["content"] and "S1" not in summaries[0]["content"]
    assert first[4] in ev.removed
    # hermes 0.19.0: after a first compaction only the system message is protected (protect_first_n decays),
    # so the summary would follow the system message and collide with the user message that starts the
    # tail: it is merged into that message
    assert new[0] is first[0]  # the system note is added once
    assert new[1] is summaries[0] and new[1]["role"] == "user"
    assert new[1]["content"].startswith(HERMES_MERGED + "\nNext: rename")
    assert check_history(new) == []


def test_summarizer_failure_gives_hermes_fallback_and_codex_placeholder():
    def boom(excerpt):
        raise RuntimeError("down")

    new, ev = run(HermesAgentPolicy(), hermes_session(), 10_000, boom)
    assert ev.kind == "placeholder" and "down" in ev.failure  # hermes writes its deterministic fallback summary
    assert new[4]["content"].startswith(HERMES_PREFIX) and "Summary failure reason: down." in new[4]["content"]
    assert "## Completed Actions\n1. Called tool(s): read_file" in new[4]["content"]
    new, ev = run(CodexPolicy(), hermes_session(), 10_000, boom)
    assert ev.kind == "placeholder" and new[-1] == {"role": "user", "content": PLACEHOLDER_NOTE}


def test_repair_tool_pairs_by_position():
    msgs = [dict(SYSTEM), user(), assistant("", ["a", "b"]), tool("a"), tool("zzz"), user("next"),
            assistant("", ["a"]), tool("a"), assistant(None, ["c"]), user("more")]
    msgs[8]["content"] = None
    fixed, repairs = repair_tool_pairs(msgs)
    assert check_history(fixed) == [] and repairs == 3
    assert [c["id"] for c in fixed[2]["tool_calls"]] == ["a"] and msgs[2]["tool_calls"][1]["id"] == "b"
    assert "tool_calls" not in fixed[7] and fixed[7]["content"] == "(tool call removed)"
    assert fixed[6]["tool_call_id"] == "a" and fixed[4]["role"] == "user"  # reused id 'a' paired by position
    tail_open = [dict(SYSTEM), user(), assistant("", ["x"])]
    assert repair_tool_pairs(tail_open) == (tail_open, 0)  # results may still be coming


# --- every policy on every legal real transcript (each corpus) ------------------------------

_LEGAL: dict = {}


def legal_transcripts(corpus) -> dict:
    """The corpus's transcripts whose every request is OpenAI-legal as recorded."""
    if corpus.name not in _LEGAL:
        legal = {}
        for path in corpus.files:
            msgs = load_transcript(path)
            if (replay(msgs, budget=10**12, retention=False).requests["problems_openai"] == 0).all():
                legal[path.name] = msgs
        _LEGAL[corpus.name] = legal
    return _LEGAL[corpus.name]


@pytest.mark.parametrize("name", NEW_POLICIES)
@pytest.mark.parametrize("budget", [30_000, 60_000])
def test_every_policy_keeps_every_legal_transcript_legal(corpus, name, budget):
    transcripts = legal_transcripts(corpus)
    # every real log but one (deerflow_parallel5, answered out of order) is legal request by request
    assert len(transcripts) >= len(corpus.files) - 1 and len(transcripts) >= 4
    for tname, msgs in transcripts.items():
        L = replay(msgs, budget=budget, policy=name, summarizer=lambda e: "S", retention=False)
        assert (L.requests["problems_openai"] == 0).all(), tname
        for e in L.compactions:
            ctx = list(e.context_after)
            # the only problem allowed is the run's own last call that never got a result
            def trailing(p, ctx=ctx):
                return p.code == "unanswered_call" and p.index == len(ctx) - 1

            assert [p for p in check_history(ctx) if not trailing(p)] == []
            assert e.policy == name and e.size_before > budget
        acted = L.requests["compacted"]
        assert list(L.requests.loc[acted, "size_after"]) == [e.size_after for e in L.compactions]
        if L.totals.cumulative_input_no_compaction and L.requests["size_no_compaction"].max() > 2 * budget:
            assert L.totals.n_compactions >= 1, (tname, name)


def test_sweep_runs_every_policy():
    named = [("a", session(15, body="x" * 900, n_calls=2)), ("b", hermes_session())]
    frame = sweep(named, budgets=[6_000], policies=list(POLICIES), summarizer=lambda e: "S", retention=True)
    assert sorted(frame["policy"]) == sorted(list(POLICIES) * 2)
    assert (frame["problems_openai"] == 0).all() and (frame["compactions"] >= 1).all()


# --- Hypothesis: never mutate, always legal ---------------------------------------------------

@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legal_histories(), st.integers(0, 6000), st.sampled_from(NEW_POLICIES))
def test_policies_never_mutate_and_stay_legal(msgs, budget, name):
    assert check_history(msgs) == []
    before = copy.deepcopy(msgs)
    new, ev = run(resolve_policy(name), msgs, budget)
    assert msgs == before
    assert check_history(new) == []
    if ev is None:
        assert new == msgs
    else:
        assert ev.size_after == context_size(new) and ev.size_before > budget
        assert new[0] is msgs[0] or (name == "hermes_agent" and new[0]["content"].startswith(msgs[0]["content"]))
        assert all(any(m is x for x in msgs) for m in ev.removed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legal_histories(), st.integers(0, 3000), st.sampled_from(NEW_POLICIES))
def test_replay_with_any_policy_never_breaks_a_legal_history(msgs, budget, name):
    L = replay(msgs, budget=budget, policy=name, summarizer=lambda e: "S", retention=False)
    assert (L.requests["problems_openai"] == 0).all()
    assert all(e.problems["openai"] == 0 for e in L.compactions)


# --- metrics by hand -------------------------------------------------------------------------


def test_retention_by_hand():
    goal = "Goal: rename the helper in src/app.py and keep tests green."
    # distinctive words (4+ letters, not stop words): goal rename helper keep tests green
    assert goal_terms(goal) == ["goal", "rename", "helper", "keep", "tests", "green"] and GOAL_TERM_SHARE == 0.6
    removed = [user(goal), tool("c", "patched src/util.py; see docs/notes.md")]
    # paths at stake: src/app.py, src/util.py, docs/notes.md; plus the goal = 4 items
    kept = [{"role": "system", "content": "[Earlier conversation summary]\nGoal: rename helper, keep tests. "
                                          "Files: src/app.py, src/util.py"}]
    r = retention(removed, kept)
    # goal words present: goal, rename, helper, keep, tests = 5/6 >= 0.6 -> kept; 2 of 3 paths kept
    assert r.goal_at_stake and r.goal_kept and r.items == 4 and r.kept == 3 and r.score == 0.75
    assert r.lost == ("docs/notes.md",)
    r = retention(removed, [{"role": "user", "content": "rename helper keep src/util.py"}])
    # 3/6 words < 0.6 -> goal lost; 1 path of 3 -> 1/4
    assert not r.goal_kept and r.kept == 1 and r.score == 0.25
    assert retention([tool("c", "no paths here")], kept).score is None  # nothing at stake


@pytest.mark.parametrize("policy", ["nanohermes", "codex", "hermes_agent", "clear_tool_uses"])
def test_retention_stops_reading_only_when_the_answer_is_known(corpus, policy):
    """The book's retention (shared index, reading kept messages until answered) equals reading every kept message."""
    from nanohermes_nb import load_transcript, replay
    from nanohermes_nb.context.metrics import first_user_goal, terms_in
    from nanohermes_nb.context.summarizers import find_paths

    def parts(m):  # the text a model reads: the content, then each call's arguments
        return [text_of(m)] + [str(c["function"].get("arguments", "")) for c in (m.get("tool_calls") or [])
                               if isinstance(c.get("function"), dict)]

    def paths(m):
        return {p for part in parts(m) for p in find_paths(part)}

    events = 0
    for path in corpus.files:
        msgs = load_transcript(path)
        goal = first_user_goal(msgs, summary_prefixes())
        terms = goal_terms(goal) if goal else []
        for ev in replay(msgs, budget=max(2_000, len(json.dumps(msgs)) // 6), policy=policy, profiles=()).compactions:
            removed, kept = ev.event.removed, ev.context_after
            dropped = list(dict.fromkeys(p for m in removed for p in sorted(paths(m))))
            kept_paths = set().union(*(paths(m) for m in kept))
            present = set().union(*(terms_in(part, terms) for m in kept for part in parts(m))) if terms else set()
            r = ev.retention
            # the goal is at stake when the user's first message was removed (a removed summary is not it)
            assert r.goal_at_stake == (bool(first_user_goal(removed, summary_prefixes())) and bool(goal))
            assert r.paths == tuple(dropped) and r.paths_kept == tuple(p for p in dropped if p in kept_paths)
            if r.goal_at_stake and terms:
                assert r.goal_kept == (len(present) / len(terms) >= GOAL_TERM_SHARE)
            events += 1
    assert events > 10


def test_prefix_reuse_by_hand():
    s = {"role": "system", "content": "S"}  # {"role":"system","content":"S"} = 31 bytes
    u = {"role": "user", "content": "go"}  # {"role":"user","content":"go"} = 30 bytes
    a1 = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    a1_json = ('{"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function",'
               '"function":{"name":"f","arguments":"{}"}}]}')
    t1 = {"role": "tool", "tool_call_id": "a", "content": "x" * 10}  # 45-byte start + 10 x + '"}' = 57
    a2 = {**a1, "tool_calls": [{**a1["tool_calls"][0], "id": "b"}]}
    t2 = {"role": "tool", "tool_call_id": "b", "content": "y" * 10}
    done = {"role": "assistant", "content": "done"}
    assert [message_size(m) for m in (s, u, t1)] == [31, 30, 57] and message_size(a1) == len(a1_json) == 118
    # over budget only once t2 is in: 31+30+118+57 = 236 <= 300 < 236+118+57 = 411
    masking = ObservationMaskingPolicy(attention_window=1, window="tool_results", render="in_place")
    L = replay([s, u, a1, t1, a2, t2, done], budget=300, policy=masking, retention=False)
    req = L.requests
    # request bytes = '[' + messages joined by ',' + ']'
    # the masked copy {"role":"tool","tool_call_id":"a","content":"<MASKED>"} is 45 + 8 + 2 = 55 bytes
    assert list(req["request_bytes"]) == [2 + 1 + 61, 2 + 3 + 236, 2 + 5 + 31 + 30 + 118 + 55 + 118 + 57]
    # request 1: nothing before; request 2: all of request 1 but its closing ']'
    # request 3: '[' s ',' u ',' a1 ',' then the common start of t1 and its masked copy
    common = len('{"role":"tool","tool_call_id":"a","content":"')  # 45
    assert list(req["prefix_reuse"]) == [0, 64 - 1, 1 + 31 + 1 + 30 + 1 + 118 + 1 + common]
    assert list(req["event"]) == ["", "mask", ""] and L.compactions[0].inserted[0]["content"] == "<MASKED>"
    assert L.totals.prefix_reuse == req["prefix_reuse"].sum() and L.totals.request_bytes == req["request_bytes"].sum()


def test_policies_declare_their_summary_openings_and_compaction_learns_none_of_them():
    """Each policy declares how its summaries open; ``policies.summary_prefixes()`` reads the registry when
    asked. Importing a policy changes nothing in ``compaction``: its ``is_summary_message`` knows only the lab's
    notes unless it is handed the openings."""
    import subprocess
    import sys

    from nanohermes_nb.context import compaction
    from nanohermes_nb.policies import AGENT_RULES
    from nanohermes_nb.policies.codex import CODEX_SUMMARY_PREFIX
    from nanohermes_nb.policies.hermes_text import ALL_SUMMARY_PREFIXES
    from nanohermes_nb.policies.langchain_summarize import SUMMARY_PREFIX

    declared = summary_prefixes()
    assert declared == tuple(dict.fromkeys(p for cls in POLICIES.values() for p in cls.summary_prefixes))
    agent_rules = {p for name in AGENT_RULES for p in POLICIES[name].summary_prefixes}  # issue 37's, e.g. aider's
    assert {CODEX_SUMMARY_PREFIX + "\n", SUMMARY_PREFIX, *ALL_SUMMARY_PREFIXES, *agent_rules} == set(declared)
    for prefix in declared:
        summary = {"role": "user", "content": prefix + "what was done"}
        assert is_summary_message(summary) and compaction.is_summary_message(summary, declared)
        assert not compaction.is_summary_message(summary)  # the context layer knows no other system
    lab = {"role": "system", "content": compaction.SUMMARY_HEADER + "\nx"}
    assert compaction.is_summary_message(lab) and is_summary_message(lab)
    assert not is_summary_message({"role": "user", "content": "fix the bug"})
    # the context package imports nothing above it
    code = ("import sys, nanohermes_nb.context.compaction, nanohermes_nb.context.metrics; "
            "print(any(m.startswith(('nanohermes_nb.policies', 'nanohermes_nb.engine')) for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def test_a_removed_summary_of_another_system_is_not_the_users_goal():
    from nanohermes_nb.context.metrics import first_user_goal
    from nanohermes_nb.policies.codex import CODEX_SUMMARY_PREFIX

    summary = {"role": "user", "content": CODEX_SUMMARY_PREFIX + "\nearlier work on src/parse.py"}
    removed = [summary, user("rename the helper in src/util.py"), tool("c", "ok")]
    kept = [user("rename helper src/util.py")]
    assert first_user_goal(removed).startswith(CODEX_SUMMARY_PREFIX)  # the context layer knows no other system
    assert first_user_goal(removed, summary_prefixes()) == "rename the helper in src/util.py"
    r = retention(removed, kept, summary_prefixes=summary_prefixes())
    assert r.goal_at_stake and r.goal_kept
    assert not retention(removed, kept).goal_kept
