"""SPEC sections 3 and 4: one test per rule of compact, find_cut and build_excerpt."""

import copy

import pytest
from builders import SYSTEM, assistant, session, tool, tool_round, user

from nanohermes_nb import (
    ExtractiveSummarizer,
    build_excerpt,
    check_history,
    compact,
    context_size,
    find_cut,
)
from nanohermes_nb.context.compaction import (
    PLACEHOLDER_NOTE,
    SUMMARY_HEADER,
    find_cut_backward,
    naive_cut,
)


class Recorder:
    """A summarizer that records its excerpts and answers with a fixed text."""

    def __init__(self, reply="SUMMARY"):
        self.reply = reply
        self.excerpts = []

    def __call__(self, excerpt):
        self.excerpts.append(excerpt)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def test_nothing_happens_at_or_under_the_budget():
    msgs = session(8)
    size = context_size(msgs)
    r = compact(msgs, budget=size, summarizer=Recorder())
    assert not r.compacted and r.cut is None and r.note is None and r.messages == msgs
    r = compact(msgs, budget=size - 1, summarizer=Recorder())
    assert r.compacted


def test_exactly_keep_recent_plus_one_messages_never_compacts_unless_forced():
    msgs = [SYSTEM, user("a" * 5000)] + [user("b" * 5000) for _ in range(9)]
    assert len(msgs) == 11
    rec = Recorder()
    r = compact(msgs, budget=100, keep_recent=10, summarizer=rec)
    assert not r.compacted and rec.excerpts == []
    # with force the count test is skipped, but the cut lands on 1: still nothing
    r = compact(msgs, budget=100, keep_recent=10, summarizer=rec, force=True)
    assert not r.compacted and "lands on 1" in r.reason
    msgs.append(user("c"))
    r = compact(msgs, budget=100, keep_recent=10, summarizer=rec)
    assert r.compacted and r.cut == 2 and len(r.dropped) == 1


def test_force_compacts_under_the_budget():
    msgs = session(8)
    r = compact(msgs, force=True, summarizer=Recorder())
    assert r.compacted and r.forced and r.size_before < 120_000


def test_cut_moves_forward_past_tool_results():
    msgs = session(8, n_calls=3)  # rounds of assistant + 3 tools
    start = naive_cut(msgs, 10)
    assert msgs[start]["role"] == "tool"
    cut = find_cut(msgs, 10)
    assert msgs[cut]["role"] != "tool" and all(m["role"] == "tool" for m in msgs[start:cut])
    r = compact(msgs, force=True, summarizer=Recorder())
    assert r.cut == cut and r.naive_cut == start
    assert r.messages[2:] == msgs[cut:]
    assert check_history(r.messages) == []


def test_find_cut_is_the_start_before_the_le_one_test():
    msgs = [SYSTEM, user(), assistant("a")]
    assert find_cut(msgs, 10) == 0
    assert find_cut(msgs, 2) == 1
    assert find_cut([SYSTEM, tool("x"), tool("y"), user()], 3) == 3


def test_replaced_span_is_one_system_message_at_index_one():
    msgs = session(10)
    rec = Recorder("the gist")
    r = compact(msgs, budget=1000, summarizer=rec)
    assert r.messages[0] is msgs[0]
    assert r.messages[1] == {"role": "system", "content": SUMMARY_HEADER + "\nthe gist"}
    assert r.dropped == msgs[1:r.cut]
    assert len(r.messages) == len(msgs) - len(r.dropped) + 1
    assert r.note == SUMMARY_HEADER + "\nthe gist"
    assert r.size_after == context_size(r.messages)


@pytest.mark.parametrize("reply, reason", [
    (None, "returned nothing"),
    ("", "empty reply"),
    ("   \n ", "empty reply"),
    (RuntimeError("boom"), "RuntimeError: boom"),
])
def test_summarizer_failure_gives_the_placeholder(reply, reason):
    msgs = session(10)
    r = compact(msgs, budget=1000, summarizer=Recorder(reply))
    assert r.compacted and r.note == PLACEHOLDER_NOTE
    assert r.messages[1] == {"role": "system", "content": PLACEHOLDER_NOTE}
    assert reason in r.failure and r.summarizer_called


