"""Tests for ``nanohermes_nb.transcripts``: real transcripts, raw formats, synthetic round
trips, the malformed corpus, and the memory bound on a 50 MB file.

The real transcripts come in two corpora (see conftest): the small vendored sample in
``data/transcripts/`` always, and the extended one (``shared/transcripts`` beside the
checkout, or ``NANOHERMES_TRANSCRIPTS``) when it exists.
"""

from __future__ import annotations

import gc
import hashlib
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from conftest import BY_NAME, ROOT, VENDORED, canonical_sha256, corpus_files
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes_nb.transcripts import (
    Transcript,
    TranscriptError,
    iter_transcript_paths,
    load_transcript,
    load_transcripts,
)
from nanohermes_nb.transcripts import reading as tr

MALFORMED = Path(__file__).resolve().parent / "malformed"


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _dumps(messages: Any) -> str:
    """Key order matters here: the replay measures messages exactly as given."""
    return json.dumps(list(messages), ensure_ascii=False)


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# ---------------------------------------------------------------- the real transcripts (both corpora)

QUIRKS = {"reasoning_content", "mid_conversation_system", "parallel_tool_calls", "reused_tool_call_ids",
          "final_unanswered_call"}
MiB = 1 << 20


def quirks_of(messages: list) -> set[str]:
    """The real-log quirks a converted transcript shows (see data/transcripts/manifest.json)."""
    found = set()
    if any(m.get("reasoning_content") for m in messages):
        found.add("reasoning_content")
    if any(m.get("role") == "system" for m in messages[1:]):
        found.add("mid_conversation_system")
    if any(len(m.get("tool_calls") or []) > 1 for m in messages):
        found.add("parallel_tool_calls")
    ids = [c["id"] for m in messages for c in (m.get("tool_calls") or [])]
    if len(ids) != len(set(ids)):
        found.add("reused_tool_call_ids")
    if messages and messages[-1].get("role") == "assistant" and messages[-1].get("tool_calls"):
        found.add("final_unanswered_call")
    return found


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _vendored_entries() -> dict[str, dict]:
    return {e["file"]: e for e in BY_NAME["vendored"].manifest}


def test_corpus_matches_its_manifest(corpus) -> None:
    manifest = corpus.manifest
    assert sorted(e["file"] for e in manifest if "/" not in e["file"]) == [p.name for p in corpus.files]
    for entry in manifest:
        if "sha256" in entry:  # the vendored manifest pins every file's bytes
            path = corpus.path / entry["file"]
            assert path.stat().st_size == entry["bytes"] and _sha256(path) == entry["sha256"], entry["file"]
    if corpus.name == "extended":
        assert len(corpus.files) >= 18
        # every vendored file is an unchanged copy of the extended corpus's, and the stored
        # hash of each raw file's expected conversion is the hash of the real counterpart
        for name, entry in _vendored_entries().items():
            assert _sha256(corpus.path / name) == entry["sha256"], name
            if name.startswith("raw/"):
                counterpart = _read_json(corpus.path / entry["counterpart"])
                assert canonical_sha256(counterpart[entry["conversion_skips_first"]:]) == entry["conversion_sha256"]
                assert sorted(quirks_of(counterpart)) == sorted(entry["counterpart_quirks"])


def test_vendored_sample_is_small_licensed_and_carries_every_quirk() -> None:
    vendored = BY_NAME["vendored"]
    on_disk = sorted(str(p.relative_to(vendored.path)) for p in vendored.path.rglob("*") if p.is_file())
    entries = _vendored_entries()
    assert on_disk == sorted([*entries, "manifest.json", "NOTICE.md"])
    assert sum((vendored.path / name).stat().st_size for name in on_disk) <= MiB
    assert 4 <= len(vendored.files) <= 8
    assert sorted(p.name for p in vendored.raw.iterdir()) == sorted(RAW_PAIRS)
    carried = set()
    for path in vendored.files:
        found = quirks_of(_read_json(path))
        assert sorted(found) == sorted(entries[path.name]["quirks"]), path.name
        carried |= found
    assert carried == QUIRKS
    notice = (vendored.path / "NOTICE.md").read_text(encoding="utf-8")
    for name, entry in entries.items():
        row = next(line for line in notice.splitlines() if line.startswith(f"| `{name}` |"))
        assert entry["licence"] in row and "Copyright" in row and entry["path"] in row, name
        assert entry["source_repo"].split(" ")[0] in row, name


