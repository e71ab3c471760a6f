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

import dataclasses
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

    Returns the site folder (English at its root, Chinese in ``zh/``) and the runs by notebook name. Under
    pytest-xdist the workers share one build: the first to take the lock (a file beside their temporary
    folders) builds it and records the runs; the others wait for the lock and read that record.
    """
    from filelock import FileLock

    from nanohermes_nb.course.build import NotebookRun, notebook_paths, run_course
    from nanohermes_nb.course.site import build_site

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out, record = shared / "course", shared / "course" / "runs.json"
    with FileLock(str(shared / "course.lock")):
        if not record.is_file():
            runs = run_course(notebook_paths(ROOT / "notebooks"), out / "executed", workers=2, timeout=300)
            build_site(runs, out / "executed", out / "course", stage_root=out / "site_src")
            record.write_text(json.dumps([dataclasses.asdict(r) for r in runs]), encoding="utf-8")
        runs = [NotebookRun(**r) for r in json.loads(record.read_text(encoding="utf-8"))]
    return out / "course", {r.name: r for r in runs}


def pytest_configure(config):
    if _LOOKUP_ERROR:
        raise pytest.UsageError(_LOOKUP_ERROR)
    for corpus in CORPORA:  # an empty folder must fail loudly, not turn its tests into nothing
        if not corpus.files:
            raise pytest.UsageError(f"no transcripts in the {corpus.name} corpus at {corpus.path}")


# The slow tier (`make test-fast` leaves it out, `make test` runs it): each marker names why a test is slow, and
# every test carrying one also carries `slow`, the one name `make test-fast` deselects (tests/test_tiers.py checks).
SLOW_TIERS = ("corpus_extended", "peers", "big", "subprocess", "browser", "local_model")
# whole modules in a tier: they execute notebooks, drive a browser, or run a peer library's harness
TIER_MODULES = {
    "test_notebooks.py": "slow", "test_course.py": "slow", "test_browser.py": "browser",
    "test_peers_hermes.py": "peers", "test_peers_langchain.py": "peers", "test_peers_openhands.py": "peers",
    "test_peers_aider.py": "peers", "test_wheel.py": "subprocess",
}
# the folders beside the checkout whose files feed the extended tier (a test parametrized over one of them is in it)
EXTENDED_ROOTS = tuple(p.resolve() for p in (ROOT.parent / "shared",) if p.is_dir())
# tests that must run in one worker under pytest-xdist (`--dist loadgroup`): they share the course built once
COURSE_GROUP = "course"


def _is_extended(value: Any) -> bool:
    if isinstance(value, Corpus):
        return value.name == "extended"
    if isinstance(value, Path):
        resolved = value.resolve()
        return any(resolved.is_relative_to(root) for root in EXTENDED_ROOTS)
    return False


def tiers_of(item: pytest.Item) -> set[str]:
    """The slow-tier markers ``item`` carries (its own, its module's, its class's)."""
    return {m.name for m in item.iter_markers() if m.name in SLOW_TIERS or m.name == "slow"}


# every test collected, before `-m` deselects any (tests/test_tiers.py reads it)
COLLECTED = pytest.StashKey[list]()


def pytest_collection_modifyitems(config, items):
    config.stash[COLLECTED] = list(items)  # a copy: deselection empties the list it is given
    for item in items:
        tier = TIER_MODULES.get(item.path.name)
        if tier:
            item.add_marker(getattr(pytest.mark, tier))
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(_is_extended(v) for v in params.values()):
            item.add_marker(pytest.mark.corpus_extended)
        if "built_course" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.xdist_group(COURSE_GROUP))
        if tiers_of(item) - {"slow"}:
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
