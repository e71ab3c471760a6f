"""The command line: real processes, exit codes, one-line errors, and output a person can read."""

import csv
import json
import os
import subprocess
import sys

import pytest
from builders import session
from conftest import ROOT

from nanohermes_nb import check_history, context_size, load_transcript, replay, sweep
from nanohermes_nb.cli import WIDTH, main, plural
from nanohermes_nb.engine.ledger import prepare
from nanohermes_nb.policies import NanoHermesPolicy

TWELVE = ROOT / "data" / "sessions" / "twelve_turns.json"


def run(*args, cwd=None, env=None, encoding="utf-8"):
    return subprocess.run([sys.executable, "-m", "nanohermes_nb", *map(str, args)], capture_output=True,
                          encoding=encoding, cwd=cwd, timeout=120, env=env)


def run_here(capsys, *args) -> tuple[int, list[str]]:
    """The same program in this process (fast enough to try every transcript of a corpus)."""
    code = main([str(a) for a in args])
    return code, capsys.readouterr().out.splitlines()


# ---------------------------------------------------------------- ledger


def test_ledger_json_rows(corpus):
    big = corpus.largest()
    p = run("ledger", big, "--json", "--budget", "30000", "--keep-recent", "8")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    msgs = json.loads(big.read_text())
    assert len(rows) == sum(1 for m in msgs if m["role"] == "assistant")
    expected = replay(load_transcript(big), budget=30_000, policy=NanoHermesPolicy(keep_recent=8)).requests
    assert list(rows[0]) == list(expected.columns)  # --json keeps every column, in order
    assert [r["size"] for r in rows] == expected["size"].tolist()
    assert any(r["compacted"] for r in rows)


def test_ledger_text_fits_100_columns_with_a_one_line_legend(corpus, capsys):
    for path in [*corpus.files, TWELVE]:
        for extra in ([], ["--by-turn"], ["--budget", "30000", "--keep-recent", "4"]):
            code, lines = run_here(capsys, "ledger", path, *extra)
            assert code == 0
            too_wide = [ln for ln in lines if len(ln) > WIDTH]
            assert not too_wide, (path.name, extra, too_wide[:2])
            legends = [ln for ln in lines if ln.startswith(("# size:", "# largest_sent:"))]
            assert len(legends) == 1, (path.name, extra, lines[:3])
            header = lines[lines.index(legends[0]) + 1]
            assert header.split()[:2] == (["turn", "requests"] if extra == ["--by-turn"] else ["request", "turn"])
            assert any("Counterfactual" in ln for ln in lines)


def test_ledger_wide_shows_every_column(capsys):
    ledger = replay(load_transcript(TWELVE))
    code, lines = run_here(capsys, "ledger", TWELVE, "--wide")
    header = next(ln for ln in lines if not ln.startswith("#"))
    assert code == 0 and header.split() == list(ledger.requests.columns)
    assert max(len(ln) for ln in lines) > WIDTH
    code, narrow = run_here(capsys, "ledger", TWELVE)
    assert f"--wide shows {len(ledger.requests.columns) - 9} more columns" in narrow[0]


def test_plurals_are_right(tmp_path, capsys):
    assert [plural(n, "event") for n in (0, 1, 2, 1500)] == ["0 events", "1 event", "2 events", "1,500 events"]
    one = replay(load_transcript(TWELVE))
    assert one.totals.compactions == 1 and one.totals.summarizer_calls == 1  # the lesson's single compaction
    _, lines = run_here(capsys, "ledger", TWELVE)
    text = "\n".join(lines)
    assert "1 event (nanohermes), 1 summarizer call" in text and "1 events" not in text
    _, lines = run_here(capsys, "ledger", TWELVE, "--budget", "40000")
    events = replay(load_transcript(TWELVE), budget=40_000).totals.compactions
    assert events > 1 and f"{events} events (nanohermes), {events} summarizer calls" in "\n".join(lines)
    single = tmp_path / "one.json"
    single.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    _, lines = run_here(capsys, "ledger", single)
    assert any(ln.startswith("# 1 request, ") for ln in lines)
    code, lines = run_here(capsys, "compact", single, "--force", "--keep-recent", "1", "-o", tmp_path / "o.json")
    assert "dropped 1 message (1..1)" in lines[1] and lines[-1].startswith("wrote 3 messages")


