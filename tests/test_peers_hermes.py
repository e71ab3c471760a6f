"""The ``hermes_agent`` policy against the installed hermes-agent 0.19.0 ``ContextCompressor.compress``.

The acceptance: over the corpus (every tool-batch point of the vendored
transcripts, every 6th point of the shared ones, three budgets each), the port
and the real compressor give identical contexts at hermes' defaults, measured
with hermes' own token estimator, its summary LLM stubbed at ``call_llm``. Set
``NANOHERMES_PEERS_FULL=1`` to run every point of every file (about 4 minutes:
hermes builds its whole summary prompt, secret redaction included, per call).
Then one small hand-built case per cause the port used to get wrong, each run
through both the real library and the port.
"""

import os
from types import SimpleNamespace

import pytest
from builders import SYSTEM, assistant, tool, tool_round, user
from corpus import EXTENDED, VENDORED, corpus_files

from nanohermes_nb.peers import hermes  # noqa: E402
from nanohermes_nb.policies import HermesAgentPolicy, apply_policy
from nanohermes_nb.policies import hermes_text as ht
from nanohermes_nb.transcripts import load_transcript

if hermes.hermes_available():  # the test install pins hermes-agent==0.19.0: its absence is a failure
    pytest.fail(hermes.hermes_available(), pytrace=False)

import agent.context_compressor as cc  # noqa: E402  (the real library, after the availability check)

from nanohermes_nb.peers import STUB_SUMMARY, batch_points, canonical, compare  # noqa: E402

SHARED_EVERY = 6
STUB_BODY = STUB_SUMMARY


def size(ctx):
    return sum(hermes.hermes_size(m) for m in ctx)


def both(ctx, budget=None, *, policy=None):
    """The real compressor and the port on one context: asserted identical, the real result returned."""
    budget = size(ctx) // 2 if budget is None else budget
    real = hermes.hermes_real(ctx, budget)
    port = hermes.hermes_port(ctx, budget, policy=policy)
    assert canonical(real) == canonical(port)
    return real


def rounds(first, last, body="x" * 300, **kw):
    return [m for k in range(first, last) for m in tool_round(k, body, **kw)]


def summary_of(msgs):
    found = [m for m in msgs if ht.is_summary_content(m.get("content"))]
    assert len(found) == 1
    return found[0]


# -- the acceptance -------------------------------------------------------------------------------


def test_port_agrees_with_hermes_on_the_corpus():
    full = os.environ.get("NANOHERMES_PEERS_FULL") == "1"
    files = corpus_files()
    assert files, "no corpus"
    vendored = [(p.name, load_transcript(p)) for p in files if p.parent == VENDORED]
    shared = [(p.name, load_transcript(p)) for p in files if p.parent != VENDORED]
    parts = [compare(hermes.hermes_peer, vendored, keep_mismatches=50),
             compare(hermes.hermes_peer, shared, keep_mismatches=50, stride=1 if full else SHARED_EVERY)]
    compared = sum(a.compared for a in parts)
    identical = sum(a.identical for a in parts)
    assert compared >= (400 if EXTENDED else 150), compared
    assert identical / compared >= 0.99, [m for a in parts for m in a.mismatches]


