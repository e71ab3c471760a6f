"""One settings type: the same defaults and the same validation for replay, sweep, compare_policies and the agent."""

from __future__ import annotations

import dataclasses

import pytest
from builders import session

from nanohermes_nb import NanoHermesPolicy, Settings, compare_policies, replay, sweep
from nanohermes_nb.engine.pricing import Pricing
from nanohermes_nb.policies import CodexPolicy


def stub(excerpt: str) -> str:
    return "S"


def test_one_default_per_field():
    s = Settings()
    assert (s.budget, s.unit, s.policy, s.retention, s.needed_later, s.prefix_reuse) == \
        (120_000, "bytes", NanoHermesPolicy(), True, False, True)
    assert s.pricing is None and s.summarizer is None and s.tokens == ()


def test_names_and_classes_resolve_once_at_construction():
    assert Settings(policy="codex").policy == CodexPolicy()
    assert Settings(policy=CodexPolicy).policy == CodexPolicy()
    assert isinstance(Settings(pricing="gpt-4.1").pricing, Pricing)
    assert Settings(tokens=["o200k"]).tokens == ("o200k",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().budget = 1  # type: ignore[misc]


@pytest.mark.parametrize("bad, match", [({"unit": "words"}, "unknown unit"), ({"budget": -1}, "budget must be"),
                                        ({"profiles": ("bedrock",)}, "unknown profile"),
                                        ({"policy": "magic"}, "unknown policy")])
def test_bad_settings_fail_before_any_work(bad, match):
    with pytest.raises(ValueError, match=match):
        Settings(**bad)


@pytest.mark.parametrize("where, option", [(replay, "keep_recent"), (sweep, "summary_role"),
                                           (compare_policies, "keep_recent")])
def test_a_policy_option_is_not_a_setting(where, option):
    given = session(4) if where is replay else [("s", session(4))]
    with pytest.raises(TypeError, match=rf"{where.__name__}\(\) has no setting '{option}': it is an option"):
        where(given, **{option: "user" if option == "summary_role" else 4})
    with pytest.raises(TypeError, match=rf"{where.__name__}\(\) has no setting 'budjet'; settings: budget, "):
        where(given, budjet=4)


def test_settings_and_keywords_give_the_same_replay():
    msgs = session(14, body="x" * 900)
    settings = Settings(budget=6_000, policy=NanoHermesPolicy(keep_recent=4), summarizer=stub, needed_later=True)
    a = replay(msgs, settings)
    b = replay(msgs, budget=6_000, policy=NanoHermesPolicy(keep_recent=4), summarizer=stub, needed_later=True)
    c = replay(msgs, Settings(budget=1), budget=6_000, policy=NanoHermesPolicy(keep_recent=4), summarizer=stub,
               needed_later=True)  # keywords change the given settings
    assert a.totals == b.totals == c.totals and a.totals.n_compactions >= 1
    assert a.rows == b.rows == c.rows


def test_a_sweep_is_a_grid_over_one_settings():
    msgs = session(14, body="x" * 900)
    base = Settings(summarizer=stub, needed_later=True)
    frame = sweep([("s", msgs)], base, budgets=[6_000, 9_000], keep_recent=[2, 4])
    assert len(frame) == 4 and "needed_later" in frame.columns and frame["retention"].notna().any()
    for _, row in frame.iterrows():
        one = replay(msgs, base, budget=int(row["budget"]),
                     policy=NanoHermesPolicy(keep_recent=int(row["keep_recent"])))
        assert row["cumulative_input"] == one.totals.cumulative_input
        assert row["needed_later_items"] == one.totals.needed_later_items


def test_compare_policies_uses_the_same_defaults():
    msgs = session(14, body="x" * 900)
    table = compare_policies([("s", msgs)], Settings(budget=6_000, summarizer=stub), policies=["nanohermes", "codex"])
    assert list(table.index) == ["nanohermes", "codex"]
    assert "needed_later" not in table.columns  # off by default, as in replay and sweep
    asked = compare_policies([("s", msgs)], budget=6_000, summarizer=stub, needed_later=True, policies=["codex"])
    assert "needed_later" in asked.columns
