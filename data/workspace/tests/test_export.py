import json
from datetime import datetime, timedelta, timezone

from logstat.export import SCHEMA_VERSION, path_entry, period, report_dict, to_csv, to_json, to_markdown
from logstat.parse import Record
from logstat.report import PathStats, top_paths
from tests.support import expect_equal

T0 = datetime(2026, 3, 12, 9, 0, tzinfo=timezone(timedelta(hours=1)))


def rec(path: str, status: int = 200, size: int = 100, minutes: int = 0) -> Record:
    return Record("203.0.113.7", T0 + timedelta(minutes=minutes), "GET", path, "HTTP/1.1", status, size)


RECORDS = [rec("/cart", minutes=5), rec("/cart", 500, 0, minutes=9), rec("/", size=700, minutes=1)]


def test_period_is_utc():
    expect_equal(period(RECORDS), {"first": "2026-03-12T08:01:00Z", "last": "2026-03-12T08:09:00Z"},
                 "period")


def test_period_of_empty_log():
    expect_equal(period([]), {"first": None, "last": None}, "period")


def test_path_entry():
    expect_equal(path_entry(1, PathStats("/cart", 2, 1, 100)),
                 {"rank": 1, "path": "/cart", "hits": 2, "errors": 1, "error_rate": 0.5, "bytes": 100},
                 "entry")


def test_report_dict():
    data = report_dict(RECORDS, top_paths(RECORDS, 5))
    expect_equal(data["schema_version"], SCHEMA_VERSION, "schema version")
    expect_equal((data["requests"], data["bytes"]), (3, 800), "totals")
    expect_equal([p["path"] for p in data["top_paths"]], ["/cart", "/"], "paths")
    expect_equal(data["top_hosts"], [{"host": "203.0.113.7", "requests": 3}], "hosts")


def test_to_json_round_trips():
    text = to_json(RECORDS, top_paths(RECORDS, 5))
    expect_equal(json.loads(text), report_dict(RECORDS, top_paths(RECORDS, 5)), "parsed JSON")
    expect_equal(text.splitlines()[1], '  "schema_version": 2,', "second line")


def test_to_csv():
    expect_equal(to_csv(top_paths(RECORDS, 5)),
                 "rank,path,hits,errors,error_rate,bytes\n1,/cart,2,1,0.5000,100\n2,/,1,0,0.0000,700\n",
                 "csv")


def test_to_markdown():
    expected = "\n".join([
        "## Traffic",
        "",
        "3 requests, 800 B sent, from 2026-03-12T08:01:00Z to 2026-03-12T08:09:00Z.",
        "",
        "| status | requests | share |",
        "|---|---:|---:|",
        "| 2xx | 2 | 66.7% |",
        "| 5xx | 1 | 33.3% |",
        "",
        "| # | path | hits | errors | bytes |",
        "|---:|---|---:|---:|---:|",
        "| 1 | `/cart` | 2 | 50% | 100 B |",
        "| 2 | `/` | 1 | 0% | 700 B |",
        "",
    ])
    expect_equal(to_markdown(RECORDS, top_paths(RECORDS, 5)), expected, "markdown")


def test_to_markdown_empty_log():
    expect_equal(to_markdown([], []), "## Traffic\n\nNo requests in this log.\n", "markdown")


def test_markdown_cell_escapes_pipes():
    records = [rec("/a|b")]
    expect_equal(to_markdown(records, top_paths(records, 1)).splitlines()[-1],
                 "| 1 | `/a\\|b` | 1 | 0% | 100 B |", "row")