def test_ported_estimator_is_hermes_estimator_on_every_corpus_message():
    msgs = [m for p in corpus_files() for m in load_transcript(p)]
    msgs += [{"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {}}]},
             {"role": "assistant", "content": None, "reasoning_details": [{"x": 1}], "codex_reasoning_items": "abc"}]
    assert [ht.hermes_message_tokens(m) for m in msgs] == [cc._estimate_msg_budget_tokens(m) for m in msgs]


def test_the_texts_are_hermes_texts():
    assert ht.SUMMARY_PREFIX == cc.SUMMARY_PREFIX
    assert ht.LEGACY_SUMMARY_PREFIX == cc.LEGACY_SUMMARY_PREFIX
    assert ht.HISTORICAL_SUMMARY_PREFIXES == cc._HISTORICAL_SUMMARY_PREFIXES
    assert ht.SUMMARY_END_MARKER == cc._SUMMARY_END_MARKER
    assert (ht.MERGED_PRIOR_CONTEXT_HEADER, ht.MERGED_SUMMARY_DELIMITER) == (
        cc._MERGED_PRIOR_CONTEXT_HEADER, cc._MERGED_SUMMARY_DELIMITER)
    assert ht.PRUNED_TOOL_PLACEHOLDER == cc._PRUNED_TOOL_PLACEHOLDER
    assert ht.TASK_HEADING == cc.HISTORICAL_TASK_HEADING
    calls = [("terminal", '{"command": "' + "c" * 90 + '"}', '{"exit_code": 2}\nx'),
             ("read_file", '{"path": "a.py", "offset": 40}', "r" * 300),
             ("write_file", '{"path": "b", "content": "1\\n2"}', ""),
             ("search_files", '{"pattern": "foo"}', '"total_count": 7'), ("patch", '{"path": "p"}', "ok"),
             ("browser_click", '{"ref": "e1"}', "x"), ("web_search", '{"query": "q"}', "x"),
             ("web_extract", '{"urls": [{"href": "http://a"}, "b"]}', "x"),
             ("delegate_task", '{"goal": "' + "g" * 70 + '"}', "x"),
             ("execute_code", '{"code": "print(1)\\n" }', "1\n"), ("skill_view", '{"name": "s"}', "x"),
             ("vision_analyze", '{"question": "what"}', "x"), ("memory", '{"action": "add"}', ""), ("todo", "", ""),
             ("clarify", "", ""), ("text_to_speech", "", "x"), ("cronjob", "{}", ""),
             ("process", '{"action": "kill"}', ""),
             ("bash", '{"command": "ls", "cwd": "/tmp", "x": 1}', "abc"), ("mystery", "not json", "x" * 2000),
             ("bash", '["a list"]', "x"), (None, "", "x")]
    for name, args, content in calls:
        assert ht.tool_result_line(name, args, content) == cc._summarize_tool_result(name, args, content)
    for args in ('{"a":"' + "z" * 300 + '","b":[1,"' + "y" * 250 + '"]}', '{"a":1}', "not json"):
        assert ht.shrink_arguments(args) == cc._truncate_tool_call_args_json(args)


# -- one hand-built case per fixed cause ----------------------------------------------------------


def test_prune_protects_protect_last_n_messages_not_the_tail_floor_of_8():
    # hermes: _prune_old_tool_results(protect_tail_count=protect_last_n=20); the cap of 8
    # (_MAX_TAIL_MESSAGE_FLOOR) is only the tail cut's floor. Results 9-20 from the end survive verbatim.
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("ok")] + rounds(0, 16, "x" * 400)
    out = both(ctx, 1_200)
    tail = out[out.index(summary_of(out)) + 1:]
    assert len(tail) > 8 and tail == ctx[len(ctx) - len(tail):]  # a tail longer than 8, untouched


def test_pruned_results_get_hermes_one_liners_by_tool_name():
    # _summarize_tool_result: "ran `cmd`" only for the tool named terminal; unknown tools k=v (N chars result)
    result = '{"output": "a\\nb", "exit_code": 0}' + " " * 200
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"),
           assistant("", ["t1", "r1", "b1"], names=["terminal", "read_file", "bash"],
                     args=[{"command": "ls -la"}, {"path": "src/app.py"}, {"command": "pytest -q", "timeout": 60}]),
           tool("t1", result), tool("r1", "r" * 400), tool("b1", "b" * 500)] + rounds(0, 10)
    out = both(ctx)
    assert [m["content"] for m in out[3:6]] == [
        "[terminal] ran `ls -la` -> exit 0, 1 lines output",
        "[read_file] read src/app.py from line 1 (400 chars)",
        "[bash] command=pytest -q timeout=60 (500 chars result)"]


def test_summary_is_grounded_under_hermes_prefix_with_its_end_marker():
    # _generate_summary -> _ground_historical_task_snapshot -> _with_summary_prefix, + _SUMMARY_END_MARKER
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("ok")] + rounds(0, 6)
    ctx += [user("Now also   fix\nsrc/b.py")] + rounds(6, 10) + [user("go on")] + rounds(10, 14)
    out = both(ctx)
    snapshot = ("User asked (deterministic, from compacted turns): 'Now also fix src/b.py'\n"
                "Historical only; newer protected-tail messages after this summary win.")
    summary = summary_of(out)
    assert summary["role"] == "assistant"  # after a tool result and before the last user message
    assert summary["content"] == (f"{ht.SUMMARY_PREFIX}\n{ht.TASK_HEADING}\n{snapshot}\n\n{STUB_BODY}\n\n"
                                  f"{ht.SUMMARY_END_MARKER}")
    assert out[0]["content"] == SYSTEM["content"] + "\n\n" + ht.COMPACTION_NOTE


def test_summary_merges_into_the_first_tail_message_when_both_roles_collide():
    # head ends with a user message, tail starts with an assistant: no role alternates, so hermes merges
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("which file?"), user("src/app.py")]
    ctx += rounds(0, 12)
    out = both(ctx)
    merged = out[4]
    assert merged["role"] == "assistant" and "tool_calls" in merged
    assert merged["content"].startswith(ht.MERGED_PRIOR_CONTEXT_HEADER + "\n")
    assert ht.MERGED_SUMMARY_DELIMITER in merged["content"] and merged["content"].endswith(ht.SUMMARY_END_MARKER)
    assert "_compressed_summary" not in merged  # hermes' in-process flag, stripped on the wire


