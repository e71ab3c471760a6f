"""The command line: exit codes, one-line errors, and output a person can read.

Most tests call ``main(argv)`` in this process (the same code a shell runs, at a
fraction of the cost); the few that need a real process (the entry point, a
terminal that cannot encode UTF-8, two sweeps at once) start one and are marked
slow.
"""

import csv
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest
from builders import session
from conftest import ROOT

from nanohermes_nb import check_history, context_size, load_transcript, replay, sweep
from nanohermes_nb.cli import WIDTH, main, plural
from nanohermes_nb.engine.ledger import prepare
from nanohermes_nb.policies import NanoHermesPolicy

TWELVE = ROOT / "data" / "sessions" / "twelve_turns.json"


@pytest.fixture(autouse=True)
def _default_width(monkeypatch):
    """Tables fit COLUMNS; these tests expect the default (100) unless they set it."""
    monkeypatch.delenv("COLUMNS", raising=False)


def run(*args, cwd=None, env=None, encoding="utf-8"):
    """A real ``python -m nanohermes_nb`` process (COLUMNS unset unless ``env`` says)."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "nanohermes_nb", *map(str, args)], capture_output=True,
                          encoding=encoding, cwd=cwd, timeout=120, env=env)


@dataclass
class Done:
    """What ``main`` did in this process: the exit code and both streams."""

    returncode: int
    stdout: str
    stderr: str


def call(capsys, *args) -> Done:
    """``nanohermes-nb ARGS`` in this process; argparse's exits become exit codes too."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return Done(code, out.out, out.err)


def run_here(capsys, *args) -> tuple[int, list[str]]:
    """The same program in this process: exit code and stdout lines."""
    done = call(capsys, *args)
    return done.returncode, done.stdout.splitlines()


# ---------------------------------------------------------------- ledger


def test_ledger_json_rows(corpus, capsys):
    big = corpus.largest()
    p = call(capsys, "ledger", big, "--json", "--budget", "30000", "--keep-recent", "8")
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
    assert one.totals.n_compactions == 1 and one.totals.summarizer_calls == 1  # the lesson's single compaction
    _, lines = run_here(capsys, "ledger", TWELVE)
    text = "\n".join(lines)
    assert "1 event (nanohermes), 1 summarizer call" in text and "1 events" not in text
    _, lines = run_here(capsys, "ledger", TWELVE, "--budget", "40000")
    events = replay(load_transcript(TWELVE), budget=40_000).totals.n_compactions
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
    p = call(capsys, "ledger", TWELVE, "--by-turn", "--json")
    rows = json.loads(p.stdout)
    assert rows[0]["turn"] == 1 and [r["largest_sent"] for r in rows] == sent.tolist()
    assert [r["check_saw"] for r in rows] == seen.tolist()


# ---------------------------------------------------------------- check


def test_check_exit_codes(corpus, capsys):
    problems = {p: check_history(load_transcript(p)) for p in corpus.files}
    legal = next(p for p, found in problems.items() if not found)
    broken = next(p for p, found in problems.items() if found)
    ok = call(capsys, "check", legal)
    assert ok.returncode == 0 and ok.stdout == ""
    bad = call(capsys, "check", broken)
    assert bad.returncode == 1
    lines = bad.stdout.strip().splitlines()
    assert len(lines) == len(problems[broken]) and all("message " in ln for ln in lines)


# ---------------------------------------------------------------- compact


def test_compact_writes_output_and_shows_table(tmp_path, capsys):
    src = tmp_path / "s.json"
    src.write_text(json.dumps(session(12, body="x" * 2000)))
    out = tmp_path / "out.json"
    p = call(capsys, "compact", src, "-o", out, "--show", "--budget", "5000")
    assert p.returncode == 0, p.stderr
    compacted = json.loads(out.read_text())
    assert compacted[1]["content"].startswith("[Earlier conversation summary]")
    lines = p.stdout.splitlines()
    assert lines[0].startswith("compacted: dropped ") and lines[1].split()[:5] == ["before", "after", "role",
                                                                                     "size", "status"]
    assert json.loads(src.read_text()) == session(12, body="x" * 2000)  # input untouched
    j = call(capsys, "compact", src, "--json", "--force")
    assert json.loads(j.stdout)["compacted"] is True


