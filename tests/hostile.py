"""A generated corpus of hostile transcript files, and a harness that runs the CLI on them.

``build_corpus(folder)`` writes every case into ``folder`` at test time (nothing is
committed): every checked field of every supported format set to wrong types,
truncations, wrong encodings, deep nesting, numbers JSON or serde_json refuse, huge
strings and numbers, and non-regular files (FIFO, socket, directory, device link).
Each case names a fragment the error must contain, so the wording is checked too.

``run_cli(calls)`` runs ``nanohermes_nb.cli.main`` once per call in its own forked
process (from one helper process that imported the package once), each under a
timeout (and a memory cap when asked): real processes, real exit codes, real
stderr, at a fraction of the cost of a fresh interpreter per call. ``python
hostile.py`` is that helper.

``build_cli_cases(folder)`` is the second round (issue 26): files the loader
accepts that attack what comes after it (20,000 calls in one message, duplicate
call ids, terminal escapes in every field and in a file name), and bad paths and
option values, each with the exit code and a fragment the output must show.
"""

from __future__ import annotations

import copy
import json
import os
import socket
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEL = object()  # a mutation value that deletes the key


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    expect: str  # a fragment of the one-line error (after "<path>: ")
    huge: bool = False  # allowed more than a second


def _call(cid: str, name: str = "ls", arguments: Any = "{}") -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def _lc(cls: str, **kwargs: Any) -> dict:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


