"""Sweeps equal replay row for row, and serialize each message once."""

from builders import session

from nanohermes_nb import NanoHermesPolicy, replay, sweep
from nanohermes_nb.context import sizing


def test_sweep_rows_equal_replay_totals():
    named = [("a", session(15, body="x" * 900, n_calls=2)), ("b", session(8, body="y" * 3000))]
    frame = sweep(named, budgets=[6_000, 20_000], keep_recent=[4, 10], summarizer=lambda e: "S", retention=True)
    assert len(frame) == 2 * 2 * 2
    for _, row in frame.iterrows():
        msgs = dict(named)[row["transcript"]]
        L = replay(msgs, budget=int(row["budget"]), summarizer=lambda e: "S", 
                   policy=NanoHermesPolicy(keep_recent=int(row["keep_recent"])))
        for key, value in L.totals.as_dict().items():
            assert row[key] == value or (value is None and row[key] != row[key]), key


def test_each_message_is_serialized_once_per_sweep(monkeypatch):
    msgs = session(20, body="x" * 500)
    calls = []
    real = sizing.serialize
    monkeypatch.setattr(sizing, "serialize", lambda m: calls.append(1) or real(m))
    sweep([("s", msgs)], budgets=[3_000, 6_000, 9_000], keep_recent=[2, 5, 10], summarizer=lambda e: "S",
          profiles=())
    inserted = 9 * 30  # at most one new summary message per event; generous bound
    assert len(calls) <= len(msgs) + inserted
    calls.clear()
    # the naive way re-serializes the context for every request
    from nanohermes_nb.engine.ledger import reference_replay
    reference_replay(msgs, budget=3_000, summarizer=lambda e: "S")
    assert len(calls) > 3 * len(msgs)


def test_sweep_other_policies_keep_recent_is_empty():
    """keep_recent varies the policies that have the option; the others get one row with it empty."""
    others = ["codex", "langchain_trim", "observation_masking"]
    frame = sweep([("s", session(10))], budgets=[5_000], keep_recent=[3, 10], policies=["nanohermes", *others])
    nano = frame[frame["policy"] == "nanohermes"]
    assert list(nano["keep_recent"]) == [3, 10]
    rest = frame[frame["policy"] != "nanohermes"]
    assert list(rest["policy"]) == others  # one row each, not one per keep_recent value
    assert rest["keep_recent"].isna().all()


def test_sweep_over_a_transcript_folder(corpus):
    frame = sweep([corpus.path], budgets=[30_000, 60_000], keep_recent=[10])
    assert len(frame) == 2 * len(corpus.files)
    big = frame[frame["transcript"] == corpus.largest().name]
    assert len(big) == 2 and (big["compactions"] >= 1).all()
    assert (frame["cumulative_input"] <= frame["cumulative_input_no_compaction"]).all()


def test_settings_that_never_compact_equal_their_own_replays():
    """A setting whose trigger never fires is counted once per transcript and pricing; each row still equals its
    replay, whatever the policy, the budget and the pricing."""
    import nanohermes_nb as nh

    named = [("a", session(15, body="x" * 900, n_calls=2)), ("b", session(8, body="y" * 3000))]
    prices = ["gpt-4.1", "claude-sonnet-4.5"]
    frame = sweep(named, budgets=[6_000, 10**6, 10**7], policies=list(nh.POLICIES), pricing=prices,
                  needed_later=True, retention=True, tokens=["tokens_approx"], summarizer=lambda e: "S")
    untouched = frame[frame["compactions"] == 0]
    assert untouched["policy"].nunique() == len(nh.POLICIES) and untouched["budget"].nunique() >= 2
    assert (frame["compactions"] > 0).any()
    assert list(frame["pricing"]) == prices * (len(frame) // 2)  # one row per setting and pricing, in order
    for k, row in frame.iterrows():
        L = replay(dict(named)[row["transcript"]], budget=int(row["budget"]), policy=row["policy"],
                   pricing=prices[k % 2], needed_later=True, tokens=["tokens_approx"], summarizer=lambda e: "S")
        for key, value in L.totals.as_dict().items():
            assert row[key] == value or (value is None and row[key] != row[key]), (row["policy"], key)


def test_loaded_transcripts_are_named_by_their_file_other_lists_by_their_place(corpus):
    from nanohermes_nb import load_transcript

    loaded = [load_transcript(p) for p in corpus.files[:2]]
    frame = sweep(loaded + [list(loaded[0])], budgets=[10**9])
    assert list(frame["transcript"]) == [p.name for p in corpus.files[:2]] + ["transcript 2"]


def test_the_split_sweep_module_exports_what_a_sweep_returns_and_compare_lives_apart():
    """engine.sweep is split in grid, running and sinks: the names a sweep's caller needs import from it; since
    0.3.0 ``compare_policies`` imports only from ``engine.compare`` (the moved-name shim is gone)."""
    import nanohermes_nb as nh
    from nanohermes_nb.engine import compare, grid, running, sinks
    from nanohermes_nb.engine import sweep as old

    homes = {"sweep": old, "SWEEP_COLUMNS": grid, "Skipped": grid,
             "sweep_columns": grid, "Progress": running, "SweepReport": sinks}
    assert sorted(old.__all__) == sorted(homes)
    for name, home in homes.items():
        assert getattr(old, name) is getattr(home, name), name
    assert not hasattr(old, "compare_policies")
    assert nh.compare_policies is compare.compare_policies and nh.sweep is old.sweep