def test_compact_prepends_the_empty_system_message_as_the_ledger_does(tmp_path, capsys):
    msgs = session(12, body="x" * 2000)[1:]  # no system message
    src = tmp_path / "nosys.json"
    src.write_text(json.dumps(msgs))
    prepared, notes = prepare(msgs)
    assert prepared[0] == {"role": "system", "content": ""} and notes
    out = tmp_path / "out.json"
    p = call(capsys, "compact", src, "--force", "-o", out)
    assert p.returncode == 0 and p.stdout.splitlines()[0] == f"# {notes[0]}"
    ledger = call(capsys, "ledger", src, "--verbose")
    assert ledger.stdout.splitlines()[0] == f"# {notes[0]}"
    assert notes[0] not in call(capsys, "ledger", src).stdout, "how the replay read the file: --verbose only"
    written = json.loads(out.read_text())
    assert written[0] == {"role": "system", "content": ""} and written[2:] == prepared[-len(written) + 2:]
    j = json.loads(call(capsys, "compact", src, "--force", "--json").stdout)
    assert j["size_before"] == context_size(prepared) and j["notes"] == notes


def test_compact_verify_checks_every_profile_and_exits_1_on_a_failure(tmp_path, capsys):
    src = tmp_path / "s.json"
    src.write_text(json.dumps(session(12, body="x" * 2000)))
    # the article's default puts the summary in a system message: Anthropic and Gemini reject it
    p = call(capsys, "compact", src, "--budget", "15000", "--keep-recent", "4", "--verify")
    assert p.returncode == 1, p.stdout
    lines = p.stdout.splitlines()
    for profile in ("openai", "anthropic", "gemini"):
        assert sum(f"history legality ({profile})" in ln for ln in lines if not ln.startswith("#")) == 1
    assert any(ln.startswith("FAIL history legality (anthropic): message 1: a system message") for ln in lines)
    assert any(ln.startswith("ok   history legality (openai): no problem for openai") for ln in lines)
    footer = " ".join(ln[2:] for ln in lines if ln.startswith("# "))
    assert "of 10 checks passed; exit 1 for history legality (anthropic)" in footer and "--summary-role user" in footer
    checks = json.loads(call(capsys, "compact", src, "--budget", "15000", "--keep-recent", "4", "--verify",
                             "--json").stdout)["checks"]
    assert [c["profile"] for c in checks if "profile" in c] == ["openai", "anthropic", "gemini"]
    # one profile, or a summary in the user role: every check passes, exit 0
    for extra in (["--profile", "openai"], ["--summary-role", "user"]):
        p = call(capsys, "compact", src, "--budget", "15000", "--keep-recent", "4", "--verify", *extra)
        assert p.returncode == 0, (extra, p.stdout)
        assert "FAIL" not in p.stdout and p.stdout.splitlines()[-1].endswith(" checks passed")
    # nothing compacted: nothing verified, and that is a failed check
    p = call(capsys, "compact", src, "--budget", "10000000", "--verify")
    assert p.returncode == 1 and "FAIL compacted" in p.stdout and "--force" in p.stdout
    # without --verify the exit code is 0 whatever the history
    assert call(capsys, "compact", src, "--budget", "15000", "--keep-recent", "4").returncode == 0


def test_verify_lines_read_true(capsys):
    """A FAIL line says what was found (and what was wanted), never the expectation as if it held;
    the README's own example says why it exits 1."""
    p = call(capsys, "compact", TWELVE, "--force", "--show", "--verify")
    assert p.returncode == 1
    for line in p.stdout.splitlines():
        if line.startswith("FAIL"):
            found, wanted = line.rsplit(" (wanted: ", 1)
            assert "no problem for" not in found and wanted.endswith(")"), line
        assert " a assistant" not in line and " a user message, not" not in line.replace("not a user", ""), line
    assert "is an assistant message, not a user message" in p.stdout  # anthropic: the summary moved it
    assert "exit 1 for " in p.stdout


# ---------------------------------------------------------------- sweep


