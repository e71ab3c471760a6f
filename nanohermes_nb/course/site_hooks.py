"""MkDocs hooks for the course site (named in ``mkdocs.yml``; loaded by MkDocs from this file's path).

Three things mkdocs-jupyter does not do the course's way:

- **offline**: nbconvert's templates put ``<script>`` tags for MathJax, mermaid, require.js and
  the widget manager on every page, loaded from CDNs. The course needs none of them (no math,
  no diagrams; an explorer's output is shown by the static snapshot beside its widget view),
  so every script that would load from the network is removed here;
- **solutions fold**: a code cell tagged ``solution`` is wrapped in ``<details>``, closed until
  the reader opens it;
- **links between notebooks** (``05_x.ipynb#A-heading``) point at the built pages, a notebook's link
  to a docs page (``../docs/quality.md``, as JupyterLab follows it) at the built docs page (the English
  edition's, from either edition), and every page gets a link to the same page in the other edition
  (``extra.nh_edition``, ``extra.nh_other_pages`` are set by ``site.py``);
- **heading ids as JupyterLab writes them**: every heading's id is its text with spaces as dashes
  (``#Five-ways-to-cut,-one-call-each``), so a link that works in JupyterLab works on the site; a
  Chinese heading takes the id of the English heading it translates (``translations.py`` marks it),
  so its id is never empty and is the same in both editions. The page's table of contents is
  rebuilt from these headings, so it links to exactly these ids. ``links.py`` then checks every
  link of the built site.
"""

from __future__ import annotations

import html as _html
import re
from typing import Any, cast

