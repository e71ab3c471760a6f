"""Issue 33: one cost model of a session, proven out of sample, and the what-if priced by it.

Fast tests use hand-made steps, a file written in ``tmp_path`` and the vendored sample
(``data/agentlogs``); the corpus-wide figures (slow) need ``../shared/agentlogs`` and skip
with one line without it.
"""

from __future__ import annotations

import base64
import dataclasses
import json

import pytest
from agentlog_files import ROOT, agentlog_folders

from nanohermes_nb.engine.costmodel import (
    Priors,
    ProviderMeter,
    SessionFit,
    Step,
    Tokens,
    image_tokens,
    load_priors,
    predict,
    request_dollars,
)
from nanohermes_nb.engine.pricing import get_pricing
from nanohermes_nb.transcripts import AgentRequest, ReportedUsage, Session, load_transcript

VENDORED = ROOT / "data" / "agentlogs"
SMALL = VENDORED / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl"
SHARED = [f for f in agentlog_folders() if f != VENDORED]


def test_the_rule_by_hand_ttl_first_read_unseen_and_one_hour_writes():
    fit = SessionFit(hidden=10_000, scale=1.0, output_scale=1.0, unseen=5_000, ttl=300, share_1h=0.25,
                     first_read=4_000, cold_read=2_000)
    steps = [Step(0, "m", 1_000, 0, 10), Step(10, "m", 2_000, 1_000, 10),
             Step(400, "m", 3_000, 2_000, 10),  # idle over the TTL: only what other sessions keep warm
             Step(410, "m", 500, 200, 10, event=True)]  # a compaction: the unseen context is gone
    out = predict(steps, fit, Priors(), "claude_code")
    assert [t.prompt for t in out] == [16_000, 17_000, 18_000, 10_500]
    assert [t.cached for t in out] == [4_000, 16_000, 2_000, 10_200]
    assert out[1].write == pytest.approx(1_000) and out[1].write_1h == pytest.approx(250)
    assert all(t.uncached == pytest.approx(0) for t in out)
    codex = predict(steps[:2], dataclasses.replace(fit, ttl=3600, share_1h=0), Priors(read_share={"codex_cli": 0.5}),
                    "codex_cli", step=128)
    assert codex[1].cached == 7_936 and codex[1].write == 0  # 16,000 x 0.5 in 128-token blocks; no writes billed


def test_one_hour_writes_cost_twice_the_input_price():
    opus = get_pricing("claude-opus-4.5")
    t = Tokens(prompt=1_000_000, cached=0, write_5m=0, write_1h=1_000_000, output=0)
    assert request_dollars(t, opus) == pytest.approx(2 * opus.input)
    t5 = Tokens(prompt=1_000_000, cached=0, write_5m=1_000_000, write_1h=0, output=0)
    assert request_dollars(t5, opus) == pytest.approx(opus.cache_write)
    assert request_dollars(t, None) is None  # unpriced: never $0


def test_an_inline_image_counts_what_the_provider_bills_not_its_base64():
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (750).to_bytes(4, "big") + (100).to_bytes(4, "big")
    url = "data:image/png;base64," + base64.b64encode(png + b"\x00" * 30_000).decode()
    assert image_tokens(url) == 100  # 750 x 100 / 750
    assert image_tokens("data:image/jpeg;base64,/9j/4AAQ") == 1_600  # size unknown: the most
    message = {"role": "user", "content": [{"type": "text", "text": "look"},
                                           {"type": "image_url", "image_url": {"url": url}}]}
    meter = ProviderMeter("o200k")
    plain = meter.base.size({"role": "user", "content": [{"type": "text", "text": "look"}]})
    assert meter.size(message) == plain + 100 < meter.base.size(message) / 10