def test_sweep_prints_a_compact_table_and_writes_the_full_frame(corpus, tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    grid = ("--budgets", "30000,60k", "--keep-recent", "5,10", "--policies", "nanohermes,observation_masking")
    p = call(capsys, "sweep", corpus.path, *grid)
    assert p.returncode == 0, p.stderr
    files = corpus.files
    lines = p.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= WIDTH
    table = [ln for ln in lines if not ln.startswith("#")]
    rows = 2 * 2 * len(files) + 2 * len(files)  # nanohermes: budgets x keep_recent; masking: budgets
    assert len(table) == 1 + rows and table[0].split()[:4] == ["transcript", "policy", "budget", "keep"]
    frame = sweep([corpus.path], budgets=[30_000, 60_000], keep_recent=[5, 10],
                  policies=["nanohermes", "observation_masking"])
    footer = " ".join(ln[2:] for ln in lines[len(table) + 1:])
    assert f"{rows} rows" in footer and "--out FILE" in footer
    assert "sweep [" in p.stderr and "/" + str(len(files)) in p.stderr
    written_by = call(capsys, "sweep", corpus.path, *grid, "--csv", out, "--no-progress")  # --csv is --out
    assert written_by.returncode == 0 and f"{rows} rows from {len(files)} transcripts written to {out}" in \
        " ".join(ln[2:] for ln in written_by.stdout.splitlines())
    with open(out, newline="", encoding="utf-8") as f:
        written = list(csv.DictReader(f))
    assert list(written[0]) == list(frame.columns) and len(written) == len(frame) == rows
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".")]  # no temporary file left
    wide = call(capsys, "sweep", corpus.path, "--budgets", "30000", "--wide", "--no-progress")
    assert wide.stdout.splitlines()[1].split() == [
        {"keep_recent": "keep", "peak_request": "peak", "compactions": "events", "cumulative_input": "cumulative",
         "saving_share": "saving"}.get(c, c) for c in frame.columns]


def test_sweep_json_is_the_full_frame(capsys):
    p = call(capsys, "sweep", ROOT / "data" / "sessions", "--budgets", "60000,120000", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    frame = sweep([ROOT / "data" / "sessions"], budgets=[60_000, 120_000])
    assert len(rows) == len(frame) and list(rows[0]) == list(frame.columns)
    assert [r["cumulative_input"] for r in rows] == frame["cumulative_input"].tolist()


def test_two_sweeps_on_one_csv_each_write_their_own_temporary_file(tmp_path, capsys):
    """The fixed name ``.sweep.csv.tmp`` was shared: another sweep holding it cost this one its rows."""
    out = tmp_path / "sweep.csv"
    (tmp_path / ".sweep.csv.tmp").mkdir()  # the name another writer is using
    p = call(capsys, "sweep", TWELVE, "--no-progress", "--csv", out)
    assert p.returncode == 0, p.stderr
    assert len(list(csv.DictReader(out.open(encoding="utf-8")))) == 1
    assert sorted(x.name for x in tmp_path.iterdir()) == [".sweep.csv.tmp", "sweep.csv"]


@pytest.mark.slow
def test_two_sweeps_at_once_on_one_csv_both_succeed_and_leave_one_whole_table(corpus, tmp_path):
    out = tmp_path / "sweep.csv"
    args = [sys.executable, "-m", "nanohermes_nb", "sweep", str(corpus.path), "--no-progress", "--csv", str(out)]
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    runs = [subprocess.Popen([*args, "--budgets", budgets], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, text=True) for budgets in ("30000", "30000,60000")]
    done = [(r.wait(timeout=300), r.stderr.read()) for r in runs]
    assert [code for code, _ in done] == [0, 0], done
    rows = len(list(csv.DictReader(out.open(encoding="utf-8"))))
    assert rows in (len(corpus.files), 2 * len(corpus.files))  # one sweep's whole table, never a mix
    assert sorted(x.name for x in tmp_path.iterdir()) == ["sweep.csv"]


# ---------------------------------------------------------------- text a terminal cannot encode


def _odd_transcript(tmp_path):
    src = tmp_path / "odd.json"
    src.write_text(json.dumps([
        {"role": "user", "content": "caf\u00e9 \ud800 \u4e2d\u6587 please read it"},
        {"role": "assistant", "content": "reading \ud800", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "read\ud800", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "x \u2192 y"},
        {"role": "assistant", "content": "done"},
    ]))  # json.dumps escapes the lone surrogate as \ud800, which JSON allows
    return src


@pytest.mark.parametrize("encoding", ["ascii", "utf-8"])
def test_output_never_fails_on_a_character_the_terminal_cannot_encode(tmp_path, monkeypatch, encoding):
    """The streams as a terminal of that encoding would give them (``_tolerant_streams`` reconfigures them)."""
    src = _odd_transcript(tmp_path)

    def once(*args) -> tuple[int, str]:
        out, err = io.BytesIO(), io.BytesIO()
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding=encoding))
        monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(err, encoding=encoding))
        code = main([*args, str(src)])
        sys.stdout.flush()
        sys.stderr.flush()
        assert not err.getvalue() or b"Traceback" not in err.getvalue()
        return code, out.getvalue().decode(encoding)

    for args in (["ledger"], ["ledger", "--by-turn"], ["compact", "--force", "--show", "--keep-recent", "1"],
                 ["check"], ["sweep", "--no-progress"]):
        assert once(*args)[0] == 0, (encoding, args)
    assert "\\ud800" in once("compact", "--force", "--keep-recent", "1", "--show")[1]  # shown as an escape
    for args in (["ledger", "--by-turn", "--json"], ["compact", "--force", "--keep-recent", "1", "--json"]):
        code, text = once(*args)
        assert code == 0, (encoding, args)
        assert "\ud800" in json.dumps(json.loads(text), ensure_ascii=False)  # valid JSON, the same strings


