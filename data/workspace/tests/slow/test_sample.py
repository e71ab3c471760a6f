"""Every line of the sample log parses into a sane record (slow: one case per line)."""

from logstat.cli import main
from logstat.parse import parse_line
from tests.support import ROOT, expect_equal, params

SAMPLE = ROOT / "samples" / "access.log"
LINES = SAMPLE.read_text(encoding="utf-8").splitlines()


@params((f"{k:04d}", (k, line)) for k, line in enumerate(LINES, start=1))
def test_sample_line(number, line):
    r = parse_line(line, number)
    expect_equal(r.path.startswith("/"), True, f"line {number}: path starts with /")
    expect_equal(100 <= r.status < 600, True, f"line {number}: status in range")


def test_sample_report_golden():
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = main([str(SAMPLE), "--top", "12", "--status"])
    expect_equal(code, 0, "exit code")
    expect_equal(out.getvalue(), (ROOT / "tests" / "fixtures" / "sample_report.txt").read_text(encoding="utf-8"),
                 "sample report")
