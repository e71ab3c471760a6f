"""MkDocs hooks for the course site (named in ``mkdocs.yml``; loaded by MkDocs from this file's path).

Three things mkdocs-jupyter does not do the course's way:

- **offline**: nbconvert's templates put ``<script>`` tags for MathJax, mermaid, require.js and
  the widget manager on every page, loaded from CDNs. The course needs none of them (no math,
  no diagrams; an explorer's output is shown by the static snapshot beside its widget view),
  so every script that would load from the network is removed here;
- **solutions fold**: a code cell tagged ``solution`` is wrapped in ``<details>``, closed until
  the reader opens it;
- **links between notebooks** (``05_x.ipynb#A-heading``) point at the built pages, and every page
  gets a link to the same page in the other edition (``extra.nh_edition``, ``extra.nh_other_pages``
  are set by ``site.py``).
"""

from __future__ import annotations

import re
from typing import Any

_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)
_DATA_SCRIPT = re.compile(r"type=[\"']application/[\w.+-]*json[\"']", re.I)
_NOTEBOOK_LINK = re.compile(r'href="(\d\d_[\w-]+)\.ipynb(#[^"]*)?"')
_SOLUTION_START = re.compile(r'<div\b[^>]*class="[^"]*\bcelltag_solution\b[^"]*"[^>]*>')
_DIV = re.compile(r"<div\b|</div>")
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


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    lang = config.extra.get("nh_edition", "en")
    html = strip_network_scripts(html)
    html = _NOTEBOOK_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', html)
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


__all__ = ["strip_network_scripts", "fold_solutions", "switch_target"]