OPENAI = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": [{"type": "text", "text": "q"}]},
    {"role": "assistant", "content": None, "reasoning_content": "r", "tool_calls": [_call("c1")]},
    {"role": "tool", "tool_call_id": "c1", "name": "ls", "content": "a.txt"},
    {"role": "assistant", "content": "done"},
]
LEGACY = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
    {"role": "function", "name": "f", "content": "r"},
]
ANTHROPIC = {"system": [{"type": "text", "text": "s"}], "messages": [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": [{"type": "text", "text": "t"},
                                      {"type": "tool_use", "id": "tu1", "name": "ls", "input": {"p": "."}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text", "text": "a"}]},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]},
]}
MINI_SWE = {"trajectory_format": "mini-swe-agent-1.1", "info": {"mini_version": "1"}, "messages": [
    {"role": "system", "content": "s"}, {"role": "user", "content": "q"},
    {"role": "assistant", "content": "c", "reasoning_content": "r", "tool_calls": [_call("c1", "bash")]},
    {"role": "tool", "tool_call_id": "c1", "content": "out"},
    {"role": "exit", "content": "x"},
]}
SWE = {"history": [
    {"role": "system", "content": "s", "agent": "main"}, {"role": "user", "content": "q"},
    {"role": "assistant", "content": "c", "tool_calls": [_call("c1", "bash")]},
    {"role": "tool", "content": "out", "tool_call_ids": ["c1"]},
]}
OPENHANDS = [
    {"kind": "SystemPromptEvent", "system_prompt": {"type": "text", "text": "s"}},
    {"kind": "MessageEvent", "llm_message": {"role": "user", "content": [{"type": "text", "text": "q"}]},
     "extended_content": []},
    {"kind": "ActionEvent", "thought": [{"type": "text", "text": "t"}], "tool_name": "bash", "tool_call_id": "c1",
     "llm_response_id": "r1", "reasoning_content": "r",
     "tool_call": {"id": "c1", "name": "bash", "arguments": "{}"}},
    {"kind": "ObservationEvent", "tool_name": "bash", "tool_call_id": "c1", "observation": {"output": "o"}},
    {"kind": "AgentErrorEvent", "tool_name": "bash", "tool_call_id": "c1", "error": "e"},
    {"kind": "UserRejectObservation", "tool_call_id": "c1", "rejection_reason": "no"},
]
LANGCHAIN = [
    _lc("SystemMessage", content="s", type="system"),
    _lc("HumanMessage", content=[{"type": "text", "text": "q"}], type="human"),
    _lc("AIMessage", content="", type="ai", additional_kwargs={"reasoning_content": "r"},
        tool_calls=[{"name": "grep", "args": {"p": "x"}, "id": "c1"}]),
    _lc("ToolMessage", content="o", tool_call_id="c1", name="grep", type="tool"),
]
BASES: dict[str, Any] = {"openai": OPENAI, "legacy": LEGACY, "anthropic": ANTHROPIC, "mini_swe": MINI_SWE,
                         "swe": SWE, "openhands": OPENHANDS, "langchain": LANGCHAIN}

W = ["number", "array", "object", "string", "boolean", "null"]
_VALUES = {"number": 5, "array": [1], "object": {"a": 1}, "string": "x", "boolean": True, "null": None}

# (base, path, wrong values, fragment the error must contain)
MUTATIONS: list[tuple[str, tuple, list, str]] = [
    ("openai", (1,), ["number", "string", "array", "null"], "message 1: not an object"),
    ("openai", (1, "role"), ["number", "array", "object", "null"], "message 1: 'role' must be a string"),
    ("openai", (1, "role"), [DEL], "message 1: missing 'role'"),
    ("openai", (1, "content"), ["number", "object", "boolean"], "message 1: content must be a string, null or a list"),
    ("openai", (1, "content", 0), ["number", "string", "null", "array"],
     "message 1: content[0]: part is not an object"),
    ("openai", (1, "content", 0, "text"), ["number", "object", "array", "null", DEL],
     "message 1: content[0]: text part's 'text' must be a string"),
    ("openai", (1, "content", 0, "type"), ["number", "array", "object"],
     "message 1: content[0]: 'type' must be a string"),
    ("openai", (1, "name"), ["number", "array"], "message 1: 'name' must be a string"),
    ("openai", (2, "tool_calls"), ["object", "number", "string", "boolean"], "message 2: tool_calls must be a list"),
    ("openai", (2, "tool_calls", 0), ["number", "string", "array", "null"], "message 2: tool_calls[0]: not an object"),
    ("openai", (2, "tool_calls", 0, "id"), ["number", "array", "object"],
     "message 2: tool_calls[0]: 'id' must be a string"),
    ("openai", (2, "tool_calls", 0, "id"), [DEL], "message 2: tool_calls[0]: missing 'id'"),
    ("openai", (2, "tool_calls", 0, "type"), ["number"], "message 2: tool_calls[0]: 'type' must be a string"),
    ("openai", (2, "tool_calls", 0, "function"), ["number", "string", "array"],
     "message 2: tool_calls[0]: 'function' must be an object"),
    ("openai", (2, "tool_calls", 0, "function"), [DEL], "message 2: tool_calls[0]: missing 'function'"),
    ("openai", (2, "tool_calls", 0, "function", "name"), ["number", "object"],
     "message 2: tool_calls[0]: function 'name' must be a string"),
    ("openai", (2, "tool_calls", 0, "function", "name"), [DEL], "message 2: tool_calls[0]: missing function 'name'"),
    ("openai", (2, "tool_calls", 0, "function", "arguments"), ["number", "array", "object", "boolean", "null"],
     "message 2: tool_calls[0]: function 'arguments' must be a string"),
    ("openai", (2, "reasoning_content"), ["number", "object"], "message 2: 'reasoning_content' must be a string"),
    ("openai", (3, "tool_call_id"), ["number", "array"], "message 3: 'tool_call_id' must be a string"),
    ("openai", (3, "tool_call_id"), [DEL], "message 3: tool message without 'tool_call_id'"),
    ("legacy", (1, "function_call"), ["number", "string", "array"], "message 1: function_call must be an object"),
    ("legacy", (1, "function_call", "name"), ["number", "array"], "message 1: function_call: 'name' must be a string"),
    ("legacy", (1, "function_call", "name"), [DEL], "message 1: function_call: missing 'name'"),
    ("legacy", (1, "function_call", "arguments"), ["number", "array", "boolean"],
     "message 1: function_call: 'arguments' must be a string of JSON or an object"),
    ("legacy", (2, "name"), ["number"], "message 2: 'name' must be a string"),
    ("legacy", (2, "name"), [DEL], "message 2: function message without 'name'"),
    ("anthropic", ("system",), ["number", "object", "boolean"], "system: must be a string or a list of text blocks"),
    ("anthropic", ("system", 0), ["number", "string"], "system: content[0]: part is not an object"),
    ("anthropic", ("system", 0, "text"), ["number", "null"], "system: content[0]: text part's 'text' must be a string"),
    ("anthropic", ("messages",), ["number", "object", "string"], "'messages' is not a list"),
    ("anthropic", ("messages", 1, "content", 1, "type"), ["number", "array"], "message 1: content[1]: 'type' must be"),
    ("anthropic", ("messages", 1, "content", 1, "id"), ["number", "array"],
     "message 1: content[1]: 'id' must be a string"),
    ("anthropic", ("messages", 1, "content", 1, "id"), [DEL], "message 1: content[1]: tool_use without 'id'"),
    ("anthropic", ("messages", 1, "content", 1, "name"), ["number"], "message 1: content[1]: 'name' must be a string"),
    ("anthropic", ("messages", 1, "content", 1, "input"), ["number", "array", "string", "null"],
     "message 1: content[1]: tool_use 'input' must be an object"),
    ("anthropic", ("messages", 1, "content", 0, "text"), ["number", "null"],
     "message 1: content[0]: text part's 'text'"),
    ("anthropic", ("messages", 2, "content", 0, "tool_use_id"), ["number", "object"],
     "message 2: content[0]: 'tool_use_id' must be a string"),
    ("anthropic", ("messages", 2, "content", 0, "tool_use_id"), [DEL],
     "message 2: content[0]: tool_result without 'tool_use_id'"),
    ("anthropic", ("messages", 2, "content", 0, "content"), ["number", "object"],
     "message 2: content[0]: tool_result content must be"),
    ("anthropic", ("messages", 2, "content", 0, "content", 0, "text"), ["number"],
     "message 2: content[0]: content[0]: text part's 'text' must be a string"),
    ("anthropic", ("messages", 2, "content", 1, "source"), ["number", "string", "object", DEL],
     "message 2: content[1]: image block without a base64 or url 'source'"),
    ("anthropic", ("messages", 2, "content", 1, "source", "media_type"), ["number"],
     "message 2: content[1]: image 'media_type' must be a string"),
    ("anthropic", ("messages", 0, "content"), [[{"type": "tool_use", "id": "x", "name": "n", "input": {}}]],
     "message 0: content[0]: tool_use block in a user message"),
    ("mini_swe", ("messages",), ["number", "object"], "'messages' is not a list"),
    ("mini_swe", ("messages", 1, "role"), ["number", "robot"], "message 1:"),
    ("mini_swe", ("messages", 1, "content"), ["number", "object"], "message 1: content must be"),
    ("mini_swe", ("messages", 2, "tool_calls", 0, "function", "arguments"), ["number", "array", "object"],
     "message 2: tool_calls[0]: function 'arguments' must be a string"),
    ("mini_swe", ("messages", 2, "tool_calls", 0, "id"), ["number"], "message 2: tool_calls[0]: 'id' must be a string"),
    ("mini_swe", ("messages", 2, "reasoning_content"), ["number"], "message 2: 'reasoning_content' must be a string"),
    ("mini_swe", ("messages", 3, "tool_call_id"), ["number"], "message 3: 'tool_call_id' must be a string"),
    ("mini_swe", ("messages", 3, "tool_call_id"), [DEL], "message 3: tool message without 'tool_call_id'"),
    ("mini_swe", ("messages",), [[{"role": "exit", "content": "x"}]], "no messages"),
    ("swe", ("history",), ["number", "object", "string"], "'history' is not a list"),
    ("swe", ("history", 3, "tool_call_ids"), ["number", "object", "string"],
     "message 3: 'tool_call_ids' must be a list"),
    ("swe", ("history", 3, "tool_call_ids"), [[5], [None]], "message 3: tool_call_ids[0]"),
    ("swe", ("history", 3, "tool_call_ids"), [[], DEL], "message 3: tool message without 'tool_call_id'"),
    ("swe", ("history", 3, "tool_call_id"), ["number"], "message 3: 'tool_call_id' must be a string"),
    ("swe", ("history", 2, "tool_calls", 0, "function", "name"), ["number"],
     "message 2: tool_calls[0]: function 'name'"),
    ("swe", ("history", 0, "content"), ["object", "number"], "message 0: content must be"),
    ("openhands", (1, "kind"), ["number", "array", "object"], "event 1: 'kind' must be a string"),
    ("openhands", (1, "kind"), [DEL], "event 1: event without 'kind'"),
    ("openhands", (1, "kind"), [""], "event 1: 'kind' is empty"),
    ("openhands", (1,), ["number", "string"], "event 1: not an object"),
    ("openhands", (0, "system_prompt"), ["number", [5]], "event 0: system_prompt"),
    ("openhands", (1, "llm_message"), ["number", "string"], "event 1: 'llm_message' must be an object"),
    ("openhands", (1, "llm_message"), [DEL], "event 1: MessageEvent without 'llm_message'"),
    ("openhands", (1, "llm_message", "role"), ["number", "tool"], "event 1: llm_message:"),
    ("openhands", (1, "llm_message", "content"), ["number", [{"text": 5}]], "event 1: llm_message: content"),
    ("openhands", (1, "extended_content"), ["number", [5]], "event 1: extended_content"),
    ("openhands", (2, "tool_call"), ["number", "string", "array"], "event 2: 'tool_call' must be an object"),
    ("openhands", (2, "tool_call"), [DEL], "event 2: ActionEvent without 'tool_call'"),
    ("openhands", (2, "tool_call", "id"), ["number", "array"], "event 2: tool_call: 'id' must be a string"),
    ("openhands", (2, "tool_call", "name"), ["number"], "event 2: tool_call: 'name' must be a string"),
    ("openhands", (2, "tool_call", "arguments"), ["number", "array", "boolean"],
     "event 2: tool_call: 'arguments' must be a string of JSON or an object"),
    ("openhands", (2, "thought"), ["number", [5], [{"text": 5}]], "event 2: thought"),
    ("openhands", (2, "llm_response_id"), ["number", "array"], "event 2: 'llm_response_id' must be a string"),
    ("openhands", (2, "reasoning_content"), ["number"], "event 2: 'reasoning_content' must be a string"),
    ("openhands", (3, "observation"), ["number", "string"], "event 3: 'observation' must be an object"),
    ("openhands", (3, "observation"), [DEL], "event 3: ObservationEvent without 'observation'"),
    ("openhands", (3, "observation"), [{"content": [5]}], "event 3: observation: content[0]"),
    ("openhands", (3, "tool_call_id"), ["number"], "event 3: 'tool_call_id' must be a string"),
    ("openhands", (3, "tool_call_id"), [DEL], "event 3: ObservationEvent without 'tool_call_id'"),
    ("openhands", (3, "tool_name"), ["number", "object"], "event 3: 'tool_name' must be a string"),
    ("openhands", (4, "error"), ["number", DEL], "event 4: AgentErrorEvent without an 'error' string"),
    ("openhands", (5, "rejection_reason"), ["number", "object"], "event 5: 'rejection_reason' must be a string"),
    ("langchain", (1,), [_lc("RobotMessage", content="q")], "message 1: unknown message type 'RobotMessage'"),
    ("langchain", (1, "kwargs", "content"), ["number", "object"], "message 1: content must be a string or a list"),
    ("langchain", (1, "kwargs", "content"), [[5], [[1]]], "message 1: content[0]: part is not an object"),
    ("langchain", (1, "kwargs", "content"), [[{"type": "text", "text": 5}], [{"type": 5}]], "message 1: content[0]:"),
    ("langchain", (2, "kwargs", "tool_calls"), ["number", "string", "object"], "message 2: tool_calls must be a list"),
    ("langchain", (2, "kwargs", "tool_calls", 0), ["number", "string"], "message 2: tool_calls[0]: not an object"),
    ("langchain", (2, "kwargs", "tool_calls", 0, "id"), ["number", "array"],
     "message 2: tool_calls[0]: 'id' must be a string"),
    ("langchain", (2, "kwargs", "tool_calls", 0, "id"), [DEL], "message 2: tool_calls[0]: missing 'id'"),
    ("langchain", (2, "kwargs", "tool_calls", 0, "name"), ["number", DEL], "message 2: tool_calls[0]:"),
    ("langchain", (2, "kwargs", "tool_calls", 0, "args"), ["number", "array", "string", "null"],
     "message 2: tool_calls[0]: 'args' must be an object"),
    ("langchain", (2, "kwargs", "additional_kwargs"), ["number", "array"], "message 2: 'additional_kwargs' must be"),
    ("langchain", (2, "kwargs", "additional_kwargs", "reasoning_content"), ["number"],
     "message 2: 'reasoning_content' must be a string"),
    ("langchain", (3, "kwargs", "tool_call_id"), ["number", "array"], "message 3: 'tool_call_id' must be a string"),
    ("langchain", (3, "kwargs", "tool_call_id"), [DEL], "message 3: tool message without 'tool_call_id'"),
    ("langchain", (3, "kwargs", "name"), ["number"], "message 3: 'name' must be a string"),
]


def mutate(doc: Any, path: tuple, value: Any) -> Any:
    """A deep copy of ``doc`` with the value at ``path`` replaced (or deleted with ``DEL``)."""
    out = copy.deepcopy(doc)
    target = out
    for key in path[:-1]:
        target = target[key]
    if value is DEL:
        del target[path[-1]]
    else:
        target[path[-1]] = copy.deepcopy(_VALUES.get(value, value) if isinstance(value, str) else value)
    return out


def _label(value: Any) -> str:
    if value is DEL:
        return "missing"
    if isinstance(value, str) and value in _VALUES:
        return value
    return "v" + str(zlib.crc32(json.dumps(value).encode()) % 10_000)


def _field_cases() -> Iterator[tuple[str, bytes, str]]:
    for base, path, values, expect in MUTATIONS:
        for value in values:
            doc = mutate(BASES[base], path, value)
            name = f"field_{base}_{'.'.join(map(str, path))}_{_label(value)}.json"
            yield name, json.dumps(doc, ensure_ascii=False).encode("utf-8"), expect


def _jsonl(items: list, bad_line: int | None = None, line: str = "") -> bytes:
    rows = [json.dumps(m) for m in items]
    if bad_line is not None:
        rows[bad_line - 1] = line
    return ("\n".join(rows) + "\n").encode("utf-8")


def _truncations() -> Iterator[tuple[str, bytes, str]]:
    """Every base cut at several places; only cuts that really break the JSON are kept."""
    for base, doc in BASES.items():
        raw = json.dumps(doc).encode("utf-8")
        for share in (0.1, 0.33, 0.5, 0.9):
            cut = raw[: max(1, int(len(raw) * share))]
            yield f"truncated_{base}_{int(share * 100)}.json", cut, "invalid JSON"
        yield f"truncated_{base}_last_byte.json", raw[:-1], "invalid JSON"
    yield "truncated_jsonl_mid_line.jsonl", _jsonl(OPENAI)[:-20], "line 5: invalid JSON"
    yield "truncated_jsonl_line_3.jsonl", _jsonl(OPENAI, 3, json.dumps(OPENAI[2])[:30]), "line 3: invalid JSON"


def _encodings() -> Iterator[tuple[str, bytes, str]]:
    text = json.dumps(OPENAI, ensure_ascii=False)
    accented = json.dumps([{"role": "user", "content": "caf\u00e9 \u6587\u4ef6"}], ensure_ascii=False)
    yield "enc_utf8_bom.json", b"\xef\xbb\xbf" + text.encode(), "UTF-8 byte-order mark"
    yield "enc_utf16le_bom.json", b"\xff\xfe" + text.encode("utf-16-le"), "UTF-16 byte-order mark (little-endian)"
    yield "enc_utf16be_bom.json", b"\xfe\xff" + text.encode("utf-16-be"), "UTF-16 byte-order mark (big-endian)"
    yield "enc_utf32le_bom.json", b"\xff\xfe\x00\x00" + text.encode("utf-32-le"), \
        "UTF-32 byte-order mark (little-endian)"
    yield "enc_utf32be_bom.json", b"\x00\x00\xfe\xff" + text.encode("utf-32-be"), "UTF-32 byte-order mark (big-endian)"
    yield "enc_utf16le_nobom.json", text.encode("utf-16-le"), "looks like UTF-16 (little-endian)"
    yield "enc_utf16be_nobom.json", text.encode("utf-16-be"), "looks like UTF-16 (big-endian)"
    yield "enc_utf32le_nobom.json", text.encode("utf-32-le"), "looks like UTF-32 (little-endian)"
    yield "enc_utf32be_nobom.json", text.encode("utf-32-be"), "looks like UTF-32 (big-endian)"
    yield "enc_latin1.json", accented.encode("latin-1", "replace"), "not valid UTF-8 (0xe9)"
    yield "enc_cp1252_jsonl.jsonl", _jsonl(OPENAI) + "\u201cq\u201d\n".encode("cp1252"), "not valid UTF-8 (0x93)"
    yield "enc_overlong_nul.json", b'[{"role":"user","content":"\xc0\x80"}]', "not valid UTF-8 (0xc0)"
    yield "enc_encoded_surrogate.json", b'[{"role":"user","content":"\xed\xa0\x80"}]', "not valid UTF-8 (0xed)"
    yield "enc_cut_character.json", accented.encode()[:-3] + b"\xe6\x96", "not valid UTF-8"
    yield "enc_nul_bytes.json", text.encode() + b"\x00" * 64, "a NUL byte: binary data"
    yield "enc_gzip.json", b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4, "byte 3: a NUL byte: binary data"
    yield "enc_png.json", b"\x89PNG\r\n\x1a\n" + bytes(64), "byte 8: a NUL byte: binary data"
    yield "enc_control_chars.json", b'[{"role":"user","content":"a\x01b"}]', "invalid JSON (Invalid control character"


def _nested(depth: int, opener: str = "[") -> str:
    if opener == "[":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def _nesting() -> Iterator[tuple[str, bytes, str]]:
    deep = "nested 128 levels deep"
    head = '[{"role":"user","content":"q","extra":'
    for depth, opener in ((126, "["), (126, "{"), (200, "["), (1_000, "{"), (100_000, "["), (100_000, "{")):
        yield f"nest_{opener == '[' and 'array' or 'object'}_{depth}.json", (
            head + _nested(depth, opener) + "}]").encode(), deep
    yield "nest_top_array_200k.json", _nested(200_000).encode(), deep
    yield "nest_content_parts.json", (
        '[{"role":"user","content":[{"type":"text","text":"q","x":' + _nested(500) + "}]}]").encode(), deep
    yield "nest_jsonl_line.jsonl", _jsonl(OPENAI, 2, '{"role":"user","content":' + _nested(300) + "}"), "line 2:"
    yield "nest_object_file.json", ('{"messages":' + _nested(5_000) + "}").encode(), deep


def _numbers() -> Iterator[tuple[str, bytes, str]]:
    def at(value: str) -> bytes:
        return ('[{"role":"user","content":"q"},{"role":"assistant","content":"a","usage":{"cost":'
                + value + "}}]").encode()

    yield "num_nan.json", at("NaN"), "message 1: usage.cost: NaN is not valid JSON"
    yield "num_infinity.json", at("Infinity"), "message 1: usage.cost: Infinity is not valid JSON"
    yield "num_minus_infinity.json", at("-Infinity"), "-Infinity is not valid JSON"
    yield "num_1e999.json", at("1e999"), "number out of range (1e999)"
    yield "num_minus_1e999.json", at("-1.5e400"), "number out of range"
    yield "num_int_310_digits.json", at("9" * 310), "number out of range (an integer of 310 digits)"
    yield "num_int_4301_digits.json", at("1" * 4301), "an integer of 4301 digits"
    yield "num_int_1m_digits.json", at("7" * 1_000_000), "an integer of 1000000 digits"
    yield "num_nan_in_arguments_list.json", (
        b'[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function",'
        b'"function":{"name":"f","arguments":"{}","x":[NaN]}}]}]'), "message 0: tool_calls[0].function.x[0]"
    yield "num_nan_jsonl.jsonl", _jsonl(OPENAI, 4, '{"role":"tool","tool_call_id":"c1","content":"x","t":NaN}'), \
        "line 4: t: NaN"
    yield "num_top_level_nan.json", b"NaN", "NaN is not valid JSON"
    yield "num_top_level_big.json", b"9" * 5000, "number out of range"
    infinite = json.dumps(OPENHANDS).replace('"output": "o"', '"output": "o", "exit": Infinity').encode()
    yield "num_openhands_event.json", infinite, "event 3: observation.exit: Infinity"
    yield "num_object_path.json", (b'{"messages":[{"role":"user","content":"q","n":NaN}]}'), "messages[0].n: NaN"


def _huge() -> Iterator[tuple[str, bytes, str]]:
    yield "huge_role_10mb.json", b'[{"role":"' + b"r" * 10_000_000 + b'","content":"q"}]', \
        "message 0: unknown role 'rrrr"
    yield "huge_key_5mb.json", b'{"' + b"k" * 5_000_000 + b'":1}', "not a transcript"
    yield "huge_type_lc.json", b'[{"type":"' + b"t" * 5_000_000 + b'","content":"q"}]', "message 0:"
    yield "huge_last_message_bad.json", json.dumps(
        [{"role": "user", "content": f"m{k}"} for k in range(200_000)] + [{"role": 5}]).encode(), \
        "message 200000: 'role' must be a string"
    yield "huge_whitespace_then_junk.json", b" " * 20_000_000 + b"x", "invalid JSON"
    yield "huge_exponent.json", b'[{"role":"user","content":"q","e":1e99999999999}]', "number out of range"


def _shapes() -> Iterator[tuple[str, bytes, str]]:
    yield "shape_empty.json", b"", "empty file"
    yield "shape_spaces.json", b"  \n\t \r\n", "empty file"
    yield "shape_null.json", b"null", "not a transcript"
    yield "shape_true.json", b"true", "not a transcript"
    yield "shape_string.json", b'"messages"', "not a transcript"
    yield "shape_empty_object.json", b"{}", "not a transcript"
    yield "shape_empty_array.json", b"[]", "no messages"
    yield "shape_events_not_list.json", b'{"events": "x"}', "'events' is not a list"
    yield "shape_values_not_list.json", b'{"values": {"messages": 5}}', "'values.messages' is not a list"
    yield "shape_only_state_events.json", b'[{"kind":"ConversationStateUpdateEvent"}]', "no messages"
    yield "shape_lc_unknown.json", b'[{"type":"human","content":"q"},{"type":"robot"}]', \
        "message 1: unknown message type 'robot'"
    yield "shape_lc_chat_role.json", b'[{"type":"human","content":"q"},{"type":"chat","role":5,"content":"q"}]', \
        "message 1: chat message with unknown role 5"
    yield "shape_jsonl_array_line.jsonl", _jsonl(OPENAI, 2, "[1, 2]"), "line 2: not an object (got array)"
    yield "shape_jsonl_number_line.jsonl", _jsonl(OPENAI, 3, "7"), "line 3: not an object (got number)"
    yield "shape_two_documents.json", json.dumps(OPENAI).encode() + b"\n" + json.dumps(OPENAI).encode(), "invalid JSON"
    yield "shape_trailing_garbage.json", json.dumps(OPENAI).encode() + b"garbage", "invalid JSON (Extra data"
    yield "shape_single_quotes.json", b"[{'role': 'user', 'content': 'q'}]", "invalid JSON"
    yield "shape_comment.json", b'// log\n[{"role":"user","content":"q"}]', "line 1: invalid JSON"


def _agent_logs() -> Iterator[tuple[str, bytes, str]]:
    """Coding agents' logs with nothing usable left: read leniently, they must still refuse in one line."""
    ids = {"uuid": "u1", "sessionId": "s1", "parentUuid": None}
    claude = [{"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}},
              {"type": "summary", "summary": "s", "leafUuid": "u1"}]
    yield "agent_claude_no_message.jsonl", _jsonl(claude), "a claude_code log with no usable message"
    meta = {**ids, "type": "user", "isMeta": True, "message": {"role": "user", "content": "caveat"}}
    yield "agent_claude_meta_only.jsonl", _jsonl([meta, {**meta, "uuid": "u2"}]), "claude_code log with no usable"
    cut = json.dumps({**ids, "type": "user", "message": {"role": "user", "content": "q"}})
    yield "agent_claude_cut_prompt.jsonl", _jsonl(claude) + cut[:-5].encode(), "(line 3: the last line is incomplete"
    codex = [{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x"}},
             {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": {"type": "task_started"}}]
    yield "agent_codex_no_item.jsonl", _jsonl(codex), "a codex_cli log with no usable message"
    hologram = {"type": "response_item", "payload": {"type": "hologram"}}
    yield "agent_codex_unknown_items.jsonl", _jsonl(codex + [hologram]), "response item of unknown type 'hologram'"
    yield "agent_gemini_no_message.json", b'{"sessionId": "s", "projectHash": "p", "messages": []}', \
        "a gemini_cli log with no usable message"
    gemini = [{"sessionId": "s", "projectHash": "p", "kind": "main"}, {"$set": {"lastUpdated": "x"}},
              {"id": "i1", "type": "info", "content": "notice"}]
    yield "agent_gemini_jsonl_info_only.jsonl", _jsonl(gemini), "a gemini_cli log with no usable message"
    yield "agent_copilot_hooks_only.jsonl", _jsonl([{"type": "session.start", "data": {}},
                                                    {"type": "hook.start", "data": {"hookType": "x"}}]), \
        "a copilot_cli log with no usable message"
    yield "agent_any_agent_no_llm_span.json", json.dumps({"spans": [{"name": "invoke_agent", "attributes": {
        "gen_ai.operation.name": "invoke_agent"}}]}).encode(), "an any_agent log with no usable message"
    aider = b"\n# aider chat started at 2026-04-22 22:40:12\n\n"
    no_message = "an aider chat history with no message"
    yield "agent_aider_header_only.md", aider, no_message
    yield "agent_aider_console_only.md", aider + b"> Aider v0.86.2  \n> Model: m with whole edit format  \n", \
        no_message
    yield "agent_aider_nul_tail.md", aider + b"> Tokens: 1k sent  \n" + b"\x00" * 4096, "(line 5: NUL bytes, removed)"
    yield "agent_aider_blank_input.md", aider + b"####   \n#### \n\n\n", no_message


def _special_files(folder: Path) -> Iterator[Case]:
    fifo = folder / "special_fifo.json"
    os.mkfifo(fifo)
    yield Case("special_fifo", fifo, "is a named pipe (FIFO)")
    link = folder / "special_link_to_fifo.json"
    link.symlink_to(fifo)
    yield Case("special_link_to_fifo", link, "is a named pipe (FIFO)")
    directory = folder / "special_directory.json"
    directory.mkdir()
    yield Case("special_directory", directory, "is a directory")
    device = folder / "special_dev_null.json"
    device.symlink_to("/dev/null")
    yield Case("special_dev_null", device, "is a character device")
    zero = folder / "special_dev_zero.json"
    zero.symlink_to("/dev/zero")
    yield Case("special_dev_zero", zero, "is a character device")
    sock_path = folder / "special_socket.json"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    sock.close()  # the socket file stays
    yield Case("special_socket", sock_path, "is a socket")
    dangling = folder / "special_dangling.json"
    dangling.symlink_to(folder / "nowhere.json")
    yield Case("special_dangling", dangling, "cannot read (no such file)")
    yield Case("special_missing", folder / "special_missing.json", "cannot read (no such file)")
    inside_file = folder / "field_openai_1_number.json" / "child.json"
    yield Case("special_not_a_directory", inside_file, "cannot read (Not a directory)")
    yield Case("special_name_too_long", folder / ("n" * 300 + ".json"), "cannot read (File name too long)")


GENERATORS: tuple[Callable[[], Iterator[tuple[str, bytes, str]]], ...] = (
    _field_cases, _truncations, _encodings, _nesting, _numbers, _huge, _shapes, _agent_logs)


def build_corpus(folder: Path) -> list[Case]:
    """Write every hostile case into ``folder``; return them (non-regular files last)."""
    folder.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []
    for generate in GENERATORS:
        for name, data, expect in generate():
            path = folder / name
            assert not path.exists(), f"duplicate case {name}"
            path.write_bytes(data)
            cases.append(Case(name, path, expect, huge=len(data) > 1_000_000))
    cases.extend(_special_files(folder))
    return cases


# ---------------------------------------------------------------- round two: loadable files that attack the CLI

ESC_TEXT = "wipe\x1b[2J\x1b]0;owned\x07 bell\x07 csi\x9b31m rtl\u202eevil"  # screen clear, title, BEL, C1, bidi


@dataclass(frozen=True)
class CliCase:
    """One CLI call on a file the loader accepts (or a bad path or value), and what must hold."""

    name: str
    argv: list[str]
    code: int  # the exit code
    needle: str = ""  # text that must appear in stdout or stderr
    max_stdout: int = 200_000  # bytes: output stays linear in the input, never padded to its widest cell
    max_seconds: float = 20.0  # a hang guard, far above the time it takes


def _many_calls(n: int, reverse: bool = False) -> list[dict]:
    """One assistant message with ``n`` tool calls, every one answered (in call order or reversed)."""
    ids = [f"call_{k:06d}" for k in range(n)]
    answers = [{"role": "tool", "tool_call_id": cid, "content": "x"} for cid in (reversed(ids) if reverse else ids)]
    return [{"role": "system", "content": "s"}, {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [_call(cid) for cid in ids]},
            *answers, {"role": "assistant", "content": "done"}]


def _escapes() -> list[dict]:
    """Terminal control sequences in content, a call id, a tool name and an orphan answer."""
    return [{"role": "system", "content": ESC_TEXT}, {"role": "user", "content": ESC_TEXT},
            {"role": "assistant", "content": ESC_TEXT, "tool_calls": [_call("c\x1b[31m1", "ls\x07\x1b[5m")]},
            {"role": "tool", "tool_call_id": "c\x1b[31m1", "content": ESC_TEXT * 50},
            {"role": "tool", "tool_call_id": "orphan\x1b[2J", "content": "x"},
            {"role": "assistant", "content": "done " + ESC_TEXT}]


def build_cli_cases(folder: Path) -> list[CliCase]:
    """Issue 26's second round, as files and calls: many calls in one message, duplicate ids,
    terminal escapes everywhere, bad paths and values, a squatted temporary name."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"calls_20000.json": _many_calls(20_000), "calls_5000_reversed.json": _many_calls(5_000, reverse=True),
             "duplicate_ids.json": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
                                    {"role": "assistant", "content": None, "tool_calls": [_call("t1"), _call("t1")]},
                                    {"role": "tool", "tool_call_id": "t1", "content": "a"},
                                    {"role": "tool", "tool_call_id": "t1", "content": "b"},
                                    {"role": "assistant", "content": "done"}],
             "escapes.json": _escapes()}
    for name, messages in files.items():
        (folder / name).write_text(json.dumps(messages), encoding="utf-8")
    logs = folder / "logs"
    logs.mkdir()
    (logs / "escapes.json").write_text(json.dumps(_escapes()), encoding="utf-8")
    (logs / "bad\x1b[31mname\x07.json").write_text("[{", encoding="utf-8")
    (folder / "empty").mkdir()
    (folder / ".out.csv.tmp").mkdir()  # the name every sweep used to write through: now taken
    f = {name: str(folder / name) for name in files}
    lines = 40_010 * 101  # one table row per message, each within 100 columns
    return [
        CliCase("calls_ledger", ["ledger", f["calls_20000.json"]], 0, "2 requests"),
        CliCase("calls_check_anthropic", ["check", f["calls_20000.json"], "--profile", "anthropic"], 0),
        CliCase("calls_compact_show", ["compact", f["calls_20000.json"], "--force", "--show", "--keep-recent", "1"],
                0, "call_000000…", max_stdout=lines),
        CliCase("calls_compact_show_wide", ["compact", f["calls_20000.json"], "--force", "--show", "--wide",
                                            "--keep-recent", "1"], 0, "(20,000 calls)", max_stdout=lines * 2),
        CliCase("reversed_ledger", ["ledger", f["calls_5000_reversed.json"]], 0, "2 requests"),
        CliCase("reversed_check", ["check", f["calls_5000_reversed.json"]], 0),
        CliCase("duplicate_ids_anthropic", ["check", f["duplicate_ids.json"], "--profile", "anthropic"], 1,
                "two tool calls of one message share an id ('t1')"),
        CliCase("duplicate_ids_openai", ["check", f["duplicate_ids.json"]], 0),
        CliCase("escapes_ledger", ["ledger", f["escapes.json"], "--wide"], 0),
        CliCase("escapes_check", ["check", f["escapes.json"]], 1, "'orphan\\x1b[2J'"),
        CliCase("escapes_compact_show", ["compact", f["escapes.json"], "--force", "--show", "--wide",
                                         "--keep-recent", "1"], 0, "wipe\\x1b[2J\\x1b]0;owned\\x07"),
        CliCase("escapes_sweep", ["sweep", str(logs), "--no-progress", "--wide"], 1, "skipped bad\\x1b[31mname\\x07"),
        CliCase("escapes_sweep_json", ["sweep", str(logs), "--no-progress", "--json"], 1, "escapes.json"),
        CliCase("escapes_missing_name", ["ledger", str(folder / "gone\x1b[2J.json")], 2, "gone\\x1b[2J.json"),
        CliCase("sweep_missing_folder", ["sweep", str(folder / "nowhere")], 2, "no such file or folder"),
        CliCase("sweep_empty_folder", ["sweep", str(folder / "empty")], 2, "no transcript files"),
        CliCase("budget_suffix_typo", ["ledger", f["escapes.json"], "--budget", "60kb"], 2, "argument --budget: "),
        CliCase("budgets_not_numbers", ["sweep", str(logs), "--budgets", "40k,lots"], 2, "argument --budgets: "),
        CliCase("csv_squatted_temp_name", ["sweep", f["escapes.json"], "--no-progress", "--csv",
                                           str(folder / "out.csv")], 0, "written to"),
        CliCase("csv_into_missing_folder", ["sweep", f["escapes.json"], "--csv", str(folder / "no" / "x.csv")], 2,
                "--out "),
    ]


# ---------------------------------------------------------------- the CLI harness


def _child(argv: list[str], out: str, err: str) -> None:
    """In a forked child: run the CLI with stdout/stderr sent to files; exit with its code."""
    for fd, name in ((1, out), (2, err)):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    code = 1
    try:
        from nanohermes_nb.cli import main

        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # what `python -m` would print: the traceback
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_cli(calls: list[list[str]], folder: str, timeout: float, memory_mb: int | None = None) -> list[dict]:
    """Run each argv in its own forked process, killed after ``timeout`` seconds (``hung`` in its result).

    A call may also be ``{"argv": [...], "timeout": seconds}``: its own bound instead of ``timeout``.

    ``memory_mb`` caps each child's extra address space (RLIMIT_AS, on top of what the
    helper already maps); every result carries the child's peak resident set
    (``peak_mb``, from ``wait4``). Output is read back as bytes decoded with
    ``surrogateescape``, so a control character that reached it is still seen.
    """
    import resource

    base = _mapped_bytes()
    results = []
    for k, call in enumerate(calls):
        argv, limit = (call["argv"], float(call["timeout"])) if isinstance(call, dict) else (call, timeout)
        out, err = os.path.join(folder, f"{k}.out"), os.path.join(folder, f"{k}.err")
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            if memory_mb is not None:
                cap = base + memory_mb * 2**20
                resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            _child(argv, out, err)
        status, hung, usage = None, False, None
        while status is None:
            done, raw, usage = os.wait4(pid, os.WNOHANG)
            if done:
                status = raw
            elif time.monotonic() - started > limit:
                os.kill(pid, 9)
                _, status, usage = os.wait4(pid, 0)
                hung = True
            else:
                time.sleep(0.002)
        results.append({"argv": argv, "code": os.waitstatus_to_exitcode(status), "hung": hung,
                        "seconds": time.monotonic() - started, "peak_mb": usage.ru_maxrss / 1024,
                        "stdout": Path(out).read_bytes().decode("utf-8", "surrogateescape"),
                        "stderr": Path(err).read_bytes().decode("utf-8", "surrogateescape")})
    return results


def _mapped_bytes() -> int:
    """This process's address space now (VmSize), which a forked child starts with."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


if __name__ == "__main__":  # python hostile.py CALLS.json RESULTS.json TIMEOUT
    import nanohermes_nb.cli  # noqa: F401  -- every command's modules, imported once before forking
    from nanohermes_nb import policies  # noqa: F401
    from nanohermes_nb.context import compaction, display, history, metrics, summarizers  # noqa: F401
    from nanohermes_nb.engine import ledger  # noqa: F401

    calls_file, results_file, per_call = sys.argv[1], sys.argv[2], float(sys.argv[3])
    memory = int(sys.argv[4]) if len(sys.argv) > 4 else None  # MB each call may add
    work = os.path.dirname(os.path.abspath(results_file))
    found = run_cli(json.loads(Path(calls_file).read_text()), work, per_call, memory)
    Path(results_file).write_text(json.dumps(found))