_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)
_DATA_SCRIPT = re.compile(r"type=[\"']application/[\w.+-]*json[\"']", re.I)
_NOTEBOOK_LINK = re.compile(r'href="(\d\d_[\w-]+)\.ipynb(#[^"]*)?"')
_DOCS_LINK = re.compile(r'href="\.\./docs/([^"#]+?)(\.md)?(#[^"]*)?"')  # from notebooks/ into docs/, as in JupyterLab
_SOLUTION_START = re.compile(r'<div\b[^>]*class="[^"]*\bcelltag_solution\b[^"]*"[^>]*>')
_DIV = re.compile(r"<div\b|</div>")
_HEADING = re.compile(r"<h([1-6])\b([^>]*)>(.*?)</h\1>", re.S | re.I)
_ID_ATTR = re.compile(r"""\s+id=(["'])[^"']*\1""", re.I)
_MARKED = re.compile(r"""\s*<a id=(["'])([^"']*)\1\s*>\s*</a>""", re.I)  # translations.py's mark on a zh heading
_PERMALINK = re.compile(r"""<a class=(["'])anchor-link\1[^>]*>.*?</a>""", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
SUMMARY = {"en": "Solution (open it after you have tried)", "zh": "答案（先自己尝试，再打开）"}
SWITCH = {"en": ("中文", "zh", "阅读本页的中文版"), "zh": ("English", "en", "Read this page in English")}


def strip_network_scripts(html: str) -> str:
    """Remove every script that loads from, or fetches, the network; JSON data scripts stay."""
    def keep(m: re.Match) -> str:
        attrs, body = m.group(1), m.group(2)
        if _DATA_SCRIPT.search(attrs):
            return m.group(0)
        if re.search(r"\bsrc=[\"']?(https?:)?//", attrs, re.I) or re.search(r"https?://", body):
            return ""
        if "text/x-mathjax-config" in attrs:
            return ""
        return m.group(0)

    return _SCRIPT.sub(keep, html)


def fold_solutions(html: str, lang: str) -> str:
    """Wrap each ``solution``-tagged cell in a closed ``<details class="solution">``."""
    out, pos = [], 0
    for m in _SOLUTION_START.finditer(html):
        if m.start() < pos:
            continue
        depth, end = 0, None
        for d in _DIV.finditer(html, m.start()):
            depth += 1 if d.group(0) == "<div" else -1
            if depth == 0:
                end = d.end()
                break
        if end is None:
            break
        out += [html[pos:m.start()], f'<details class="solution"><summary>{SUMMARY[lang]}</summary>',
                html[m.start():end], "</details>"]
        pos = end
    out.append(html[pos:])
    return "".join(out)


_SPEC = re.compile(r"\bSPEC(?:\s+sections?)?\s+(\d+(?:\.\d+)?)(?:\s+and\s+(\d+))?")
_ISSUE_FIXES = [(re.compile(r"\s*\(issue \d+\)"), ""), (re.compile(r": issue \d+\)"), ")"),
                (re.compile(r"the (\w+) fixes of issue \d+"), r"its \1 fixes"),
                (re.compile(r"\bissue \d+'s "), "an earlier "), (re.compile(r"\bissue \d+\b"), "an earlier change"),
                (re.compile(r"\bSPEC:"), "the rules:")]


def reader_text(text: str, rules: str | None = "docs/rules.html", markdown: bool = False) -> str:
    """Text for the site's reader: no issue numbers, and "SPEC section N" as the rules page it means.

    The project's docstrings and docs cite ``docs/rules.md`` as "SPEC" and name the change that brought
    something by its issue number; neither means anything to a reader of the site. "SPEC section 5"
    becomes "the rules, §5", linked to ``rules`` (a Markdown link when ``markdown``); an issue number
    goes, with the words that only introduced it.
    """
    def spec(m: re.Match) -> str:
        label = f"the rules, §{m.group(1)}" + (f" and §{m.group(2)}" if m.group(2) else "")
        if rules is None:
            return label
        return f"[{label}]({rules})" if markdown else f'<a href="{rules}">{label}</a>'

    text = _SPEC.sub(spec, text)
    for pattern, repl in _ISSUE_FIXES:
        text = pattern.sub(repl, text)
    return text


def heading_id(text: str) -> str:
    """The id JupyterLab gives a heading: its text (as shown, without markup) with spaces as dashes.

    Double quotes and angle brackets are left out (Material writes the table of contents' links
    unescaped); ``map.anchor`` does the same, so a link to such a heading still lands.
    """
    return re.sub(r'["<>]', "", text.strip().replace(" ", "-"))


def _heading_text(inner: str) -> str:
    return _html.unescape(_TAG.sub("", _PERMALINK.sub("", inner))).strip()


def set_heading_ids(html: str) -> tuple[str, list[dict]]:
    """Give every heading its JupyterLab id (unique on the page); return the new HTML and the TOC tokens.

    A heading carrying translations.py's ``<a id="English-id"></a>`` mark takes that id and loses the
    mark; any other heading gets ``heading_id`` of its own text. A repeated id gets ``-2``, ``-3`` (an
    empty one ``section-N``). The tokens (level, id, name, children) are what ``mkdocs.structure.toc``
    builds a page's table of contents from.
    """
    seen: dict[str, int] = {}
    flat: list[dict] = []

    def one(m: re.Match) -> str:
        level, attrs, inner = int(m.group(1)), m.group(2), m.group(3)
        mark = _MARKED.search(inner)
        inner = _PERMALINK.sub("", _MARKED.sub("", inner))
        ident = _html.unescape(mark.group(2)) if mark else heading_id(_heading_text(inner))
        ident = ident or f"section-{len(flat) + 1}"
        seen[ident] = seen.get(ident, 0) + 1
        if seen[ident] > 1:
            ident = f"{ident}-{seen[ident]}"
        quoted = _html.escape(ident, quote=True)
        flat.append({"level": level, "id": ident, "name": _html.escape(_heading_text(inner)), "children": []})
        return (f'<h{level}{_ID_ATTR.sub("", attrs)} id="{quoted}">{inner.rstrip()}'
                f'<a class="anchor-link" href="#{quoted}">¶</a></h{level}>')

    html = _HEADING.sub(one, html)
    return html, _nest(flat)


def _nest(flat: list[dict]) -> list[dict]:
    """Flat heading tokens in page order, nested by level as a table of contents."""
    root: list[dict] = []
    stack: list[dict] = []
    for token in flat:
        while stack and stack[-1]["level"] >= token["level"]:
            stack.pop()
        (stack[-1]["children"] if stack else root).append(token)
        stack.append(token)
    return root


def _site_root(page: Any, lang: str) -> str:
    """The relative path from ``page`` to the English edition's root, where ``docs/`` is built (one edition)."""
    return "../" * (page.url or "").count("/") + ("../" if lang == "zh" else "")


def _rules_link(page: Any, lang: str) -> str:
    return f"{_site_root(page, lang)}docs/rules.html"


def docs_links(html: str, root: str) -> str:
    """A notebook's links into ``docs/`` (``../docs/quality.md``, right from ``notebooks/`` in JupyterLab) as links to
    the built docs pages under ``root`` (the English edition's root, relative to the page): a ``.md`` page becomes
    its ``.html``, any other file of ``docs/`` stays as it is, a ``#fragment`` is kept."""
    def one(m: re.Match) -> str:
        name, md, fragment = m.group(1), m.group(2), m.group(3) or ""
        return f'href="{root}docs/{name}{".html" if md else ""}{fragment}"'

    return _DOCS_LINK.sub(one, html)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    lang = config.extra.get("nh_edition", "en")
    if page.file.src_uri.startswith("api/"):
        return reader_text(html, _rules_link(page, lang))
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    from mkdocs.structure.toc import get_toc

    html = reader_text(strip_network_scripts(html), _rules_link(page, lang))
    html = _NOTEBOOK_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', html)
    html = docs_links(html, _site_root(page, lang))
    html, tokens = set_heading_ids(html)
    page.toc = get_toc(cast(Any, tokens))  # the TOC tokens mkdocs reads: dicts of its private TypedDict's keys
    return fold_solutions(html, lang)


def on_post_page(output: str, page: Any, config: Any) -> str:
    return strip_network_scripts(output)


def switch_target(url: str, lang: str, other_pages: set[str]) -> str:
    """The relative link from page ``url`` of edition ``lang`` to the same page in the other edition."""
    up = "../" * url.count("/")
    if lang == "en":
        target = url if url in other_pages else "index.html"
        return f"{up}zh/{target}"
    target = url if url in other_pages else "index.html"
    return f"{up}../{target}"


def on_page_context(context: dict, page: Any, config: Any, nav: Any) -> dict:
    lang = config.extra.get("nh_edition", "en")
    other = set(config.extra.get("nh_other_pages", ()))
    label, other_lang, title = SWITCH[lang]
    page.meta["nh_switch"] = {"href": switch_target(page.url or "index.html", lang, other),
                              "label": label, "lang": other_lang, "title": title}
    return context


__all__ = ["strip_network_scripts", "fold_solutions", "switch_target", "heading_id", "set_heading_ids",
           "reader_text", "docs_links"]
