"""Issue 33: one cost model in every table of an agent log, so two tables of the same session never disagree.

A priced replay of a log that carries its bill gets the ``modelbook.ModelBook`` (the free-running cost
model), whatever computes it: ``replay`` (the Python ``Ledger`` and the CLI's), ``sweep``,
``compare_policies`` and ``whatif``. A transcript with no bill keeps the cost book, and each table says
which model priced it. Real files only (the vendored sample); fast.
"""

from __future__ import annotations

import json
import math
import os
import shutil

import pytest
from agentlog_files import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import nanohermes_nb as nh
from nanohermes_nb.engine.bill import session_bill
from nanohermes_nb.engine.modelbook import MODEL_PRICING, SessionModel, is_model_priced, label_band
from nanohermes_nb.engine.recorded import ContextView, RecordedSession
from nanohermes_nb.engine.whatif import round_to_band, whatif, whatif_rows, whatif_total
from nanohermes_nb.transcripts import load_transcript

LOGS = ROOT / "data" / "agentlogs"
SMALL = LOGS / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl"  # 18 requests, no compaction
POSH = LOGS / "claude-code" / "oh-my-posh_opus5_windows_compaction_10906611becd.cut329.jsonl"  # 1-hour writes
CODEX = LOGS / "codex" / "agentv_gpt53-codex-spark_2compactions_019f03e0.cut497.jsonl"
TRANSCRIPT = ROOT / "data" / "transcripts" / "deerflow_bigcsv_ad76c455.json"  # no bill
SETTING = {"POSH": (POSH, 20_000), "CODEX": (CODEX, 20_000), "SMALL": (SMALL, 5_000)}


@pytest.mark.parametrize("name", list(SETTING))
def test_every_table_of_a_session_holds_the_same_dollars(name):
    path, budget = SETTING[name]
    t = load_transcript(path)
    ledger = nh.replay(t, policy="nanohermes", budget=budget, unit="o200k", pricing="claude-opus-4.5", profiles=())
    cost = ledger.totals.cost_usd
    assert is_model_priced(ledger.totals.pricing) and ledger.totals.n_compactions >= 1 and cost > 0
    assert sum(ledger.requests["cost_usd"]) + ledger.totals.summarizer_cost_usd == pytest.approx(cost, rel=1e-12)
    row = nh.sweep([str(path)], policies=["nanohermes"], budgets=[budget], unit="o200k",
                   pricing="claude-opus-4.5").iloc[0]
    table = nh.compare_policies([str(path)], policies=["nanohermes"], budget=budget, unit="o200k",
                                pricing="claude-opus-4.5")
    rows, model, _ = whatif_rows(t, policies=["nanohermes"], budgets=[budget])
    shown = whatif(t, policies=["nanohermes"], budgets=[budget]).iloc[0]
    assert row["cost_usd"] == cost == table.loc["nanohermes", "cost_usd"] == rows[0]["cost"]
    assert shown["cost_usd"] == round_to_band(cost, model.band)
    assert row["compactions"] == ledger.totals.n_compactions == shown["compactions"]
    # the log's own models price it, whatever preset turned dollars on
    other = nh.replay(t, policy="nanohermes", budget=budget, unit="o200k", pricing="gpt-4.1", profiles=())
    assert other.totals.cost_usd == cost and other.totals.pricing == ledger.totals.pricing
    # the same messages without their bill: the cost book's count of the visible text, another figure
    plain = nh.replay(list(t), policy="nanohermes", budget=budget, unit="o200k", pricing="claude-opus-4.5",
                      profiles=())
    assert plain.totals.pricing == "claude-opus-4.5" and plain.totals.cost_usd != pytest.approx(cost, rel=0.01)


