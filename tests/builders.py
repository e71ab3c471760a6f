"""Small message builders for hand-made histories."""

from __future__ import annotations

import json
from pathlib import Path

SYSTEM = {"role": "system", "content": "You are a coding agent."}


def user(text: str = "please fix the bug") -> dict:
    return {"role": "user", "content": text}


def assistant(text: str = "", calls: list[str] | None = None, names: list[str] | None = None,
              args: list[dict] | None = None) -> dict:
    m: dict = {"role": "assistant", "content": text}
    if calls:
        names = names or ["read_file"] * len(calls)
        args = args or [{"path": f"src/file{k}.py"} for k in range(len(calls))]
        m["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for cid, n, a in zip(calls, names, args, strict=False)
        ]
    return m


def tool(call_id: str, text: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def tool_round(k: int, text: str = "result", n_calls: int = 1, say: str = "") -> list[dict]:
    """An assistant message with n calls and their results."""
    ids = [f"call_{k}_{j}" for j in range(n_calls)]
    return [assistant(say or f"step {k}", ids)] + [tool(i, f"{text} {k}.{j}") for j, i in enumerate(ids)]


def session(rounds: int, body: str = "x" * 100, n_calls: int = 1) -> list[dict]:
    msgs = [dict(SYSTEM), user("Goal: rename the helper in src/app.py and keep tests green.")]
    for k in range(rounds):
        msgs += tool_round(k, body, n_calls)
    msgs.append(assistant("done"))
    return msgs


def cut_on_tool_result() -> list[dict]:
    """11 messages; keep_recent=5 puts the naive cut (6) on a tool result, the forward rule at 7."""
    return [
        SYSTEM,                                     # 0 kept
        user("line one\nline two"),                 # 1 dropped
        assistant("", ["c1"]),                      # 2 dropped
        tool("c1", "r" * 200),                      # 3 dropped
        assistant("two calls", ["c2", "c3"]),       # 4 dropped
        tool("c2", "r2"),                           # 5 dropped
        tool("c3", "r3"),                           # 6 dropped, naive cut
        assistant("", ["c4"]),                      # 7 kept, cut
        tool("c4", "r4"),                           # 8 kept
        user("thanks"),                             # 9 kept
        assistant("done"),                          # 10 kept
    ]


def agent_workspace(root: str | Path) -> Path:
    """A small project the agent tests and the agent benchmark read: notes.txt and six 40-line sources."""
    ws = Path(root) / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "notes.txt").write_text("the answer is 42\n", encoding="utf-8")
    for k in range(6):
        text = "\n".join(f"line {i} of file {k}: " + "x" * 60 for i in range(40))
        (ws / "src" / f"part{k}.py").write_text(text + "\n", encoding="utf-8")
    return ws


# The policy settings the agent's live-vs-replay checks run under (tests/test_agent.py, bench/bench_agent.py).
AGENT_POLICY_CASES = [("nanohermes", {}), ("nanohermes", {"keep_recent": 3, "cut": "backward", "summary_role": "user"}),
                      ("langchain_trim", {}), ("hermes_agent", {}), ("codex", {}), ("observation_masking", {}),
                      ("clear_tool_uses", {}), ("langchain_summarize", {})]


def random_turns(seed: int) -> list[list]:
    """A random scripted session over ``agent_workspace``: 1-3 user turns, each of 1-5 assistant steps calling
    1-3 reads (sometimes a run_command too), then a closing answer. The items are ``ScriptedModel`` replies."""
    import random

    from nanohermes_nb.agent.models import assistant as reply

    rng = random.Random(seed)
    paths = ["notes.txt"] + [f"src/part{k}.py" for k in range(6)]

    def turn() -> list:
        items = []
        for _ in range(rng.randint(1, 5)):
            batch = [("read_file", {"path": rng.choice(paths), "offset": rng.randint(1, 30),
                                    "limit": rng.randint(1, 40)}) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.2:
                batch.append(("run_command", {"command": f"echo step {rng.randint(0, 9)}"}))
            items.append(reply(rng.choice(["Next.", "Reading more.", ""]), *batch))
        items.append(f"Turn answer {rng.randint(0, 999)}.")
        return items

    return [turn() for _ in range(rng.randint(1, 3))]
