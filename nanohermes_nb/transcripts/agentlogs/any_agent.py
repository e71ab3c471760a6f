"""any-agent traces (``AgentTrace`` JSON: ``{"spans": [...], "final_output"}``) as a transcript.

Each span is an OpenTelemetry SDK span dict whose ``attributes`` follow the GenAI
semantic conventions. In start-time order: the first ``call_llm`` span's
``gen_ai.input.messages`` (a JSON string of chat messages) opens the transcript; each
``call_llm`` span is one request and one assistant message (``gen_ai.output``: either a
JSON list of ``{"tool.name", "tool.args"}``, the tool calls, or the answer text), with
``gen_ai.usage.input_tokens`` / ``output_tokens`` as its usage (no cache counts in these
traces); each ``execute_tool`` span is the tool message answering the earliest pending
call of the same name. ``invoke_agent`` and other spans are not context.
"""

from __future__ import annotations

import json
from typing import Any

from ..base import AgentRequest, Message, ReportedUsage, Transcript, tool_call
from .records import Counts, Notes
from .thread import Thread

__all__ = ["read_any_agent", "is_any_agent"]


def is_any_agent(data: Any) -> bool:
    spans = data.get("spans") if isinstance(data, dict) else None
    return (isinstance(spans, list) and bool(spans) and isinstance(spans[0], dict)
            and isinstance(spans[0].get("attributes"), dict) and "role" not in spans[0])


def _start_time(span: dict) -> int:
    """A span's ``start_time`` (0 when it has none that is a whole number): the order spans are read in."""
    start = span.get("start_time")
    return start if isinstance(start, int) else 0


def read_any_agent(data: dict, path: str) -> Transcript:
    notes = Notes()
    thread = Thread(notes)
    spans = [(k, s) for k, s in enumerate(data["spans"])
             if isinstance(s, dict) and isinstance(s.get("attributes"), dict)]
    spans.sort(key=lambda ks: _start_time(ks[1]))
    names: dict[str, str] = {}  # pending call id -> tool name
    for k, span in spans:
        a = span["attributes"]
        op = a.get("gen_ai.operation.name")
        if op == "call_llm":
            if not thread.messages:
                opening = _loads(a.get("gen_ai.input.messages"))
                for m in opening if isinstance(opening, list) else ():
                    if isinstance(m, dict) and m.get("role") in ("system", "user", "developer"):
                        thread.add({"role": m["role"], "content": _content(m.get("content"))})
            _call_llm(thread, k, span, a, names)
        elif op == "execute_tool":
            name = a.get("gen_ai.tool.name")
            call_id = next((c for c, n in names.items() if n == name and c in thread.pending), None)
            if call_id is None:
                notes.add("tool span answering no pending call, left out", k)
                continue
            del names[call_id]
            thread.add_result(call_id, _content(a.get("gen_ai.output")), k)
    thread.close_pending()
    transcript = Transcript(thread.messages, path=path, format="any-agent-trace", agent="any_agent",
                            requests=thread.requests)
    transcript.skipped = tuple(s.replace("line ", "span ", 1) for s in notes.lines())
    return transcript


def _call_llm(thread: Thread, k: int, span: dict, a: dict, names: dict[str, str]) -> None:
    output = a.get("gen_ai.output")
    parsed = _loads(output)
    message: Message = {"role": "assistant", "content": None}
    if isinstance(parsed, list) and parsed and all(isinstance(c, dict) and "tool.name" in c for c in parsed):
        calls = []
        for j, c in enumerate(parsed):
            call_id = f"call_{k}_{j}"
            args = c.get("tool.args")
            text = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
            calls.append(tool_call(call_id, str(c["tool.name"]), text, ""))
            names[call_id] = str(c["tool.name"])
        message["tool_calls"] = calls
    else:
        message["content"] = _content(output)
    index = thread.add(message)
    thread.add_calls(message, k)
    start = span.get("start_time")
    prompt, completion = a.get("gen_ai.usage.input_tokens"), a.get("gen_ai.usage.output_tokens")
    usage = None
    counts = Counts(thread.notes, k)
    if prompt is not None and completion is not None:
        raw = {"input_tokens": counts.get(a, "gen_ai.usage.input_tokens"),
               "output_tokens": counts.get(a, "gen_ai.usage.output_tokens")}
        if not counts.bad:
            usage = ReportedUsage(prompt_tokens=raw["input_tokens"], completion_tokens=raw["output_tokens"],
                                  raw=raw, raw_first=raw)
    thread.requests.append(AgentRequest(
        message=index, id=f"span-{k}", time=start / 1e9 if isinstance(start, int) else None,
        model=str(a.get("gen_ai.request.model") or ""), usage=usage))


def _loads(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def _content(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
