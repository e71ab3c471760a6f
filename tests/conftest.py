"""Shared test set-up: Agg backend in this process only, and the corpora of real transcripts.

Two corpora of real agent transcripts feed the tests that need real logs:

- ``vendored``: ``data/transcripts/`` in the repository (a small sample with every
  real-log quirk, see its NOTICE.md). Always there, so a fresh clone runs every test.
- ``extended``: ``$NANOHERMES_TRANSCRIPTS``, else ``shared/transcripts`` beside the
  checkout. CI has it; a user's clone usually does not. When it is absent, one line
  of the test summary says so.

A test that takes a ``corpus`` argument runs once per corpus found; ``corpus_files()``
parametrizes over every file of every corpus.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # never open a window; only the pytest process, not notebook kernels

import matplotlib.pyplot as plt
import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = "NANOHERMES_TRANSCRIPTS"
VENDORED = ROOT / "data" / "transcripts"


@dataclass(frozen=True)
class Corpus:
    """A folder of converted transcripts (``*.json``), its ``manifest.json`` and ``raw/`` originals."""

    name: str
    path: Path

    def __str__(self) -> str:
        return self.name

    @property
    def files(self) -> list[Path]:
        return sorted(p for p in self.path.glob("*.json") if p.name != "manifest.json")

    @property
    def raw(self) -> Path:
        return self.path / "raw"

    @property
    def manifest(self) -> list[dict]:
        return json.loads((self.path / "manifest.json").read_text(encoding="utf-8"))

    def largest(self) -> Path:
        return max(self.files, key=lambda p: p.stat().st_size)


def find_corpora(root: Path, environ: Mapping[str, str]) -> tuple[list[Corpus], str | None]:
    """The corpora for a checkout at ``root``, and why the extended one is missing (None if found).

    ``environ[NANOHERMES_TRANSCRIPTS]`` names the extended corpus explicitly: a
    missing folder then is an error (ValueError), not a skip. Without it the
    extended corpus is ``shared/transcripts`` beside the checkout, when it exists.
    """
    corpora = [Corpus("vendored", root / "data" / "transcripts")]
    if environ.get(ENV):
        extended = Path(environ[ENV])
        if not extended.is_dir():
            raise ValueError(f"{ENV}={extended} is not a folder")
    else:
        extended = root.parent / "shared" / "transcripts"
        if not extended.is_dir():
            return corpora, f"no {extended} (set {ENV} to run the corpus tests over another folder too)"
    corpora.append(Corpus("extended", extended))
    return corpora, None


try:
    CORPORA, EXTENDED_SKIPPED = find_corpora(ROOT, os.environ)
    _LOOKUP_ERROR = None
except ValueError as exc:
    CORPORA, EXTENDED_SKIPPED, _LOOKUP_ERROR = [Corpus("vendored", VENDORED)], None, str(exc)

BY_NAME = {c.name: c for c in CORPORA}


def corpus_files() -> list:
    """``pytest.param(path)`` for every transcript of every corpus, with ids like ``vendored/x.json``."""
    return [pytest.param(p, id=f"{c.name}/{p.name}") for c in CORPORA for p in c.files]


def canonical_sha256(messages: Any) -> str:
    """SHA-256 of a message list as ``json.dumps(list, ensure_ascii=False)``: content and key order."""
    return hashlib.sha256(json.dumps(list(messages), ensure_ascii=False).encode("utf-8")).hexdigest()


@pytest.fixture(scope="session")
def built_course(tmp_path_factory):
    """The whole course executed once per test session and built into its site, as ``make course`` does.

    Returns the site folder (English at its root, Chinese in ``zh/``) and the runs by notebook name.
    """
    from nanohermes_nb.course.build import notebook_paths, run_course
    from nanohermes_nb.course.site import build_site

    out = tmp_path_factory.mktemp("course")
    runs = run_course(notebook_paths(ROOT / "notebooks"), out / "executed", workers=2, timeout=300)
    build_site(runs, out / "executed", out / "course", stage_root=out / "site_src")
    return out / "course", {r.name: r for r in runs}


def pytest_configure(config):
    if _LOOKUP_ERROR:
        raise pytest.UsageError(_LOOKUP_ERROR)
    for corpus in CORPORA:  # an empty folder must fail loudly, not turn its tests into nothing
        if not corpus.files:
            raise pytest.UsageError(f"no transcripts in the {corpus.name} corpus at {corpus.path}")


# whole modules in the slow tier (`make test-fast` leaves them out): they execute notebooks or drive a browser;
# single slow tests elsewhere carry @pytest.mark.slow themselves
SLOW_MODULES = frozenset({"test_notebooks.py", "test_browser.py", "test_course.py"})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SLOW_MODULES or "built_course" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


def pytest_generate_tests(metafunc):
    if "corpus" in metafunc.fixturenames:
        metafunc.parametrize("corpus", CORPORA, ids=[c.name for c in CORPORA])


def pytest_terminal_summary(terminalreporter):
    if EXTENDED_SKIPPED:
        terminalreporter.write_line(f"extended transcript corpus skipped: {EXTENDED_SKIPPED}")


SITE_FIGURE_PX = 648  # CSS pixels: the widest a figure is shown on the course site at 1280 x 800 (its text column)
LEGIBLE_PX = 9  # the smallest axis or tick label a reader must read there (tests/test_browser.py checks the built site)


def figure_on_site(fig: Any) -> tuple[float, list[str]]:
    """How ``fig`` reads on the course site, without a browser: its smallest axis or tick label in CSS pixels (the
    PNG make course records, at the figure's DPI, scaled down to the site's width when wider), and the texts its
    Chinese rendering leaves in English."""
    import io

    from PIL import Image

    from nanohermes_nb.views.labels import chinese_png, label_px_of, untranslated_of

    png = chinese_png(fig, dpi=fig.dpi)
    with Image.open(io.BytesIO(png)) as image:
        width = image.size[0]
    return (label_px_of(png) or 99) * min(1.0, SITE_FIGURE_PX / width), untranslated_of(png)


@pytest.fixture
def close_figures():
    """Close the figures a test opened (a module asks for it with ``pytestmark``)."""
    before = set(plt.get_fignums())
    yield
    for n in set(plt.get_fignums()) - before:
        plt.close(n)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests talk to servers they start on 127.0.0.1: a proxy in the environment must not reach them."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
