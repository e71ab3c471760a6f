"""What ``web_fetch`` makes of a URL and a response body: the checks and the text for the model.

A URL must be http(s) with a host. A body is decoded by its declared charset or
byte-order mark; HTML becomes readable text (scripts and styles dropped, block
elements on their own lines, list items as ``- item``); text types pass as they
are; anything binary, also a body that is binary only once decoded (20,000 NUL
characters served as text/plain), becomes a one-line note.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx

__all__ = ["html_to_text", "web_text", "check_url", "WebError"]


class WebError(ValueError):
    """A URL ``web_fetch`` will not fetch."""


class _TextOfHTML(HTMLParser):
    """Readable text of an HTML page: scripts and styles dropped, blocks on their own lines."""

    SKIP = frozenset({"script", "style", "noscript", "template", "svg"})
    BLOCK = frozenset({
        "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "td", "th", "title", "tr", "ul",
    })
    _KEEP = "\ue000"  # stands for a space inside <pre> until whitespace is collapsed

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip += 1
            return
        if tag == "pre":
            self.pre += 1
        if tag in self.BLOCK:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")
        elif tag in ("td", "th"):
            self.parts.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip = max(self.skip - 1, 0)
            return
        if tag == "pre":
            self.pre = max(self.pre - 1, 0)
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.pre:
            self.parts.append(data.replace(" ", self._KEEP).replace("\t", self._KEEP * 4))
        else:
            self.parts.append(re.sub(r"\s+", " ", data))

    def text(self) -> str:
        out: list[str] = []
        for line in "".join(self.parts).split("\n"):
            line = re.sub(r"[^\S\n]+", " ", line).strip().replace(self._KEEP, " ").rstrip()
            if line or (out and out[-1]):
                out.append(line)
        return "\n".join(out).strip("\n")


def html_to_text(html: str) -> str:
    """Readable text of an HTML document (a real parser, not regular expressions)."""
    parser = _TextOfHTML()
    parser.feed(html)
    parser.close()
    return parser.text()


_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript",
               "application/x-javascript", "application/ld+json", "application/rss+xml",
               "application/atom+xml", "application/x-sh", "application/toml", "application/yaml")


def check_url(url: str) -> None:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as e:
        raise WebError(f"invalid URL {url!r}: {e}") from None
    if parsed.scheme not in ("http", "https"):
        raise WebError(f"only http and https URLs can be fetched, not {parsed.scheme or 'no scheme'!r}")
    if not parsed.host:
        raise WebError(f"invalid URL {url!r}: no host")


_BOM_CHARSETS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
                 (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def web_text(data: bytes, ctype: str, charset: str | None) -> str:
    """The body as text for the model; binary bodies (also those binary once decoded,
    such as 20,000 NUL characters served as text/plain) become a one-line note."""
    if charset is None:
        charset = next((name for bom, name in _BOM_CHARSETS if data.startswith(bom)), None)
    try:
        raw = data.decode(charset or "utf-8", "replace")
    except LookupError:
        raw = data.decode("utf-8", "replace")
    binary = f"(binary content: {ctype or 'unknown type'}, {len(data)} bytes, not shown)"
    if "\x00" in raw:
        return binary
    head = raw.lstrip()[:200].lower()
    if ctype in _HTML_TYPES or (not ctype and head.startswith(("<!doctype html", "<html"))):
        return html_to_text(raw)
    if ctype.startswith(_TEXT_TYPES) or ctype.endswith(("+json", "+xml")) or not ctype:
        return raw
    return binary