@pytest.mark.parametrize("policy", ["codex", "hermes_agent", "clear_tool_uses", "observation_masking"])
@pytest.mark.parametrize("name", ["POSH", "CODEX"])
def test_the_model_predicts_from_the_first_compaction_what_it_predicts_over_the_whole_replay(policy, name):
    """``ModelBook`` takes a replay's requests before its first compaction from the session's baseline and
    predicts the rest; the ledger's per-request columns predict every request: the two agree."""
    path, budget = SETTING[name]
    ledger = nh.replay(load_transcript(path), policy=policy, budget=budget, unit="o200k", pricing="gpt-4.1",
                       profiles=(), retention=False)
    t, r = ledger.totals, ledger.requests
    assert t.n_compactions >= 1
    assert sum(r["cost_usd"]) + t.summarizer_cost_usd == pytest.approx(t.cost_usd, rel=1e-12)
    for column in ("input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens"):
        assert sum(r[column]) == pytest.approx(getattr(t, column), abs=len(r))  # each request rounded
    row = nh.sweep([str(path)], policies=[policy], budgets=[budget], unit="o200k", pricing="gpt-4.1",
                   retention=False).iloc[0]  # totals only: the requests of a stretch from its sums
    assert row["cost_usd"] == t.cost_usd and row["cached_tokens"] == t.cached_tokens


def test_a_replay_that_never_compacts_costs_what_the_model_says_the_session_cost():
    """The small session never compacted: its untouched replay is its recorded trajectory, to the cent."""
    t = load_transcript(SMALL)
    rows, _, _ = whatif_rows(t, policies=["nanohermes", "codex"], budgets=[10**9])
    replays = [r["cost"] for r in rows if r["source"] == "replay"]
    modelled = next(r["cost"] for r in rows if r["source"] == "modelled")
    assert replays == [pytest.approx(modelled, rel=1e-12)] * 2
    ledger = nh.replay(t, budget=10**9, unit="o200k", pricing="claude-opus-4.5", profiles=())
    assert ledger.totals.cost_usd_no_compaction == pytest.approx(modelled, rel=1e-12)


def test_an_agent_log_measures_images_as_the_provider_bills_them():
    from nanohermes_nb.context.sizing import Meter
    from nanohermes_nb.engine.costmodel import ProviderMeter

    assert isinstance(RecordedSession.of(load_transcript(SMALL)).meter("o200k"), ProviderMeter)
    assert type(RecordedSession.of(load_transcript(TRANSCRIPT)).meter("o200k")) is Meter


def _renamed(tmp_path, model: str):
    """The small session with every model renamed (a model this project has no price for)."""
    text = SMALL.read_text(encoding="utf-8").replace("claude-opus-4-5-20251101", model)
    out = tmp_path / "renamed.jsonl"
    out.write_text(text, encoding="utf-8")
    return out


def test_an_unpriced_model_gives_no_dollars_never_zero(tmp_path, capsys):
    from nanohermes_nb.cli import main

    path = _renamed(tmp_path, "claude-imaginary-9")
    t = load_transcript(path)
    table = whatif(t, policies=["nanohermes"], budgets=[5_000])
    assert table["cost_usd"].isna().all() and table.attrs["billed_usd"] is None
    assert table.attrs["unpriced"] == ["claude-imaginary-9"]
    row = nh.sweep([str(path)], policies=["nanohermes"], budgets=[5_000], unit="o200k", pricing="gpt-4.1").iloc[0]
    assert math.isnan(row["cost_usd"]) and row["input_tokens"] > 0  # tokens predicted, dollars not
    both = nh.compare_policies([str(path), str(SMALL)], policies=["nanohermes"], budget=5_000, unit="o200k",
                               pricing="gpt-4.1")
    assert math.isnan(both.loc["nanohermes", "cost_usd"]), "an unpriced session makes the sum unknown, not smaller"
    assert main(["whatif", str(path), "--policies", "nanohermes", "--budgets", "5k"]) == 0
    out = " ".join(line.lstrip("# ") for line in capsys.readouterr().out.splitlines())
    assert "unpriced" in out and "no price for claude-imaginary-9" in out and "$0" not in out


