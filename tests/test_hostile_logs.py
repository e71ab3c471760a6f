"""Hostile input, round four (issues 33 and 34): agent logs, their discovery, their usage numbers and prices.

Each case is made at test time in the test's own temporary folder (FIFOs with ``os.mkfifo``, never the
machine's), from the vendored sample of real logs. What must hold: discovery only looks at what it should
not open; a log's sound part is read past damage, and the damage is named in one line with its place; a
number that cannot be a token count or a price never reaches a bill; a pricing file that does not parse
is a ``PricingError`` naming the file and the line; the CLI exits 0 (something usable) or 2 (nothing
usable), never 70, never a hang.
"""

from __future__ import annotations

import gc
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import hostile
import pytest

from nanohermes_nb.engine.bill import price_for_model, session_bill
from nanohermes_nb.engine.pricing import Pricing, PricingError, pricing_presets
from nanohermes_nb.transcripts import load_transcript
from nanohermes_nb.transcripts.agentlogs import find_sessions

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "data" / "agentlogs" / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl"
CODEX = ROOT / "data" / "agentlogs" / "codex" / "agentv_gpt53-codex-spark_2compactions_019f03e0.cut497.jsonl"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _cli(tmp_path: Path, *argv: str, timeout: float = 60.0) -> dict:
    """``nanohermes-nb ARGV`` in a process of its own (``hostile.py``'s runner), killed after ``timeout``."""
    calls, results = tmp_path / "calls.json", tmp_path / "results.json"
    calls.write_text(json.dumps([list(argv)]), encoding="utf-8")
    subprocess.run([sys.executable, str(Path(hostile.__file__)), str(calls), str(results), str(timeout)],
                   check=True, timeout=timeout + 60)
    return json.loads(results.read_text(encoding="utf-8"))[0]


# ---------------------------------------------------------------- discovery looks, never waits


def test_sessions_never_opens_a_fifo_named_like_a_log(tmp_path: Path) -> None:
    projects = tmp_path / "home" / ".claude" / "projects" / "p"
    projects.mkdir(parents=True)
    (projects / "real.jsonl").write_bytes(SMALL.read_bytes())
    os.mkfifo(projects / "pipe.jsonl")
    found = find_sessions([projects])
    assert [Path(s.path).name for s in found] == ["real.jsonl"]
    out = _cli(tmp_path, "sessions", str(projects.parent))
    assert not out["hung"] and out["code"] == 0, out
    assert "real.jsonl" in out["stdout"] and "pipe.jsonl" not in out["stdout"]


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", 1e300, -6.3e10])
def test_a_time_no_column_can_show_is_no_time(tmp_path: Path, stamp) -> None:
    records = _lines(SMALL)
    for r in records:
        if "timestamp" in r:
            r["timestamp"] = stamp
    path = _write(tmp_path / "times.jsonl", records)
    t = load_transcript(path)
    assert t.requests and all(q.time is None for q in t.requests)
    out = _cli(tmp_path, "sessions", str(path))
    assert out["code"] == 0 and "times.jsonl" in out["stdout"], out


def test_a_gemini_stamp_of_1e19_is_no_time(tmp_path: Path) -> None:
    chat = {"sessionId": "s", "projectHash": "h", "messages": [
        {"id": "1", "timestamp": 1e19, "type": "user", "content": "hi"},
        {"id": "2", "timestamp": 1e19, "type": "gemini", "content": "hello", "model": "gemini-2.5-flash",
         "tokens": {"input": 10, "output": 2, "cached": 0, "thoughts": 0, "tool": 0, "total": 12}}]}
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(chat), encoding="utf-8")
    assert [q.time for q in load_transcript(path).requests] == [None]
    out = _cli(tmp_path, "sessions", str(path))
    assert out["code"] == 0 and "gemini_cli" in out["stdout"], out


# ---------------------------------------------------------------- a sound log read past its damage


def test_a_tail_of_nul_bytes_leaves_the_sound_requests(tmp_path: Path) -> None:
    path = tmp_path / "crashed.jsonl"
    path.write_bytes(SMALL.read_bytes() + b"\x00" * 4096)
    sound, crashed = load_transcript(SMALL), load_transcript(path)
    assert len(crashed.requests) == len(sound.requests) >= 5
    assert [q.usage for q in crashed.requests] == [q.usage for q in sound.requests]
    assert len(crashed.skipped) == 1 and "4,096 NUL bytes" in crashed.skipped[0]
    out = _cli(tmp_path, "ledger", str(path))
    assert out["code"] == 0, out
    assert out["stderr"].count("\n") == 1 and "NUL bytes" in out["stderr"]


def test_a_file_of_nul_bytes_only_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "zeros.jsonl"
    path.write_bytes(b"\x00" * 4096)
    out = _cli(tmp_path, "ledger", str(path))
    assert out["code"] == 2 and "NUL byte" in out["stderr"], out