def test_every_corpus_file_is_named_in_the_notice_or_outside_the_repository(corpus) -> None:
    if corpus.path.resolve() == VENDORED.resolve():
        notice = (corpus.path / "NOTICE.md").read_text(encoding="utf-8")
        assert all(f"`{p.name}`" in notice for p in corpus.files)
    else:
        assert ROOT.resolve() not in corpus.path.resolve().parents


@pytest.mark.parametrize("path", corpus_files())
def test_real_transcript_loads_as_given(path: Path) -> None:
    loaded = load_transcript(path)
    expected = _read_json(path)
    assert isinstance(loaded, Transcript) and isinstance(loaded, list)
    assert loaded.format == "openai"
    assert loaded.path == str(path)
    assert loaded == expected
    assert _dumps(loaded) == _dumps(expected)  # same key order: measured as given


def test_load_transcripts_folder_is_sorted_and_skips_manifest_and_subfolders(corpus) -> None:
    loaded = load_transcripts(corpus.path)
    names = [Path(t.path).name for t in loaded]
    assert names == [p.name for p in corpus.files]
    assert "manifest.json" not in names
    assert {t.format for t in loaded} == {"openai"}


RAW_PAIRS = {
    "mini-swe-agent_django__django-11099.traj.json":
        ("msa_deepseek_chat_test_1-100_django__django-11099.json", "mini-swe-agent"),
    "swe-agent_marshmallow-1867.traj": ("sweagent_demo_marshmallow-1867_fc.json", "swe-agent"),
    "openhands-v1-events_safety-relocation.json": ("openhands_v1_oas_safety-relocation_gpt-4o.json", "openhands-v1"),
    "deerflow-langchain_b83fbb2a.json": ("deerflow_parallel5_b83fbb2a.json", "langchain"),
}


@pytest.mark.parametrize("raw_name", sorted(RAW_PAIRS))
def test_raw_file_converts_to_its_counterpart_exactly(corpus, raw_name: str) -> None:
    """Each original converts exactly (content and key order) to its converted counterpart.

    When the counterpart is not vendored, the vendored manifest holds the SHA-256 of its
    canonical JSON; the extended corpus run checks that hash against the real file.
    The OpenHands counterpart starts with the task's user message, taken from another
    file (the event file has no MessageEvent): the conversion is everything after it.
    """
    converted_name, fmt = RAW_PAIRS[raw_name]
    entry = _vendored_entries()[f"raw/{raw_name}"]
    assert entry["counterpart"] == converted_name and entry["format"] == fmt
    loaded = load_transcript(corpus.raw / raw_name)
    assert loaded.format == fmt
    skip = entry["conversion_skips_first"]
    if skip:
        assert all(m["role"] != "user" for m in loaded)
    assert canonical_sha256(loaded) == entry["conversion_sha256"]
    counterpart = corpus.path / converted_name
    assert counterpart.exists() == (corpus.name == "extended" or entry["counterpart_vendored"])
    if counterpart.exists():
        expected = _read_json(counterpart)
        if skip:
            assert expected[0]["role"] == "user" and isinstance(expected[0]["content"], str)
        assert loaded == expected[skip:]
        assert _dumps(loaded) == _dumps(expected[skip:])  # key order too


def test_raw_folder_loads_every_format(corpus) -> None:
    loaded = load_transcripts(corpus.raw)
    assert sorted(t.format for t in loaded) == sorted(fmt for _, fmt in RAW_PAIRS.values())


# ---------------------------------------------------------------- synthetic round trips

CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "List the files, s'il vous plaît. 文件"},
    {"content": None, "role": "assistant", "tool_calls": [_call("c1", "ls", '{"path": "."}')]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.txt"},
    {"role": "assistant", "content": "Two files.", "reasoning_content": "easy"},
]


def test_jsonl_round_trip_keeps_messages_as_given(tmp_path: Path) -> None:
    lines = [json.dumps(m, ensure_ascii=False) for m in CHAT]
    text = lines[0] + "\r\n\n" + "\n".join(lines[1:]) + "\n\n"
    path = tmp_path / "chat.jsonl"
    path.write_text(text, encoding="utf-8", newline="")
    loaded = load_transcript(path)
    assert loaded.format == "jsonl"
    assert loaded == CHAT and _dumps(loaded) == _dumps(CHAT)


