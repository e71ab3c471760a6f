"""The bill beside the estimate (issue 24): reported usage priced, in the ledger, and the model proven against it.

Real files only: ``data/agentlogs`` (vendored) and ``../shared/agentlogs`` when present
(``agentlog_files``). The calibration targets are asserted at what the model reaches on the shared
corpus (``README``, "Your own sessions"), so a change that makes the model worse fails here.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from agentlog_files import ROOT, agent_logs, agentlog_folders

from nanohermes_nb.engine.bill import BILL_COLUMNS, price_for_model, request_cost, session_bill
from nanohermes_nb.engine.calibrate import (
    TTL_SECONDS,
    CacheRule,
    Fit,
    RequestFacts,
    calibrate,
    calibrate_facts,
)
from nanohermes_nb.engine.ledger import replay
from nanohermes_nb.engine.pricing import get_pricing
from nanohermes_nb.transcripts import ReportedUsage as U
from nanohermes_nb.transcripts import load_transcript

LOGS = agent_logs(("claude-code", "codex"), synthetic=False)
EVERY = agent_logs(("claude-code", "codex", "gemini-cli", "copilot-cli", "otel-genai"), synthetic=False)
SHARED = [f for f in agentlog_folders() if f != ROOT / "data" / "agentlogs"]
_LOADED: dict = {}


def load(path):
    if path not in _LOADED:
        _LOADED[path] = load_transcript(path)
    return _LOADED[path]


def ids(p):
    return f"{p.parent.parent.name}/{p.parent.name}/{p.name}"


# ---------------------------------------------------------------- prices


def test_prices_are_found_by_model_name_never_by_a_guessed_prefix():
    assert price_for_model("claude-opus-4-5-20251101").name == "claude-opus-4.5"
    assert price_for_model("claude-sonnet-4.6").name == "claude-sonnet-4.6"  # Copilot CLI's spelling
    assert price_for_model("mistral/mistral-small-latest").name == "mistral-small-latest"
    assert price_for_model("gpt-5.5").input == 5.0  # not gpt-5's 1.25
    assert price_for_model("gpt-9") is None and price_for_model("claude-opus-4") is None
    assert price_for_model("") is None and price_for_model(None) is None


@pytest.mark.parametrize("path", EVERY, ids=ids)
def test_every_model_a_real_log_names_has_a_dated_price(path):
    t = load(path)
    for r in t.requests:
        if r.usage is not None and r.model and r.model != "<synthetic>":
            p = price_for_model(r.model)
            assert p is not None, f"{path.name}: no price for {r.model!r} in nanohermes_nb/resources/pricing.csv"
            assert p.source.startswith("http") and p.read_on, p.name


def test_a_request_costs_what_its_bill_says_by_hand():
    # entire-cli_opus45_small: the first response wrote 28,081 tokens, read none, 10 uncached, 3 output
    usage = U(prompt_tokens=28_091, cached_tokens=0, cache_write_tokens=28_081, completion_tokens=3)
    opus = get_pricing("claude-opus-4.5")
    assert request_cost(usage, opus) == pytest.approx((10 * 5.00 + 28_081 * 6.25 + 3 * 25.00) / 1e6)
    codex = U(prompt_tokens=24_098, cached_tokens=2_432, cache_write_tokens=0, completion_tokens=389)
    assert request_cost(codex, get_pricing("gpt-5.5")) == pytest.approx(
        ((24_098 - 2_432) * 5.0 + 2_432 * 0.5 + 389 * 30.0) / 1e6)
    assert request_cost(None, opus) is None and request_cost(usage, None) is None


def test_a_one_hour_cache_write_bills_at_the_one_hour_price_by_hand():
    """Anthropic bills a 1-hour write at 2x input and a 5-minute one at 1.25x; the bill says what was billed."""
    opus = get_pricing("claude-opus-4.5")
    usage = U(prompt_tokens=30_000, cached_tokens=10_000, cache_write_tokens=19_000, cache_write_1h_tokens=15_000,
               completion_tokens=100)
    by_hand = (1_000 * 5.00 + 10_000 * 0.50 + 4_000 * 6.25 + 15_000 * 10.00 + 100 * 25.00) / 1e6
    assert request_cost(usage, opus) == pytest.approx(by_hand)
    five = dataclasses.replace(usage, cache_write_1h_tokens=0)
    assert request_cost(usage, opus) - request_cost(five, opus) == pytest.approx(15_000 * (10.00 - 6.25) / 1e6)


def test_the_bill_reads_each_requests_one_hour_writes_from_the_log():
    """The vendored oh-my-posh session writes for 1 hour: the reader keeps the split, the bill prices it, and the
    difference from ccusage's 5-minute pricing is exactly the 1-hour writes' surcharge."""
    import json

    from nanohermes_nb.engine.ccusage import one_hour_surcharge

    path = ROOT / "data" / "agentlogs" / "claude-code" / "oh-my-posh_opus5_windows_compaction_10906611becd.cut329.jsonl"
    t = load(path)
    first: dict = {}  # message id -> the first record's 1-hour writes, read here straight from the file
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.strip() else {}
        msg = rec.get("message") if isinstance(rec, dict) else None
        if isinstance(msg, dict) and isinstance(msg.get("usage"), dict) and msg.get("id") not in first:
            first[msg["id"]] = (msg["usage"].get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
    billed = [r for r in t.requests if r.usage is not None]
    assert sum(r.usage.cache_write_1h_tokens for r in billed) == sum(first[r.id] for r in billed) > 0
    assert all(0 <= r.usage.cache_write_1h_tokens <= r.usage.cache_write_tokens for r in billed)
    five = sum(price_for_model(r.model).cost(r.usage.prompt_tokens, r.usage.cached_tokens, r.usage.completion_tokens,
                                             r.usage.cache_write_tokens) for r in billed)
    hour = sum(r.usage.cache_write_1h_tokens * price_for_model(r.model).input * (2 - 1.25) for r in billed) / 1e6
    assert session_bill(t.requests).cost_usd == pytest.approx(five + hour, rel=1e-12)
    assert one_hour_surcharge(t.requests) == pytest.approx(hour, rel=1e-12) and hour > 0


# ---------------------------------------------------------------- the ledger carries the bill


@pytest.mark.parametrize("path", LOGS, ids=ids)
def test_the_ledger_of_an_agent_log_carries_its_bill(path):
    t = load(path)
    ledger = replay(t, profiles=(), retention=False)
    req = ledger.requests
    assert list(req.columns[-len(BILL_COLUMNS):]) == list(BILL_COLUMNS)
    shift = len(ledger.messages) - len(t)
    by_index = {r.message + shift: r for r in t.requests}
    for index, prompt, cached, written in zip(req["index"], req["usage_prompt_tokens"], req["usage_cached_tokens"],
                                              req["usage_cache_write_tokens"], strict=True):
        r = by_index.get(int(index))
        if r is None or r.usage is None:
            assert pd.isna(prompt)
            continue
        assert (int(prompt), int(cached), int(written)) == (r.usage.prompt_tokens, r.usage.cached_tokens,
                                                            r.usage.cache_write_tokens)
    bill = session_bill(t.requests)
    assert float(req["usage_cost_usd"].sum()) == pytest.approx(bill.cost_usd, rel=1e-9)
    assert not bill.unpriced


def test_the_bill_is_a_declared_book_the_transcript_supplies():
    """The usage columns come from ``BillBook`` (declared in ``columns.BILL``), fed by the session the
    transcript was cut into: the same columns and values from the transcript or its ``RecordedSession``,
    none with ``bill=False`` and none in a sweep's totals."""
    from nanohermes_nb.engine.bill import BillBook
    from nanohermes_nb.engine.columns import BILL, request_columns
    from nanohermes_nb.engine.ledger import Replay
    from nanohermes_nb.engine.recorded import RecordedSession
    from nanohermes_nb.engine.settings import Settings

    assert tuple(c.name for c in BILL) == BILL_COLUMNS
    assert request_columns(bill=True)[-len(BILL_COLUMNS):] == list(BILL_COLUMNS)
    assert not set(BILL_COLUMNS) & set(request_columns())
    t = load(ROOT / "data" / "agentlogs" / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl")
    session = RecordedSession.of(t)
    assert len(session.reported) == len(t.requests)  # keyed by the session's index of each assistant message
    assert all(session.messages[i].get("role") == "assistant" for i in session.reported)
    direct = replay(t, profiles=())
    via_session = replay(session, profiles=())
    assert list(direct.rows) == list(via_session.rows)
    for c in BILL_COLUMNS:
        assert direct.rows[c] == via_session.rows[c]
    assert not any(c.startswith("usage_") for c in replay(t, profiles=(), bill=False).requests.columns)
    books = Replay(session, Settings(profiles=())).books(rows=False)
    assert not any(isinstance(b, BillBook) for b in books)  # a sweep's totals: nothing to bill


def test_compare_policies_shows_the_tools_own_compactions_read_from_the_log():
    """A row per tool, named after it, with the compactions its log records and the tokens it reports
    around them (not simulated); ``attrs["tool_events"]`` lists each."""
    import nanohermes_nb as nh

    folder = ROOT / "data" / "agentlogs"
    paths = sorted(folder.glob("*/*.jsonl"))
    logs = [load(p) for p in paths]
    table = nh.compare_policies([str(p) for p in paths], budget=150_000, policies=["nanohermes", "codex"],
                                profiles=(), needed_later=True)
    assert list(table.index[:2]) == ["nanohermes", "codex"]
    for agent in ("claude_code", "codex_cli"):
        mine = [t for t in logs if t.agent == agent]
        row = table.loc[agent]
        compactions = [c for t in mine for c in t.compactions]
        assert compactions, f"the vendored {agent} sample has a compaction"
        assert row["transcripts"] == len(mine) and row["events"] == len(compactions)
        assert row["requests"] == sum(len(t.requests) for t in mine)
        assert row["reported_tokens_before"] == sum(c.pre_tokens for c in compactions if c.pre_tokens is not None)
        assert row["reported_tokens_after"] == sum(c.post_tokens for c in compactions if c.post_tokens is not None)
        assert pd.isna(row["cumulative_input"])  # nothing about the tool is simulated
    events = table.attrs["tool_events"]
    assert len(events) == sum(len(t.compactions) for t in logs)
    assert {e["policy"] for e in events} == {"claude_code", "codex_cli"}
    assert table["events"].dtype == "Int64" and table.loc["nanohermes", "events"] >= 0
    plain = nh.compare_policies([t for t in logs if not t.compactions] + [list(logs[0])], budget=150_000,
                                policies=["nanohermes"], profiles=())
    assert "codex_cli" not in plain.index and "claude_code" in plain.index  # loaded logs count too
    assert plain.loc["claude_code", "events"] == 0


def test_a_transcript_without_a_bill_gets_no_usage_columns():
    plain = sorted((ROOT / "data" / "transcripts").glob("*.json"))
    plain = [p for p in plain if p.name != "manifest.json"][:1]
    ledger = replay(load_transcript(plain[0]), profiles=())
    assert not any(c.startswith("usage_") for c in ledger.requests.columns)


def test_the_cli_ledger_prints_the_bill_beside_the_cost_model(capsys):
    """Issue 33: beside a bill only the cost model's dollars, with its band; never the cost book's own count."""
    import json

    from nanohermes_nb.cli import main

    path = ROOT / "data" / "agentlogs" / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl"
    assert main(["ledger", str(path), "--pricing", "claude-opus-4.5", "--unit", "o200k"]) == 0
    out = " ".join(line.lstrip("# ") for line in capsys.readouterr().out.splitlines())
    bill = session_bill(load(path).requests)
    assert f"reported by claude_code: {bill.reported:,} of {bill.n_requests:,} requests with usage" in out
    assert f"{bill.cost_usd:.4f} USD" in out
    assert "priced by the cost model: about" in out and "free-running cost model" in out
    assert "cache-hit rate" not in out and "without compaction;" not in out  # no cost-book dollars beside a bill
    assert main(["ledger", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sum(r["usage_cost_usd"] or 0 for r in rows) == pytest.approx(bill.cost_usd, rel=1e-9)


# ---------------------------------------------------------------- the rule, by hand


def _facts(*rows):
    """RequestFacts from (time, model, visible, prompt, cached, compacted, turn_start)."""
    out = []
    for j, (time, model, visible, prompt, cached, compacted, turn) in enumerate(rows):
        usage = U(prompt_tokens=prompt, cached_tokens=cached, cache_write_tokens=0, completion_tokens=10)
        out.append(RequestFacts(j, time, model, visible, 10, compacted, usage, None, turn))
    return out


def test_the_cache_rule_reads_the_previous_prompt_within_the_ttl_and_says_why_it_misses():
    facts = _facts((0, "m", 1000, 11_000, 0, False, False),   # first: nothing cached
                   (10, "m", 2000, 12_000, 11_000, False, False),  # reads the previous prompt
                   (10 + TTL_SECONDS["anthropic"] + 1, "m", 3000, 13_000, 0, False, False),  # idle: nothing
                   (400, "n", 4000, 14_000, 13_000, False, False),  # model switch predicted, but it hit
                   (410, "n", 1500, 11_500, 9_000, True, False))  # compaction: the hidden prefix
    cal = calibrate_facts(facts, get_pricing("claude-opus-4.5"), fit=Fit(10_000, 1.0, 1.0, 2))
    r = cal.rows
    assert list(r["est_cached"]) == [0, 11_000, 0, 0, 10_000]
    assert list(r["within"]) == [True, True, True, False, False]
    assert list(r["reason"]) == ["", "", "", "model_switch", "compaction"]
    assert list(r["est_prompt"]) == [11_000, 12_000, 13_000, 14_000, 11_500]  # anchored on the previous bill


def test_openai_turn_starts_read_up_to_where_the_turn_before_began():
    facts = _facts((0, "g", 1000, 20_000, 0, False, False),
                   (5, "g", 2000, 21_000, 19_968, False, False),
                   (9, "g", 3000, 22_000, 19_968, False, True))  # new user turn: reasoning of the last dropped
    cal = calibrate_facts(facts, get_pricing("gpt-5.5"), fit=Fit(19_000, 1.0, 1.0, 2))
    assert cal.rule == CacheRule("openai", TTL_SECONDS["openai"], 128)
    assert list(cal.rows["est_cached"]) == [0, 19_968, 19_968]  # 20,000 rounded down to 128-token blocks
    assert cal.rows["within"].all()


def test_after_a_tool_compaction_the_rule_reads_the_start_it_kept():
    """After the tool's own compaction the shared prefix is the hidden one plus the visible messages the
    compaction left in place (the system message; Codex's developer and AGENTS.md messages when its
    replacement history begins with them), scaled like the rest of the estimate."""
    import dataclasses

    facts = _facts((0, "g", 1000, 20_000, 0, False, False),
                   (5, "g", 3000, 23_500, 21_888, True, False))
    facts[1] = dataclasses.replace(facts[1], kept=2_000)
    cal = calibrate_facts(facts, get_pricing("gpt-5.5"), fit=Fit(19_000, 1.5, 1.0, 2))
    assert list(cal.rows["est_cached"]) == [0, 21_888]  # 19,000 + 1.5 x 2,000, in 128-token blocks
    without = calibrate_facts([facts[0], dataclasses.replace(facts[1], kept=0)], get_pricing("gpt-5.5"),
                              fit=Fit(19_000, 1.5, 1.0, 2))
    assert list(without.rows["est_cached"]) == [0, 18_944] and not without.rows["within"].iloc[1]
    assert cal.rows["within"].all()


def test_a_compaction_keeps_the_system_message_and_the_leading_messages_left_in_place():
    from nanohermes_nb.engine.calibrate import _kept_start
    from nanohermes_nb.engine.recorded import RecordedSession

    msgs = [{"role": "system", "content": "base"}, {"role": "developer", "content": "rules"},
            {"role": "user", "content": "task"}, {"role": "assistant", "content": "done"}]
    meter = RecordedSession.of(msgs).meter("o200k")
    rules, task = meter(msgs[1]), meter(msgs[2])
    assert _kept_start([msgs[1], msgs[2], {"role": "user", "content": "summary"}], msgs, meter) == rules + task
    assert _kept_start([msgs[2], msgs[1]], msgs, meter) == 0  # reordered: nothing after the system message
    assert _kept_start([], msgs, meter) == 0


# ---------------------------------------------------------------- the model against the bill, real logs


@pytest.mark.parametrize("path", LOGS, ids=ids)
def test_each_session_is_explained_beside_its_bill(path):
    """The bill-anchored explanation (``calibrate``): every billed request has a row, the bill is the bill.

    Issue 33: the calibrated cost (``est_cost_usd``) multiplies by a cache efficiency fitted on the
    session's whole bill, so its figures are in-sample and are no longer asserted as accuracy; the
    out-of-sample figures are ``tests/test_costmodel.py``'s.
    """
    cal = calibrate(load(path))
    s = cal.summary
    r = cal.rows
    assert s["requests"] == len(r) == sum(1 for q in load(path).requests if q.usage is not None)
    assert s["cost_usd"] == pytest.approx(session_bill(load(path).requests).cost_usd, rel=1e-9)
    assert s["hidden"] >= 0 and 0.8 <= s["scale"] <= 3.0, (s["hidden"], s["scale"])  # 0: a degenerate fit
    assert s["prompt_error_median"] < 0.02  # bill-anchored prompts
