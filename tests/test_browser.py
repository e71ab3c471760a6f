"""The built course in a real browser: every page offline, no JavaScript error, nothing blank.

Playwright drives the system's Chromium (Debian's ``chromium`` package; ``.ci/run``
installs it). Playwright's own browser download is never used. On a machine
without Chromium the whole module is skipped with one line saying why.
"""

from __future__ import annotations

import html
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from nanohermes_nb.course.build import notebook_paths

CHROMIUM = os.environ.get("NANOHERMES_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL = ("file://", "data:", "about:", "blob:")

if not Path(CHROMIUM).is_file():
    pytest.skip(f"no Chromium at {CHROMIUM}: the browser test needs Debian's chromium package "
                "(apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")

PAGES = ["index.html"] + [p.with_suffix(".html").name for p in notebook_paths(ROOT / "notebooks")]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def open_page(browser, url: str):
    """Load ``url`` with every non-local request blocked and recorded, and every error collected."""
    context = browser.new_context()
    page = context.new_page()
    seen = {"network": [], "errors": [], "console": []}

    def route(r):
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            seen["network"].append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("request", lambda req: None if req.url.startswith(LOCAL) else seen["network"].append(req.url))
    page.on("pageerror", lambda exc: seen["errors"].append(str(exc)))
    page.on("console", lambda msg: seen["console"].append(msg.text) if msg.type == "error" else None)
    page.goto(url, wait_until="load")
    page.wait_for_timeout(300)  # DOMContentLoaded handlers and late image decoding
    return context, page, seen


def _box_ok(element) -> bool:
    box = element.bounding_box()
    return bool(box) and box["width"] > 0 and box["height"] > 0


@pytest.mark.parametrize("name", PAGES)
def test_built_page_works_offline(built_course, browser, name):
    out, runs = built_course
    path = out / name
    assert path.is_file(), f"{name} was not built"
    source = path.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=", source), f"{name} loads a script"
    assert not re.search(r"<link[^>]+href=[\"']https?:", source), f"{name} loads a stylesheet from the network"
    context, page, seen = open_page(browser, path.as_uri())
    try:
        assert seen["network"] == [], f"{name} asked the network for {seen['network'][:3]}"
        assert seen["errors"] == [] and seen["console"] == [], (seen["errors"], seen["console"])
        if name == "index.html":
            links = page.locator("a[href]")
            targets = [links.nth(k).get_attribute("href") for k in range(links.count())]
            assert {t.split("#")[0] for t in targets} == set(PAGES[1:])
            assert all((out / t.split("#")[0]).is_file() for t in targets)
            for t in (t for t in targets if "#" in t):  # a section's link lands on its heading
                target, fragment = t.split("#", 1)
                assert f'id="{html.escape(fragment, quote=False)}"' in (out / target).read_text(encoding="utf-8"), t
            return
        run = runs[Path(name).with_suffix(".ipynb").name]
        assert run.ok, run.problem
        solutions = page.locator("details.solution")
        assert all(not solutions.nth(k).evaluate("d => d.open") for k in range(solutions.count())), \
            f"{name}: a solution is open before the reader opens it"
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # then show everything
        images = page.locator(".jp-OutputArea-output img")
        count = images.count()
        assert count >= run.images, f"{name}: {count} images shown for {run.images} image outputs"
        for k in range(count):
            img = images.nth(k)
            assert img.evaluate("i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0"), f"{name}: img {k}"
            assert img.is_visible() and _box_ok(img), f"{name}: image {k} has no size"
        snapshots = page.locator(".nanohermes-snapshot")
        assert snapshots.count() == run.widgets, f"{name}: {snapshots.count()} snapshots for {run.widgets} widgets"
        for k in range(snapshots.count()):
            snap = snapshots.nth(k)
            assert snap.is_visible() and _box_ok(snap) and snap.inner_text().strip(), f"{name}: snapshot {k}"
            assert snap.bounding_box()["height"] > 40, f"{name}: snapshot {k} is a thin empty box"
        assert page.locator("script[type='application/vnd.jupyter.widget-view+json']").count() == 0
    finally:
        context.close()
