"""The hybrid ``mask_then_summarize`` (issue 36): mask first, summarize only when masking is not enough."""

from __future__ import annotations

import copy

import pytest
from builders import SYSTEM, assistant, session, tool, user

import nanohermes_nb as nh
from nanohermes_nb.context.sizing import context_size
from nanohermes_nb.policies import POLICIES, apply_policy
from nanohermes_nb.policies.mask_then_summarize import (
    MaskThenSummarizePolicy,
    is_masked,
    mask_observations,
    mask_text,
)


class Recorder:
    """A summarizer that keeps every excerpt it was asked about."""

    def __init__(self) -> None:
        self.excerpts: list[str] = []

    def __call__(self, excerpt: str) -> str:
        self.excerpts.append(excerpt)
        return f"summary of {len(excerpt)} characters"


def test_registered_by_name_and_not_the_default():
    assert POLICIES["mask_then_summarize"] is MaskThenSummarizePolicy
    assert nh.Settings().policy.name == "nanohermes"


def test_the_placeholder_is_swe_agents_and_counts_lines():
    assert mask_text("a\nb\nc") == "Old environment output: (3 lines omitted)"
    assert is_masked({"role": "tool", "content": mask_text("x")})
    assert not is_masked({"role": "tool", "content": "Old environment output: everything"})


def test_masking_keeps_the_last_results_calls_and_pairs():
    msgs = session(14, body="line\n" * 50)
    masked = mask_observations(msgs, 10)
    tools = [i for i, m in enumerate(msgs) if m["role"] == "tool"]
    for i in tools[:4]:
        assert masked[i]["content"] == "Old environment output: (51 lines omitted)"  # 50 lines, then " k.0"
        assert masked[i]["tool_call_id"] == msgs[i]["tool_call_id"]
    for i in tools[4:]:
        assert masked[i] is msgs[i]
    assert all(masked[i] is msgs[i] for i, m in enumerate(msgs) if m["role"] != "tool")
    assert mask_observations(masked, 10) == masked  # a second pass changes nothing
    assert all(a is b for a, b in zip(mask_observations(masked, 10), masked, strict=True))


def test_masking_alone_when_it_is_enough():
    msgs = session(14, body="x" * 2_000)
    before = copy.deepcopy(msgs)
    rec = Recorder()
    out = apply_policy("mask_then_summarize", msgs, budget=context_size(msgs) - 1, summarizer=rec)
    assert msgs == before  # the input is never mutated
    assert out.acted and out.event.kind == "mask" and out.event.summarizer_calls == 0 and not rec.excerpts
    assert out.event.size_after <= out.budget
    assert len(out.messages) == len(msgs) and len(out.event.removed) == 4  # the four oldest results


def test_summary_of_the_masked_history_when_masking_is_not_enough():
    msgs = session(14, body="x" * 2_000)
    rec = Recorder()
    out = apply_policy("mask_then_summarize", msgs, budget=4_000, summarizer=rec)
    assert out.event.kind == "summary" and out.event.summarizer_calls == 1
    assert out.messages[1]["content"].startswith("[Earlier conversation summary]")
    assert len(rec.excerpts) == 1 and "Old environment output: (1 lines omitted)" in rec.excerpts[0]
    assert "x" * 2_000 not in rec.excerpts[0].split("tool: ")[1]  # the oldest result reached it masked
    plain = Recorder()
    apply_policy("nanohermes", msgs, budget=4_000, summarizer=plain)
    assert len(rec.excerpts[0]) < len(plain.excerpts[0])  # a smaller excerpt than NanoHermes's own


def test_declines_when_there_is_nothing_to_mask_or_summarize():
    msgs = [SYSTEM, user("hi"), assistant("", ["c1"]), tool("c1", "ok")]
    out = apply_policy("mask_then_summarize", msgs, budget=10)
    assert not out.acted and out.messages == msgs


@pytest.mark.parametrize("bad", [{"observations": -1}, {"keep_recent": -2}, {"summary_role": "tool"}])
def test_options_are_checked(bad):
    with pytest.raises(ValueError):
        MaskThenSummarizePolicy(**bad)


def test_a_real_replay_adds_no_history_problem(corpus):
    for path in corpus.files[:4]:
        msgs = nh.load_transcript(path)
        untouched = nh.replay(msgs, budget=10**9).totals.problems
        plain = nh.replay(msgs, budget=20_000).totals.problems  # NanoHermes: its system-role summary
        ledger = nh.replay(msgs, policy="mask_then_summarize", budget=20_000)
        for profile, count in ledger.totals.problems.items():  # masking in place keeps every pair
            assert count <= max(untouched[profile], plain[profile]), (path.name, profile)
        summarized = [e for e in ledger.compactions if e.kind == "summary"]
        for event in summarized:
            assert event.context_after[1]["content"].startswith("[Earlier conversation summary]")
