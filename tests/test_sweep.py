"""Sweeps equal replay row for row, and serialize each message once."""



from nanohermes_nb import replay, sweep
from nanohermes_nb import sizing

from builders import session


def test_sweep_rows_equal_replay_totals():
    named = [("a", session(15, body="x" * 900, n_calls=2)), ("b", session(8, body="y" * 3000))]
    frame = sweep(named, budgets=[6_000, 20_000], keep_recent=[4, 10], summarizer=lambda e: "S", retention=True)
    assert len(frame) == 2 * 2 * 2
    for _, row in frame.iterrows():
        msgs = dict(named)[row["transcript"]]
        L = replay(msgs, budget=int(row["budget"]), keep_recent=int(row["keep_recent"]), summarizer=lambda e: "S")
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
    from nanohermes_nb.ledger import reference_replay
    reference_replay(msgs, budget=3_000, summarizer=lambda e: "S")
    assert len(calls) > 3 * len(msgs)


def test_sweep_other_policies_keep_recent_is_empty():
    frame = sweep([("s", session(10))], budgets=[5_000], keep_recent=[3, 10], policies=["nanohermes"])
    assert list(frame["keep_recent"]) == [3, 10]


def test_sweep_over_a_transcript_folder(corpus):
    frame = sweep([corpus.path], budgets=[30_000, 60_000], keep_recent=[10])
    assert len(frame) == 2 * len(corpus.files)
    big = frame[frame["transcript"] == corpus.largest().name]
    assert len(big) == 2 and (big["compactions"] >= 1).all()
    assert (frame["cumulative_input"] <= frame["cumulative_input_no_compaction"]).all()