def test_by_turn_names_both_sizes(capsys):
    """'turn 10: 127,507' next to 'peak 116,582' is not a puzzle: two columns, two names."""
    ledger = replay(load_transcript(TWELVE))
    sent = ledger.requests.groupby("turn")["size"].max()
    seen = ledger.by_turn().set_index("turn")["size"]
    assert (seen > sent).any()  # the check sees the reply and the tool results, so it can see more
    code, lines = run_here(capsys, "ledger", TWELVE, "--by-turn")
    legend = next(ln for ln in lines if ln.startswith("# largest_sent:"))
    assert "largest request sent" in legend and "compaction check saw" in legend
    rows = [ln.split() for ln in lines if ln[:1] == " " or ln[:1].isdigit()]
    assert len(rows) == len(sent)
    for row in rows:
        turn = int(row[0])
        assert row[3] == f"{sent[turn]:,}" and row[4] == f"{seen[turn]:,}"
    assert f"peak request {ledger.totals.peak_request:,} bytes" in "\n".join(lines)
    assert ledger.totals.peak_request == sent.max()
    p = run("ledger", TWELVE, "--by-turn", "--json")
    rows = json.loads(p.stdout)
    assert rows[0]["turn"] == 1 and [r["largest_sent"] for r in rows] == sent.tolist()
    assert [r["check_saw"] for r in rows] == seen.tolist()


# ---------------------------------------------------------------- check


def test_check_exit_codes(corpus):
    problems = {p: check_history(load_transcript(p)) for p in corpus.files}
    legal = next(p for p, found in problems.items() if not found)
    broken = next(p for p, found in problems.items() if found)
    ok = run("check", legal)
    assert ok.returncode == 0 and ok.stdout == ""
    bad = run("check", broken)
    assert bad.returncode == 1
    lines = bad.stdout.strip().splitlines()
    assert len(lines) == len(problems[broken]) and all("message " in ln for ln in lines)


# ---------------------------------------------------------------- compact


def test_compact_writes_output_and_shows_table(tmp_path):
    src = tmp_path / "s.json"
    src.write_text(json.dumps(session(12, body="x" * 2000)))
    out = tmp_path / "out.json"
    p = run("compact", src, "-o", out, "--show", "--budget", "5000")
    assert p.returncode == 0, p.stderr
    compacted = json.loads(out.read_text())
    assert compacted[1]["content"].startswith("[Earlier conversation summary]")
    lines = p.stdout.splitlines()
    assert lines[0].startswith("compacted: dropped ") and lines[1].split()[:5] == ["before", "after", "role",
                                                                                     "size", "status"]
    assert json.loads(src.read_text()) == session(12, body="x" * 2000)  # input untouched
    j = run("compact", src, "--json", "--force")
    assert json.loads(j.stdout)["compacted"] is True


def test_compact_prepends_the_empty_system_message_as_the_ledger_does(tmp_path):
    msgs = session(12, body="x" * 2000)[1:]  # no system message
    src = tmp_path / "nosys.json"
    src.write_text(json.dumps(msgs))
    prepared, notes = prepare(msgs)
    assert prepared[0] == {"role": "system", "content": ""} and notes
    out = tmp_path / "out.json"
    p = run("compact", src, "--force", "-o", out)
    assert p.returncode == 0 and p.stdout.splitlines()[0] == f"# {notes[0]}"
    ledger = run("ledger", src)
    assert ledger.stdout.splitlines()[0] == f"# {notes[0]}"
    written = json.loads(out.read_text())
    assert written[0] == {"role": "system", "content": ""} and written[2:] == prepared[-len(written) + 2:]
    j = json.loads(run("compact", src, "--force", "--json").stdout)
    assert j["size_before"] == context_size(prepared) and j["notes"] == notes