def test_format_comes_from_content_not_extension(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text("\n".join(json.dumps(m) for m in CHAT), encoding="utf-8")
    assert load_transcript(path).format == "jsonl"
    array = _write(tmp_path / "chat.jsonl", CHAT)
    assert load_transcript(array).format == "openai"


def test_object_with_messages_is_openai_object(tmp_path: Path) -> None:
    loaded = load_transcript(_write(tmp_path / "o.json", {"model": "gpt-4o", "messages": CHAT}))
    assert loaded.format == "openai-object"
    assert loaded == CHAT


def test_single_message_object_is_a_one_line_transcript(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(CHAT[1]) + "\n", encoding="utf-8")
    assert load_transcript(path) == [CHAT[1]]


def test_legacy_functions_become_tool_calls_with_stable_ids(tmp_path: Path) -> None:
    source = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "Weather in Paris, then Rome?"},
        {"role": "assistant", "content": None, "function_call": {"name": "weather", "arguments": '{"city": "Paris"}'}},
        {"role": "function", "name": "weather", "content": "18C"},
        {"role": "assistant", "content": "Now Rome.",
         "function_call": {"name": "weather", "arguments": {"city": "Rome"}}},  # a dict: dumped
        {"role": "function", "name": "weather", "content": "21C"},
        {"role": "assistant", "content": "Paris 18C, Rome 21C."},
    ]
    expected = [
        source[0],
        source[1],
        {"role": "assistant", "content": None, "tool_calls": [_call("call_2", "weather", '{"city": "Paris"}')]},
        {"role": "tool", "tool_call_id": "call_2", "name": "weather", "content": "18C"},
        {"role": "assistant", "content": "Now Rome.", "tool_calls": [_call("call_4", "weather", '{"city": "Rome"}')]},
        {"role": "tool", "tool_call_id": "call_4", "name": "weather", "content": "21C"},
        source[6],
    ]
    loaded = load_transcript(_write(tmp_path / "legacy.json", source))
    assert loaded.format == "legacy-functions"
    assert loaded == expected
    assert load_transcript(_write(tmp_path / "again.json", source)) == expected  # stable ids


def test_legacy_function_result_answers_the_call_with_its_name(tmp_path: Path) -> None:
    source = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "function_call": {"name": "a", "arguments": "{}"}},
        {"role": "assistant", "content": None, "function_call": {"name": "b", "arguments": "{}"}},
        {"role": "function", "name": "b", "content": "B"},
        {"role": "function", "name": "a", "content": "A"},
    ]
    loaded = load_transcript(_write(tmp_path / "legacy.json", source))
    assert [(m["role"], m.get("tool_call_id")) for m in loaded[3:]] == [("tool", "call_2"), ("tool", "call_1")]


