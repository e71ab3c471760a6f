"""``ledger`` on an agent's log: the agent's own compactions in ``event``, the replay's apart, the bill kept
when the table narrows, ``unpriced`` where a model has no price, and the replay's notes only with --verbose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nanohermes_nb.cli import main
from nanohermes_nb.transcripts import load_transcript
from nanohermes_nb.views.tables import text_table

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "agentlogs"
CLAUDE = next((SAMPLE / "claude-code").glob("oh-my-posh*.jsonl"))  # opens on a compaction of its own
CODEX = next((SAMPLE / "codex").glob("*.jsonl"))
SMALL = SAMPLE / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl"


def _rows(capsys, *args) -> list[dict]:
    assert main(["ledger", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("path", [CLAUDE, CODEX], ids=["claude_code", "codex_cli"])
def test_the_event_column_shows_the_agent_s_own_compactions(capsys, path: Path) -> None:
    t = load_transcript(path)
    rows = _rows(capsys, path, "--budget", "60k")
    shift = 1 if t[0].get("role") != "system" else 0
    expected = {}
    for c in t.compactions:  # each on the first request after it, as the log places it
        after = [r["request"] for r in rows if r["index"] - shift >= c.message]
        if after:
            expected.setdefault(after[0], []).append(c)
    assert expected, "the sample's compaction comes before a request"
    assert {r["request"]: r["event"] for r in rows if r["event"]} == \
        {k: ", ".join("auto compaction" if c.trigger == "auto" else "compaction" for c in v)
         for k, v in expected.items()}
    replayed = [r for r in rows if r["compacted"]]
    assert replayed and all(r["replay_event"] for r in replayed), "the replay's own events: a column of their own"
    assert all(not r["replay_event"] for r in rows if not r["compacted"])


def test_a_plain_transcript_keeps_its_one_event_column(capsys) -> None:
    path = ROOT / "data" / "transcripts"
    first = sorted(path.glob("*.json"))[0]
    rows = _rows(capsys, first, "--budget", "2k")
    assert rows and "replay_event" not in rows[0]


def test_an_unpriced_model_says_unpriced_never_zero(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "acme.jsonl"
    path.write_text(SMALL.read_text(encoding="utf-8").replace("claude-opus-4-5-20251101", "acme-x-1"),
                    encoding="utf-8")
    rows = _rows(capsys, path)
    billed = [r for r in rows if r["usage_prompt_tokens"] is not None]
    assert billed and all(r["usage_cost_usd"] == "unpriced" for r in billed)
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["ledger", str(path)]) == 0
    table = [ln for ln in capsys.readouterr().out.splitlines() if not ln.startswith("#")]
    assert table[0].split()[-1] == "usage_cost_usd" and all(ln.split()[-1] == "unpriced" for ln in table[1:])


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_the_bill_is_kept_when_the_table_narrows(capsys, monkeypatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["ledger", str(SMALL)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(ln for ln in lines if ln.startswith("request"))
    assert all(len(ln) <= columns for ln in lines if not ln.startswith("#"))
    assert "usage_cost_usd" in header.split() and "cumulative_input" not in header.split()


def test_text_table_drops_the_kept_columns_last() -> None:
    rows = [{"a": 1, "b": 22, "keep1": 333, "c": 4444, "keep2": 5}]
    lines, hidden = text_table(rows, ["a", "b", "keep1", "c", "keep2"], width=14, keep=["keep1", "keep2"])
    assert lines[0].split() == ["a", "keep1", "keep2"] and hidden == ["b", "c"]
    lines, hidden = text_table(rows, ["a", "b", "keep1", "c", "keep2"], width=8, keep=["keep1", "keep2"])
    assert lines[0].split() == ["a", "keep1"] and hidden == ["b", "c", "keep2"], "the last kept goes first"
    lines, hidden = text_table(rows, ["a", "b", "keep1", "c", "keep2"], width=14)
    assert lines[0].split() == ["a", "b", "keep1"] and hidden == ["c", "keep2"], "no keep: from the right"


def test_noise_lines_only_with_verbose(capsys) -> None:
    assert main(["ledger", str(SMALL)]) == 0
    plain = capsys.readouterr().out
    assert main(["ledger", str(SMALL), "--verbose"]) == 0
    verbose = capsys.readouterr().out
    for noise in ("messages[0] was not a system message", "history legal for", "rejected by"):
        assert noise not in plain
    assert "messages[0] was not a system message" in verbose
    assert "history legal for" in verbose or "rejected by" in verbose
    assert [ln for ln in plain.splitlines() if not ln.startswith("#")] == \
        [ln for ln in verbose.splitlines() if not ln.startswith("#")], "the table is the same"
    assert main(["check", str(SMALL), "--profile", "anthropic"]) in (0, 1)  # check still says it all