def test_empty_excerpt_means_no_summarizer_call():
    msgs = [SYSTEM, assistant("", ["c1"]), tool("c1", ""), assistant("", ["c2"]), tool("c2", "  ")]
    msgs += [user("q")] * 10
    rec = Recorder()
    r = compact(msgs, force=True, summarizer=rec)
    assert r.compacted and rec.excerpts == [] and r.note == PLACEHOLDER_NOTE and not r.summarizer_called


def test_summary_reply_is_trimmed():
    r = compact(session(10), budget=1000, summarizer=Recorder("  gist \n"))
    assert r.note == SUMMARY_HEADER + "\ngist"


def test_tail_of_twelve_parallel_tool_results_runs_the_cut_to_the_end():
    msgs = [SYSTEM, user("go"), assistant("reading", [f"c{k}" for k in range(12)])]
    msgs += [tool(f"c{k}", "z" * 2000) for k in range(12)]
    r = compact(msgs, budget=1000, keep_recent=10, summarizer=Recorder())
    assert r.cut == len(msgs)
    assert r.messages == [msgs[0], {"role": "system", "content": SUMMARY_HEADER + "\nSUMMARY"}]
    assert check_history(r.messages) == []


def test_backward_cut_keeps_the_owning_assistant():
    msgs = [SYSTEM, user("go"), assistant("reading", [f"c{k}" for k in range(12)])]
    msgs += [tool(f"c{k}", "z" * 2000) for k in range(12)]
    assert find_cut_backward(msgs, 10) == 2
    r = compact(msgs, budget=1000, cut="backward", summarizer=Recorder())
    assert r.cut == 2 and r.messages[2:] == msgs[2:] and check_history(r.messages) == []


def test_recent_messages_alone_over_budget_compaction_is_ineffective():
    msgs = [SYSTEM, user("start")] + [user("y" * 20_000) for _ in range(12)]
    r = compact(msgs, summarizer=Recorder())
    assert r.compacted and r.size_after > 120_000
    again = compact(r.messages, summarizer=Recorder())
    assert again.compacted  # nothing stops the next compaction


def test_rolling_second_compaction_summarizes_the_first_summary():
    msgs = session(10, body="q" * 3000)
    rec = Recorder("FIRST")
    first = compact(msgs, budget=20_000, summarizer=rec)
    grown = first.messages + tool_round(99, "w" * 5000) + tool_round(100, "w" * 5000)
    second = compact(grown, budget=20_000, summarizer=Recorder("SECOND"))
    assert second.compacted and first.messages[1] in second.dropped
    excerpt = build_excerpt(second.dropped)
    assert excerpt.startswith("system: " + SUMMARY_HEADER + "\nFIRST\n")
    assert second.messages[1]["content"] == SUMMARY_HEADER + "\nSECOND"


def test_excerpt_format():
    msgs = [
        user("  fix it  "),
        assistant("", ["c1"]),
        tool("c1", "1\u2192import os"),
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "data:"}},
                                     {"type": "text", "text": "here"}]},
        {"content": "no role"},
        assistant("done"),
    ]
    assert build_excerpt(msgs) == "user: fix it\ntool: 1\u2192import os\nuser: look here\n?: no role\nassistant: done\n"
    with_calls = build_excerpt(msgs, tool_calls=True)
    assert 'assistant: read_file({"path": "src/file0.py"})\n' in with_calls


def test_excerpt_trims_like_rust_not_like_python():
    # U+001F is whitespace to Python's str.strip but not to Rust's trim
    assert build_excerpt([user("\x1fhi\x1f")]) == "user: \x1fhi\x1f\n"
    assert build_excerpt([user("\u3000hi\u00a0")]) == "user: hi\n"


