"""The bill's session totals against ccusage 18 on the same real files, token for token.

Claude Code: input, cache-creation and cache-read tokens equal ccusage's exactly; output tokens are the
last record's of each response, and ccusage's (the first record's, often a streaming placeholder) are
shown beside them and proven to be exactly the first records' sum. Codex: ccusage counts every
``token_count`` event it can parse, repeated ones twice, and skips a line that holds two records (a rollout
appended to without its line break); the bill counts each event once, that one too, and the difference is
exactly the repeats ccusage reads less the events it cannot. Dollars differ only by the price tables, those
counts, and the 1-hour cache writes (ccusage prices every write at the 5-minute price; the bill as billed).

Runs over ``data/agentlogs`` (vendored) and ``../shared/agentlogs`` when present; skipped with one line
where ``npm``/ccusage is missing (``make ccusage`` installs it).
"""

from __future__ import annotations

import pytest
from agentlog_files import agent_logs

from nanohermes_nb.engine.bill import price_for_model, request_cost, session_bill
from nanohermes_nb.engine.ccusage import (
    ccusage_binary,
    ccusage_claude_cost,
    ccusage_claude_prices,
    ccusage_codex_cost,
    ccusage_prices,
    claude_first_outputs,
    codex_token_events,
    run_ccusage,
)
from nanohermes_nb.transcripts import load_transcript

LOGS = agent_logs(("claude-code", "codex"))
pytestmark = pytest.mark.slow  # about 1 s of node per ccusage run

_RUNS: dict = {}


def _ccusage(path, agent):
    """ccusage's totals for one log, run once per test session."""
    if (path, agent) not in _RUNS:
        _RUNS[path, agent] = run_ccusage(path, agent)
    return _RUNS[path, agent]


def _load(path):
    if path not in _RUNS:
        _RUNS[path] = load_transcript(path)
    return _RUNS[path]


def _need(agent: str) -> None:
    if ccusage_binary(agent) is None:
        pytest.skip("ccusage is not installed (make ccusage needs npm); the parity tests are skipped")