# ---------------------------------------------------------------- numbers that cannot be token counts


@pytest.mark.parametrize(("value", "kind"), [(-10**12, "is negative"), (10**18, "is over 10^12"),
                                             ("12", "is a string"), (1.5, "is a fraction"), (True, "is a boolean")])
def test_a_usage_count_that_is_no_count_never_reaches_the_bill(tmp_path: Path, value, kind) -> None:
    records = _lines(SMALL)
    line = next(k for k, r in enumerate(records) if r.get("type") == "assistant" and "usage" in r["message"])
    target = records[line]["message"]["id"]
    for r in records:  # every record of that response says the same (Claude Code repeats the usage)
        if r.get("type") == "assistant" and r["message"].get("id") == target:
            r["message"]["usage"]["input_tokens"] = value
    path = _write(tmp_path / "bad-usage.jsonl", records)
    t = load_transcript(path)
    bad = [q for q in t.requests if q.id == target]
    assert bad and bad[0].usage is None
    assert sum(q.usage is None for q in t.requests) == 1
    assert len(t.skipped) == 1 and t.skipped[0].startswith(f"line {line + 1}") and kind in t.skipped[0]
    bill = session_bill(t.requests)
    assert bill.cost_usd >= 0 and bill.input_tokens >= 0 and bill.reported == len(t.requests) - 1
    out = _cli(tmp_path, "ledger", str(path))
    assert out["code"] == 0 and "not a token count" in out["stderr"] and "Traceback" not in out["stderr"], out


def test_a_codex_count_of_10_to_the_19_is_refused_with_its_line(tmp_path: Path) -> None:
    records = _lines(CODEX)
    k = next(k for k, r in enumerate(records) if r.get("type") == "event_msg"
             and r["payload"].get("type") == "token_count" and (r["payload"].get("info") or {}).get("last_token_usage",
                                                                                                  {}).get("input_tokens"))
    records[k]["payload"]["info"]["last_token_usage"]["input_tokens"] = 10**19
    t = load_transcript(_write(tmp_path / "codex.jsonl", records))
    assert any(s.startswith(f"line {k + 1}:") and "over 10^12" in s for s in t.skipped)
    assert all(q.usage is None or q.usage.prompt_tokens <= 10**12 for q in t.requests)
    assert math.isfinite(session_bill(t.requests).cost_usd)


def test_a_price_of_1e308_is_refused_and_a_cost_stays_finite() -> None:
    with pytest.raises(PricingError, match="input must be a price from 0 to"):
        Pricing(1e308, 0.1, 1.0)
    dearest = Pricing(1e6, 1e6, 1e6, cache="anthropic", cache_write=1e6, cache_write_1h=1e6)
    assert math.isfinite(dearest.cost(10**12, 0, 10**12, 10**12))


# ---------------------------------------------------------------- pricing files that do not parse


def _pricing_file(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text("name,input,cached_input,output,cache,notes\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_short_pricing_row_names_its_line(tmp_path: Path) -> None:
    path = _pricing_file(tmp_path, ["a,1,0.1,2,openai,ok", "b,1,0.1"])
    with pytest.raises(PricingError) as err:
        pricing_presets(path)
    assert str(err.value) == f"{path}: line 3: 3 cells where the header has 6"


def test_a_long_pricing_row_names_its_line(tmp_path: Path) -> None:
    path = _pricing_file(tmp_path, ["a,1,0.1,2,openai,ok,extra,more"])
    with pytest.raises(PricingError, match=r"line 2: 8 cells where the header has 6"):
        pricing_presets(path)


def test_a_huge_notes_cell_is_a_pricing_error_naming_its_line(tmp_path: Path) -> None:
    path = _pricing_file(tmp_path, ["a,1,0.1,2,openai,ok", 'b,1,0.1,2,openai,"' + "x" * 200_000 + '"'])
    with pytest.raises(PricingError) as err:
        pricing_presets(path)
    assert str(err.value).startswith(f"{path}: line 3: not a CSV row")
    assert len(str(err.value)) < 300


# ---------------------------------------------------------------- the bill's look-up, one mapping at a time


def test_price_for_model_never_answers_for_a_mapping_that_is_gone() -> None:
    one = Pricing(1.0, 0.1, 2.0, name="one", model="model-one")
    two = Pricing(3.0, 0.3, 6.0, name="two", model="model-two")
    first = {"one": one}
    assert price_for_model("model-one", first) is one
    gone = id(first)
    del first
    gc.collect()
    reused = None
    for _ in range(2000):  # CPython hands a freed dict's memory to the next dict of its size
        candidate = {"two": two}
        if id(candidate) == gone:
            reused = candidate
            break
    mapping = reused if reused is not None else {"two": two}
    assert price_for_model("model-two", mapping) is two
    assert price_for_model("model-one", mapping) is None
