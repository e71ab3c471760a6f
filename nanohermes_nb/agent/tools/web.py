"""What ``web_fetch`` makes of a URL and a response body: the checks and the text for the model.

A URL must be http(s) with a host. A body is decoded by its declared charset (when
it is one a browser knows) or byte-order mark; HTML becomes readable text (scripts
and styles dropped, block elements on their own lines, list items as ``- item``) in
one linear pass that stops at the fetch's deadline; text types pass as they are;
anything binary, also a body that is binary only once decoded (20,000 NUL
characters served as text/plain), becomes a one-line note.
"""

from __future__ import annotations

import codecs
import html
import re
import time
from collections.abc import Callable

import httpx

__all__ = ["html_to_text", "web_text", "check_url", "WebError", "ParseDeadline", "text_encoding"]


class WebError(ValueError):
    """A URL ``web_fetch`` will not fetch."""


_SPACES = re.compile(r"\s+")
_LINE_SPACES = re.compile(r"[^\S\n]+")


class _TextOfHTML:
    """Readable text of an HTML page: scripts and styles dropped, blocks on their own lines.

    The handlers are fed by ``_walk``; they keep the text parts and the skip/pre depth.
    """

    SKIP = frozenset({"script", "style", "noscript", "template", "svg"})
    BLOCK = frozenset({
        "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "td", "th", "title", "tr", "ul",
    })
    _KEEP = "\ue000"  # stands for a space inside <pre> until whitespace is collapsed

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.skip = 0
        self.pre = 0

    def handle_starttag(self, tag: str) -> None:
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

    def handle_startendtag(self, tag: str) -> None:
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
        if "&" in data:
            data = html.unescape(data)
        if self.pre:
            self.parts.append(data.replace(" ", self._KEEP).replace("\t", self._KEEP * 4))
        else:
            self.parts.append(_SPACES.sub(" ", data))

    def text(self) -> str:
        out: list[str] = []
        for line in "".join(self.parts).split("\n"):
            line = _LINE_SPACES.sub(" ", line).strip().replace(self._KEEP, " ").rstrip()
            if line or (out and out[-1]):
                out.append(line)
        return "\n".join(out).strip("\n")


class ParseDeadline(WebError):
    """The page was not turned into text before the fetch's deadline."""


# The next markup: a tag without quotes (the common case, read whole), or any other start
# of markup (handled by ``_markup``). A < before anything else is text. Where the first
# form fails it stopped at a quote, which ``_markup`` then reads past: nothing is rescanned.
_NEXT = re.compile(r"<(/?)([A-Za-z][^\s/>]*)([^>\"']*)>|<[A-Za-z/!?]")
_TAG_NAME = re.compile(r"[A-Za-z][^\s/>]*")
_TAG_STOP = re.compile(r"[>\"']")
_RAW_TEXT = {name: re.compile(rf"</{name}(?=[\s/>])", re.IGNORECASE) for name in ("script", "style")}
_CHECK_EVERY = 512  # markup steps between two looks at the clock


def _tag_end(doc: str, at: int) -> int:
    """Index of the ``>`` closing the tag whose attributes start at ``at``; -1 if the document ends first.

    A quote opens a value only after ``=`` (as HTML5 reads ``<a title=">">``); each
    search starts past the previous one, so a tag costs its own length.
    """
    start = at
    while True:
        found = _TAG_STOP.search(doc, at)
        if found is None:
            return -1
        stop = found.start()
        if doc[stop] == ">":
            return stop
        if doc[start:stop].rstrip().endswith("="):
            close = doc.find(doc[stop], stop + 1)
            if close < 0:
                return -1
            at = start = close + 1
        else:
            at = start = stop + 1


def _markup(doc: str, lt: int, sink: _TextOfHTML) -> int:
    """Handle the markup that starts with the ``<`` at ``lt``; the index just past it.

    A comment, declaration or tag left open at the end of the document ends it
    (HTML5 drops such an unfinished construct), so nothing is ever scanned twice.
    """
    n = len(doc)
    if doc.startswith("<!--", lt):
        for empty in (">", "->"):  # <!--> and <!---> are empty comments
            if doc.startswith(empty, lt + 4):
                return lt + 4 + len(empty)
        end = doc.find("-->", lt + 4)
        return n if end < 0 else end + 3
    closing = doc.startswith("</", lt)
    name = _TAG_NAME.match(doc, lt + 2 if closing else lt + 1)
    if name is None:
        if doc.startswith(("<!", "<?", "</"), lt):  # doctype, <![CDATA[, bogus comment: to the next >
            end = doc.find(">", lt + 2)
            return n if end < 0 else end + 1
        sink.handle_data("<")  # not reached from html_to_text (_NEXT), kept for other callers
        return lt + 1
    end = _tag_end(doc, name.end())
    if end < 0:
        return n
    return _tag(doc, name.group().lower(), closing, doc[end - 1] == "/" and end - 1 >= name.end(), end, sink)


