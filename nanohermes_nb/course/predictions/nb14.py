"""Predictions of notebook 14: seven traps."""

from __future__ import annotations

import json

import nanohermes_nb as nh

from ..exercises import Wrong, same_value
from . import Judge


def p14_1(continue_ranks, no_check_outgrows, *, ranked, budgets):
    """Which ranks get in when break becomes continue, and whether the block outgrows its budget unchecked."""
    lines = [f"\n- [{e.kind}] {e.text}" for e in ranked[: budgets.memory_inject_top_k]]
    used, fits = 0, []
    for k, line in enumerate(lines):  # `continue`: skip what does not fit, try the next one
        if used + len(line) <= budgets.memory_inject_char_budget:
            used, fits = used + len(line), fits + [k]
    block = nh.agent.memory.render_block(ranked, budgets)
    if [k for k, e in enumerate(ranked) if f"\n- [{e.kind}] {e.text}" in block] == fits:
        raise Wrong("the package's block already holds these ranks: the example does not tell break from continue")
    same_value(continue_ranks, fits, "your ranks with continue")
    same_value(
        no_check_outgrows, sum(map(len, lines)) > budgets.memory_inject_char_budget, "your answer without the check"
    )


def p14_2(pure_chat_compacts, with_tool_compacts, *, chat, workspace):
    """Whether the pure-chat session compacts, and whether it does with one read_file turn appended."""
    one_read = [
        {"role": "user", "content": "Now read the parser."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": json.dumps({"path": "logstat/parse.py"})},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": nh.Tools(workspace).run("read_file", {"path": "logstat/parse.py"}),
        },
        {"role": "assistant", "content": "The parser splits each line with one regular expression."},
    ]
    same_value(pure_chat_compacts, nh.replay(chat).totals.n_compactions > 0, "pure chat")
    same_value(with_tool_compacts, nh.replay(chat + one_read).totals.n_compactions > 0, "with one read_file turn")


JUDGES: dict[str, Judge] = {"14.1": p14_1, "14.2": p14_2}