def test_unanswered_calls_are_stripped_everywhere_even_in_the_last_message():
    # _sanitize_tool_pairs: by id set, every call without a result is stripped, the last message included
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("ok")] + rounds(0, 10)
    ctx += [assistant("", ["open1"], names=["bash"], args=[{"command": "make"}])]
    out = both(ctx)
    assert out[-1] == {"role": "assistant", "content": "(tool call removed)"}


def test_pairs_are_repaired_by_id_set_not_by_position():
    # a second result for an answered id is an orphan by position; hermes keeps it (its id has a call)
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("ok")] + rounds(0, 10)
    ctx += [assistant("", ["dup"], names=["bash"], args=[{"command": "ls"}]), tool("dup", "one"), tool("dup", "two")]
    out = both(ctx)
    assert [m.get("content") for m in out[-2:]] == ["one", "two"]


def test_a_reused_call_id_labels_an_old_result_with_the_last_tool_name():
    # the quirk: call_id_to_tool keeps the last use of an id, so the read_file result is labelled bash
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"),
           assistant("", ["c1"], names=["read_file"], args=[{"path": "src/app.py"}]), tool("c1", "r" * 400)]
    ctx += rounds(0, 10) + [assistant("", ["c1"], names=["bash"], args=[{"command": "ls"}]), tool("c1", "ok")]
    out = both(ctx)
    assert out[3]["content"] == "[bash] command=ls (400 chars result)"
    fixed = hermes.hermes_port(ctx, size(ctx) // 2, policy=HermesAgentPolicy(label_by_position=True))
    assert fixed[3]["content"] == "[read_file] read src/app.py from line 1 (400 chars)"


def test_duplicate_results_get_hermes_back_reference():
    same = "identical output line\n" * 20
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("", ["d0"]), tool("d0", same)]
    ctx += rounds(0, 10) + [assistant("again", ["d1"]), tool("d1", same)]
    out = both(ctx)
    assert out[3]["content"] == "[Duplicate tool output — same content as a more recent call]"
    assert out[-1]["content"] == same


def test_long_arguments_outside_the_tail_are_reserialized_and_cut():
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"),
           assistant("", ["w1"], names=["write_file"], args=[{"path": "a.py", "content": "z" * 600}]), tool("w1", "ok")]
    ctx += rounds(0, 10)
    out = both(ctx)
    assert out[2]["tool_calls"][0]["function"]["arguments"] == (
        '{"path": "a.py", "content": "' + "z" * 200 + '...[truncated]"}')