def _tag(doc: str, tag: str, closing: bool, self_closing: bool, end: int, sink: _TextOfHTML) -> int:
    """Report one tag whose ``>`` is at ``end``; the index just past it (past a script's text too)."""
    n = len(doc)
    if closing:
        sink.handle_endtag(tag)
        return end + 1
    if self_closing:
        sink.handle_startendtag(tag)
        return end + 1
    sink.handle_starttag(tag)
    if tag not in _RAW_TEXT:
        return end + 1
    close = _RAW_TEXT[tag].search(doc, end + 1)  # script and style text holds no markup
    if close is None:
        return n
    sink.handle_data(doc[end + 1:close.start()])
    stop = _tag_end(doc, close.end())
    sink.handle_endtag(tag)
    return n if stop < 0 else stop + 1


def html_to_text(html_text: str, deadline: float | None = None, clock: Callable[[], float] = time.monotonic) -> str:
    """Readable text of an HTML document, in one left-to-right pass over it.

    Linear in the document's length whatever the markup: the standard library's
    ``HTMLParser`` rescans the rest of the page for every unfinished tag (48 KB of
    ``<a `` took 24 s, and ``<![`` raised ``AssertionError``). ``deadline`` (a
    reading of ``clock``, ``time.monotonic`` unless a test gives a fake one) ends the
    walk with ``ParseDeadline`` when passed.
    """
    sink = _TextOfHTML()
    at, n, steps = 0, len(html_text), 0
    while at < n:
        steps += 1
        if deadline is not None and steps % _CHECK_EVERY == 0 and clock() > deadline:
            raise ParseDeadline("the page was still being turned into text at the deadline")
        found = _NEXT.search(html_text, at)
        if found is None:
            sink.handle_data(html_text[at:])
            break
        lt = found.start()
        if lt > at:
            sink.handle_data(html_text[at:lt])
        name = found.group(2)
        if name is None:
            at = _markup(html_text, lt, sink)
        else:
            at = _tag(html_text, name.lower(), found.group(1) == "/", found.group(3).endswith("/"), found.end() - 1,
                      sink)
    return sink.text()


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

# The encodings a browser decodes a page with (the WHATWG Encoding Standard's list), by
# Python codec name, plus UTF-32 for a byte-order mark. A declared charset outside it is
# ignored: Python also ships codecs that are no page encoding at all, some of which raise
# whatever the error handler (idna, undefined) and some quadratic in the input (punycode).
_PAGE_ENCODINGS = frozenset(codecs.lookup(name).name for name in (
    "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "ascii", "latin-1", "ibm866",
    "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-5", "iso-8859-6", "iso-8859-7", "iso-8859-8",
    "iso-8859-9", "iso-8859-10", "iso-8859-11", "iso-8859-13", "iso-8859-14", "iso-8859-15", "iso-8859-16",
    "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp874", "cp1250", "cp1251", "cp1252", "cp1253",
    "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "gbk", "gb2312", "gb18030", "big5", "big5hkscs",
    "euc-jp", "iso-2022-jp", "shift_jis", "cp932", "euc-kr", "cp949"))


def text_encoding(charset: str | None) -> str | None:
    """The Python codec for a declared charset if it is a page encoding, else None."""
    if not charset:
        return None
    try:
        name = codecs.lookup(charset).name
    except (LookupError, ValueError):  # ValueError: a name with a NUL byte
        return None
    return name if name in _PAGE_ENCODINGS else None


def web_text(data: bytes, ctype: str, charset: str | None, deadline: float | None = None,
             clock: Callable[[], float] = time.monotonic) -> str:
    """The body as text for the model; binary bodies (also those binary once decoded,
    such as 20,000 NUL characters served as text/plain) become a one-line note.

    A declared charset that is no page encoding (``idna``, ``punycode``, an unknown
    name) counts as none: the byte-order mark, else UTF-8. HTML is turned into text
    before ``deadline`` (read on ``clock``) or ``ParseDeadline`` is raised.
    """
    encoding = text_encoding(charset) or next((name for bom, name in _BOM_CHARSETS if data.startswith(bom)), None)
    raw = data.decode(encoding or "utf-8", "replace")
    binary = f"(binary content: {ctype or 'unknown type'}, {len(data)} bytes, not shown)"
    if "\x00" in raw:
        return binary
    head = raw.lstrip()[:200].lower()
    if ctype in _HTML_TYPES or (not ctype and head.startswith(("<!doctype html", "<html"))):
        return html_to_text(raw, deadline, clock)
    if ctype.startswith(_TEXT_TYPES) or ctype.endswith(("+json", "+xml")) or not ctype:
        return raw
    return binary