def test_compact_verify_checks_every_profile_and_exits_1_on_a_failure(tmp_path):
    src = tmp_path / "s.json"
    src.write_text(json.dumps(session(12, body="x" * 2000)))
    # the article's default puts the summary in a system message: Anthropic and Gemini reject it
    p = run("compact", src, "--budget", "15000", "--keep-recent", "4", "--verify")
    assert p.returncode == 1, p.stdout
    lines = p.stdout.splitlines()
    for profile in ("openai", "anthropic", "gemini"):
        assert sum(f"history legality ({profile})" in ln for ln in lines) == 1
    assert any(ln.startswith("FAIL history legality (anthropic)") for ln in lines)
    assert any(ln.startswith("ok   history legality (openai)") for ln in lines)
    assert lines[-1].startswith("# ") and "of 10 checks passed" in lines[-1]
    checks = json.loads(run("compact", src, "--budget", "15000", "--keep-recent", "4", "--verify", "--json")
                        .stdout)["checks"]
    assert [c["profile"] for c in checks if "profile" in c] == ["openai", "anthropic", "gemini"]
    # one profile, or a summary in the user role: every check passes, exit 0
    for extra in (["--profile", "openai"], ["--summary-role", "user"]):
        p = run("compact", src, "--budget", "15000", "--keep-recent", "4", "--verify", *extra)
        assert p.returncode == 0, (extra, p.stdout)
        assert "FAIL" not in p.stdout
    # nothing compacted: nothing verified, and that is a failed check
    p = run("compact", src, "--budget", "10000000", "--verify")
    assert p.returncode == 1 and "FAIL compacted" in p.stdout and "--force" in p.stdout
    # without --verify the exit code is 0 whatever the history
    assert run("compact", src, "--budget", "15000", "--keep-recent", "4").returncode == 0


# ---------------------------------------------------------------- sweep


def test_sweep_prints_a_compact_table_and_writes_the_full_frame(corpus, tmp_path):
    out = tmp_path / "sweep.csv"
    p = run("sweep", corpus.path, "--budgets", "30000,60000", "--keep-recent", "5,10", "--policies",
            "nanohermes,observation_masking", "--csv", out)
    assert p.returncode == 0, p.stderr
    files = corpus.files
    lines = p.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= WIDTH
    table = [ln for ln in lines if not ln.startswith("#")]
    rows = 2 * 2 * len(files) + 2 * len(files)  # nanohermes: budgets x keep_recent; masking: budgets
    assert len(table) == 1 + rows and table[0].split()[:4] == ["transcript", "policy", "budget", "keep"]
    frame = sweep([corpus.path], budgets=[30_000, 60_000], keep_recent=[5, 10],
                  policies=["nanohermes", "observation_masking"])
    with open(out, newline="", encoding="utf-8") as f:
        written = list(csv.DictReader(f))
    assert list(written[0]) == list(frame.columns) and len(written) == len(frame) == rows
    footer = " ".join(ln[2:] for ln in lines[len(table) + 1:])
    assert f"{rows} rows" in footer and str(out) in footer
    assert "sweep [" in p.stderr and "/" + str(len(files)) in p.stderr


