"""How long one explorer update takes (target: under 150 ms on a 400-message transcript).

Run: .venv/bin/python bench/bench_views.py [--repeat N]

Times, after one warm-up, the median of N updates for
- the plain function ``explore_budget`` (replay with shared meters + totals line),
- a full ``budget_explorer`` update driven by setting its budget slider (replay,
  clear and redraw the Axes, render the PNG, set the widgets),
- ``cut_explorer`` and ``clamp_explorer`` updates likewise,
on the largest shared transcript and on a synthetic 400-message one. The Agg
backend is forced: nothing opens a window.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import corpus, longest  # noqa: E402

from nanohermes_nb import load_transcript  # noqa: E402
from nanohermes_nb.views.clamp_widgets import clamp_explorer, explore_clamp  # noqa: E402
from nanohermes_nb.views.cut_widgets import cut_explorer, explore_cut  # noqa: E402
from nanohermes_nb.views.widgets import budget_explorer, explore_budget  # noqa: E402

TARGET_MS = 150.0


def synthetic(n: int = 400) -> list[dict]:
    """A coding session of ``n`` messages: user turns, tool rounds of 1-3 calls, varied result sizes."""
    msgs: list[dict] = [{"role": "system", "content": "You are a coding agent. " * 40}]
    k = 0
    while len(msgs) < n:
        if k % 12 == 0:
            msgs.append({"role": "user", "content": f"Turn {k // 12}: fix the failing test in src/mod{k}.py"})
        calls = 1 + k % 3
        ids = [f"call_{k}_{j}" for j in range(calls)]
        msgs.append({"role": "assistant", "content": f"Reading files for step {k}.",
                     "tool_calls": [{"id": i, "type": "function",
                                     "function": {"name": "read_file",
                                                  "arguments": json.dumps({"path": f"src/f{k}_{j}.py"})}}
                                    for j, i in enumerate(ids)]})
        for j, i in enumerate(ids):
            body = "\n".join(f"{n}\u2192line {n} of f{k}_{j}: value = compute({n})"
                             for n in range(1, 20 + (k * 37 + j * 11) % 160))
            msgs.append({"role": "tool", "tool_call_id": i, "content": body})
        k += 1
    msgs = msgs[: n - 1]
    while msgs[-1]["role"] == "assistant":  # never end on an unanswered call
        msgs.pop()
    msgs.append({"role": "assistant", "content": "Done: the test passes."})
    return msgs


def median_ms(fn, values, repeat: int) -> tuple[float, float]:
    """(median, worst) milliseconds of ``fn(v)`` cycling through ``values``, after a warm-up."""
    fn(values[-1])  # warm-up: fills the meters and caches
    times = []
    for r in range(repeat):
        v = values[r % len(values)]
        t = time.perf_counter()
        fn(v)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), max(times)


def bench(name: str, messages: list, repeat: int) -> dict:
    total = sum(len(json.dumps(m, ensure_ascii=False, separators=(",", ":")).encode()) for m in messages)
    budgets = [int(total * f) // 1000 * 1000 for f in (0.05, 0.08, 0.12, 0.2, 0.3, 0.5)]
    meters: dict = {}
    plain = median_ms(lambda b: explore_budget(messages, budget=b, meters=meters), budgets, repeat)

    w = budget_explorer(messages)
    slider = w.controls["budget"]
    values = [max(slider.min, min(slider.max, b)) for b in budgets]

    def set_budget(b):
        slider.value = b if slider.value != b else b + slider.step

    widget = median_ms(set_budget, values, repeat)

    n = len(messages)
    cuts = [max(2, n - d) for d in (10, 11, 12, 40, 100, 200)]
    cut_plain = median_ms(lambda c: explore_cut(messages, c), cuts, repeat)
    cw = cut_explorer(messages)
    cut_widget = median_ms(lambda c: setattr(cw.controls["cut"], "value", c), cuts, repeat)

    text = max((m.get("content") or "" for m in messages if m.get("role") == "tool"), key=len)
    size = len(text.encode())
    caps = [max(1, size * f // 10) for f in range(1, 10)]
    clamp_plain = median_ms(lambda c: explore_clamp(text, c), caps, repeat)
    kw = clamp_explorer(text)
    clamp_widget = median_ms(lambda c: setattr(kw.controls["max_bytes"], "value", c), caps, repeat)
    return {"transcript": name, "messages": n, "bytes": total, "budget (plain)": plain,
            "budget (widget)": widget, "cut (plain)": cut_plain, "cut (widget)": cut_widget,
            "clamp (plain)": clamp_plain, "clamp (widget)": clamp_widget}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=25)
    args = parser.parse_args()
    runs = []
    path = longest(corpus())  # the extended corpus's longest (315 messages, 432 KB), else the vendored sample's
    runs.append((path.name, list(load_transcript(path))))
    runs.append(("synthetic 400", synthetic(400)))
    print(f"update time over {args.repeat} updates, ms (median / worst); "
          f"target: median < {TARGET_MS:.0f} ms for the budget widget")
    for name, messages in runs:
        r = bench(name, messages, args.repeat)
        print(f"\n{r['transcript']}: {r['messages']} messages, {r['bytes']:,} bytes")
        for key in ("budget (plain)", "budget (widget)", "cut (plain)", "cut (widget)", "clamp (plain)",
                    "clamp (widget)"):
            med, worst = r[key]
            flag = ""
            if key == "budget (widget)":
                flag = "  ok" if med < TARGET_MS else "  OVER TARGET"
            print(f"  {key:<16} {med:8.2f} / {worst:8.2f}{flag}")


if __name__ == "__main__":
    main()