ANTHROPIC = {
    "model": "claude-sonnet-4",
    "system": [{"type": "text", "text": "You are terse."}, {"type": "text", "text": "Use tools."}],
    "messages": [
        {"role": "user", "content": "What is in the folder?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should list it.", "signature": "sig"},
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
            {"type": "tool_use", "id": "toolu_2", "name": "cat", "input": {"path": "é.txt"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt\né.txt"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": False,
             "content": [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}]},
            {"type": "text", "text": "Also, this screenshot:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "Two files."}]},
    ],
}
ANTHROPIC_EXPECTED = [
    {"role": "system", "content": "You are terse.\nUse tools."},
    {"role": "user", "content": "What is in the folder?"},
    {"role": "assistant", "content": "Listing.", "tool_calls": [
        _call("toolu_1", "ls", '{"path": "."}'), _call("toolu_2", "cat", '{"path": "é.txt"}')]},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "a.txt\né.txt"},
    {"role": "tool", "tool_call_id": "toolu_2", "content": "line 1\nline 2"},
    {"role": "user", "content": [
        {"type": "text", "text": "Also, this screenshot:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]},
    # text-only blocks are already valid OpenAI parts: kept as given
    {"role": "assistant", "content": [{"type": "text", "text": "Two files."}]},
]


def test_anthropic_messages_convert(tmp_path: Path) -> None:
    loaded = load_transcript(_write(tmp_path / "claude.json", ANTHROPIC))
    assert loaded.format == "anthropic"
    assert loaded == ANTHROPIC_EXPECTED
    assert _dumps(loaded) == _dumps(ANTHROPIC_EXPECTED)


def test_anthropic_list_without_system_and_string_system(tmp_path: Path) -> None:
    loaded = load_transcript(_write(tmp_path / "list.json", ANTHROPIC["messages"]))
    assert loaded.format == "anthropic" and loaded == ANTHROPIC_EXPECTED[1:]
    with_string = dict(ANTHROPIC, system="Be brief.")
    loaded = load_transcript(_write(tmp_path / "str.json", with_string))
    assert loaded[0] == {"role": "system", "content": "Be brief."} and loaded[1:] == ANTHROPIC_EXPECTED[1:]


def _lc(cls: str, **kwargs: Any) -> dict:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


LANGCHAIN_LC = [
    _lc("SystemMessage", content="You help.", type="system"),
    _lc("HumanMessage", content=[{"type": "text", "text": "Find TODOs"}], type="human"),
    _lc("AIMessage", content="", type="ai", additional_kwargs={"reasoning_content": "grep it"},
        tool_calls=[{"name": "grep", "args": {"pattern": "TODO", "path": "src/ü"}, "id": "call_a",
                     "type": "tool_call"}],
        invalid_tool_calls=[]),
    _lc("ToolMessage", content="src/a.py:3: # TODO", tool_call_id="call_a", name="grep", status="success", type="tool"),
    _lc("AIMessageChunk", type="AIMessageChunk",
        content=[{"type": "text", "text": "One TODO"}, {"type": "text", "text": "in src/a.py."}]),
]
LANGCHAIN_EXPECTED = [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": "Find TODOs"},
    {"role": "assistant", "content": "", "reasoning_content": "grep it",
     "tool_calls": [_call("call_a", "grep", '{"pattern": "TODO", "path": "src/ü"}')]},
    {"role": "tool", "content": "src/a.py:3: # TODO", "tool_call_id": "call_a", "name": "grep"},
    {"role": "assistant", "content": "One TODO\nin src/a.py."},
]


def test_langchain_lc_serialized_messages_convert(tmp_path: Path) -> None:
    loaded = load_transcript(_write(tmp_path / "lc.json", LANGCHAIN_LC))
    assert loaded.format == "langchain"
    assert loaded == LANGCHAIN_EXPECTED
    assert _dumps(loaded) == _dumps(LANGCHAIN_EXPECTED)


def test_langgraph_state_and_plain_type_messages_convert(tmp_path: Path) -> None:
    plain = [dict(m["kwargs"], type=m["kwargs"]["type"].replace("AIMessageChunk", "ai")) for m in LANGCHAIN_LC]
    state = {"values": {"messages": plain, "title": "t"}, "next": [], "metadata": {}}
    assert load_transcript(_write(tmp_path / "state.json", state)) == LANGCHAIN_EXPECTED
    assert load_transcript(_write(tmp_path / "list.json", plain)) == LANGCHAIN_EXPECTED


OPENHANDS = [
    {"kind": "SystemPromptEvent", "source": "agent", "tools": [],
     "system_prompt": {"type": "text", "text": "You are OpenHands."}},
    {"kind": "MessageEvent", "source": "user",
     "llm_message": {"role": "user", "content": [{"type": "text", "text": "Fix the bug."}]},
     "extended_content": [{"type": "text", "text": "<repo>x</repo>"}]},
    {"kind": "ActionEvent", "thought": [{"type": "text", "text": "Look first."}], "reasoning_content": None,
     "tool_name": "execute_bash", "tool_call_id": "c1", "llm_response_id": "r1",
     "tool_call": {"id": "c1", "name": "execute_bash", "arguments": '{"command": "ls"}', "origin": "completion"}},
    {"kind": "ActionEvent", "thought": [], "tool_name": "str_replace_editor", "tool_call_id": "c2",
     "llm_response_id": "r1",
     "tool_call": {"id": "c2", "name": "str_replace_editor", "arguments": '{"command": "view", "path": "/a.py"}'}},
    {"kind": "ConversationStateUpdateEvent", "key": "execution_status", "value": "running"},
    {"kind": "ObservationEvent", "tool_name": "execute_bash", "tool_call_id": "c1",
     "observation": {"kind": "ExecuteBashObservation", "output": "a.py\n", "exit_code": 0}},
    {"kind": "ObservationEvent", "tool_name": "str_replace_editor", "tool_call_id": "c2",
     "observation": {"kind": "StrReplaceEditorObservation",
                     "content": [{"type": "text", "text": "1\tprint(1)"}, {"type": "text", "text": "2\tprint(2)"}]}},
    {"kind": "ActionEvent", "thought": [], "tool_name": "execute_bash", "tool_call_id": "c3", "llm_response_id": "r2",
     "tool_call": {"id": "c3", "name": "execute_bash", "arguments": '{"command": "rm -rf /"}'}},
    {"kind": "UserRejectObservation", "tool_name": "execute_bash", "tool_call_id": "c3",
     "rejection_reason": "too dangerous"},
    {"kind": "ActionEvent", "thought": [], "tool_name": "nope", "tool_call_id": "c4", "llm_response_id": "r3",
     "tool_call": {"id": "c4", "name": "nope", "arguments": "{}"}},
    {"kind": "AgentErrorEvent", "tool_name": "nope", "tool_call_id": "c4", "error": "Tool 'nope' not found."},
    {"kind": "ActionEvent", "thought": [], "tool_name": "think", "tool_call_id": "c5", "llm_response_id": "r4",
     "tool_call": {"id": "c5", "name": "think", "arguments": '{"thought": "ok"}'}},
    {"kind": "ObservationEvent", "tool_name": "think", "tool_call_id": "c5",
     "observation": {"kind": "ThinkObservation", "content": "Your thought has been logged."}},
    {"kind": "MessageEvent", "source": "agent",
     "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}},
]
OPENHANDS_EXPECTED = [
    {"role": "system", "content": "You are OpenHands."},
    {"role": "user", "content": "Fix the bug.\n<repo>x</repo>"},
    {"role": "assistant", "content": "Look first.", "tool_calls": [
        _call("c1", "execute_bash", '{"command": "ls"}'),
        _call("c2", "str_replace_editor", '{"command": "view", "path": "/a.py"}')]},
    {"role": "tool", "tool_call_id": "c1", "name": "execute_bash", "content": "a.py\n"},
    {"role": "tool", "tool_call_id": "c2", "name": "str_replace_editor", "content": "1\tprint(1)\n2\tprint(2)"},
    {"role": "assistant", "content": None, "tool_calls": [_call("c3", "execute_bash", '{"command": "rm -rf /"}')]},
    {"role": "tool", "tool_call_id": "c3", "name": "execute_bash", "content": "Action rejected: too dangerous"},
    {"role": "assistant", "content": None, "tool_calls": [_call("c4", "nope", "{}")]},
    {"role": "tool", "tool_call_id": "c4", "name": "nope", "content": "Tool 'nope' not found."},
    {"role": "assistant", "content": None, "tool_calls": [_call("c5", "think", '{"thought": "ok"}')]},
    {"role": "tool", "tool_call_id": "c5", "name": "think",
     "content": '{"kind": "ThinkObservation", "content": "Your thought has been logged."}'},
    {"role": "assistant", "content": "Done."},
]


def test_openhands_events_convert(tmp_path: Path) -> None:
    loaded = load_transcript(_write(tmp_path / "events.json", OPENHANDS))
    assert loaded.format == "openhands-v1"
    assert loaded == OPENHANDS_EXPECTED
    assert _dumps(loaded) == _dumps(OPENHANDS_EXPECTED)


def test_openhands_events_as_object_and_as_jsonl(tmp_path: Path) -> None:
    assert load_transcript(_write(tmp_path / "o.json", {"events": OPENHANDS})) == OPENHANDS_EXPECTED
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in OPENHANDS) + "\n", encoding="utf-8")
    loaded = load_transcript(path)
    assert loaded.format == "openhands-v1" and loaded == OPENHANDS_EXPECTED


def test_mini_swe_agent_keeps_only_chat_fields(tmp_path: Path) -> None:
    source = {"trajectory_format": "mini-swe-agent-1.1", "info": {"mini_version": "2.2.7"}, "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        {"content": "looking", "role": "assistant", "reasoning_content": "r1", "function_call": None,
         "tool_calls": [{"index": 0, "function": {"arguments": '{"command": "ls"}', "name": "bash"},
                         "id": "c1", "type": "function"}],
         "provider_specific_fields": None, "extra": {"cost": 1}},
        {"content": "a.txt", "extra": {}, "tool_call_id": "c1", "role": "tool", "name": "bash"},
        {"content": "no tool", "role": "assistant", "reasoning_content": None, "tool_calls": None},
        {"role": "exit", "content": "diff", "extra": {}},
    ]}
    expected = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "looking", "reasoning_content": "r1",
         "tool_calls": [_call("c1", "bash", '{"command": "ls"}')]},
        {"role": "tool", "content": "a.txt", "tool_call_id": "c1", "name": "bash"},
        {"role": "assistant", "content": "no tool"},
    ]
    loaded = load_transcript(_write(tmp_path / "x.traj.json", source))
    assert loaded.format == "mini-swe-agent"
    assert _dumps(loaded) == _dumps(expected)