def test_sweep_json_is_the_full_frame():
    p = run("sweep", ROOT / "data" / "sessions", "--budgets", "60000,120000", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    frame = sweep([ROOT / "data" / "sessions"], budgets=[60_000, 120_000])
    assert len(rows) == len(frame) and list(rows[0]) == list(frame.columns)
    assert [r["cumulative_input"] for r in rows] == frame["cumulative_input"].tolist()


# ---------------------------------------------------------------- text a terminal cannot encode


def test_output_never_fails_on_a_character_the_terminal_cannot_encode(tmp_path):
    src = tmp_path / "odd.json"
    src.write_text(json.dumps([
        {"role": "user", "content": "caf\u00e9 \ud800 \u4e2d\u6587 please read it"},
        {"role": "assistant", "content": "reading \ud800", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "read\ud800", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "x \u2192 y"},
        {"role": "assistant", "content": "done"},
    ]))  # json.dumps escapes the lone surrogate as \ud800, which JSON allows
    for encoding in ("ascii", "utf-8"):
        env = {**os.environ, "PYTHONIOENCODING": encoding}
        for args in (["ledger"], ["ledger", "--by-turn"], ["compact", "--force", "--show", "--keep-recent", "1"],
                     ["check"], ["sweep", "--no-progress"]):
            p = run(*args, src, env=env, encoding=encoding)
            assert p.returncode == 0 and "Traceback" not in p.stderr, (encoding, args, p.stderr[-500:])
        p = run("compact", src, "--force", "--keep-recent", "1", "--show", env=env, encoding=encoding)
        assert "\\ud800" in p.stdout  # shown as an escape, not lost
        for args in (["ledger", "--by-turn", "--json"], ["compact", "--force", "--keep-recent", "1", "--json"]):
            p = run(*args, src, env=env, encoding=encoding)
            assert p.returncode == 0, (encoding, args, p.stderr[-500:])
            data = json.loads(p.stdout)  # still valid JSON, the same strings
            text = json.dumps(data, ensure_ascii=False)
            assert "\ud800" in text


# ---------------------------------------------------------------- bad input


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
    p = run("ledger", TWELVE, "--budget", "lots")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    p = run("sweep", ROOT / "data" / "sessions", "--policies", "magic")
    assert p.returncode == 2 and "unknown policy" in p.stderr
    p = run("compact", TWELVE, "--verify", "--profile", "bedrock")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


# --- engine v2: policies' options, jobs, streaming, skipped files ------------------------------


def test_an_option_the_policy_does_not_have_is_one_line_exit_2(corpus):
    p = run("ledger", corpus.largest(), "--policy", "codex", "--keep-recent", "4")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and line.startswith(
        "nanohermes-nb: error: option 'keep_recent' does not apply to policy 'codex' (its options: ")
    assert "user_message_max_tokens" in line
    ok = run("ledger", corpus.largest(), "--policy", "codex", "--json")
    assert ok.returncode == 0
    s = run("sweep", corpus.path, "--policies", "codex", "--keep-recent", "4", "--no-progress")
    assert s.returncode == 2 and s.stderr.count("\n") == 1 and "keep_recent" in s.stderr


def test_sweep_with_jobs_streams_and_reports_skipped_files(corpus, tmp_path):
    import pandas as pd

    folder = tmp_path / "logs"
    folder.mkdir()
    for f in corpus.files[:3]:
        (folder / f.name).write_bytes(f.read_bytes())
    (folder / "broken.json").write_text("[{", encoding="utf-8")
    out = tmp_path / "rows.parquet"
    p = run("sweep", folder, "--budgets", "30000,60000", "--jobs", "2", "--out", out, "--no-progress")
    assert p.returncode == 1, p.stderr
    assert [ln for ln in p.stderr.splitlines()] == [ln for ln in p.stderr.splitlines() if "broken.json" in ln]
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("nanohermes-nb: skipped broken.json: ")
    assert "6 rows from 3 transcripts" in p.stdout
    rows = pd.read_parquet(out)
    assert sorted(set(rows["transcript"])) == sorted(f.name for f in corpus.files[:3])
    strict = run("sweep", folder, "--strict", "--no-progress")
    assert strict.returncode == 2 and "broken.json" in strict.stderr and "Traceback" not in strict.stderr


def test_summarizer_llm_misconfigured_is_one_line_exit_2_and_never_shows_the_key():
    env = {**os.environ, "NANOHERMES_LLM_BASE_URL": "http://127.0.0.1:9/v1", "NANOHERMES_LLM_API_KEY": "sk-SECRET\nx"}
    p = run("ledger", TWELVE, "--summarizer", "llm", env=env)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert "SECRET" not in p.stderr and "line feed" in p.stderr
    env.pop("NANOHERMES_LLM_BASE_URL")
    p = run("ledger", TWELVE, "--summarizer", "llm", env=env)
    assert p.returncode == 2 and "NANOHERMES_LLM_BASE_URL" in p.stderr
