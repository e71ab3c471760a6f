import contextlib
import io
import json

from logstat.cli import main
from tests.support import FIXTURES, expect_equal, fixture

SMALL = str(FIXTURES / "small.log")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_top_paths_report():
    code, out, _ = run(SMALL, "--top", "8", "--status")
    expect_equal(code, 0, "exit code")
    expect_equal(out, fixture("small_report.txt"), "report")


def test_csv_report():
    code, out, _ = run(SMALL, "--top", "3", "--csv")
    expect_equal(code, 0, "exit code")
    expect_equal(out, fixture("small_top3.csv"), "csv")


def test_json_report_has_schema_fields():
    code, out, _ = run(SMALL, "--top", "3", "--json")
    data = json.loads(out)
    expect_equal(code, 0, "exit code")
    expect_equal(list(data), ["schema_version", "requests", "bytes", "period", "status",
                              "top_paths", "top_hosts"], "keys")
    expect_equal(data["requests"], 36, "requests")


def test_top_must_be_positive():
    code, _, err = run(SMALL, "--top", "0")
    expect_equal((code, err), (2, "logstat: --top must be at least 1\n"), "result")


def test_missing_file():
    code, _, err = run(str(FIXTURES / "no-such.log"))
    expect_equal(code, 2, "exit code")
    expect_equal(err.startswith("logstat: cannot read "), True, "message starts with")


def test_strict_reports_first_bad_line():
    code, _, err = run(str(FIXTURES / "bad.log"), "--strict")
    expect_equal(code, 1, "exit code")
    expect_equal(err.split(":")[:2], ["logstat", " line 3"], "message")
