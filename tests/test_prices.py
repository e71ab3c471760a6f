"""The model price table: LiteLLM's snapshot, the hand rows, the one look-up, and its refresh from a wheel."""

from __future__ import annotations

import dataclasses
import json
import zipfile
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from nanohermes_nb.engine.bill import request_cost, session_bill
from nanohermes_nb.engine.prices import (
    MANUAL_PRICES,
    TABLE_IN_WHEEL,
    model_key,
    model_prices,
    price_for_model,
    price_table,
    refresh,
    select_rows,
    snapshot_info,
)
from nanohermes_nb.engine.pricing import Pricing, PricingError, pricing_presets
from nanohermes_nb.transcripts import ReportedUsage as U
from nanohermes_nb.transcripts import load_transcript

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "agentlogs"
LOGS = sorted((ROOT / "data" / "agentlogs").rglob("*.jsonl")) + sorted(
    p for p in SHARED.rglob("*.json*") if p.name != "manifest.json")


def test_the_snapshot_says_where_it_came_from() -> None:
    info = snapshot_info()
    assert info["litellm_version"] == "1.110.2" and info["models_in_table"] == 4878
    assert len(info["wheel_sha256"]) == 64 and len(info["taken_on"]) == 10
    assert info["source"].startswith("https://pypi.org/project/litellm/1.110.2/")
    assert 200 <= info["models_kept"] <= 400


def test_the_models_the_issue_found_unpriced_are_priced_from_the_table() -> None:
    expected = {"claude-fable-5": (10, 1, 12.5, 20, 50), "claude-opus-4-7": (5, 0.5, 6.25, 10, 25),
                "claude-opus-4-8": (5, 0.5, 6.25, 10, 25), "claude-sonnet-5": (2, 0.2, 2.5, 4, 10)}
    for model, prices in expected.items():
        p = price_for_model(model)
        assert p is not None and (p.input, p.cached_input, p.cache_write, p.cache_write_1h, p.output) == prices
        assert "litellm/1.110.2" in p.source
    for model, (price_in, out) in {"gpt-5.4": (2.5, 15), "gpt-5.6-sol": (4, 20), "gpt-5.5": (5, 30)}.items():
        p = price_for_model(model)
        assert (p.input, p.output, p.above_tokens) == (price_in, out, 272_000) and "litellm" in p.source


def test_every_model_a_log_names_is_priced_with_a_source_and_a_day() -> None:
    models = set()
    for path in LOGS:
        t = load_transcript(path)
        models |= {q.model for q in t.requests if q.usage is not None and q.model}
    assert len(models) >= (5 if SHARED.is_dir() else 3)  # the vendored sample names three models, the corpus more
    for model in models:
        p = price_for_model(model)
        assert p is not None, model
        assert p.source.startswith("https://") and len(p.read_on) == 10, model


def test_a_preset_that_names_a_priced_model_carries_the_table_s_prices() -> None:
    table = model_prices()
    checked = 0
    for name, p in pricing_presets().items():
        row = table.get(model_key(p.model))
        if row is None:
            continue  # a preset of a hypothetical provider setting (deepseek-chat (DeepSeek-V3))
        checked += 1
        assert (p.input, p.output) == (row.input, row.output), name
        if p.caches:
            assert p.cached_input == row.cached_input, name
        if p.cache == "anthropic":
            assert p.cache_write == row.cache_write, name
    assert checked >= 20


def test_the_look_up_names_the_preset_and_prices_from_the_table() -> None:
    p = price_for_model("claude-opus-4-5-20251101")
    assert (p.name, p.min_cached_tokens, p.cache_write_1h) == ("claude-opus-4.5", 4096, 10.0)
    assert price_for_model("claude-sonnet-4.6").name == "claude-sonnet-4.6"
    assert price_for_model("anthropic/claude-fable-5").input == 10.0
    assert price_for_model("gpt-9") is None and price_for_model("") is None and price_for_model(None) is None
    assert price_for_model("gpt-5.5-turbo") is None  # never a guessed prefix
    own = {"mine": Pricing(1.0, 0.1, 2.0, name="mine", model="gpt-5.5")}
    assert price_for_model("gpt-5.5", own).name == "mine"  # a caller's presets win


def test_hand_rows_fill_only_what_the_table_lacks() -> None:
    from nanohermes_nb.engine.prices import _manual, _snapshot

    snapshot = {model_key(m) for m in _snapshot()["models"]}
    rows = _manual()
    assert rows
    for model, p, basis in rows:
        assert model_key(model) not in snapshot, model
        assert p.source.startswith("https://") and basis, model
    assert price_for_model("claude-sonnet-4-20250514").cache_write_1h == 6.0
    assert "ASSUMED" in next(b for m, _, b in rows if m == "gpt-5.3-codex-spark")


