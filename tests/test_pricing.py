"""Dollars per request: each caching rule on hand-built requests, bounds, presets, and the fast path = the plain one.

Sizes are built exactly in the ``tokens_approx`` unit (ASCII text: a message of
3.5 x t serialized characters is t tokens), so every expected figure below is
worked out by hand from the sizes written next to it.
"""

import json
from dataclasses import dataclass
from itertools import accumulate
from types import SimpleNamespace
from typing import ClassVar

import pytest
from conftest import VENDORED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import legal_histories

import nanohermes_nb as nh
from nanohermes_nb.context.sizing import Meter, count_tokens, serialize
from nanohermes_nb.engine.pricing import (
    Pricing,
    PricingError,
    get_pricing,
    pricing_presets,
    pricing_table,
)
from nanohermes_nb.policies import Policy, make_event

UNIT = "tokens_approx"


def sized(message: dict, tokens: int) -> dict:
    """``message`` with its content padded so that it is exactly ``tokens`` approx tokens (tokens even)."""
    m = dict(message, content="")
    m["content"] = "x" * (tokens * 7 // 2 - len(serialize(m)))
    assert Meter(UNIT)(m) == tokens
    return m


def call(k: int, tokens: int = 100) -> dict:
    return sized({"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{k}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}, tokens)


def result(k: int, tokens: int = 600) -> dict:
    return sized({"role": "tool", "tool_call_id": f"c{k}", "content": ""}, tokens)


def four_requests(system: int = 1200) -> list[dict]:
    """Requests send 1400, 2100, 2800, 3500 tokens (system 1200, user 200, each call 100 + result 600)."""
    return [sized({"role": "system", "content": ""}, system), sized({"role": "user", "content": ""}, 200),
            call(1), result(1), call(2), result(2), call(3), result(3),
            sized({"role": "assistant", "content": ""}, 100)]


def price(cache: str, **kw) -> Pricing:
    return Pricing(2.0, 0.5, 8.0, cache=cache, tokens=UNIT, **kw)


def rows(msgs, pricing, **kw):
    L = nh.replay(msgs, pricing=pricing, **kw)
    return L, L.requests


# --- the rules on numbers ----------------------------------------------------------------------------------------


def test_openai_rule_minimum_and_128_token_steps():
    p = get_pricing("gpt-4.1")
    assert (p.min_cached_tokens, p.step) == (1024, 128)
    assert [p.cached(n) for n in (0, 1023, 1024, 1151, 1152, 1279, 5000)] == [0, 0, 1024, 1024, 1152, 1152, 4992]


def test_deepseek_gemini_none_rules_on_numbers():
    d, g, n = price("deepseek"), price("gemini"), price("none")
    assert [d.cached(x) for x in (63, 64, 127, 128, 1400)] == [0, 64, 64, 128, 1344]
    assert [g.cached(x) for x in (2047, 2048, 2049)] == [0, 2048, 2049]
    assert n.cached(10_000) == 0


def test_anthropic_write_price_defaults_to_1_25_times_input():
    p = Pricing(3.0, 0.3, 15.0, cache="anthropic")
    assert p.cache_write == pytest.approx(3.75) and p.min_cached_tokens == 1024
    assert p.cost(2000, 1000, 100, 1000) == pytest.approx((1000 * 0.3 + 1000 * 3.75 + 100 * 15) / 1e6)


# --- the rules on a replay ---------------------------------------------------------------------------------------


def test_openai_below_minimum_then_steps_of_128():
    L, r = rows(four_requests(), price("openai"))
    assert list(r["input_tokens"]) == [1400, 2100, 2800, 3500]
    # request 1: nothing before it; 2: shares 1400 -> 11 x 128 = 1408 > 1400, so 1280; 3: 2100 -> 2048; 4: 2800 -> 2688
    assert list(r["cached_tokens"]) == [0, 1280, 2048, 2688]
    assert list(r["output_tokens"]) == [100, 100, 100, 100]
    assert r["cost_usd"][1] == pytest.approx(((2100 - 1280) * 2 + 1280 * 0.5 + 100 * 8) / 1e6)
    t = L.totals
    assert t.cached_tokens == 1280 + 2048 + 2688 and t.input_tokens == 9800
    assert t.cost_usd == pytest.approx(r["cost_usd"].sum()) == pytest.approx(t.cost_usd_no_compaction)
    assert t.cache_hit_rate == pytest.approx(6016 / 9800)


def test_openai_exact_step_boundaries():
    # a 1024-token first request: the second one caches exactly 1024; 1152 caches 1152; 1151 caches 1024
    for first, cached in ((1024, 1024), (1152, 1152), (1150, 1024), (1022, 0)):
        msgs = four_requests(system=first - 200)
        assert rows(msgs, price("openai"))[1]["cached_tokens"][1] == cached, first


def test_below_the_minimum_nothing_is_cached():
    r = rows(four_requests(), price("openai", min_cached_tokens=4096))[1]
    assert r["cached_tokens"].sum() == 0
    assert r["cost_usd"].sum() == pytest.approx((9800 * 2 + 400 * 8) / 1e6)


def test_deepseek_and_gemini_on_a_replay():
    assert list(rows(four_requests(), price("deepseek"))[1]["cached_tokens"]) == [0, 1344, 2048, 2752]
    assert list(rows(four_requests(), price("gemini"))[1]["cached_tokens"]) == [0, 0, 2100, 2800]  # min 2048
    assert rows(four_requests(), price("none"))[1]["cached_tokens"].sum() == 0


def compacted(pricing):
    """nanohermes, keep_recent=2, compacts once, after request 2 (9,800 bytes > 9,500).

    The context after it: [system, summary, call 2, result 2].
    """
    return nh.replay(four_requests(), budget=9_500, summarizer=lambda e: "S", pricing=pricing,
                     policy=nh.NanoHermesPolicy(keep_recent=2))


def test_a_compaction_breaks_the_prefix():
    L = compacted(price("openai"))
    assert L.totals.n_compactions == 1 and L.compactions[0].request == 2
    summary = Meter(UNIT)(L.compactions[0].context_after[1])
    r = L.requests
    n3 = 1200 + summary + 700
    assert list(r["input_tokens"]) == [1400, 2100, n3, n3 + 700]
    # request 3 shares only the system message (1,200 -> 1,152); request 4 shares all of request 3
    assert list(r["cached_tokens"]) == [0, 1280, 1152, n3 - n3 % 128]


def test_anthropic_write_then_read():
    r = rows(four_requests(), price("anthropic"))[1]
    # each request writes what it did not read, up to its end; the next one reads it
    assert list(r["cached_tokens"]) == [0, 1400, 2100, 2800]
    assert list(r["cache_write_tokens"]) == [1400, 700, 700, 700]
    assert r["cost_usd"][0] == pytest.approx((1400 * 2.5 + 100 * 8) / 1e6)  # 1.25 x 2.0 for every written token
    assert r["cost_usd"][1] == pytest.approx((1400 * 0.5 + 700 * 2.5 + 100 * 8) / 1e6)


def test_anthropic_after_a_compaction_reads_the_system_breakpoint():
    L = compacted(price("anthropic"))
    r = L.requests
    n3 = int(r["input_tokens"][2])
    assert list(r["cached_tokens"]) == [0, 1400, 1200, n3]
    assert list(r["cache_write_tokens"]) == [1400, 700, n3 - 1200, 700]
    # with a system message under the minimum, nothing survives the compaction
    small = nh.replay(four_requests(system=400), budget=6_000, summarizer=lambda e: "S",
                      pricing=price("anthropic"), policy=nh.NanoHermesPolicy(keep_recent=2))
    first_after = small.compactions[0].request  # the row index of the request after the event
    assert small.requests["cached_tokens"][first_after] == 0


def test_anthropic_below_minimum_writes_nothing():
    r = rows(four_requests(), price("anthropic", min_cached_tokens=4096))[1]
    assert r["cached_tokens"].sum() == 0 and r["cache_write_tokens"].sum() == 0


def test_summarizer_request_is_costed():
    L = compacted(price("openai"))
    ev = L.compactions[0]
    tin, tout = ev.cost["summarizer_input_tokens"], ev.cost["summarizer_output_tokens"]
    msgs = four_requests()
    system = {"role": "system", "content": nh.context.summarizers.summary_prompt()}
    prompt = Meter(UNIT)(system) + 3 + count_tokens("user", UNIT)
    # the excerpt: one line per removed message with text (the user message, call 1's padding, its result)
    lines = sum(count_tokens(f"{m['role']}: {m['content']}\n", UNIT) for m in msgs[1:4])
    assert tin == prompt + lines
    assert tout == count_tokens("S", UNIT) == 1
    assert ev.cost["summarizer_cost_usd"] == pytest.approx((tin * 2 + tout * 8) / 1e6)
    t = L.totals
    assert t.cost_usd == pytest.approx(L.requests["cost_usd"].sum() + ev.cost["summarizer_cost_usd"])
    assert L.requests["summarizer_cost_usd"][ev.request - 1] == ev.cost["summarizer_cost_usd"]


# --- against a plain reading of the rule, on real logs and generated histories -----------------------------------


def _lcp(a, b):
    n = 0
    for x, y in zip(a, b, strict=False):
        if not (x is y or x == y):
            break
        n += 1
    return n


def reference(ledger, pricing):
    """Each request against every earlier request, as the rules say, nothing clever."""
    meter = Meter(pricing.tokens)
    contexts = list(ledger.contexts())
    out = []
    for r, ctx in enumerate(contexts):
        tok = [0, *accumulate(meter(m) for m in ctx)]
        n = tok[-1]
        if pricing.cache == "anthropic":
            best = 0
            for c in contexts[:r]:
                shared, whole = _lcp(ctx, c), sum(meter(m) for m in c)
                if shared == len(c) and whole >= pricing.min_cached_tokens:
                    best = max(best, whole)
                if shared >= 1 and tok[1] >= pricing.min_cached_tokens:
                    best = max(best, tok[1])
            read = pricing.cached(best)
            write = n - read if n >= pricing.min_cached_tokens else 0
        else:
            shared = max((_lcp(ctx, c) for c in contexts[:r]), default=0)
            read, write = pricing.cached(tok[shared]), 0
        out.append((n, read, write, meter(ledger.messages[int(ledger.requests["index"][r])])))
    return out


def check_against_reference(msgs, pricing, **kw):
    L = nh.replay(msgs, pricing=pricing, profiles=(), **kw)
    got = list(zip(*(map(int, L.requests[c]) for c in ("input_tokens", "cached_tokens", "cache_write_tokens",
                                                         "output_tokens")), strict=True))
    assert got == reference(L, pricing)
    fast = nh.sweep([("t", msgs)], budgets=[kw.get("budget", 120_000)], policies=[kw.get("policy", "nanohermes")],
                    pricing=pricing, profiles=(), unit=kw.get("unit", "bytes"), summarizer=kw.get("summarizer"))
    row = fast.iloc[0]
    for col in ("input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens"):
        assert row[col] == L.requests[col].sum() == getattr(L.totals, col), col
    assert row["cost_usd"] == L.totals.cost_usd
    return L


RULES = ["openai", "anthropic", "gemini", "deepseek", "none"]


@pytest.mark.parametrize("policy", ["nanohermes", "langchain_trim", "observation_masking", "codex", "hermes_agent",
                                    "clear_tool_uses"])
def test_fast_path_equals_the_plain_rule_on_a_real_log(policy):
    files = sorted((p for p in VENDORED.glob("*.json") if p.name != "manifest.json"), key=lambda p: p.stat().st_size)
    msgs = nh.load_transcript(files[1])  # a small real log with compactions at this budget
    for rule in RULES:
        pricing = Pricing(1.0, 0.1, 4.0, cache=rule, min_cached_tokens=256 if rule != "none" else None,
                          step=32 if rule in ("openai", "deepseek") else None)
        check_against_reference(msgs, pricing, budget=20_000, policy=policy, summarizer=lambda e: "summary")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legal_histories(), st.integers(200, 4_000), st.sampled_from(RULES),
       st.sampled_from(["nanohermes", "observation_masking", "langchain_trim", "codex"]))
def test_cost_between_all_cached_and_uncached(msgs, budget, rule, policy):
    pricing = Pricing(2.0, 0.2, 8.0, cache=rule, tokens=UNIT, min_cached_tokens=None if rule == "none" else 16,
                      step=8 if rule in ("openai", "deepseek") else None)
    L = check_against_reference(msgs, pricing, budget=budget, unit=UNIT, policy=policy, summarizer=lambda e: "S")
    r = L.requests
    for n, c, w, o, usd in zip(r["input_tokens"], r["cached_tokens"], r["cache_write_tokens"], r["output_tokens"],
                               r["cost_usd"], strict=True):
        assert 0 <= c <= n and 0 <= w <= n - c
        low = pricing.cost(n, n, o)  # every input token read from the cache
        high = pricing.cost(n, 0, o, n if rule == "anthropic" else 0)  # none cached (Anthropic: all written)
        assert low - 1e-12 <= usd <= high + 1e-12
        if rule != "anthropic":
            assert usd <= pricing.cost(n, 0, o) + 1e-12  # never above the uncached price


@dataclass(frozen=True)
class KeepTwo(Policy):
    """Keeps the system and the first user message only (a policy that leaves a prefix of an earlier request)."""

    name: ClassVar[str] = "keep_two"

    def compact(self, context, env, size):
        new = list(context[:2])
        return new, make_event(self, "trim", context, new, env, size)


def test_a_rewritten_context_that_repeats_an_earlier_request_matches_it_further():
    # the agent re-sends call 1 and gets the same result after the trim: request 4 then shares
    # [system, user, call 1, result 1] with request 2, more than with its predecessor [system, user]
    msgs = four_requests()[:6] + [dict(call(1)), dict(result(1)), sized({"role": "assistant", "content": ""}, 100)]
    for rule in ("openai", "anthropic"):
        L = check_against_reference(msgs, price(rule, min_cached_tokens=256, step=64 if rule == "openai" else None),
                                    budget=9_000, policy=KeepTwo(), summarizer=lambda e: "S")
        assert L.totals.n_compactions == 1
        assert int(L.requests["cached_tokens"][3]) == (2048 if rule == "openai" else 2100)


def test_totals_without_rows_equal_the_rows():
    msgs = four_requests()
    for rule in RULES:
        pricing = price(rule)
        settings = nh.Settings(budget=9_000, policy=nh.NanoHermesPolicy(keep_recent=2), summarizer=lambda e: "S",
                               pricing=pricing)
        replay = nh.engine.ledger.Replay(nh.engine.recorded.RecordedSession.of(msgs), settings)
        assert replay.totals() == replay.ledger().totals


def test_sweep_rows_equal_replay_totals_for_the_cost_columns(corpus):
    paths = corpus.files[:2]
    frame = nh.sweep([str(p) for p in paths], budgets=[20_000, 60_000], keep_recent=[4, 10], pricing="gpt-4.1",
                     needed_later=True, retention=True)
    assert {"cost_usd", "cost_usd_no_compaction", "cache_hit_rate", "needed_later", "pricing"} <= set(frame.columns)
    for _, row in frame.iterrows():
        path = next(p for p in paths if p.name == row["transcript"])
        L = nh.replay(nh.load_transcript(path), budget=int(row["budget"]), pricing="gpt-4.1", needed_later=True,
                      policy=nh.NanoHermesPolicy(keep_recent=int(row["keep_recent"])))
        for key, value in L.totals.as_dict().items():
            assert row[key] == value or (value is None and row[key] != row[key]), key


def test_compare_policies_in_dollars(corpus):
    table = nh.compare_policies([str(p) for p in corpus.files[:2]], budget=30_000, pricing="claude-sonnet-4.5",
                                policies=["nanohermes", "observation_masking"], needed_later=True)
    assert {"cost_usd", "cost_usd_no_compaction", "cache_hit_rate", "needed_later"} <= set(table.columns)
    assert (table["cost_usd"] > 0).all() and table.attrs["pricing"] == "claude-sonnet-4.5"


def test_replay_without_pricing_has_no_cost_columns():
    L = nh.replay(four_requests())
    assert "cost_usd" not in L.requests.columns and L.totals.cost_usd is None
    assert "cost_usd" not in L.totals.as_dict()


# --- presets -----------------------------------------------------------------------------------------------------


def test_presets_load_and_carry_a_source_and_a_date():
    presets = pricing_presets()
    rules = {p.cache for p in presets.values()}
    assert {"openai", "anthropic", "gemini", "deepseek"} <= rules
    table = pricing_table()
    assert list(table["name"]) == list(presets)
    for _, row in table.iterrows():
        assert row["price_source"].startswith("https://") and row["cache_source"].startswith("https://"), row["name"]
        assert len(row["read_on"]) == 10 and row["read_on"][4] == "-", row["name"]
        assert row["stored_page_date"], row["name"]
    for p in presets.values():
        assert p.input > 0 and (p.cached_input < p.input or p.cache == "none") and p.output > p.input
        assert p.source and p.read_on
        if p.cache == "anthropic":
            assert p.cache_write == pytest.approx(1.25 * p.input) and p.cached_input == pytest.approx(0.1 * p.input)


def test_user_values_win():
    p = get_pricing("gpt-4.1", input=1.0, min_cached_tokens=2048)
    assert (p.input, p.cached_input, p.min_cached_tokens, p.step, p.name) == (1.0, 0.5, 2048, 128, "gpt-4.1")
    q = get_pricing("gpt-4.1", cache="deepseek")  # a new rule brings its own minimum and step
    assert (q.min_cached_tokens, q.step) == (64, 64)


def test_bad_pricing_is_a_one_line_error(tmp_path):
    with pytest.raises(PricingError, match="unknown pricing preset 'nope'"):
        get_pricing("nope")
    with pytest.raises(PricingError, match="unknown cache rule"):
        Pricing(1, 0.1, 2, cache="lru")
    with pytest.raises(PricingError, match="input must be a price from 0 to"):
        Pricing(-1, 0.1, 2)
    with pytest.raises(PricingError, match="step must be an integer >= 1"):
        Pricing(1, 0.1, 2, step=0)
    bad = tmp_path / "p.csv"
    bad.write_text("name,input,cached_input,output,cache\nx,1,0.1,2,openai\ny,1,abc,2,openai\n", encoding="utf-8")
    with pytest.raises(PricingError) as err:
        pricing_presets(bad)
    assert str(err.value) == f"{bad}: line 3, column 'cached_input': not a number: 'abc'"
    bad.write_text("name,input\nx,1\n", encoding="utf-8")
    with pytest.raises(PricingError, match="line 1: missing column"):
        pricing_presets(bad)
    with pytest.raises(PricingError, match="cannot read"):
        pricing_presets(tmp_path / "missing.csv")


def test_cli_ledger_and_sweep_take_a_pricing(capsys, tmp_path):
    from nanohermes_nb.cli import main

    path = tmp_path / "s.json"
    path.write_text(json.dumps(four_requests()), encoding="utf-8")
    assert main(["ledger", str(path), "--pricing", "gpt-4.1"]) == 0
    out = capsys.readouterr().out
    L = nh.replay(four_requests(), pricing="gpt-4.1")
    assert f"gpt-4.1: {L.totals.cost_usd:.4f} USD" in out
    assert main(["sweep", str(path), "--pricing", "claude-sonnet-4.5", "--no-progress", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["pricing"] == "claude-sonnet-4.5" and rows[0]["cost_usd"] > 0
    assert main(["ledger", str(path), "--pricing", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nanohermes-nb: error: unknown pricing preset 'nope'") and err.count("\n") == 1


def test_a_priced_sweep_of_measured_sessions_on_a_process_pool_equals_in_process():
    from concurrent.futures import ProcessPoolExecutor

    sessions = {"four": nh.engine.recorded.RecordedSession.of(four_requests()),
                "log": nh.engine.recorded.RecordedSession.of(
                    nh.load_transcript(VENDORED / "sweagent_demo_marshmallow-1867_fc.json"))}
    grid = dict(budgets=[9_500, 30_000], pricing=["gpt-4.1", "claude-sonnet-4.5"], needed_later=True)
    here = nh.sweep(sessions, **grid)
    assert len(here) == 2 * 2 * 2 and set(here["pricing"]) == {"gpt-4.1", "claude-sonnet-4.5"}
    with ProcessPoolExecutor(2) as pool:
        assert nh.sweep(sessions, executor=pool, **grid).equals(here)


_PIECES = st.sampled_from(["\n", "#", "~", "0", "\n\n", "\r\n", " ", "  ", "/", "./", "]", "[", "-", "word", "Word",
                           "'s", "12345", "東京", "é", "\t", "😀", ":", "x/y", " \n", "\u00a0", "\x1c", "'"])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=30).map("".join), st.sampled_from(["o200k", "cl100k"]))
def test_a_text_is_counted_as_the_sum_of_its_segments(text, unit):
    """The cost book counts a new text segment by segment: the segments' counts add up to the whole's."""
    from nanohermes_nb.context.compaction import SUMMARY_HEADER
    from nanohermes_nb.engine.segments import segments

    for whole in (text, f"{SUMMARY_HEADER}\n{text}", f"system: {SUMMARY_HEADER}\n{text}\n", f"x\n{text}\nA{text}"):
        parts = segments(whole)
        assert "".join(parts) == whole
        assert sum(count_tokens(p, unit) for p in parts) == count_tokens(whole, unit), parts


_SPACE = st.sampled_from(["", " ", "\n", "\n\n ", "\t", "\u3000", "\r\n"])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(_SPACE, st.lists(_PIECES, max_size=30).map("".join), _SPACE), st.sampled_from(["o200k", "cl100k"]),
       st.sampled_from(["user", "tool", "assistant"]), st.sampled_from([{}, {"tool_call_id": "call_9x"}]))
def test_an_excerpt_line_is_counted_from_the_meters_count(content, unit, role, extra):
    """A transcript message's excerpt line counted from the meter's count of it equals the line counted whole."""
    from nanohermes_nb.context import sizing
    from nanohermes_nb.context.compaction import build_excerpt
    from nanohermes_nb.engine import costbook
    from nanohermes_nb.engine.fast import SessionCache

    message = {"role": role, "content": "".join(content), **extra}
    book = costbook.CostBook.__new__(costbook.CostBook)
    book.unit, book.excerpt_tool_calls, book.meter = unit, False, sizing.Meter(unit)
    book.session = SimpleNamespace(cache=SessionCache([], []))
    n = book._excerpt_from_meter(message)
    if n is not None:
        assert n == count_tokens(build_excerpt([message]), unit), message


# --- the cost book's index of stretch ends against the plain walk ---------------------------------------------


# small, so ends share long prefixes; equal values are distinct objects; plain {role, content} messages go
# through the index of ends that share one message with x, lists through the walk
_VALUES = st.one_of(st.integers(0, 2).map(lambda v: [v]),
                    st.integers(0, 2).map(lambda v: {"role": "user", "content": str(v)}))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcript=st.lists(_VALUES, min_size=1, max_size=12), data=st.data())
def test_lcps_index_matches_plain_walk(transcript, data):
    """``CostBook._lcps`` (kept common prefixes and branch messages) equals comparing ``x`` with every end."""
    from nanohermes_nb.engine import costbook as cb
    from nanohermes_nb.engine.stretchends import StretchEnd, shared_prefix

    book = cb.CostBook.__new__(cb.CostBook)
    book.session = SimpleNamespace(messages=transcript)
    book.ends, book.gaps, book.branch, book.needs, book.odd, book.ones = [], [], [], [], [], {}
    n = len(transcript)
    for _ in range(data.draw(st.integers(1, 8))):
        head = tuple(data.draw(st.lists(_VALUES, max_size=3)))
        start = data.draw(st.integers(0, n))
        e = StretchEnd(head, start, data.draw(st.integers(start, n)), 0, 0, 0, 0)
        gap = None  # a gap known at the event (as ``pending_gap``) or left to be found
        if book.ends and data.draw(st.booleans()):
            gap = shared_prefix(book.ends[-1].view(transcript), e.view(transcript))
        book._add_end(e, gap)
        x = data.draw(st.lists(st.sampled_from([*transcript, *head, [3]]), max_size=10))
        plain = [shared_prefix(x, end.view(transcript)) for end in book.ends]
        assert book._lcps(x) == plain