@pytest.mark.parametrize("path", [p for p in LOGS if p.parent.name == "claude-code"],
                         ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_claude_code_totals_equal_ccusage(path):
    _need("claude_code")
    t = _load(path)
    # Sidechain records (isSidechain) are top-level records ccusage reads; a sub-agent Claude Code 2.1.x streams
    # inside ``progress`` records (path ``<log>#agent-<id>``) is billed too, but ccusage does not look there.
    inline = [s for s in t.sidechains if "#agent-" not in str(s.path)]
    streamed = [s for s in t.sidechains if "#agent-" in str(s.path)]
    bill = session_bill(t.requests + tuple(r for s in inline for r in s.requests))
    cc = _ccusage(path, "claude_code")
    if streamed:
        extra = session_bill(tuple(r for s in streamed for r in s.requests))
        assert extra.input_tokens + extra.cache_write_tokens + extra.cached_tokens > 0
        print(f"{path.name}: {len(streamed)} streamed sub-agents, {extra.cached_tokens:,} cache reads ccusage misses")
    assert (bill.input_tokens, bill.cache_write_tokens, bill.cached_tokens) == \
        (cc.input_tokens, cc.cache_write_tokens, cc.cached_tokens)
    last = sum(r.usage.raw.get("output_tokens", 0) for r in t.requests if r.usage is not None)
    assert bill.output_tokens == last, "output tokens are the last record's of each response"
    first = claude_first_outputs(path)
    assert cc.output_tokens == sum(first.values()), "ccusage keeps the first record of each response"
    assert bill.output_tokens >= cc.output_tokens
    print(f"{path.name}: output {bill.output_tokens:,} (last records) vs ccusage {cc.output_tokens:,} "
          f"(first records): {bill.output_tokens - cc.output_tokens:+,}")


@pytest.mark.parametrize("path", [p for p in LOGS if p.parent.name == "codex"],
                         ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_codex_totals_equal_ccusage_less_the_repeated_events(path):
    _need("codex_cli")
    t = _load(path)
    bill = session_bill(t.requests)
    cc = _ccusage(path, "codex_cli")
    events = codex_token_events(path)
    repeats = [u for u, repeat in events if repeat]

    def fields(usages):
        inp = sum(u.get("input_tokens", 0) for u in usages)
        cached = sum(u.get("cached_input_tokens", 0) for u in usages)
        return inp - cached, cached, sum(u.get("output_tokens", 0) for u in usages)

    assert fields([u for u, _ in events]) == (cc.input_tokens, cc.cached_tokens, cc.output_tokens), \
        "ccusage-codex adds every token_count event"
    extra = fields(repeats)
    unread = fields([u for u, repeat in codex_token_events(path, unread=True) if not repeat])
    copied = fields([q.usage.raw for q in t.fork.copied if q.usage] if t.fork else ())  # a fork's copied counts
    assert (bill.input_tokens + extra[0] - unread[0] + copied[0], bill.cached_tokens + extra[1] - unread[1] + copied[1],
            bill.output_tokens + extra[2] - unread[2] + copied[2]) == (cc.input_tokens, cc.cached_tokens,
                                                                       cc.output_tokens), \
        "the bill counts a repeated event once, reads the count on a line holding two records, and leaves a " \
        "fork's copy of its parent's counts to the parent"
    assert bill.cache_write_tokens == 0
    print(f"{path.name}: {len(repeats)} repeated token_count event(s): ccusage counts "
          f"{extra[0] + extra[1]:,} input tokens more than the bill; {unread[0] + unread[1]:,} on lines it cannot "
          "parse, fewer")


@pytest.mark.parametrize("path", [p for p in LOGS if p.parent.name == "claude-code"],
                         ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_claude_code_dollars_differ_only_by_price_tables_and_output(path):
    _need("claude_code")
    table = _RUNS.get("claude table") or _RUNS.setdefault("claude table", ccusage_claude_prices())
    cc = _ccusage(path, "claude_code")
    # ccusage's dollars are its price table on its own counts (first records), recomputed exactly
    assert ccusage_claude_cost(path, table) == pytest.approx(cc.cost_usd, abs=1e-9)
    t = _load(path)
    bill = session_bill(t.requests)
    # our price table on ccusage's counts, and what the last records' output adds at our output prices
    ours_on_theirs = output_part = hour_part = 0.0
    for r in t.requests:
        p = price_for_model(r.model)
        if r.usage is None or p is None:
            continue
        u = r.usage
        first = u.raw_first.get("output_tokens", u.completion_tokens)
        ours_on_theirs += p.cost(u.prompt_tokens, u.cached_tokens, first, u.cache_write_tokens)
        output_part += (u.completion_tokens - first) * p.output / 1e6
        # ccusage 18 prices every cache write at the 5-minute price; the bill prices 1-hour writes at theirs
        hour_part += u.cache_write_1h_tokens * ((p.cache_write_1h or 0.0) - (p.cache_write or 0.0)) / 1e6
    assert bill.cost_usd == pytest.approx(ours_on_theirs + output_part + hour_part, abs=1e-9)
    print(f"{path.name}: the bill {bill.cost_usd:.4f} USD vs ccusage {cc.cost_usd:.4f} USD = price tables "
          f"{ours_on_theirs - cc.cost_usd:+.4f} + output count {output_part:+.4f} + 1-hour writes {hour_part:+.4f}"
          + (f" (unpriced here: {', '.join(bill.unpriced)})" if bill.unpriced else ""))


@pytest.mark.parametrize("path", [p for p in LOGS if p.parent.name == "codex"],
                         ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_codex_dollars_differ_only_by_price_tables_and_repeats(path):
    _need("codex_cli")
    cc = _ccusage(path, "codex_cli")
    # ccusage-codex's dollars are its price table on its own per-model counts, recomputed exactly
    table = _RUNS.get("codex table") or _RUNS.setdefault("codex table", ccusage_prices("codex_cli"))
    assert ccusage_codex_cost(cc.raw, table) == pytest.approx(cc.cost_usd, abs=1e-9)
    t = _load(path)
    bill = session_bill(t.requests)
    def flat(model):  # the base prices: ccusage's per-model sums cannot tell a request over the long-prompt tier
        p = price_for_model(model)
        return None if p is None else p.replace(above_tokens=None, above=None)

    ours_on_theirs = 0.0
    for session in cc.raw["sessions"]:
        for model, n in session["models"].items():
            p = flat(model)
            if p is not None:
                ours_on_theirs += p.cost(n["inputTokens"], n["cachedInputTokens"], n["outputTokens"])
    main = flat(max(bill.models, key=bill.models.get)) if bill.models else None
    repeats = sum(main.cost(u.get("input_tokens", 0), u.get("cached_input_tokens", 0), u.get("output_tokens", 0))
                  for u, repeat in codex_token_events(path) if repeat) if main is not None else 0.0
    unread = sum(main.cost(u.get("input_tokens", 0), u.get("cached_input_tokens", 0), u.get("output_tokens", 0))
                 for u, repeat in codex_token_events(path, unread=True) if not repeat) if main is not None else 0.0
    tier = sum(request_cost(r.usage, price_for_model(r.model)) - request_cost(r.usage, flat(r.model))
               for r in t.requests if r.usage is not None and price_for_model(r.model) is not None)
    copied = [r for r in t.fork.copied if r.usage is not None and flat(r.model)] if t.fork else []
    copied_usd = sum(request_cost(r.usage, flat(r.model)) for r in copied)  # the parent's requests, billed there
    assert bill.cost_usd == pytest.approx(ours_on_theirs - repeats + unread + tier - copied_usd, abs=1e-9)
    print(f"{path.name}: the bill {bill.cost_usd:.4f} USD vs ccusage {cc.cost_usd:.4f} USD = price tables "
          f"{ours_on_theirs - cc.cost_usd:+.4f} - repeated events {repeats:.4f} + prompts over the tier {tier:.4f}")