def test_a_log_whose_usage_cannot_be_fitted_prices_nothing(tmp_path, capsys):
    from nanohermes_nb.cli import main

    lines = []
    for line in SMALL.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        usage = (rec.get("message") or {}).get("usage") if isinstance(rec.get("message"), dict) else None
        if isinstance(usage, dict):
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
                usage[k] = 0
        lines.append(json.dumps(rec))
    path = tmp_path / "zeros.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = load_transcript(path)
    ledger = nh.replay(t, budget=5_000, unit="o200k", pricing="claude-opus-4.5", profiles=())
    assert ledger.totals.pricing.startswith(MODEL_PRICING) and math.isnan(ledger.totals.cost_usd)
    with pytest.raises(ValueError, match="no cost model"):
        whatif(t)
    assert main(["whatif", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_which_cost_model_priced_a_table_is_said(capsys):
    from nanohermes_nb.cli import main

    both = nh.compare_policies([str(SMALL), str(TRANSCRIPT)], policies=["nanohermes"], budget=20_000, unit="o200k",
                               pricing="claude-opus-4.5")
    said = both.attrs["cost_model"]
    assert "free-running cost model" in said and "visible text at claude-opus-4.5" in said
    rows = nh.sweep([str(SMALL), str(TRANSCRIPT)], budgets=[20_000], unit="o200k", pricing="claude-opus-4.5")
    labels = dict(zip(rows["transcript"], rows["pricing"], strict=True))
    assert is_model_priced(labels[SMALL.name]) and labels[TRANSCRIPT.name] == "claude-opus-4.5"
    assert label_band(labels[SMALL.name]) == pytest.approx(SessionModel(load_transcript(SMALL)).band, abs=5e-4)
    assert "billed_usd" in both.columns and both.loc["claude_code", "billed_usd"] == pytest.approx(
        session_bill(load_transcript(SMALL).requests).cost_usd)
    assert main(["sweep", str(SMALL), str(TRANSCRIPT), "--pricing", "claude-opus-4.5", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "# dollars: agent logs with a bill: the free-running cost model" in out and "visible text" in out


def test_the_total_of_several_sessions_adds_them_up():
    sessions = [whatif_rows(load_transcript(p), policies=["nanohermes"], budgets=[20_000])[:2] for p in (SMALL, POSH)]
    total = whatif_total(sessions).set_index(["policy", "source"])
    band = max(m.band for _, m in sessions)
    exact = sum(next(r["cost"] for r in rows if r["source"] == "replay") for rows, _ in sessions)
    assert total.loc[("nanohermes", "replay"), "cost_usd"] == round_to_band(exact, band)
    assert total.loc[("claude_code", "billed"), "cost_usd"] == pytest.approx(sum(m.billed_usd for _, m in sessions))
    assert total.loc[("nanohermes", "replay"), "compactions"] == sum(
        next(r["compactions"] for r in rows if r["source"] == "replay") for rows, _ in sessions)


def test_the_whatif_command_over_several_sessions(tmp_path, capsys, monkeypatch):
    from nanohermes_nb.cli import main

    folder = tmp_path / "logs"
    folder.mkdir()
    copies = [shutil.copy(p, folder / p.name) for p in (SMALL, CODEX)]
    before = sorted(os.listdir(folder))
    assert main(["whatif", *map(str, copies), "--policies", "nanohermes,codex", "--budgets", "20k,60k", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(os.listdir(folder)) == before, "nothing is written next to the logs"
    per = {s: [r for r in rows if r["session"] == s] for s in {r["session"] for r in rows}}
    assert set(per) == {*map(str, copies), "total"} and all(len(v) == 2 * 2 + 2 for v in per.values())
    assert [r["policy"] for r in per["total"] if r["source"] != "replay"] == ["agents", "agents"]
    monkeypatch.setenv("COLUMNS", "72")
    assert main(["whatif", *map(str, copies), "--policies", "nanohermes,codex", "--budgets", "20k,60k"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert max(map(len, out)) <= 72 and any(line.startswith("total ") for line in out)
    assert any("needed" in line for line in out[:6]), "needed-later retention is in the table"


def test_the_whatif_command_takes_a_folder_of_logs(tmp_path, capsys):
    """A folder stands for every session in it whose log reports usage (a history with no bill is left out);
    the rows are the ones the files named one by one give."""
    from nanohermes_nb.cli import main

    folder = tmp_path / "logs"
    (folder / "deep").mkdir(parents=True)
    copies = [shutil.copy(SMALL, folder / SMALL.name), shutil.copy(CODEX, folder / "deep" / CODEX.name)]
    (folder / "notes.txt").write_text("not a log", encoding="utf-8")
    argv = ["--policies", "nanohermes", "--budgets", "20k", "--json"]
    assert main(["whatif", str(folder), *argv]) == 0
    by_folder = json.loads(capsys.readouterr().out)
    assert main(["whatif", *map(str, copies), *argv]) == 0
    by_file = json.loads(capsys.readouterr().out)
    key = lambda rows: sorted(json.dumps(r, sort_keys=True) for r in rows)  # noqa: E731
    assert key(by_folder) == key(by_file) and {r["session"] for r in by_folder} == {*map(str, copies), "total"}
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["whatif", str(empty)]) == 2
    err = capsys.readouterr().err
    assert str(empty) in err and "no agent session" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, says", [
    (["whatif", "no-such-file.jsonl"], "no-such-file.jsonl"),
    (["whatif", str(TRANSCRIPT)], "--pricing NAME prices its visible text"),
    (["whatif", str(TRANSCRIPT), "--pricing", "no-such-preset"], "no-such-preset"),
    (["whatif", str(SMALL), "--policies", "nope"], "unknown policy nope"),
    (["whatif", str(SMALL), "--policies", "codex", "--keep-recent", "4"], "keep_recent"),
    (["whatif", str(SMALL), "--budgets", "-5"], "budgets"),
])
def test_the_whatif_command_says_what_is_wrong_in_one_line(argv, says, capsys):
    from nanohermes_nb.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:  # the parser's own check of an option's value
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_what_if_with_no_bill_says_its_model_is_uncalibrated(capsys):
    from nanohermes_nb.cli import main

    t = load_transcript(TRANSCRIPT)
    with pytest.raises(ValueError, match="no bill"):
        whatif(t)
    table = whatif(t, pricing="claude-sonnet-4.5", policies=["nanohermes"], budgets=[20_000])
    ledger = nh.replay(t, policy="nanohermes", budget=20_000, unit="o200k", pricing="claude-sonnet-4.5", profiles=())
    assert table.attrs["band"] is None and "uncalibrated" in table.attrs["cost_model"]
    assert table["cost_usd"].iloc[0] == float(f"{ledger.totals.cost_usd:.2g}")  # two figures, the cost book's count
    assert table["saving_usd"].isna().all() and table["cost_low_usd"].isna().all()
    assert main(["whatif", str(TRANSCRIPT), str(SMALL), "--pricing", "claude-sonnet-4.5", "--policies", "nanohermes",
                 "--budgets", "20k", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["session"] for r in rows} == {str(TRANSCRIPT), str(SMALL)}, "no total of two models' dollars"


# ---------------------------------------------------------------- the cost book's prefix comparison, sped up

_ITEMS = st.sampled_from([0, 1, 2]).map(lambda v: [v])  # equal values are distinct objects


def _plain(a, b, lo=0):
    i = lo
    while i < min(len(a), len(b)) and (a[i] is b[i] or a[i] == b[i]):
        i += 1
    return i


@settings(max_examples=300, deadline=None)
@given(st.lists(_ITEMS, max_size=12), st.lists(_ITEMS, max_size=4), st.integers(0, 12), st.integers(0, 12),
       st.integers(0, 14), st.data())
def test_the_shared_prefix_is_the_plain_one(transcript, head, start, stop, lo, data):
    from nanohermes_nb.engine.stretchends import shared_prefix

    start, stop = min(start, len(transcript)), min(max(start, stop), len(transcript))
    view = ContextView(tuple(head), transcript, start, stop)
    pool = [*transcript, *head, [0], [1]]
    other = data.draw(st.lists(st.sampled_from(pool), max_size=12)) if pool else []
    other = list(view)[:data.draw(st.integers(0, len(view)))] + other  # often a long shared start
    for a, b in ((other, view), (view, other), (view, view), (other, list(view))):
        assert shared_prefix(a, b, lo) == _plain(a, b, lo)


def test_a_session_already_cut_into_requests_compares_as_its_file_does():
    """Notebook 19 hands ``compare_policies`` the ``RecordedSession``s it measured once: the table, the agent's own
    row (read from the log the session was cut from) included, is the one the file itself gives."""
    cut = RecordedSession.of(load_transcript(SMALL))
    by_session = nh.compare_policies({SMALL.name: cut}, budget=30_000, needed_later=True)
    by_file = nh.compare_policies([SMALL], budget=30_000, needed_later=True)
    assert "claude_code" in by_session.index
    assert by_session.equals(by_file)
