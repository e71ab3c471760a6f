"""The built course site in a real browser: every page offline, navigation, search, both editions, CJK glyphs.

Playwright drives the system's Chromium (Debian's ``chromium`` package; ``.ci/run`` installs it
with ``fonts-noto-cjk``). Playwright's own browser download is never used. On a machine without
Chromium the whole module is skipped with one line saying why. Every request that is not a local
file is blocked and recorded, so a page that needs the network fails here.
"""

from __future__ import annotations

import os
import re
import shutil
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from conftest import ROOT

from nanohermes_nb.course.build import notebook_paths
from nanohermes_nb.course.links import SKIPPED, check_site, page_links
from nanohermes_nb.course.site import external_urls

CHROMIUM = os.environ.get("NANOHERMES_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL = ("file://", "data:", "about:", "blob:")
NOTEBOOKS = [p.with_suffix(".html").name for p in notebook_paths(ROOT / "notebooks")]
CJK = re.compile(r"[\u4e00-\u9fff]")

if not Path(CHROMIUM).is_file():
    pytest.skip(f"no Chromium at {CHROMIUM}: the browser test needs Debian's chromium package "
                "(apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
pytestmark = pytest.mark.slow

# Three distinct ideographs drawn on a canvas in the element's own font: with no CJK font they all fall
# back to the same empty box, so their bitmaps are equal; with one, they differ.
GLYPHS_DIFFER = """el => {
  const font = getComputedStyle(el).fontSize + ' ' + getComputedStyle(el).fontFamily;
  const draw = ch => { const c = document.createElement('canvas'); c.width = 48; c.height = 48;
    const g = c.getContext('2d'); g.font = font.replace(/^[0-9.]+px/, '32px'); g.fillText(ch, 4, 36);
    return c.toDataURL(); };
  const a = draw('上'), b = draw('下'), c = draw('文');
  return a !== b && b !== c && a !== c;
}"""


def site_pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html") if p.name != "404.html")


@pytest.fixture(scope="module")
def site(built_course):
    return built_course[0]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def watch(context, page) -> dict[str, list[str]]:
    """Block and record every non-local request of ``context``; collect ``page``'s failures and errors."""
    seen: dict[str, list[str]] = {"network": [], "failed": [], "errors": [], "console": []}

    def route(r):
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            seen["network"].append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("requestfailed", lambda req: seen["failed"].append(req.url))
    page.on("pageerror", lambda exc: seen["errors"].append(str(exc)))
    page.on("console", lambda msg: seen["console"].append(msg.text) if msg.type == "error" else None)
    return seen


def visit(page, url: str) -> None:
    page.goto(url, wait_until="load")
    page.wait_for_timeout(200)  # DOMContentLoaded handlers, the search worker's start, late image decoding


def open_page(browser, url: str):
    """Load ``url`` in a fresh context with every non-local request blocked and recorded, every error collected."""
    context = browser.new_context()
    page = context.new_page()
    seen = watch(context, page)
    visit(page, url)
    return context, page, seen


def local_target(page_path: Path, href: str) -> Path | None:
    """The file a relative link of ``page_path`` points at (None for external, in-page or script links)."""
    parsed = urlparse(href)
    if parsed.scheme or href.startswith(("#", "//", "mailto:", "javascript:")) or not parsed.path:
        return None
    return (page_path.parent / unquote(parsed.path)).resolve()


def test_the_site_has_both_editions_docs_and_the_api(site):
    pages = site_pages(site)
    assert "index.html" in pages and "zh/index.html" in pages
    assert set(NOTEBOOKS) <= set(pages) and {f"zh/{n}" for n in NOTEBOOKS} <= set(pages)
    assert {"docs/rules.html", "docs/policies.html", "docs/safety.html", "api/index.html"} <= set(pages)
    assert sum(p.startswith("api/") for p in pages) > 20  # one page per public module
    api = (site / "api" / "nanohermes_nb.context.clamp.html").read_text(encoding="utf-8")
    assert "clamp_report" in api and "UTF-8" in api  # rendered from the docstrings


def test_nothing_in_the_built_files_would_be_fetched_from_the_network(site):
    assert external_urls(site) == []


@pytest.fixture(scope="module")
def walked(site, browser) -> dict[str, dict]:
    """Every page of both editions loaded once: what it asked of the network, its errors, whether it has a
    title, and, on a page with Chinese text, whether its ideographs draw as distinct glyphs (None: no
    Chinese element). Two tests read it, so the site is walked once, not twice."""
    out: dict[str, dict] = {}
    # one context for the walk (a fresh one per page costs about 0.3 s, a third of the walk); what a page
    # asked for and reported is collected from its navigation until the next one starts
    context = browser.new_context()
    page = context.new_page()
    seen = watch(context, page)
    try:
        for name in site_pages(site):
            for found in seen.values():
                found.clear()
            visit(page, (site / name).as_uri())
            glyphs = None
            if CJK.search((site / name).read_text(encoding="utf-8")):
                element = _chinese_element(page)
                glyphs = None if element is None else bool(element.evaluate(GLYPHS_DIFFER))
            out[name] = {"seen": {k: list(v) for k, v in seen.items()}, "titles": page.locator("h1").count(),
                         "glyphs": glyphs}
    finally:
        context.close()
    return out


def test_every_page_loads_offline_without_an_error(site, walked):
    """Each page of both editions: nothing asked of the network, no failed request, no error in the console."""
    assert sorted(walked) == site_pages(site)
    for name, page in walked.items():
        assert page["seen"] == {"network": [], "failed": [], "errors": [], "console": []}, (name, page["seen"])
        assert page["titles"] >= 1, f"{name}: no title"


def test_every_link_of_every_page_lands_on_a_built_file(site):
    for name in site_pages(site):
        path = site / name
        html = path.read_text(encoding="utf-8")
        for href in re.findall(r'<a\b[^>]*\shref="([^"]+)"', html):
            target = local_target(path, href)
            if target is not None:
                assert target.is_file() or (target / "index.html").is_file(), f"{name}: broken link {href}"


def test_no_link_of_either_edition_lands_nowhere(site):
    """make course fails on a broken link (links.py); the same check over the built site, both editions."""
    report = check_site(site)
    assert report.ok, "broken links:\n" + "\n".join(report.lines())
    assert report.anchors["en"] > 1_000 and report.anchors["zh"] > 500, report.summary()


def anchor_targets(site: Path) -> dict[str, list[str]]:
    """Every page some link points at with a fragment, and the distinct fragments, in page order of first use."""
    out: dict[str, dict[str, None]] = {}
    for name in site_pages(site):
        if Path(name).name in SKIPPED:
            continue
        for link in page_links(site.resolve(), (site / name).resolve(), (site / name).read_text(encoding="utf-8")):
            if link.fragment and link.target:
                out.setdefault(link.target, {})[link.fragment] = None
    return {page: list(frags) for page, frags in sorted(out.items())}


# For each fragment: the element exists, and after following the link it is in view near the top of the window
# (or the page is scrolled to its end when the element is too close to it to reach the top).
SCROLLED_TO = """frags => {
  const bad = [];
  const inView = el => {
    const top = el.getBoundingClientRect().top, end = document.documentElement.scrollHeight - innerHeight - 2;
    return top >= -2 && top < innerHeight && (top <= 160 || scrollY >= end);
  };
  for (const f of frags) {
    const el = document.getElementById(f) || document.getElementsByName(f)[0];
    if (!el) { bad.push(f + ': no element'); continue; }
    location.hash = '';
    scrollTo(0, 0);
    location.hash = encodeURIComponent(f);
    if (!inView(el)) bad.push(f + ': not scrolled to (top ' + Math.round(el.getBoundingClientRect().top) + ')');
  }
  return bad;
}"""
OPENED_AT = """f => {
  const el = document.getElementById(f) || document.getElementsByName(f)[0];
  if (!el) return 'no element';
  const top = el.getBoundingClientRect().top, end = document.documentElement.scrollHeight - innerHeight - 2;
  return top >= -2 && top < innerHeight && (top <= 160 || scrollY >= end) ? '' : 'stays at ' + Math.round(scrollY) +
    ', element at ' + Math.round(top);
}"""


def test_every_anchor_opens_and_the_page_scrolls_to_it(site, browser):
    """Each page opened fresh at the last anchor any link points at (Chromium must scroll there on load), then
    every anchor any link points at followed in the page: the element exists and comes into view at the top."""
    targets = anchor_targets(site)
    assert sum(len(f) for f in targets.values()) > 500
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    bad = []
    try:
        for name, frags in targets.items():
            page.goto(f"{(site / name).as_uri()}#{frags[-1]}", wait_until="load")
            page.wait_for_timeout(150)  # late image decoding must not move the reader away from the anchor
            opened = page.evaluate(OPENED_AT, frags[-1])
            bad += [f"{name}#{frags[-1]} opened fresh: {opened}"] if opened else []
            bad += [f"{name}#{problem}" for problem in page.evaluate(SCROLLED_TO, frags)]
    finally:
        context.close()
    assert not bad, f"{len(bad)} anchors not reached:\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_both_tables_of_contents_link_every_heading_by_a_non_empty_id(site, browser, edition):
    """The right-hand table of contents of a notebook page lists its headings, and each entry leads to one."""
    for name in NOTEBOOKS:
        html = (site / edition / name).read_text(encoding="utf-8")
        ids = [unescape(i) for i in re.findall(r'<h[1-6][^>]*\sid="([^"]*)"', html)]
        assert ids and all(ids), f"{edition}{name}: a heading without an id"
        linked = {unquote(unescape(h)) for h in re.findall(r'<a href="#([^"]*)" class="md-nav__link"', html)}
        assert set(ids[1:]) <= linked <= set(ids), f"{edition}{name}: TOC {sorted(linked)}, headings {ids}"
    context, page, seen = open_page(browser, (site / edition / "10_keep_ten_messages_and_the_cut.html").as_uri())
    try:
        entry = page.locator(".md-sidebar--secondary nav.md-nav--secondary a.md-nav__link").nth(3)
        target = entry.get_attribute("href")
        entry.click()
        page.wait_for_timeout(200)
        assert page.evaluate(OPENED_AT, unquote(target[1:])) == "", f"the TOC entry {target} did not scroll"
        assert seen["errors"] == [] and seen["console"] == [], seen
    finally:
        context.close()


def test_navigation_and_the_language_switch_work_both_ways(site, browser):
    context, page, seen = open_page(browser, (site / "index.html").as_uri())
    try:
        page.locator("nav.md-nav--primary a.md-nav__link", has_text="07 ·").first.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/07_refuse_truncate_summarise_and_clamp.html")
        assert "clamp" in page.locator("h1").first.inner_text()
        page.locator("a.nh-lang-link").click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/zh/07_refuse_truncate_summarise_and_clamp.html")
        assert CJK.search(page.locator("h1").first.inner_text()), "the switch did not lead to the Chinese page"
        page.locator("a.nh-lang-link").click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/course/07_refuse_truncate_summarise_and_clamp.html")
        assert seen["network"] == [] and seen["errors"] == [] and seen["console"] == [], seen
    finally:
        context.close()


def test_every_page_switches_to_the_same_page_in_the_other_edition(site):
    for name in site_pages(site):
        path = site / name
        html = path.read_text(encoding="utf-8")
        links = re.findall(r'<a class="md-header__button nh-lang-link" href="([^"]+)"', html)
        assert len(links) == 1, f"{name}: {len(links)} language switches"
        target = local_target(path, links[0])
        assert target is not None and target.is_file(), f"{name}: switch to {links[0]}"
        other = target.relative_to(site.resolve()).as_posix()
        stem = name.removeprefix("zh/")
        if stem in NOTEBOOKS or stem == "index.html":
            assert other == (stem if name.startswith("zh/") else f"zh/{stem}"), (name, other)


def test_the_chinese_edition_shows_no_search_box_rather_than_a_broken_one(site, browser):
    """Material's worker fails on every query over a jieba-segmented index, so the edition is built without one."""
    context, page, seen = open_page(browser, (site / "zh" / "index.html").as_uri())
    try:
        assert page.locator("input.md-search__input").count() == 0
        assert not (site / "zh" / "search").exists() and (site / "search" / "search_index.js").is_file()
        assert seen["errors"] == [] and seen["console"] == [], seen
    finally:
        context.close()


@pytest.mark.parametrize("term", ["clamp", "continuation"])
def test_search_finds_a_term_offline(site, browser, term):
    expected = "07_refuse_truncate_summarise_and_clamp.html"
    context, page, seen = open_page(browser, (site / "index.html").as_uri())
    try:
        page.locator("input.md-search__input").fill(term)  # the header's search box (desktop width)
        results = page.locator(".md-search-result__item a")
        results.first.wait_for(timeout=60_000)  # the search worker indexes every page first: slow on a busy machine
        hrefs = [results.nth(k).get_attribute("href") for k in range(results.count())]
        assert any(expected in h for h in hrefs), hrefs
        assert seen["network"] == [] and seen["errors"] == [] and seen["console"] == [], seen
    finally:
        context.close()


@pytest.mark.parametrize("edition", ["", "zh/"])
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_notebook_page_shows_its_figures_snapshots_and_folded_solutions(site, browser, built_course, edition, name):
    run = built_course[1][Path(name).with_suffix(".ipynb").name]
    assert run.ok, run.problem
    context, page, seen = open_page(browser, (site / edition / name).as_uri())
    try:
        solutions = page.locator("details.solution")
        assert all(not solutions.nth(k).evaluate("d => d.open") for k in range(solutions.count())), \
            f"{name}: a solution is open before the reader opens it"
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # then show everything
        images = page.locator(".jp-OutputArea-output img")
        assert images.count() >= run.images, f"{name}: {images.count()} images shown for {run.images} image outputs"
        for k in range(images.count()):
            img = images.nth(k)
            assert img.evaluate("i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0"), f"{name}: img {k}"
        snapshots = page.locator(".nanohermes-snapshot")
        assert snapshots.count() == run.widgets, f"{name}: {snapshots.count()} snapshots for {run.widgets} widgets"
        for k in range(snapshots.count()):
            snap = snapshots.nth(k)
            assert snap.is_visible() and snap.inner_text().strip(), f"{name}: snapshot {k} is empty"
            assert snap.bounding_box()["height"] > 40, f"{name}: snapshot {k} is a thin empty box"
        assert page.locator("script[type='application/vnd.jupyter.widget-view+json']").count() == 0
    finally:
        context.close()


def _chinese_element(page):
    """The first element drawing Chinese: in the article where there is any, else the header's language switch."""
    for selector in ("article h1, article p, article td, article li", "header a, nav a"):
        found = page.locator(selector).filter(has_text=CJK)
        if found.count():
            return found.first
    return None


def test_chinese_text_is_drawn_with_real_glyphs_on_every_page_that_has_some(walked):
    """A page whose Chinese falls back to empty boxes (no CJK font) fails: distinct ideographs must differ."""
    checked = [name for name, page in walked.items() if page["glyphs"] is not None]
    for name in checked:
        assert walked[name]["glyphs"], f"{name}: Chinese text renders as empty boxes (no CJK font?)"
    assert len(checked) >= len(NOTEBOOKS) + 1  # every Chinese page, the English home page's glossary too


def test_the_glyph_check_fails_where_no_cjk_font_is_installed(site, browser, tmp_path):
    """The same check in a Chromium whose fontconfig sees only Latin fonts: it must report empty boxes."""
    folders = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/truetype/liberation")
    latin = [d for d in folders if Path(d).is_dir()]
    if not latin:
        pytest.skip("no Latin-only font folder to build a CJK-less fontconfig from")
    conf = tmp_path / "fonts.conf"
    dirs = "".join(f"<dir>{d}</dir>" for d in latin)
    conf.write_text(f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>{dirs}'
                    f"<cachedir>{tmp_path}/cache</cachedir></fontconfig>", encoding="utf-8")
    env = {**os.environ, "FONTCONFIG_FILE": str(conf)}
    # a second Chromium from the same Playwright (a second sync_playwright() cannot start in this thread)
    b = browser.browser_type.launch(executable_path=CHROMIUM, args=FLAGS, env=env)
    try:
        page = b.new_page()
        page.goto((site / "zh" / "index.html").as_uri(), wait_until="load")
        element = page.locator("article h1").first
        assert CJK.search(element.inner_text())
        assert not element.evaluate(GLYPHS_DIFFER), "the check cannot tell empty boxes from glyphs"
    finally:
        b.close()


LEGIBLE_PX = 9  # CSS pixels: the smallest axis or tick label a reader must read, at the site's width (1280 x 800)
FIGURES = """() => [...document.querySelectorAll('.jp-OutputArea-output img')].map(img => {
  const box = img.getBoundingClientRect(), content = document.querySelector('.md-content').getBoundingClientRect();
  return {src: img.getAttribute('src').slice(0, 200), natural: img.naturalWidth, shown: box.width, right: box.right,
          contentRight: content.right};
})"""
CLIPPED = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('.jupyter-wrapper .jp-InputArea pre, .jupyter-wrapper .highlight pre')) {
    if (el.scrollWidth > el.clientWidth + 1) bad.push('code cell: ' + el.textContent.slice(0, 40));
  }
  for (const el of document.querySelectorAll('.jupyter-wrapper .jp-OutputArea-output')) {
    const overflow = getComputedStyle(el).overflowX;
    if (el.scrollWidth > el.clientWidth + 1 && overflow !== 'auto' && overflow !== 'scroll')
      bad.push('output: ' + el.textContent.slice(0, 40));
  }
  return bad;
}"""


def _figure_variants(run) -> dict[str, tuple[str, str | None]]:
    """Each figure output of an executed notebook: the first 120 base64 characters of either rendering ->
    (English base64, Chinese base64)."""
    import nbformat

    from nanohermes_nb.views.labels import ZH_PNG

    out = {}
    for cell in nbformat.read(run.ipynb, as_version=4).cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            if "image/png" in data:
                en, zh = data["image/png"].replace("\n", ""), (data.get(ZH_PNG) or "").replace("\n", "") or None
                out[en[:120]] = out[(zh or en)[:120]] = (en, zh)
    return out


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_figures_are_legible_at_the_sites_width_in_the_pages_language_and_nothing_is_clipped(
        site, browser, built_course, edition, tmp_path):
    """At 1280 x 800, every figure's smallest axis or tick label is at least LEGIBLE_PX tall on screen (its size in
    the PNG, recorded when it was drawn, times the scale the page shows it at, as the screenshot has it); a Chinese
    page shows the Chinese rendering, with every label translated; no code line or output is cut off."""
    import base64

    from nanohermes_nb.views.labels import label_px_of, untranslated_of

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    problems, shown = [], 0
    try:
        for name in NOTEBOOKS:
            run = built_course[1][Path(name).with_suffix(".ipynb").name]
            variants = _figure_variants(run)
            page.goto((site / edition / name).as_uri(), wait_until="load")
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            problems += [f"{edition}{name}: {what}" for what in page.evaluate(CLIPPED)]
            for k, fig in enumerate(page.evaluate(FIGURES)):
                key = fig["src"].split("base64,", 1)[-1][:120]
                en, zh = variants.get(key, (None, None))
                if en is None or zh is None:
                    problems.append(f"{edition}{name} figure {k}: no Chinese rendering recorded")
                    continue
                png = base64.b64decode(zh)
                if edition and key != zh[:120]:
                    problems.append(f"{edition}{name} figure {k}: the Chinese page shows the English figure")
                if edition and untranslated_of(png):
                    problems.append(f"{edition}{name} figure {k}: labels without Chinese: {untranslated_of(png)}")
                shot = page.locator(".jp-OutputArea-output img").nth(k).screenshot(path=str(tmp_path / f"{k}.png"))
                on_screen = (label_px_of(png) or 99) * fig["shown"] / fig["natural"]
                if on_screen < LEGIBLE_PX or fig["right"] > fig["contentRight"] + 1 or not shot:
                    problems.append(f"{edition}{name} figure {k}: smallest label {on_screen:.1f} px on screen "
                                    f"({fig['natural']} px wide shown at {fig['shown']:.0f})")
                shown += 1
    finally:
        context.close()
    assert shown >= 25 and not problems, "\n".join(problems)


def test_no_page_cites_an_issue_number_or_spec(site):
    """The code cites docs/rules.md as "SPEC" and names changes by issue number; the site's reader sees neither."""
    stale = re.compile(r"\bissue \d+|\bSPEC\b")
    found = [f"{name}: {m.group(0)}" for name in site_pages(site)
             for m in [stale.search((site / name).read_text(encoding="utf-8"))] if m]
    assert not found, found
