"""Context-quality measures (part five): each on the recorded sessions, and on small cases that pin the rule."""

import copy
import json

import pytest
from conftest import ROOT

from nanohermes_nb.context.compaction import find_cut
from nanohermes_nb.context.history import check_history
from nanohermes_nb.context.quality import (
    NOTES_CHAR_BUDGET,
    dead_weight,
    isolate,
    last_exit_code,
    notes_block,
    poisoned_lines,
    relevant_share,
    stale_reads,
    trim_turns,
    unused_tools,
    writes_file,
)
from nanohermes_nb.engine.ledger import replay

SESSIONS = {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((ROOT / "data" / "sessions").glob("*.json"))}
TWELVE = SESSIONS["twelve_turns"]


def _call(name, args, cid="c1"):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _read_then(path, command_args, name="run_command"):
    return [{"role": "system", "content": "s"}, {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [_call("read_file", {"path": path})]},
            {"role": "tool", "tool_call_id": "c1", "content": "1→old text"},
            {"role": "assistant", "content": "", "tool_calls": [_call(name, command_args, "c2")]},
            {"role": "tool", "tool_call_id": "c2", "content": "exit code: 0"}]


def test_relevant_share_counts_messages_naming_what_the_step_names():
    ctx = [{"role": "system", "content": "x" * 500}, {"role": "user", "content": "fix src/app.py"},
           {"role": "tool", "tool_call_id": "c", "content": "unrelated " * 50}]
    step = {"role": "assistant", "content": "", "tool_calls": [_call("read_file", {"path": "src/app.py"})]}
    share = relevant_share(ctx, step)
    from nanohermes_nb.context.sizing import message_size
    assert share == pytest.approx(message_size(ctx[1]) / (message_size(ctx[1]) + message_size(ctx[2])))
    assert relevant_share(ctx[:1], step) is None and relevant_share(ctx, {"role": "assistant", "content": "ok"}) is None


def test_relevant_share_falls_as_contexts_grow_over_the_recorded_sessions():
    import pandas as pd

    from nanohermes_nb.context.sizing import context_size

    rows = [(context_size(m[:i]), relevant_share(m[:i], m[i])) for m in SESSIONS.values()
            for i, step in enumerate(m) if step.get("tool_calls") and i >= 2]
    frame = pd.DataFrame([r for r in rows if r[1] is not None], columns=["size", "share"])
    assert len(frame) > 30 and frame.corr(method="spearman").iloc[0, 1] < 0


def test_writes_file_tells_a_patch_from_a_run():
    patch = _call("run_command", {"command": "python3 - <<'EOF'\nopen('a/b.py','w').write('x')\nEOF"})
    run = _call("run_command", {"command": "python3 -m logstat samples/access.log"})
    redirect = _call("run_command", {"command": "python3 gen.py > samples/access.log"})
    assert writes_file(patch, "a/b.py") and not writes_file(run, "samples/access.log")
    assert writes_file(redirect, "samples/access.log") and writes_file(_call("edit_file", {"path": "x.py"}), "x.py")
    assert not writes_file(patch, "c.py")


def test_stale_reads_until_read_again():
    msgs = _read_then("a/b.py", {"command": "sed -i s/x/y/ a/b.py"})
    stale = stale_reads(msgs)
    assert [(s.path, s.read_at, s.changed_at) for s in stale] == [("a/b.py", 3, 4)]
    reread = msgs + [{"role": "assistant", "content": "", "tool_calls": [_call("read_file", {"path": "a/b.py"}, "c3")]},
                     {"role": "tool", "tool_call_id": "c3", "content": "1→new"}]
    assert stale_reads(reread) == [] and stale_reads(_read_then("a/b.py", {"command": "cat a/b.py"})) == []


def test_stale_reads_in_the_twelve_turn_session_and_the_input_is_not_mutated():
    before = copy.deepcopy(TWELVE)
    stale = stale_reads(TWELVE)
    assert TWELVE == before
    assert {"logstat/parse.py", "logstat/report.py"} <= {s.path for s in stale}
    assert all(s.read_at < s.changed_at and s.bytes > 0 for s in stale)