def test_history_level_problems_are_not_flagged(tmp_path: Path) -> None:
    """Orphan results, unanswered calls and reused ids are check_history's job."""
    messages = [
        {"role": "tool", "tool_call_id": "orphan", "content": "?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "ls", "{}")]},
        {"role": "system", "content": "notice mid-conversation"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "ls", "{}")]},
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c9", "ls", "{}")]},
    ]
    assert load_transcript(_write(tmp_path / "h.json", messages)) == messages


# ---------------------------------------------------------------- property: JSON and JSONL round trips

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@st.composite
def _messages(draw: st.DrawFn) -> list[dict]:
    out: list[dict] = [{"role": "system", "content": draw(_text)}]
    for k in range(draw(st.integers(0, 8))):
        role = draw(st.sampled_from(["user", "assistant", "tool", "developer"]))
        if role == "tool":
            out.append({"role": "tool", "tool_call_id": f"c{k}", "content": draw(_text)})
        elif role == "assistant" and draw(st.booleans()):
            out.append({"role": "assistant", "content": draw(st.none() | _text),
                        "tool_calls": [_call(f"c{k}", draw(_text.filter(bool)), draw(_text))]})
        else:
            out.append({"content": draw(_text), "role": role})
    return out


@settings(max_examples=60, deadline=None)
@given(messages=_messages(), indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans(),
       jsonl=st.booleans(), window=st.sampled_from([1, 5, 64, 4096]))