@pytest.mark.slow
def test_the_real_entry_point_on_an_ascii_terminal(tmp_path):
    src = _odd_transcript(tmp_path)
    env = {**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, "PYTHONIOENCODING": "ascii"}
    p = run("compact", src, "--force", "--keep-recent", "1", "--show", env=env, encoding="ascii")
    assert p.returncode == 0 and "\\ud800" in p.stdout and "Traceback" not in p.stderr
    p = run("ledger", tmp_path / "missing.json", env=env, encoding="ascii")
    assert p.returncode == 2 and p.stderr.count("\n") == 1


def test_control_characters_never_reach_the_terminal(tmp_path, capsys):
    """ESC and BEL in a message, a call id, a tool name or a file name are shown as escapes, everywhere."""
    nasty = "x\x1b[2J\x07\x9b1m\u202e"
    folder = tmp_path / "logs"
    folder.mkdir()
    src = folder / f"run{nasty}.json"
    src.write_text(json.dumps([
        {"role": "system", "content": nasty}, {"role": "user", "content": nasty},
        {"role": "assistant", "content": nasty, "tool_calls": [
            {"id": f"c{nasty}", "type": "function", "function": {"name": f"ls{nasty}", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": f"c{nasty}", "content": nasty},
        {"role": "tool", "tool_call_id": f"orphan{nasty}", "content": nasty},
        {"role": "assistant", "content": nasty}]))
    (folder / f"broken{nasty}.json").write_text("[{")
    shown = "\\x1b[2J\\x07\\x9b1m\\u202e"  # what the terminal gets instead
    for args, needle in ((["ledger", src, "--wide"], ""), (["ledger", src, "--by-turn"], ""), (["check", src], shown),
                         (["compact", src, "--force", "--show", "--wide", "--keep-recent", "1", "--verify"], shown),
                         (["sweep", folder, "--wide"], shown), (["sweep", folder, "--json"], "\\u009b1m\\u202e"),
                         (["ledger", tmp_path / f"gone{nasty}"], shown)):
        p = call(capsys, *args)
        both = p.stdout + p.stderr
        assert not {c for c in both if c in "\x1b\x07\x9b\u202e"}, args
        assert needle in both, (args, needle)
    assert "skipped brokenx\\x1b[2J\\x07\\x9b1m\\u202e.json" in call(capsys, "sweep", folder, "--no-progress").stderr


# ---------------------------------------------------------------- one rule: bad paths and values exit 2, one line


@pytest.mark.parametrize("content, where", [
    (b"[{\"role\": \"user\", \"content\": \"hi\"},", "line 1"),
    (b"", "empty"),
    (b"{\"foo\": 1}", "not a transcript"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, content, where):
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    for cmd in ("ledger", "check", "compact"):
        p = call(capsys, cmd, f)
        assert p.returncode == 2, (cmd, p.stderr)
        assert "Traceback" not in p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and "bad.json" in lines[0] and where in lines[0].lower(), lines


def _one_line_exit_2(p: Done, *fragments: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stdout[-300:], p.stderr[-300:])
    assert p.stderr.count("\n") == 1 and p.stdout == "" and "Traceback" not in p.stderr, p.stderr
    for fragment in fragments:
        assert fragment in p.stderr, (fragment, p.stderr)


def test_every_subcommand_answers_a_bad_path_with_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    nowhere = tmp_path / "no" / "such"
    for command in ("ledger", "check", "compact"):
        _one_line_exit_2(call(capsys, command, tmp_path / "nope.json"), "nope.json", "no such file")
        _one_line_exit_2(call(capsys, command, tmp_path / "empty"), "empty")
    _one_line_exit_2(call(capsys, "sweep", tmp_path / "nope"), "nope: no such file or folder")
    _one_line_exit_2(call(capsys, "sweep", TWELVE, tmp_path / "nope"), "nope: no such file or folder")
    _one_line_exit_2(call(capsys, "sweep", tmp_path / "empty"), "empty: no transcript files")
    _one_line_exit_2(call(capsys, "sweep", TWELVE, "--csv", nowhere / "x.csv"), "--out ", "no folder")
    _one_line_exit_2(call(capsys, "sweep", TWELVE, "--csv", tmp_path), "--out ", "is a folder")
    _one_line_exit_2(call(capsys, "sweep", TWELVE, "--out", nowhere / "x.csv"), "--out ", "no folder")
    _one_line_exit_2(call(capsys, "sweep", TWELVE, "--out", tmp_path / "x.txt"), "--out ", ".csv or .parquet")
    _one_line_exit_2(call(capsys, "compact", TWELVE, "-o", nowhere / "x.json"), "-o ", "no folder")
    assert not list((tmp_path / "empty").iterdir())


@pytest.mark.parametrize("args, fragment", [
    (["ledger", TWELVE, "--budget", "lots"], "argument --budget: takes one whole number such as 120000, 120k"),
    (["ledger", TWELVE, "--budget", "60kb"], "argument --budget: takes one whole number"),
    (["ledger", TWELVE, "--budget", "60k,90k"], "argument --budget: takes one whole number"),
    (["ledger", TWELVE, "--budget", "-5"], "argument --budget: "),
    (["ledger", TWELVE, "--keep-recent", "1.5"], "argument --keep-recent: takes one whole number"),
    (["sweep", TWELVE, "--budgets", "40k,lots"], "argument --budgets: takes comma-separated whole numbers"),
    (["sweep", TWELVE, "--keep-recent", "4,x"], "argument --keep-recent: takes comma-separated whole numbers"),
    (["sweep", TWELVE, "--jobs", "0"], "argument --jobs: takes one whole number of 1 or more"),
    (["sweep", TWELVE, "--policies", "magic"], "argument --policies: invalid choice: 'magic' (choose from "),
    (["compact", TWELVE, "--verify", "--profile", "bedrock"], "argument --profile: invalid choice"),
    (["ledger", TWELVE, "--unit", "furlongs"], "argument --unit: invalid choice"),
])
def test_a_bad_value_names_the_option_in_one_line(capsys, args, fragment):
    _one_line_exit_2(call(capsys, *args), fragment)


def test_sizes_take_k_and_m(capsys):
    plain = call(capsys, "ledger", TWELVE, "--budget", "60000", "--json").stdout
    assert call(capsys, "ledger", TWELVE, "--budget", "60k", "--json").stdout == plain
    assert call(capsys, "ledger", TWELVE, "--budget", "60K", "--json").stdout == plain
    assert call(capsys, "ledger", TWELVE, "--budget", "0.06M", "--json").stdout == plain
    assert call(capsys, "ledger", TWELVE, "--budget", "60_000", "--json").stdout == plain
    rows = json.loads(call(capsys, "sweep", TWELVE, "--budgets", "60k,1.5M", "--json").stdout)
    assert [r["budget"] for r in rows] == [60_000, 1_500_000]


# ---------------------------------------------------------------- tables fit COLUMNS


def test_compact_show_fits_columns_and_wide_shows_everything(tmp_path, capsys, monkeypatch):
    for columns, width in ((None, 100), ("60", 60), ("140", 140)):
        if columns:
            monkeypatch.setenv("COLUMNS", columns)
        p = call(capsys, "compact", TWELVE, "--force", "--show")
        lines = p.stdout.splitlines()
        table = [ln for ln in lines[1:] if not ln.startswith("#")]
        assert table[0].split()[:4] == ["before", "after", "role", "size"]
        assert max(len(ln) for ln in table) <= width, (columns, max(len(ln) for ln in table))
        assert max((len(ln) for ln in lines if ln.startswith("#")), default=0) <= width
    monkeypatch.delenv("COLUMNS")
    wide = call(capsys, "compact", TWELVE, "--force", "--show", "--wide").stdout.splitlines()
    assert wide[1].split() == ["before", "after", "role", "size", "status", "marker", "calls", "answers", "preview"]
    assert max(len(ln) for ln in wide) > 100 and "call_10_1, call_10_2, call_10_3" in "\n".join(wide)
    for columns in ("60", "100"):
        monkeypatch.setenv("COLUMNS", columns)
        for args in (["ledger", TWELVE], ["ledger", TWELVE, "--by-turn"], ["sweep", TWELVE, "--no-progress"]):
            assert max(len(ln) for ln in call(capsys, *args).stdout.splitlines()) <= int(columns), (columns, args)


def test_one_message_of_many_calls_stays_linear(tmp_path, capsys):
    """20,000 calls in one message: the calls cell names eight and counts the rest; rows stay within 100."""
    ids = [f"call_{k:05d}" for k in range(20_000)]
    src = tmp_path / "many.json"
    src.write_text(json.dumps([
        {"role": "system", "content": "s"}, {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "ls", "arguments": "{}"}} for i in ids]},
        *({"role": "tool", "tool_call_id": i, "content": "x"} for i in ids), {"role": "assistant", "content": "ok"}]))
    for wide in ([], ["--wide"]):
        p = call(capsys, "compact", src, "--force", "--show", "--keep-recent", "1", *wide)
        lines = p.stdout.splitlines()
        assert p.returncode == 0 and len(lines) < 20_010 + 10
        assert max(len(ln) for ln in lines[1:]) <= (300 if wide else 100)
    assert "call_00000, call_00001, call_00002, call_00003, call_00004, call_00005, call_00006, call_00007, " \
           "\u2026 (20,000 calls)" in p.stdout
    assert call(capsys, "check", src, "--profile", "anthropic").returncode == 0


# --- engine v2: policies' options, jobs, streaming, skipped files ------------------------------


def test_an_option_the_policy_does_not_have_is_one_line_exit_2(corpus, capsys):
    p = call(capsys, "ledger", corpus.largest(), "--policy", "codex", "--keep-recent", "4")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and line.startswith(
        "nanohermes-nb: error: option 'keep_recent' does not apply to policy 'codex' (its options: ")
    assert "user_message_max_tokens" in line
    ok = call(capsys, "ledger", corpus.largest(), "--policy", "codex", "--json")
    assert ok.returncode == 0
    s = call(capsys, "sweep", corpus.path, "--policies", "codex", "--keep-recent", "4", "--no-progress")
    assert s.returncode == 2 and s.stderr.count("\n") == 1 and "keep_recent" in s.stderr


def test_sweep_with_jobs_streams_and_reports_skipped_files(corpus, tmp_path, capsys):
    import pandas as pd

    folder = tmp_path / "logs"
    folder.mkdir()
    for f in corpus.files[:3]:
        (folder / f.name).write_bytes(f.read_bytes())
    (folder / "broken.json").write_text("[{", encoding="utf-8")
    out = tmp_path / "rows.parquet"
    p = call(capsys, "sweep", folder, "--budgets", "30000,60000", "--jobs", "2", "--out", out, "--no-progress")
    assert p.returncode == 1, p.stderr
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("nanohermes-nb: skipped broken.json: ")
    assert "6 rows from 3 transcripts" in p.stdout
    rows = pd.read_parquet(out)
    assert sorted(set(rows["transcript"])) == sorted(f.name for f in corpus.files[:3])
    strict = call(capsys, "sweep", folder, "--strict", "--no-progress")
    assert strict.returncode == 2 and "broken.json" in strict.stderr and "Traceback" not in strict.stderr


def test_summarizer_llm_misconfigured_is_one_line_exit_2_and_never_shows_the_key(capsys, monkeypatch):
    monkeypatch.setenv("NANOHERMES_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NANOHERMES_LLM_API_KEY", "sk-SECRET\nx")
    p = call(capsys, "ledger", TWELVE, "--summarizer", "llm")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert "SECRET" not in p.stderr and "line feed" in p.stderr
    monkeypatch.delenv("NANOHERMES_LLM_BASE_URL")
    p = call(capsys, "ledger", TWELVE, "--summarizer", "llm")
    assert p.returncode == 2 and "NANOHERMES_LLM_BASE_URL" in p.stderr


@pytest.mark.slow
def test_the_real_entry_point_exit_codes(tmp_path):
    """``python -m nanohermes_nb`` is the program: 0, 1 and 2 as a shell sees them."""
    assert run("check", TWELVE).returncode == 0
    bad = run("compact", TWELVE, "--force", "--verify")
    assert bad.returncode == 1 and "exit 1 for" in bad.stdout
    usage = run("ledger", TWELVE, "--budget", "lots")
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1 and "argument --budget" in usage.stderr
