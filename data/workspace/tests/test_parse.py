from datetime import datetime, timezone

from logstat.parse import ParseError, Record, parse_line, parse_lines
from tests.support import expect_equal

LINE = ('203.0.113.7 - - [12/Mar/2026:09:14:02 +0000] "GET /search?q=shoes HTTP/1.1" 200 5120 '
        '"https://shop.example/" "curl/8.5.0"')


def test_fields():
    r = parse_line(LINE)
    expect_equal(r.host, "203.0.113.7", "host")
    expect_equal(r.time, datetime(2026, 3, 12, 9, 14, 2, tzinfo=timezone.utc), "time")
    expect_equal((r.method, r.protocol), ("GET", "HTTP/1.1"), "method and protocol")
    expect_equal((r.status, r.size), (200, 5120), "status and size")
    expect_equal((r.referrer, r.agent), ("https://shop.example/", "curl/8.5.0"), "referrer and agent")


def test_query_string_kept_in_path():
    expect_equal(parse_line(LINE).path, "/search?q=shoes", "path")


def test_common_log_format_without_referrer():
    r = parse_line('198.51.100.2 - - [12/Mar/2026:10:00:00 +0000] "GET / HTTP/1.0" 304 -')
    expect_equal((r.path, r.size, r.referrer, r.agent), ("/", 0, "-", "-"), "fields")


def test_ok_covers_2xx_and_3xx():
    expect_equal([Record("h", None, "GET", "/", "HTTP/1.1", s, 0).ok for s in (200, 304, 404, 500)],
                 [True, True, False, False], "ok flags")


def test_bad_line_raises_with_number():
    try:
        parse_line("not a log line", number=7)
    except ParseError as e:
        expect_equal((e.number, e.reason), (7, "not a combined log line"), "error")
    else:
        raise AssertionError("no ParseError")


def test_bad_timestamp():
    try:
        parse_line(LINE.replace("12/Mar/2026", "31/Feb/2026"))
    except ParseError as e:
        expect_equal(e.reason, "bad timestamp", "reason")
    else:
        raise AssertionError("no ParseError")


def test_parse_lines_skips_blank_and_bad_lines():
    records = list(parse_lines(["", LINE, "garbage", LINE.replace("5120", "-")]))
    expect_equal([r.size for r in records], [5120, 0], "sizes")


def test_parse_lines_strict_stops_at_first_bad_line():
    try:
        list(parse_lines([LINE, "garbage"], strict=True))
    except ParseError as e:
        expect_equal(e.number, 2, "line number")
    else:
        raise AssertionError("no ParseError")