def _write(tmp_path, records):
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_the_file_says_continued_project_and_one_hour_writes(tmp_path):
    from nanohermes_nb.engine.logmeta import session_meta

    records = [{"type": "system", "parentUuid": "elsewhere", "cwd": "/p", "timestamp": "2026-01-01T00:00:00Z"},
               {"type": "assistant", "message": {"id": "msg_1", "usage": {"cache_creation": {
                   "ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 300}}}}]
    path = _write(tmp_path, records)
    t = Session((), str(path), agent="claude_code", requests=(AgentRequest(1, "msg_1", time=120.0 + 1767225600),))
    meta = session_meta(t)
    assert meta.project == "/p" and meta.continued == pytest.approx(120.0)
    assert meta.writes_1h == {"msg_1": 0.75}
    records[0].pop("parentUuid")
    assert session_meta(dataclasses.replace(t, path=str(_write(tmp_path, records)))).continued is None


CODEX = VENDORED / "codex" / "agentv_gpt53-codex-spark_2compactions_019f03e0.cut497.jsonl"


@pytest.mark.parametrize("log", [SMALL, CODEX], ids=["claude_code", "codex"])
def test_a_sessions_prediction_never_reads_its_bill_after_the_fit(log):
    """Out of sample by construction: changing the bill after the first 12 requests (prompt, reads, output,
    reasoning) changes nothing the free-running model predicts; the labelled recorded-replies variant does move."""
    from nanohermes_nb.engine.validation import case_of, session_prediction

    case = case_of(load_transcript(log))
    before = session_prediction(case, load_priors())
    doubled = tuple(f if f.index < 12 or f.usage is None else dataclasses.replace(
        f, usage=dataclasses.replace(f.usage, prompt_tokens=2 * f.usage.prompt_tokens, cached_tokens=0,
                                     completion_tokens=3 * f.usage.completion_tokens + 7,
                                     reasoning_tokens=5 * (f.usage.reasoning_tokens or 0) + 11))
        for f in case.facts)
    changed = dataclasses.replace(case, facts=doubled)
    assert session_prediction(changed, load_priors()) == before
    assert session_prediction(changed, load_priors(), variant="recorded") != session_prediction(
        case, load_priors(), variant="recorded")


def test_learned_priors_come_from_the_sessions_given_only():
    from nanohermes_nb.engine.validation import case_of, learn_priors

    cases = [case_of(load_transcript(p)) for p in sorted(VENDORED.glob("*/*.jsonl"))]
    one = learn_priors(cases[:1])
    assert {k.split(":")[0] for k in one.hidden} == {cases[0].agent} and one.sessions == 1
    assert learn_priors(cases).sessions == len(cases)


def test_the_shipped_priors_say_what_they_were_learned_on():
    p = load_priors()
    assert p.sessions >= 40 and "../shared/agentlogs" in p.source
    assert set(p.band) == {"claude_code", "codex_cli"} and all(0 < b < 0.5 for b in p.band.values())
    assert Priors.from_json(p.as_json()) == p


def test_whatif_rows_band_and_the_agents_own_rows():
    from nanohermes_nb.engine.bill import session_bill
    from nanohermes_nb.engine.whatif import round_to_band, whatif

    t = load_transcript(SMALL)
    table = whatif(t, policies=["nanohermes", "codex"], budgets=[5_000, 20_000])
    replays = table[table["source"] == "replay"]
    assert len(replays) == 4 and set(replays["budget"]) == {5_000, 20_000}
    billed = table[table["source"] == "billed"].iloc[0]
    assert billed["cost_usd"] == pytest.approx(session_bill(t.requests).cost_usd)
    band = table.attrs["band"]
    assert band == load_priors().band["claude_code"] and "free-running cost model" in table.attrs["cost_model"]
    for _, r in replays.iterrows():
        assert r["cost_low_usd"] <= r["cost_usd"] <= r["cost_high_usd"]
        assert round_to_band(r["cost_usd"], band) == r["cost_usd"]  # never finer than the band allows
    assert round_to_band(23.4567, 0.15) == 23.0 and round_to_band(0.123456, 0.15) == 0.125


def test_the_whatif_command(capsys):
    from nanohermes_nb.cli import main

    assert main(["whatif", str(SMALL), "--policies", "nanohermes", "--budgets", "10k", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["source"] for r in rows] == ["replay", "billed", "modelled"]
    assert main(["whatif", str(SMALL), "--policies", "nanohermes", "--budgets", "10k"]) == 0
    out = capsys.readouterr().out
    assert "band_usd" in out and "free-running" in out
    assert main(["whatif", str(ROOT / "README.md")]) == 2
    assert main(["whatif", str(SMALL), "--policies", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown policy nope" in err and "Traceback" not in err


@pytest.mark.slow
def test_the_out_of_sample_figures_on_the_real_corpus():
    """Leave-one-session-out figures over ``../shared/agentlogs`` (docs/bill.md quotes them), held as regression
    bounds a little below what the model reaches (one session of slack in a count); the issue's targets are
    reported beside them, not asserted (not met). The dollar bounds are at the providers' usual relative prices
    (``ratio_*``), which a new price table does not move; the priced ones are loose for the same reason."""
    if not SHARED:
        pytest.skip("../shared/agentlogs is not beside this checkout: the corpus-wide figures are not checked")
    from nanohermes_nb.engine.validation import corpus_cases, figures, shipped_priors

    cases = corpus_cases(SHARED[0])
    priors, rows = shipped_priors(cases, load_priors().source)
    assert priors == load_priors(), "the shipped priors are stale: python -m nanohermes_nb.engine.validation --write"
    figs = figures(rows)
    print(json.dumps(figs, indent=1))
    claude, codex = figs["claude_code"], figs["codex_cli"]
    # cached tokens within 5% of the prompt, free-running (0.714 / 0.672 on the 68-file corpus; the merged model:
    # 0.579 / 0.643 on the first 27 files)
    assert claude["within_share"] >= 0.70 and codex["within_share"] >= 0.66
    assert claude["within_share_anchored"] >= 0.965 and codex["within_share_anchored"] >= 0.915
    # session dollars at the usual relative prices: 14 and 3 of 30 and 16 within 5%, 24 and 10 within 10%
    assert claude["ratio_within_5"] >= 13 / 30 and codex["ratio_within_5"] >= 2 / 16
    assert claude["ratio_within_10"] >= 23 / 30 and codex["ratio_within_10"] >= 9 / 16
    assert claude["ratio_error_median"] <= 0.056 and codex["ratio_error_median"] <= 0.085
    assert claude["ratio_error_worst"] <= 0.22 and codex["ratio_error_worst"] <= 0.20
    assert claude["cost_error_median"] <= 0.07 and codex["cost_error_median"] <= 0.085
    assert claude["paid_within_10"] >= 11 / 30 and codex["paid_within_10"] >= 1 / 16


# ---------------------------------------------------------------- issue 33, second round: what the log does not show


def _facts(*rows, model="claude-opus-4-6"):
    """RequestFacts by hand: (visible, reply, thinking signature chars, shown thinking, injected, turn, compacted)."""
    from nanohermes_nb.engine.calibrate import RequestFacts

    return [RequestFacts(j, 10.0 * j, model, v, r, c, None, None, t, 0, sig, shown, inj)
            for j, (v, r, sig, shown, inj, t, c) in enumerate(rows)]


@pytest.mark.parametrize(("model", "keeps"), [
    ("claude-opus-4-5-20251101", True), ("claude-opus-4-6", True), ("claude-opus-4-8", True),
    ("claude-sonnet-4-6", True), ("claude-sonnet-5", True), ("claude-fable-5", True), ("claude-opus-5", True),
    ("claude-sonnet-4-5-20250929", False), ("claude-haiku-4-5-20251001", False), ("claude-opus-4-1", False),
    ("claude-sonnet-4-20250514", False), ("claude-3-7-sonnet-20250219", False), ("gpt-5.5", True)])
def test_which_models_keep_earlier_turns_thinking(model, keeps):
    from nanohermes_nb.engine.costmodel import keeps_thinking

    assert keeps_thinking(model) is keeps


def test_thinking_enters_at_its_signature_size_and_a_last_turn_model_drops_it():
    """A reply's thinking counts k x its signature characters in place of the text shown; Sonnet 4.5 drops
    it (and the text shown) at the next user turn, Opus 4.6 keeps it."""
    from nanohermes_nb.engine.costmodel import steps_of_facts

    priors = Priors(thinking={"claude_code": 0.2})
    rows = [(100, 50, 1_000, 30, 0.0, False, False), (200, 40, 0, 0, 0.0, False, False),
            (300, 60, 0, 0, 0.0, True, False)]
    keep = steps_of_facts(_facts(*rows), "anthropic", priors)
    assert [s.hidden for s in keep] == [0.0, pytest.approx(200 - 30), 0.0]
    assert keep[0].reply == pytest.approx(50 - 30 + 200)  # the full thinking is part of the reply's size
    drop = steps_of_facts(_facts(*rows, model="claude-sonnet-4-5-20250929"), "anthropic", priors)
    assert [s.hidden for s in drop] == [0.0, pytest.approx(170), pytest.approx(-200)]  # net: the text shown is gone


def test_injections_count_as_logged_and_an_unlogged_log_grows_by_the_learned_rate():
    from nanohermes_nb.engine.costmodel import steps_of_facts

    priors = Priors(unlogged={"claude_code": 50.0}, restored={"claude_code": 1_000.0})
    logged = steps_of_facts(_facts((10, 5, 0, 0, 300.0, False, False), (20, 5, 0, 0, 40.0, False, False),
                                   (30, 5, 0, 0, 7.0, False, True)), "anthropic", priors)
    assert [s.hidden for s in logged] == [300.0, 40.0, 1_007.0]  # a compaction restores what it restores
    unlogged = steps_of_facts(_facts((10, 5, 0, 0, None, False, False), (20, 5, 0, 0, None, False, False)),
                              "anthropic", priors)
    assert [s.hidden for s in unlogged] == [0.0, 50.0]
    codex = steps_of_facts(_facts((10, 5, 0, 0, None, False, False), (20, 5, 0, 0, None, False, False)),
                           "openai", priors)
    assert [s.hidden for s in codex] == [0.0, 0.0]


def test_an_openai_replys_reasoning_stays_for_its_turn_and_leaves_at_the_next():
    fit = SessionFit(hidden=1_000, scale=1.0, output_scale=1.0, ttl=3600, first_read=0, cold_read=0, reasoning=100)
    steps = [Step(0, "m", 1_000, 0, 10), Step(1, "m", 1_500, 1_000, 10), Step(2, "m", 2_000, 1_500, 10),
             Step(3, "m", 2_500, 1_000, 10, turn_start=True)]
    out = predict(steps, fit, Priors(), "codex_cli")
    assert [t.prompt for t in out] == [2_000, 2_600, 3_200, 3_500]  # +100 per reply in the turn, gone at the next
    assert out[3].cached == 2_000  # the turn before began at request 0: its prompt is what stays cached
    recorded = [ReportedUsage(0, completion_tokens=7, reasoning_tokens=40)] * 4
    known = predict(steps, fit, Priors(), "codex_cli", replies=recorded)
    assert [t.prompt for t in known] == [2_000, 2_540, 3_080, 3_500] and known[0].output == 7


def test_after_a_compaction_the_hidden_growth_restarts_and_a_share_of_the_prefix_is_read():
    fit = SessionFit(hidden=10_000, scale=1.0, output_scale=1.0, ttl=300, first_read=0, cold_read=0)
    steps = [Step(0, "m", 1_000, 0, 10, hidden=500), Step(1, "m", 2_000, 1_000, 10, hidden=500),
             Step(2, "m", 300, 4, 10, event=True, hidden=200)]
    out = predict(steps, fit, Priors(compact_read={"claude_code": 0.5}), "claude_code")
    assert [t.prompt for t in out] == [11_500, 13_000, 10_500]
    assert out[2].cached == 5_004 and out[1].cached == 11_500


def test_the_file_says_which_reply_thought_and_what_was_injected(tmp_path):
    from nanohermes_nb.engine.logmeta import session_meta

    think = {"type": "thinking", "thinking": "", "signature": "x" * 400}
    records = [{"type": "attachment", "attachment": {"type": "skill_listing", "content": "alpha beta gamma"}},
               {"type": "assistant", "message": {"id": "msg_1", "content": [think]}},
               {"type": "assistant", "message": {"id": "msg_1", "content": [{"type": "text", "text": "hi"}]}},
               {"type": "user", "isMeta": True, "message": {"content": "a meta note"}},
               {"type": "attachment", "isSidechain": True, "attachment": {"type": "x", "content": "sub-agent's"}},
               {"type": "assistant", "message": {"id": "msg_2", "content": [
                   {"type": "redacted_thinking", "data": "y" * 40}]}}]
    path = _write(tmp_path, records)
    meta = session_meta(Session((), str(path), agent="claude_code"))
    assert meta.thinking == {"msg_1": 400, "msg_2": 40}
    assert meta.injected == {"msg_1": 3.0, "msg_2": 3.0}  # o200k tokens of the texts; the sidechain's is not ours
    path = _write(tmp_path, records[1:4])
    assert session_meta(Session((), str(path), agent="claude_code")).injected is None  # not logged


def test_the_ablation_takes_one_part_away(tmp_path):
    from nanohermes_nb.engine.validation import ABLATIONS, case_of

    case = case_of(load_transcript(SMALL))
    change, adjust = ABLATIONS["without thinking from signatures (H1)"]
    assert any(f.thinking for f in case.facts) and not any(f.thinking for f in change([case])[0].facts)
    change, adjust = ABLATIONS["without what a compaction restores (H3)"]
    assert change is None and adjust(Priors(restored={"claude_code": 5.0}), [case]).restored == {}