def test_head_decays_after_a_first_compaction_and_the_summary_is_replaced():
    # _effective_protect_first_n: 0 once the compressor has compressed; the old summary is not re-summarized
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("ok")] + rounds(0, 12)
    comp = hermes.real_compressor(size(ctx) // 2)
    real1 = hermes.hermes_real(ctx, size(ctx) // 2, compressor=comp)
    port1 = hermes.hermes_port(ctx, size(ctx) // 2)
    assert canonical(real1) == canonical(port1)
    grown = real1 + [user("Next: src/b.py")] + rounds(20, 32)
    real2 = hermes.hermes_real(grown, size(grown) // 2, compressor=comp)  # the same compressor, as in a session
    port2 = hermes.hermes_port([*port1, *grown[len(real1):]], size(grown) // 2)
    assert canonical(real2) == canonical(port2)
    assert real2[0]["role"] == "system" and ht.is_summary_content(real2[1]["content"])  # head: the system only
    assert real2[0]["content"].count(ht.COMPACTION_NOTE) == 1


def test_a_failed_summary_gives_hermes_deterministic_fallback():
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("ok")] + rounds(0, 6)
    ctx += [user("Now src/b.py please")] + rounds(6, 10) + [user("go on")] + rounds(10, 14)
    budget = size(ctx) // 2

    def down(**_kw):
        raise ValueError("summary model down")

    def lab_down(_excerpt):
        raise ValueError("summary model down")

    with hermes.stub_summary_llm(down):
        real = [hermes.wire_form(m) for m in hermes.real_compressor(budget).compress([dict(m) for m in ctx])]
    done = apply_policy(HermesAgentPolicy(), ctx, budget=budget, size=hermes.hermes_size, summarizer=lab_down)
    assert canonical(real) == canonical(done.messages)
    text = summary_of(real)["content"]
    assert "Summary failure reason: summary model down." in text and "User asked: 'Now src/b.py please'" in text
    assert done.event.kind == "placeholder" and done.event.failure == "summary model down"


def test_older_images_are_replaced_and_image_results_pruned():
    pic = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    ctx = [dict(SYSTEM), {"role": "user", "content": [{"type": "text", "text": "Goal: match this"}, pic]},
           assistant("", ["s1"], names=["screenshot"]), {"role": "tool", "tool_call_id": "s1", "content": [pic]}]
    ctx += rounds(0, 10) + [{"role": "user", "content": [{"type": "text", "text": "and this"}, pic]}]
    ctx += rounds(10, 12)
    out = both(ctx)
    assert out[1]["content"][1] == {"type": "text", "text": "[Attached image — stripped after compression]"}
    assert out[3]["content"] == [{"type": "text", "text": "[screenshot removed to save context]"}]
    assert out[-5]["content"][1] == pic  # the newest image stays


def test_where_hermes_raises_the_policy_declines():
    # the head (system + 3, moved past a parallel batch's results) covers every message: compress
    # looks for a summary at messages[len(messages)] and raises IndexError
    ids = [f"c{i}" for i in range(6)]
    ctx = [dict(SYSTEM), user("go"), assistant("", ids, names=["bash"] * 6, args=[{"command": "ls"}] * 6)]
    ctx += [tool(i, "x" * 300) for i in ids]
    with pytest.raises(IndexError):
        hermes.hermes_real(ctx, 100)
    done = apply_policy(HermesAgentPolicy(), ctx, budget=100, size=hermes.hermes_size,
                        summarizer=lambda e: STUB_SUMMARY)
    assert done.event is None and done.messages == ctx


def test_short_contexts_are_left_alone_by_both():
    ctx = [dict(SYSTEM), user("Goal"), assistant("", ["a"]), tool("a", "x" * 900), assistant("done")]
    assert both(ctx, 10) == ctx


def test_the_stub_is_what_hermes_got():
    seen = []

    def spy(**kw):
        seen.append(kw)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=STUB_SUMMARY))])

    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("ok")] + rounds(0, 12)
    with hermes.stub_summary_llm(spy):
        hermes.real_compressor(size(ctx) // 2).compress([dict(m) for m in ctx])
    assert len(seen) == 1 and seen[0]["task"] == "compression"
    assert "TURNS TO SUMMARIZE" in seen[0]["messages"][0]["content"]
    assert cc.call_llm is not spy  # restored


def test_the_reused_id_quirk_occurs_in_a_real_transcript():
    # tau-bench airline idx52: the model reused one call id for a second flight search (MCO->BOS, then
    # DEN->LAS); once the first result is pruned, hermes' stand-in describes the second search
    path = next((p for p in corpus_files() if p.name == "tau_gpt4o_airline_idx52.json"), None)
    if path is None:
        pytest.skip("tau_gpt4o_airline_idx52.json is not in this corpus")
    ctx = list(batch_points(load_transcript(path)))[19]
    cid = "call_lnzJf0iU69PFY0FxSmJh6D7a"
    searches = [c["function"]["arguments"] for m in ctx for c in m.get("tool_calls") or [] if c["id"] == cid]
    assert len(searches) == 2 and '"MCO"' in searches[0] and '"DEN"' in searches[1]
    out = both(ctx, 5_412)
    results = [m["content"] for m in out if m.get("tool_call_id") == cid]
    assert results[0] == "[search_direct_flight] origin=DEN destination=LAS (945 chars result)"  # the MCO->BOS one
    assert results[1].startswith('[{"flight_number": "HAT084", "origin": "DEN", "destination": "LAS"')  # kept as is
    fixed = hermes.hermes_port(ctx, 5_412, policy=HermesAgentPolicy(label_by_position=True))
    assert "[search_direct_flight] origin=MCO destination=BOS (945 chars result)" in [m["content"] for m in fixed]


def test_abort_on_summary_failure_returns_the_pruned_list_as_hermes_does():
    # compress(): "return messages" after Phase 1 rebound messages to the pruned list
    ctx = [dict(SYSTEM), user("Goal: fix src/app.py"), assistant("", ["r1"]), tool("r1", "r" * 400)] + rounds(0, 10)
    budget = size(ctx) // 2

    def down(**_kw):
        raise ValueError("down")

    with hermes.stub_summary_llm(down):
        comp = hermes.real_compressor(budget, abort_on_summary_failure=True)
        real = [hermes.wire_form(m) for m in comp.compress([dict(m) for m in ctx])]
    assert comp._last_compress_aborted
    done = apply_policy(HermesAgentPolicy(abort_on_summary_failure=True), ctx, budget=budget,
                        size=hermes.hermes_size, summarizer=lambda e: None)
    assert canonical(real) == canonical(done.messages) and len(real) == len(ctx)
    assert real[3]["content"] == "[read_file] read src/file0.py from line 1 (400 chars)"
    assert done.event.kind == "mask" and done.event.failure
