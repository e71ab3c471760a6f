from datetime import datetime, timezone

from logstat.parse import Record
from logstat.report import (
    PathStats,
    busiest_hosts,
    human_bytes,
    path_stats,
    render_status,
    render_top_paths,
    status_class,
    status_counts,
    top_paths,
)
from tests.support import expect_equal, params

T0 = datetime(2026, 3, 12, 9, 0, tzinfo=timezone.utc)


def rec(path: str, status: int = 200, size: int = 100, host: str = "203.0.113.7") -> Record:
    return Record(host, T0, "GET", path, "HTTP/1.1", status, size)


RECORDS = [
    rec("/", size=1000),
    rec("/cart", 200, 300),
    rec("/cart", 500, 0),
    rec("/products/1001", 200, 2048),
    rec("/products/1001", 404, 120, host="198.51.100.9"),
    rec("/products/1001", 200, 2048, host="198.51.100.9"),
    rec("/static/app.js", 304, 0),
]


@params([("200", (200, "2xx")), ("204", (204, "2xx")), ("301", (301, "3xx")),
         ("404", (404, "4xx")), ("503", (503, "5xx"))])
def test_status_class(status, expected):
    expect_equal(status_class(status), expected, "class")


def test_status_counts_lists_every_class():
    expect_equal(status_counts(RECORDS), {"1xx": 0, "2xx": 4, "3xx": 1, "4xx": 1, "5xx": 1}, "counts")


def test_path_stats_counts_errors_and_bytes():
    stats = path_stats(RECORDS)
    expect_equal(stats["/products/1001"], PathStats("/products/1001", 3, 1, 4216), "stats")
    expect_equal(stats["/cart"].error_rate, 0.5, "error rate")


def test_top_paths_ranks_by_hits_then_path():
    expect_equal([s.path for s in top_paths(RECORDS, 3)], ["/products/1001", "/cart", "/"], "ranking")


def test_top_paths_n_larger_than_paths():
    expect_equal(len(top_paths(RECORDS, 50)), 4, "length")


def test_busiest_hosts():
    expect_equal(busiest_hosts(RECORDS, 2), [("203.0.113.7", 5), ("198.51.100.9", 2)], "hosts")


@params([("bytes", (512, "512 B")), ("kib", (1536, "1.5 KiB")), ("mib", (5 * 1024 ** 2, "5.0 MiB")),
         ("gib", (3 * 1024 ** 3, "3.0 GiB")), ("huge", (5000 * 1024 ** 3, "5000.0 GiB"))])
def test_human_bytes(n, expected):
    expect_equal(human_bytes(n), expected, "text")


def test_render_top_paths():
    expected = "\n".join([
        "#  path            hits  errors    bytes",
        "-  --------------  ----  ------  -------",
        "1  /products/1001     3     33%  4.1 KiB",
        "2  /cart              2     50%    300 B",
        "3  /                  1      0%   1000 B",
    ])
    expect_equal(render_top_paths(top_paths(RECORDS, 3)), expected, "table")


def test_render_status():
    expected = "\n".join([
        "status  requests  share",
        "------  --------  -----",
        "1xx            0   0.0%",
        "2xx            4  57.1%",
        "3xx            1  14.3%",
        "4xx            1  14.3%",
        "5xx            1  14.3%",
    ])
    expect_equal(render_status(status_counts(RECORDS)), expected, "table")


def test_render_status_empty_log():
    expect_equal(render_status(status_counts([])).splitlines()[2], "1xx            0      -", "row")
