"""SPEC sections 1 and 2: sizes in UTF-8 bytes of compact JSON, the byte clamp, the caps."""

import dataclasses
import json

import pytest
from builders import SYSTEM, assistant, user
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes_nb import DEFAULT_BUDGETS, Budgets, clamp, context_size, message_size
from nanohermes_nb.context.budgets import caps_table
from nanohermes_nb.context.clamp import clamp_report
from nanohermes_nb.context.sizing import (
    Meter,
    count_tokens,
    measure,
    measure_each,
    request_bytes,
    serialize,
    shared_prefix_bytes,
)


def spec_size(m):
    return len(json.dumps(m, ensure_ascii=False, separators=(",", ":")).encode())


def test_message_size_is_spec_formula():
    m = {"role": "tool", "tool_call_id": "c1", "content": 'line "one"\n\tline two\\'}
    assert message_size(m) == spec_size(m)
    # hand count: quotes, newline, tab and backslash are escaped (2 bytes each)
    assert serialize(m) == '{"role":"tool","tool_call_id":"c1","content":"line \\"one\\"\\n\\tline two\\\\"}'


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.one_of(st.text(), st.none(), st.integers(),
                                                       st.lists(st.text(max_size=5), max_size=3)), max_size=4))
def test_serialize_equals_compact_json_dumps(m):
    """Messages of text fields are written (and counted) field by field; any other goes to the encoder: same text."""
    assert serialize(m) == json.dumps(m, ensure_ascii=False, separators=(",", ":"))
    assert message_size(m) == spec_size(m)  # counted field by field when every field is text


def test_chinese_is_three_bytes_a_character():
    ascii_m = {"role": "user", "content": ""}
    zh = {"role": "user", "content": "上下文窗口"}
    assert message_size(zh) - message_size(ascii_m) == 5 * 3


def test_key_order_does_not_change_size_and_nothing_is_normalised():
    a = {"role": "assistant", "content": None, "tool_calls": []}
    b = {"tool_calls": [], "content": None, "role": "assistant"}
    assert message_size(a) == message_size(b)
    # measured as given: a missing key is not the same size as a null one
    assert message_size({"role": "assistant"}) < message_size({"role": "assistant", "content": None})


def test_context_size_is_the_sum():
    msgs = [SYSTEM, user("hi"), assistant("hello")]
    assert context_size(msgs) == sum(spec_size(m) for m in msgs)


def test_measure_units():
    msgs = [user("hello world"), user("你好世界")]
    assert measure(msgs) == context_size(msgs)
    assert measure(msgs, "chars") == sum(len(serialize(m)) for m in msgs)
    # cl100k: strings "user" (1) + "hello world" (2) + 3 framing tokens
    assert measure([user("hello world")], "cl100k") == 6
    assert count_tokens("hello world") == 2
    assert measure(msgs, "o200k") > 0
    assert measure(msgs, "tokens_approx") > 0
    with pytest.raises(ValueError, match="unknown unit"):
        measure(msgs, "words")


def test_token_cache_follows_content_not_identity():
    m = user("alpha beta")
    first = measure_each([m], "cl100k")[0]
    m["content"] = "alpha beta gamma delta epsilon"
    assert measure_each([m], "cl100k")[0] > first


def test_meter_measures_each_object_once():
    calls = []
    meter = Meter("bytes")
    original = meter._sizer
    meter._sizer = lambda m: calls.append(1) or original(m)
    m = user("x" * 50)
    assert meter.total([m, m, m]) == 3 * spec_size(m)
    assert len(calls) == 1


def test_clamp_at_the_cap_and_one_past():
    assert clamp("a" * 20_000) == "a" * 20_000
    out = clamp("a" * 20_001)
    assert out == "a" * 20_000 + "\n\u2026 output truncated (1 chars omitted)"


def test_clamp_backs_off_to_a_utf8_boundary_and_counts_bytes():
    text = "中" * 10  # 30 bytes
    out = clamp(text, 20)
    # 20 falls inside the 7th character: back off to 18 bytes (6 characters)
    assert out == "中" * 6 + "\n\u2026 output truncated (12 chars omitted)"
    r = clamp_report(text, 20)
    assert (r.kept_bytes, r.backoff_bytes, r.omitted_bytes, r.omitted_chars) == (18, 2, 12, 4)
    assert clamp(text, 20, unit_label="bytes").endswith("(12 bytes omitted)")


def test_clamp_article_table():
    ascii_in = "x" * 30_000
    zh_in = "字" * 10_000  # 30,000 bytes
    assert clamp_report(ascii_in).kept_chars == 20_000
    r = clamp_report(zh_in)
    assert r.kept_chars == 6_666 and r.kept_bytes == 19_998 and r.backoff_bytes == 2


def test_clamp_zero_and_empty():
    assert clamp("", 0) == ""
    assert clamp("ab", 0) == "\n\u2026 output truncated (2 chars omitted)"


def test_request_bytes_and_prefix_reuse():
    a = [SYSTEM, user("hi")]
    b = a + [assistant("hello")]
    assert request_bytes(a) == len(json.dumps(a, ensure_ascii=False, separators=(",", ":")).encode())
    # appending keeps everything but the closing bracket
    assert shared_prefix_bytes(a, b) == request_bytes(a) - 1
    c = [SYSTEM, user("ho")]
    ja = json.dumps(a, ensure_ascii=False, separators=(",", ":"))
    jc = json.dumps(c, ensure_ascii=False, separators=(",", ":"))
    common = next(k for k in range(len(ja)) if ja[k] != jc[k])
    assert shared_prefix_bytes(a, c) == common


def test_budgets_defaults_follow_spec():
    b = DEFAULT_BUDGETS
    assert (b.max_file_bytes, b.read_max_lines, b.grep_max_file_bytes, b.grep_max_matches) == \
        (4_194_304, 2_000, 1_048_576, 200)
    assert (b.grep_max_line_chars, b.glob_max_paths, b.command_capture_bytes, b.task_capture_bytes) == \
        (240, 500, 262_144, 524_288)
    assert (b.web_max_response_bytes, b.web_max_chars, b.max_output, b.max_project_docs) == \
        (2_097_152, 20_000, 20_000, 20_000)
    assert (b.skill_max_body_chars, b.memory_inject_top_k, b.memory_inject_char_budget) == (20_000, 4, 2_400)
    assert (b.memory_max_text_chars, b.memory_max_entries, b.context_char_budget, b.keep_recent,
            b.summary_max_words) == (400, 500, 120_000, 10, 300)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.max_output = 1
    assert b.replace(max_output=5).max_output == 5 and b.max_output == 20_000
    assert b.replace(keep_recent=4).changed() == {"keep_recent": 4}
    with pytest.raises(ValueError):
        Budgets(max_output=-1)
    with pytest.raises(TypeError):
        Budgets(max_output="big")


def test_caps_table_notes_follow_the_budget():
    rows = {r.field: r for r in caps_table(DEFAULT_BUDGETS.replace(grep_max_matches=50))}
    assert rows["grep_max_matches"].note == "\u2026 stopped after 50 matches"
    assert rows["max_file_bytes"].note.endswith("(> 4194304); read it in chunks with offset/limit")
    assert len(rows) == len(dataclasses.fields(Budgets))