def test_round_trip_property(tmp_path_factory: pytest.TempPathFactory, messages: list[dict], indent: Any,
                             ascii_only: bool, jsonl: bool, window: int) -> None:
    folder = tmp_path_factory.mktemp("prop")
    if jsonl:
        text = "\n".join(json.dumps(m, ensure_ascii=ascii_only) for m in messages)
    else:
        text = json.dumps(messages, ensure_ascii=ascii_only, indent=indent)
    path = folder / "t.json"
    path.write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tr, "FIRST_WINDOW", window)
        loaded = load_transcript(path)
    assert loaded == messages and _dumps(loaded) == _dumps(messages)
    assert loaded.format == ("jsonl" if jsonl else "openai")


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(value=st.lists(_json_values, max_size=6), indent=st.sampled_from([None, 0, 3]),
       ascii_only=st.booleans(), window=st.sampled_from([1, 2, 7, 4096]), cut=st.integers(0, 10_000))
def test_streaming_array_parser_agrees_with_json_loads(value: list, indent: Any, ascii_only: bool,
                                                       window: int, cut: int) -> None:
    """The element-by-element parser gives the whole-document parse's result, or gives up
    (None) so the caller falls back to it; it never returns a different value. (Both
    mark the numbers serde_json refuses, e.g. a cut that makes a float overflow.)"""
    raw = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode("utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tr, "FIRST_WINDOW", window)
        assert tr.parse_array_stream(raw) == tr.StrictDecoder().decode(raw.decode("utf-8"))
        at = cut % len(raw)
        broken = raw[:at] + raw[at + 1:]
        got = tr.parse_array_stream(broken) if broken.lstrip().startswith(b"[") else None
    if got is not None:
        assert got == tr.StrictDecoder().decode(broken.decode("utf-8"))


def test_streaming_fallback_reports_json_loads_position(tmp_path: Path) -> None:
    big = "x" * 50_000
    text = json.dumps([{"role": "user", "content": big}] * 3, indent=1)
    at = text.rindex('"role": "user"')  # in the last element: the streaming path sees it late
    broken = text[:at] + '"role" "user"' + text[at + len('"role": "user"'):]
    path = tmp_path / "b.json"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(broken)
    with pytest.raises(TranscriptError) as err:
        load_transcript(path)
    e = expected.value
    assert err.value.where == f"line {e.lineno}"
    assert err.value.reason == f"invalid JSON ({e.msg}, column {e.colno})"


# ---------------------------------------------------------------- the malformed corpus

EXPECTED_ERRORS: dict[str, str] = _read_json(MALFORMED / "expected.json")
MALFORMED_FILES = sorted(p for p in MALFORMED.iterdir() if p.name != "expected.json")


def test_malformed_corpus_is_complete() -> None:
    assert len(MALFORMED_FILES) >= 20
    assert sorted(EXPECTED_ERRORS) == [p.name for p in MALFORMED_FILES]


@pytest.mark.parametrize("path", MALFORMED_FILES, ids=lambda p: p.name)
def test_malformed_file_raises_one_line_error(path: Path) -> None:
    with pytest.raises(TranscriptError) as err:
        load_transcript(path)
    message = str(err.value)
    assert "\n" not in message and "\r" not in message
    assert message.startswith(f"{path}: ")
    assert path.name in message
    assert EXPECTED_ERRORS[path.name] in message
    assert err.value.path == str(path)
    assert message == ": ".join(x for x in (err.value.path, err.value.where, err.value.reason) if x)


def test_unreadable_paths(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match=r"missing\.json: cannot read \(no such file\)$"):
        load_transcript(tmp_path / "missing.json")
    with pytest.raises(TranscriptError, match="is a directory"):
        load_transcript(tmp_path)
    assert issubclass(TranscriptError, ValueError)


def test_error_is_one_line_even_with_line_breaks_in_values(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError) as err:
        load_transcript(_write(tmp_path / "r.json", [{"role": "us\ner", "content": "x"}]))
    assert "\n" not in str(err.value) and err.value.where == "message 0"
    assert err.value.reason.startswith("unknown role 'us\\ner'")
    with pytest.raises(TranscriptError) as err:
        load_transcript(tmp_path / "odd\nname.json")
    assert "\n" not in str(err.value) and str(err.value).endswith("odd name.json: cannot read (no such file)")


def test_iter_transcript_paths(tmp_path: Path) -> None:
    for name in ["b.jsonl", "a.json", "c.traj", "manifest.json", "notes.txt", ".hidden.json"]:
        (tmp_path / name).write_text("[]")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.json").write_text("[]")
    assert [p.name for p in iter_transcript_paths(tmp_path)] == ["a.json", "b.jsonl", "c.traj"]
    given_order = [tmp_path / "c.traj", tmp_path / "a.json"]
    assert list(iter_transcript_paths(given_order)) == given_order
    assert list(iter_transcript_paths(str(tmp_path / "a.json"))) == [tmp_path / "a.json"]


# ---------------------------------------------------------------- memory: a 50 MB transcript

_TARGET_BYTES = 50_000_000


def _big_messages() -> list[dict]:
    """~50 MB of realistic traffic: code and logs, some CJK, one emoji, many tool turns."""
    code = "".join(f"    {i:4d}  def handler_{i}(request): return render(request, 'page.html')\n" for i in range(120))
    cjk = "日志：请求已处理，耗时 12 毫秒。\n" * 40
    messages: list[dict] = [{"role": "system", "content": "You are a coding agent. 🚀"},
                            {"role": "user", "content": "Refactor the handlers."}]
    size, k = 0, 0
    while size < _TARGET_BYTES:
        k += 1
        output = f"{k}\n" + (code + cjk if k % 5 == 0 else code)
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [_call(f"call_{k}", "read_file", json.dumps({"path": f"app/views_{k}.py"}))]})
        messages.append({"role": "tool", "tool_call_id": f"call_{k}", "content": output})
        size += len(output.encode("utf-8")) + 200
    return messages


@pytest.mark.parametrize("jsonl", [False, True], ids=["json", "jsonl"])
@pytest.mark.big
@pytest.mark.timeout(120)  # the hang guard (it loads in seconds); the bound asserted is memory
def test_50mb_transcript_loads_within_4x_its_size(tmp_path: Path, jsonl: bool) -> None:
    path = tmp_path / ("big.jsonl" if jsonl else "big.json")
    messages = _big_messages()
    with path.open("w", encoding="utf-8") as f:
        if jsonl:
            for m in messages:
                f.write(json.dumps(m, ensure_ascii=False) + "\n")
        else:
            json.dump(messages, f, ensure_ascii=False)
    count = len(messages)
    del messages
    gc.collect()
    size = path.stat().st_size
    assert size >= 45_000_000
    tracemalloc.start()
    try:
        loaded = load_transcript(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(loaded) == count
    assert loaded.format == ("jsonl" if jsonl else "openai")
    assert peak < 4 * size, f"peak {peak / size:.2f}x the file size"
