"""Write a synthetic access log in the Combined Log Format, the same on every machine.

    python3 tools/make_log.py --lines 300 --seed 12 > samples/access.log

A small linear congruential generator replaces ``random`` so the output does not
depend on the Python version. The traffic mixes pages, search queries (some
empty, some percent-encoded), static files and API calls, with a few errors.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta, timezone

HOSTS = tuple(f"203.0.113.{n}" for n in (4, 7, 19, 23, 42, 58, 77, 101, 130, 199)) + tuple(
    f"198.51.100.{n}" for n in (2, 9, 31, 64, 88, 120, 250)
)
WORDS = ("shoes", "hats", "red+shoes", "rain%20coat", "socks", "boots", "gift+card",
         "scarf", "wool", "sale", "jacket", "umbrella", "sandals", "belt", "gloves")
PAGES = ("/", "/about", "/contact", "/cart", "/checkout", "/login", "/account", "/help/shipping",
         "/help/returns", "/blog/spring-collection", "/blog/care-guide")
STATIC = ("/static/app.js", "/static/app.css", "/static/logo.svg", "/favicon.ico",
          "/static/fonts/inter.woff2")
AGENTS = (
    "Mozilla/5.0 (X11; Linux x86_64; rv:124.0) Gecko/20100101 Firefox/124.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0 Safari/537.36",
    "curl/8.5.0",
    "python-requests/2.31.0",
    "Googlebot/2.1 (+http://www.google.com/bot.html)",
)
REFERRERS = ("-", "https://shop.example/", "https://shop.example/search?q=shoes",
             "https://www.google.com/", "https://shop.example/cart")


class Lcg:
    """Numerical Recipes LCG: deterministic and version-independent."""

    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFF

    def next(self) -> int:
        self.state = (1664525 * self.state + 1013904223) & 0xFFFFFFFF
        return self.state >> 8

    def pick(self, items: tuple):
        return items[self.next() % len(items)]

    def chance(self, percent: int) -> bool:
        return self.next() % 100 < percent


def target(rng: Lcg) -> tuple[str, str]:
    """A request method and target: pages, search, products, static files or the API."""
    kind = rng.next() % 20
    if kind < 6:
        word = rng.pick(WORDS)
        if rng.chance(8):
            return "GET", "/search?"
        if rng.chance(30):
            return "GET", f"/search?q={word}&page={2 + rng.next() % 4}"
        return "GET", f"/search?q={word}"
    if kind < 10:
        return "GET", f"/products/{1000 + rng.next() % 40}"
    if kind < 14:
        return "GET", rng.pick(STATIC)
    if kind < 16:
        if rng.chance(50):
            return "POST", "/api/v1/cart"
        return "GET", f"/api/v1/stock?sku={1000 + rng.next() % 40}"
    return "GET", rng.pick(PAGES)


def status_for(rng: Lcg, method: str, path: str) -> int:
    roll = rng.next() % 100
    if path.startswith("/static/") and roll < 30:
        return 304
    if roll < 4:
        return 404
    if roll < 6:
        return 500 if path.startswith("/api/") else 503
    if method == "POST":
        return 201
    return 200


def line(rng: Lcg, when: datetime) -> str:
    method, path = target(rng)
    status = status_for(rng, method, path)
    size = "-" if status == 304 else str(200 + rng.next() % 48000)
    stamp = when.strftime("%d/%b/%Y:%H:%M:%S +0000")
    return (f'{rng.pick(HOSTS)} - - [{stamp}] "{method} {path} HTTP/1.1" {status} {size} '
            f'"{rng.pick(REFERRERS)}" "{rng.pick(AGENTS)}"')


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=300)
    p.add_argument("--seed", type=int, default=12)
    args = p.parse_args(argv)
    rng = Lcg(args.seed)
    when = datetime(2026, 3, 12, 9, 0, 0, tzinfo=timezone.utc)
    out = []
    for _ in range(args.lines):
        when += timedelta(seconds=1 + rng.next() % 20)
        out.append(line(rng, when))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
