"""Wrong implementations for notebook 13 (exercise 13.1, one step of the replay loop)."""

from . import WrongImplementation as W

WRONG = [
    W(
        "13.1",
        "compacts after a reply without tool calls too",
        replace=(('if reply.get("tool_calls") else None', "if True else None"),),
    ),
    W(
        "13.1",
        "extends the caller's list in place",
        replace=(("ctx = [*ctx, reply, *results]", "ctx += [reply, *results]"),),
    ),
    W(
        "13.1",
        "weighs the request with its reply",
        replace=(('"size": nh.context_size(ctx)}', '"size": nh.context_size([*ctx, reply])}'),),
    ),
    W("13.1", "forgets the tool results", replace=(("ctx = [*ctx, reply, *results]", "ctx = [*ctx, reply]"),)),
    W("13.1", "does not pass keep_recent on", replace=(("keep_recent=keep_recent)", ")"),)),
]