def test_multimodal_content_lists():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 5000}}
    m = {"role": "user", "content": [image]}
    msgs = [SYSTEM, m] + [user("u")] * 11
    rec = Recorder()
    r = compact(msgs, force=True, summarizer=rec)
    assert r.compacted and m in r.dropped
    assert rec.excerpts == ["user: u\n"]  # the image part carries no text
    only_image = [SYSTEM, m] + [user("u")] * 10
    rec2 = Recorder()
    r2 = compact(only_image, force=True, keep_recent=10, summarizer=rec2)
    assert r2.dropped == [m] and rec2.excerpts == [] and r2.note == PLACEHOLDER_NOTE


def test_chinese_content_triggers_on_bytes():
    msgs = [SYSTEM, user("开始")] + [user("中" * 4_000) for _ in range(12)]
    chars = sum(len(m["content"]) for m in msgs)
    assert chars < 120_000 < context_size(msgs)
    assert compact(msgs, summarizer=Recorder()).compacted


def test_input_is_never_mutated():
    msgs = session(12, n_calls=2)
    before = copy.deepcopy(msgs)
    r = compact(msgs, budget=500, summarizer=Recorder())
    assert msgs == before and r.messages is not msgs


def test_summary_role_option():
    r = compact(session(10), budget=1000, summary_role="user", summarizer=Recorder())
    assert r.messages[1]["role"] == "user"
    assert check_history(r.messages, "gemini") == [] or all(p.index != 1 for p in check_history(r.messages, "gemini"))
    faithful = compact(session(10), budget=1000, summarizer=Recorder())
    assert [p.code for p in check_history(faithful.messages, "gemini")] == ["system_not_first"]
    with pytest.raises(ValueError):
        compact(session(10), summary_role="robot")


def test_excerpt_tool_calls_option_reaches_the_summarizer():
    rec = Recorder()
    compact(session(10), budget=1000, summarizer=rec, excerpt_tool_calls=True)
    assert "read_file(" in rec.excerpts[0]
    rec2 = Recorder()
    compact(session(10), budget=1000, summarizer=rec2)
    assert "read_file(" not in rec2.excerpts[0]


def test_default_summarizer_is_the_offline_extractive_one():
    msgs = session(12)
    r = compact(msgs, budget=1000)
    assert r.note.startswith(SUMMARY_HEADER + "\nGoal: Goal: rename the helper in src/app.py")
    assert r.note == compact(msgs, budget=1000, summarizer=ExtractiveSummarizer()).note


def test_describe_and_rows():
    msgs = session(6, n_calls=3)
    r = compact(msgs, force=True, summarizer=Recorder())
    rows = r.rows()
    assert len(rows) == len(msgs) + 1
    statuses = [row["status"] for row in rows]
    assert statuses.count("summary") == 1 and statuses.count("dropped") == len(r.dropped)
    assert [row["marker"] for row in rows if row["marker"]] == ["naive cut", "cut"]
    assert "dropped" in r.describe() and "<table" in r._repr_html_()


def test_verify_compaction_checklist():
    from nanohermes_nb import verify_compaction

    r = compact(session(12, body="x" * 2000), budget=5_000,
                summarizer=Recorder("Goal: rename the helper in src/app.py and keep tests green."))
    checks = {c.check: c for c in verify_compaction(r)}
    assert all(checks[k].result for k in ("history legality", "cut legality", "summary present",
                                          "recent messages intact", "something recent kept", "goal known (proxy)"))
    assert not checks["budget effective"].result or r.size_after < 5_000
    tail = [SYSTEM, user("go"), assistant("reading", [f"c{k}" for k in range(12)])] + \
        [tool(f"c{k}", "z" * 2000) for k in range(12)]
    bad = {c.check: c.result for c in verify_compaction(compact(tail, force=True, summarizer=Recorder()))}
    assert bad["something recent kept"] is False and bad["history legality"] is True
    assert verify_compaction(compact(session(2)))[0].check == "compacted"