def test_poisoning_in_the_twelve_turn_summary():
    ledger = replay(TWELVE)
    event = ledger.compactions[0]
    summary = event.context_after[1]["content"]
    lines = poisoned_lines(summary, TWELVE[1:event.cut])
    assert len(lines) == 1 and lines[0].startswith("State:")
    assert poisoned_lines(summary, TWELVE[1:21]) == []  # there the last command failed: no contradiction
    assert last_exit_code(TWELVE[1:21]) == 1 and last_exit_code([{"role": "user", "content": "exit code: 3"}]) is None


def test_dead_weight_is_a_share_and_none_without_results():
    assert dead_weight(SESSIONS["trap_pure_chat"], 5) is None
    for name, msgs in SESSIONS.items():
        for k in range(0, len(msgs), 7):
            w = dead_weight(msgs, k)
            assert w is None or 0.0 <= w <= 1.0, name
    assert dead_weight(TWELVE, len(TWELVE)) == 1.0  # nothing comes after the end


def test_unused_tools_in_offered_order():
    assert unused_tools(TWELVE, ["web_fetch", "read_file", "glob", "grep"]) == ["web_fetch", "glob"]


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_trim_turns_keeps_whole_turns_and_the_latest_instruction(name):
    msgs = SESSIONS[name]
    last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
    for k in (0, 1, 2, 5):
        kept = trim_turns(msgs, k)
        assert kept[0] is msgs[0] and msgs[last_user] in kept
        assert kept[1]["role"] == "user" or len(kept) == len(msgs)
        assert check_history(kept) == []
    assert trim_turns(msgs, 10_000) == msgs


def test_trim_turns_on_the_cookbook_example():
    # the cookbook's own example: eight items, user at 0, 4, 6; max_turns=2 keeps 4..7
    items = [{"role": r, "content": str(i)} for i, r in
             enumerate(["user", "assistant", "assistant", "tool", "user", "assistant", "user", "assistant"])]
    assert [m["content"] for m in trim_turns(items, 2)] == ["4", "5", "6", "7"]


def test_notes_block_lines_and_budget():
    notes = notes_block(SESSIONS["trap_lost_path"])
    assert notes.splitlines()[1:] == ["Files changed: logstat/cli.py, README.md", "Last command: exit code 0"]
    assert notes_block(SESSIONS["trap_lost_path"], limit=10) == ""
    assert notes_block([]) == "Goal: \nFiles changed: none\nLast command: none"
    assert all(len(notes_block(m)) <= NOTES_CHAR_BUDGET for m in SESSIONS.values())


def test_isolate_keeps_a_legal_history_and_rejects_partial_stretches():
    from nanohermes_nb.context.sizing import context_size

    users = [i for i, m in enumerate(TWELVE) if m["role"] == "user"] + [len(TWELVE)]
    stretches = [(next(i for i in range(a, b) if TWELVE[i].get("tool_calls")),
                  max(i for i in range(a, b) if TWELVE[i]["role"] == "tool") + 1)
                 for a, b in zip(users, users[1:], strict=False)
                 if any(TWELVE[i].get("tool_calls") for i in range(a, b))]
    start, end = max(stretches, key=lambda se: context_size(TWELVE[se[0]:se[1]]))   # turn 8's large reads
    handed = isolate(TWELVE, start, end, "the report")
    assert check_history(handed) == [] and len(handed) == len(TWELVE) - (end - start) + 2
    assert handed[start + 1]["content"] == "the report" and handed[:start] == TWELVE[:start]
    assert replay(handed).totals.n_compactions == 0 < replay(TWELVE).totals.n_compactions
    with pytest.raises(ValueError):
        isolate(TWELVE, start + 1, end, "r")
    with pytest.raises(ValueError):
        isolate(TWELVE, start, end - 1 if TWELVE[end - 2]["role"] == "tool" else end + 1, "r")


def test_the_message_rule_and_find_cut_agree_on_what_is_kept():
    # the comparison in notebook 26 keeps context[:1] + context[find_cut:]; it is what compact keeps
    from nanohermes_nb.context.compaction import compact
    r = compact(TWELVE[:53], force=True)
    assert r.messages[2:] == TWELVE[find_cut(TWELVE[:53]):53]
