"""The live agent loop against its replay: equality over many scripted sessions, and what the ledger costs.

Run: .venv/bin/python bench/bench_agent.py [--sessions N]

For each of the seven policies (NanoHermes twice: its defaults and a variant),
N random sessions are run live with ``nh.Agent`` over a ``ScriptedModel`` (reads
of random files and line ranges, parallel batches, a few shell commands, one to
three user turns, budgets from 2,000 to 12,000 bytes). For every request it
checks that ``ledger.context(k)`` is exactly what the model received, and that
``nh.replay`` of the recorded session (same settings, the extractive summarizer)
gives the live ledger back, column for column. It prints the counts, and, side
by side in the same run, the median time of one live request (tools included)
and of one rebuild of the session's ledger (what the live widget does after
every request).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from builders import AGENT_POLICY_CASES, agent_workspace, random_turns  # noqa: E402

import nanohermes_nb as nh  # noqa: E402

CASES = AGENT_POLICY_CASES
COLUMNS = ["request", "turn", "index", "messages", "size", "size_before", "compacted", "dropped", "size_after",
           "cumulative_input", "size_no_compaction", "cumulative_no_compaction", "event", "prefix_reuse",
           "request_bytes", "problems_openai", "problems_anthropic", "problems_gemini"]


def workspace() -> Path:
    return agent_workspace(tempfile.mkdtemp(prefix="bench-agent-"))


def session(seed: int, ws: Path, policy: nh.Policy, budget: int):
    turns = random_turns(seed)
    model = nh.ScriptedModel([item for t in turns for item in t])
    seconds = []
    with nh.Agent(ws, model, budget=budget, policy=policy, system="You are a test agent.") as agent:
        for k, _ in enumerate(turns):
            result = agent.run(f"Task part {k}: read what you need.", on_request=lambda s: seconds.append(s))
            assert result.ok, result.error
    return model, result, agent


def sent(messages) -> list:
    return json.loads(json.dumps(list(messages)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=25, help="sessions per policy setting (default 25)")
    args = parser.parse_args()
    ws = workspace()
    sessions = requests = checks = acted = 0
    mismatches = []
    step_times, ledger_times = [], []
    for name, options in CASES:
        for seed in range(args.sessions):
            policy = nh.resolve_policy(name, **options)
            budget = 2_000 + 400 * seed
            started = time.perf_counter()
            model, result, agent = session(1000 + seed, ws, policy, budget)
            step_times.append((time.perf_counter() - started) / max(result.n_requests, 1))
            started = time.perf_counter()
            live = agent.ledger()
            ledger_times.append(time.perf_counter() - started)
            received = sent(model.contexts)
            same = [sent(live.context(k)) for k in range(1, result.n_requests + 1)] == received
            again = nh.replay(result.messages, budget=budget, policy=policy, summarizer=nh.ExtractiveSummarizer())
            same_replay = again.requests[COLUMNS].equals(live.requests[COLUMNS]) and \
                [sent(again.context(k)) for k in range(1, result.n_requests + 1)] == received
            sessions += 1
            requests += result.n_requests
            checks += len(result.events)
            acted += sum(e.event is not None for e in result.events)
            if not (same and same_replay):
                mismatches.append((name, options, seed))
    print(f"{sessions} sessions, {requests:,} requests, {checks:,} checks over budget, {acted:,} policy events")
    print(f"ledger.context(k) == what the model received, and replay == live ledger: "
          f"{sessions - len(mismatches)} of {sessions} sessions"
          + (f"; mismatches: {mismatches}" if mismatches else ""))
    step, rebuild = statistics.median(step_times), statistics.median(ledger_times)
    print(f"median live request (tools included) {step * 1000:.1f} ms; median ledger rebuild of a whole session "
          f"{rebuild * 1000:.1f} ms ({rebuild / step:.1f}x one request)")


if __name__ == "__main__":
    main()