def test_one_hour_writes_and_long_prompts_are_billed_at_their_prices() -> None:
    opus = price_for_model("claude-opus-4-6")
    usage = U(prompt_tokens=10_010, cached_tokens=0, cache_write_tokens=10_000, cache_write_1h_tokens=10_000,
               completion_tokens=100)
    assert request_cost(usage, opus) == pytest.approx((10 * 5 + 10_000 * 10 + 100 * 25) / 1e6)
    five = dataclasses.replace(usage, cache_write_1h_tokens=0)
    assert request_cost(five, opus) == pytest.approx((10 * 5 + 10_000 * 6.25 + 100 * 25) / 1e6)
    gpt = price_for_model("gpt-5.4")
    small = U(prompt_tokens=272_000, cached_tokens=200_000, cache_write_tokens=0, completion_tokens=10)
    big = U(prompt_tokens=272_001, cached_tokens=200_000, cache_write_tokens=0, completion_tokens=10)
    assert request_cost(small, gpt) == pytest.approx((72_000 * 2.5 + 200_000 * 0.25 + 10 * 15) / 1e6)
    assert request_cost(big, gpt) == pytest.approx((72_001 * 5 + 200_000 * 0.5 + 10 * 22.5) / 1e6)
    parts = gpt.parts(1000, 100, 50, reasoning_tokens=20)
    assert parts["reasoning"] == pytest.approx(20 * 15 / 1e6) and parts["output"] == pytest.approx(30 * 15 / 1e6)


def test_an_unpriced_model_is_listed_never_priced_at_zero() -> None:
    req = NS(model="acme-9000", usage=U(prompt_tokens=100, cached_tokens=0, cache_write_tokens=0,
                                          cache_write_1h_tokens=0, completion_tokens=5, reasoning_tokens=0))
    bill = session_bill([req])
    assert bill.unpriced == ("acme-9000",)
    frame = price_table(["acme-9000", "gpt-5.5"])
    assert list(frame["priced"]) == ["unpriced", "gpt-5.5"]


def _wheel(tmp_path: Path, table: dict, name: str = "litellm-9.9.9-py3-none-any.whl") -> Path:
    wheel = tmp_path / name
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(TABLE_IN_WHEEL, json.dumps(table))
    return wheel


def test_refresh_reads_only_the_table_in_the_wheel_and_keeps_the_direct_chat_rows(tmp_path: Path) -> None:
    table = {"sample_spec": {"mode": "one of: chat"},
             "claude-x-1": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 1e-06,
                            "output_cost_per_token": 5e-06, "input_cost_per_token_batches": 5e-07},
             "azure/gpt-x": {"litellm_provider": "azure", "mode": "chat", "input_cost_per_token": 1e-06},
             "gemini/gemini-x": {"litellm_provider": "gemini", "mode": "chat", "input_cost_per_token": 2e-07,
                                 "input_cost_per_token_above_200k_tokens": 4e-07},
             "text-embedding-x": {"litellm_provider": "openai", "mode": "embedding", "input_cost_per_token": 1e-08}}
    kept = select_rows(table)
    assert set(kept) == {"claude-x-1", "gemini/gemini-x"}
    assert "input_cost_per_token_batches" not in kept["claude-x-1"]
    assert kept["gemini/gemini-x"]["input_cost_per_token_above_200k_tokens"] == 4e-07
    out = tmp_path / "snap.json"
    snap = refresh(_wheel(tmp_path, table), out, taken_on="2026-01-02")
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written == snap and written["litellm_version"] == "9.9.9" and written["models_in_table"] == 5
    assert written["taken_on"] == "2026-01-02" and set(written["models"]) == set(kept)


def test_refresh_refuses_what_is_not_a_litellm_wheel(tmp_path: Path) -> None:
    with pytest.raises(PricingError, match="not a litellm wheel"):
        refresh(_wheel(tmp_path, {}, "other-1.0-py3-none-any.whl"), tmp_path / "s.json")
    bad = tmp_path / "litellm-1.0-py3-none-any.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(PricingError, match="no readable"):
        refresh(bad, tmp_path / "s.json")
    assert not (tmp_path / "s.json").exists()


def test_the_manual_rows_file_is_checked() -> None:
    text = MANUAL_PRICES.read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith("model,provider,input,cached_input")
