"""Every link of the built course site must land: on a file that exists and, with a ``#fragment``, on an id in it.

``make course`` runs :func:`check_site` after MkDocs has built both editions and fails when a link
is broken, printing each one (page, link, why). A link is checked as a browser follows it from the
file system: relative to its page, percent-decoded, the fragment matched against the ``id`` (or
``name``) attributes of the target page. External links (``https:``, ``mailto:``) are not followed
(the site must not fetch anything: ``site.external_urls``). ``404.html`` is left out: a web server
serves it at any address, so its links are written from the site's root, not from its own place.

``tests/test_browser.py`` then opens the anchors in Chromium and checks that the page scrolls to them.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["Link", "LinkReport", "page_ids", "page_links", "check_site", "SKIPPED"]

SKIPPED = frozenset({"404.html"})
_ID = re.compile(r"""<[a-zA-Z][^>]*?\s(?:id|name)=(["'])(.*?)\1""", re.S)
_HREF = re.compile(r"""<a\b[^>]*?\shref=(["'])(.*?)\1""", re.S | re.I)
_EXTERNAL = ("mailto:", "javascript:", "tel:", "data:")


@dataclass(frozen=True)
class Link:
    """One ``<a href>`` of a built page: where it is, what it says, the file and fragment it points at."""

    page: str  # relative to the site, with "/" separators
    href: str
    target: str | None  # the file it points at, relative to the site (None: outside the site)
    fragment: str | None  # decoded; None when the link has no "#"


@dataclass(frozen=True)
class LinkReport:
    """What :func:`check_site` found: links checked (per edition), those with a fragment, and the broken ones."""

    links: Mapping[str, int]
    anchors: Mapping[str, int]
    broken: tuple[tuple[Link, str], ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.broken

    def lines(self, limit: int = 40) -> list[str]:
        """One line per broken link (at most ``limit``, then how many more)."""
        out = [f"{link.page}: {link.href} ({why})" for link, why in self.broken[:limit]]
        if len(self.broken) > limit:
            out.append(f"... and {len(self.broken) - limit} more")
        return out

    def summary(self) -> str:
        parts = [f"{edition}: {self.links[edition]:,} links, {self.anchors[edition]:,} to an anchor"
                 for edition in sorted(self.links)]
        return "; ".join(parts) + f"; {len(self.broken)} broken"


def page_ids(text: str) -> set[str]:
    """Every ``id`` and ``name`` attribute value of an HTML page, unescaped."""
    return {html.unescape(m.group(2)) for m in _ID.finditer(text)}


def page_links(site: Path, page: Path, text: str) -> list[Link]:
    """The links of one page, resolved against the site folder."""
    rel = page.relative_to(site).as_posix()
    out = []
    for m in _HREF.finditer(text):
        href = html.unescape(m.group(2)).strip()
        parsed = urlparse(href)
        if parsed.scheme or href.startswith(("//", *_EXTERNAL)):
            continue
        fragment = unquote(parsed.fragment) if "#" in href else None
        if not parsed.path:
            target: str | None = rel
        elif parsed.path.startswith("/"):
            target = None  # from the server's root: cannot be followed from the file system
        else:
            resolved = Path(os.path.normpath(page.parent / unquote(parsed.path)))
            target = resolved.relative_to(site).as_posix() if resolved.is_relative_to(site) else None
        out.append(Link(rel, href, target, fragment))
    return out


def _edition(rel: str) -> str:
    return "zh" if rel.split("/", 1)[0] == "zh" else "en"


def _why(link: Link, ids: Mapping[str, set[str]], site: Path) -> str | None:
    if link.target is None:
        return "points outside the site (or at the server's root)"
    path = site / link.target
    if path.is_dir():
        path, target = path / "index.html", f"{link.target.rstrip('/')}/index.html"
    else:
        target = link.target
    if not path.is_file():
        return "no such file"
    if link.fragment is None:
        return None
    if link.fragment == "":
        return "an empty anchor"
    if link.fragment not in ids.get(target, set()):
        return f"no element with id {link.fragment!r} in {target}"
    return None


def check_site(site: str | os.PathLike, skipped: Iterable[str] = SKIPPED) -> LinkReport:
    """Check every link of every HTML page under ``site`` (both editions); see the module docstring."""
    site = Path(site).resolve()
    skipped = set(skipped)
    pages = sorted(p for p in site.rglob("*.html") if p.name not in skipped)
    texts = {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8", errors="replace") for p in pages}
    ids = {rel: page_ids(text) for rel, text in texts.items()}
    links: dict[str, int] = {"en": 0, "zh": 0}
    anchors: dict[str, int] = {"en": 0, "zh": 0}
    broken = []
    for rel, text in texts.items():
        edition = _edition(rel)
        for link in page_links(site, site / rel, text):
            links[edition] += 1
            anchors[edition] += link.fragment is not None
            why = _why(link, ids, site)
            if why:
                broken.append((link, why))
    return LinkReport(links, anchors, tuple(broken))
