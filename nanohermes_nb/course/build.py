"""Execute the course notebooks, then build the course site (``build/course/``, ``site.py``).

``python -m nanohermes_nb.course`` is what ``make course`` runs. Each notebook runs
in a fresh kernel from its own folder into ``build/executed/``, widget state is stored
in the executed notebook, and a ``parameters`` cell can be overridden (papermill style:
a cell tagged ``parameters`` is followed by an injected one). The executed notebooks
then become the site: MkDocs with the course, ``docs/`` and the API reference, in
English and in Chinese (``site.build_site``), complete offline.

``make course`` also keeps ``docs/ledger_vs_article.png`` (the README's picture)
current: it is redrawn only when the data it plots has changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._checkout import missing_checkout
from .._files import AtomicOutput, write_text_atomic

__all__ = ["NotebookRun", "NotebookInfo", "execute_notebook", "run_course", "notebook_paths", "notebook_info",
           "ledger_figure_data", "write_ledger_figure", "figure_hash", "main"]

ROOT = Path(__file__).resolve().parents[2]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LEDGER_FIGURE = ROOT / "docs" / "ledger_vs_article.png"
FIGURE_KEY = "nanohermes-data-sha256"  # PNG text chunk: the hash of the data the figure plots

@dataclass(frozen=True)
class NotebookRun:
    """What happened when one notebook ran."""

    name: str
    seconds: float
    ipynb: str | None
    error: str | None = None
    images: int = 0
    error_outputs: int = 0
    parameters: dict = field(default_factory=dict)
    widgets: int = 0  # widget outputs
    bare_widgets: int = 0  # widget outputs with no static snapshot (blank where no widget manager runs)

    @property
    def ok(self) -> bool:
        return self.error is None and self.error_outputs == 0 and self.bare_widgets == 0

    @property
    def problem(self) -> str | None:
        """Why the run is not ok, in a few words (None when it is)."""
        if self.error:
            return self.error
        if self.error_outputs:
            return f"{self.error_outputs} error output(s)"
        if self.bare_widgets:
            return f"{self.bare_widgets} widget output(s) without a static snapshot"
        return None


def notebook_paths(folder: str | os.PathLike = ROOT / "notebooks") -> list[Path]:
    return sorted(p for p in Path(folder).glob("*.ipynb") if not p.name.startswith("."))


def _inject(nb, parameters: Mapping[str, Any]) -> None:
    import nbformat

    if not parameters:
        return
    source = "\n".join(f"{k} = {v!r}" for k, v in parameters.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    for k, c in enumerate(nb.cells):
        if "parameters" in c.get("metadata", {}).get("tags", []):
            nb.cells.insert(k + 1, cell)
            return
    raise ValueError("parameters given but the notebook has no cell tagged 'parameters'")


def _write_atomic(path: Path, text: str) -> None:
    write_text_atomic(path, text, mode=0o644)  # built pages are for everyone to read


def _count(nb) -> tuple[int, int, int, int]:
    """Image outputs, error outputs, widget outputs, widget outputs without a snapshot."""
    images = errors = widgets = bare = 0
    for c in nb.cells:
        for out in c.get("outputs", []):
            if out.get("output_type") == "error":
                errors += 1
            data = out.get("data", {})
            if "image/png" in data or "image/svg+xml" in data:
                images += 1
            if WIDGET_VIEW in data:
                widgets += 1
                bare += not ({"text/html", "image/png", "image/svg+xml"} & set(data))
    return images, errors, widgets, bare


def execute_notebook(
    path: str | os.PathLike,
    out_dir: str | os.PathLike,
    parameters: Mapping[str, Any] | None = None,
    timeout: int = 600,
    suffix: str = "",
) -> NotebookRun:
    """Run one notebook in a fresh kernel; write the executed copy to ``out_dir``."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import (
        CellExecutionError,
        CellTimeoutError,
        DeadKernelError,
    )

    path = Path(path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    from .exercises import for_build, for_reader

    nb = for_build(nbformat.read(path, as_version=4))  # each solution and its check after the starter's check
    _inject(nb, parameters or {})
    nb.cells.insert(0, _bilingual_figures_cell(nbformat))
    error = None
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nanohermes-kernel-") as sockets:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                                config=_ipc_config(sockets), resources={"metadata": {"path": str(path.parent)}})
        try:
            client.execute()
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
            lines = [ln for ln in _ANSI.sub("", str(exc)).splitlines() if ln.strip()]  # IPython colours it
            error = f"{type(exc).__name__}: {lines[-1] if lines else exc}"
    seconds = time.perf_counter() - start
    nb = for_reader(nb)
    stem = path.stem + suffix
    ipynb_path = out / f"{stem}.ipynb"
    _write_atomic(ipynb_path, nbformat.writes(nb))
    images, errors, widgets, bare = _count(nb)
    return NotebookRun(path.name, seconds, str(ipynb_path), error, images, errors, dict(parameters or {}), widgets,
                       bare)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _bilingual_figures_cell(nbformat: Any) -> Any:
    """A first cell that gives every figure the notebook displays its Chinese rendering (``views.labels``).

    Tagged as an injected cell, so ``for_reader`` removes it from the executed notebook again.
    """
    from .exercises import INJECTED

    cell = nbformat.v4.new_code_cell("from nanohermes_nb.views.labels import bilingual_figures\n\nbilingual_figures();",
                                     metadata={"tags": [INJECTED]})
    cell["id"] = "injected-bilingual-figures"
    return cell


def _ipc_config(folder: str):
    """The kernel talks over Unix sockets in ``folder`` (private to this run), not TCP.

    Over TCP every kernel warns "Kernel is running over TCP without encryption"
    (20 lines per ``make course``): true, since anyone on the machine could connect
    to its ports. IPC sockets in a private folder remove the cause, so the warning
    is not printed, and nothing else the kernel logs is hidden. The client still
    owns (starts and shuts down) its kernel.
    """
    from traitlets.config import Config

    return Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(folder, "kernel")}})


def _execute(args: tuple) -> NotebookRun:
    return execute_notebook(*args)


def run_course(
    notebooks: Sequence[str | os.PathLike] | None = None,
    out_dir: str | os.PathLike = ROOT / "build" / "executed",
    parameters: Mapping[str, Mapping[str, Any]] | None = None,
    workers: int = 2,
    timeout: int = 600,
) -> list[NotebookRun]:
    """Run notebooks (all of ``notebooks/`` by default), ``workers`` kernels at a time."""
    paths = [Path(p) for p in notebooks] if notebooks else notebook_paths()
    parameters = parameters or {}
    jobs = [(p, out_dir, parameters.get(p.name), timeout, "") for p in paths]
    if workers <= 1 or len(jobs) <= 1:
        runs = [_execute(j) for j in jobs]
    else:
        # longest first (the last build's times, else the notebook's size), so no long one starts last
        order = sorted(range(len(jobs)), key=lambda k: -_expected_seconds(paths[k], out_dir))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            done = dict(zip(order, pool.map(_execute, [jobs[k] for k in order]), strict=True))
        runs = [done[k] for k in range(len(jobs))]
    _remember_times(runs, out_dir)
    return runs


TIMES_FILE = ".times.json"  # in the executed folder: each notebook's seconds in the last build


def _expected_seconds(path: Path, out_dir: str | os.PathLike) -> float:
    try:
        times = json.loads((Path(out_dir) / TIMES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        times = {}
    return float(times.get(path.name, path.stat().st_size / 3_000))  # about 3 kB of notebook a second


def _remember_times(runs: Sequence[NotebookRun], out_dir: str | os.PathLike) -> None:
    path = Path(out_dir) / TIMES_FILE
    try:
        times = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        times = {}
    times.update({r.name: round(r.seconds, 1) for r in runs if r.ok})
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, json.dumps(times, indent=1, sort_keys=True))


# ---------------------------------------------------------------- what a notebook is about


@dataclass(frozen=True)
class NotebookInfo:
    """What the course map and the home page say about a notebook, read from the notebook itself."""

    name: str
    number: str
    topic: str
    minutes: int  # reading the prose
    code_lines: int  # counted apart: running and reading code is not reading prose


def notebook_info(path: str | os.PathLike) -> NotebookInfo:
    """The notebook's topic, prose reading time and number of code lines.

    The topic is ``metadata["nanohermes"]["topic"]`` when set, else the text of the
    first Markdown heading without a leading ``NN ·`` number. Reading time and code
    lines are ``site.reading_time`` (prose words at 200 a minute; code lines apart).
    """
    import nbformat

    from .site import reading_time

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    topic = str(nb.metadata.get("nanohermes", {}).get("topic", "")).strip()
    for cell in nb.cells:
        if cell.cell_type == "markdown" and not topic:
            heading = next((ln for ln in cell.source.splitlines() if ln.startswith("#")), "")
            topic = re.sub(r"^#+\s*(\d+\s*[·.:-]\s*)?", "", heading).strip()
    match = re.match(r"\d*", path.stem)
    minutes, code = reading_time(nb)
    return NotebookInfo(path.name, match.group(0) if match else "", topic or path.stem.replace("_", " "), minutes,
                        code)


# ---------------------------------------------------------------- the README's picture


def ledger_figure_data(root: str | os.PathLike = ROOT) -> dict:
    """What the README's picture plots: the replayed twelve-turn ledger and the article's, turn by turn."""
    import pandas as pd

    from ..engine.ledger import replay
    from ..transcripts import load_transcript

    root = Path(root)
    ledger = replay(load_transcript(root / "data" / "sessions" / "twelve_turns.json"))
    article = pd.read_csv(root / "data" / "article_ledger.csv")
    columns = ["turn", "messages", "size", "compacted", "size_after"]

    def rows(frame) -> list[dict]:
        return [{c: (bool(r[c]) if c == "compacted" else int(r[c])) for c in columns}
                for r in frame[columns].to_dict(orient="records")]

    return {"budget": int(ledger.budget), "unit": ledger.unit, "replay": rows(ledger.by_turn()),
            "article": rows(article)}


def _data_hash(data: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def figure_hash(path: str | os.PathLike) -> str | None:
    """The data hash stored in a figure written by ``write_ledger_figure`` (None if absent)."""
    from PIL import Image, PngImagePlugin

    try:
        with Image.open(path) as image:
            return image.text.get(FIGURE_KEY) if isinstance(image, PngImagePlugin.PngImageFile) else None
    except OSError:
        return None


def write_ledger_figure(path: str | os.PathLike = LEDGER_FIGURE, root: str | os.PathLike = ROOT, *,
                        force: bool = False) -> bool:
    """Draw the replayed twelve-turn ledger beside the article's into ``path`` (PNG).

    The PNG records the SHA-256 of the data it plots; it is redrawn only when that
    data changed (or ``force``). Returns whether the file was written.
    """
    import pandas as pd
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from ..engine.ledger import replay
    from ..transcripts import load_transcript
    from ..views.plots import plot_by_turn

    path, root = Path(path), Path(root)
    data = ledger_figure_data(root)
    digest = _data_hash(data)
    if not force and path.exists() and figure_hash(path) == digest:
        return False
    ledger = replay(load_transcript(root / "data" / "sessions" / "twelve_turns.json"))
    article = pd.DataFrame(data["article"])
    article.attrs.update(label="the article (illustrative)", budget=data["budget"], unit=data["unit"])
    figure = Figure(figsize=(12, 3.8), layout="constrained")
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2, sharey=True)
    plot_by_turn(ledger, ax=left, title="replayed here: data/sessions/twelve_turns.json")
    plot_by_turn(article, ax=right, title="the article's twelve-turn ledger (illustrative)")
    path.parent.mkdir(parents=True, exist_ok=True)
    with AtomicOutput(path, mode=0o644) as out:
        figure.savefig(out.tmp, format="png", dpi=100, metadata={"Software": None, FIGURE_KEY: digest})
    return True


def main(argv: Sequence[str] | None = None) -> int:
    missing = missing_checkout("python -m nanohermes_nb.course")
    if missing is not None:  # installed from a wheel: there is no repository to work on
        print(f"error: {missing}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="python -m nanohermes_nb.course", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to run (default: all of notebooks/)")
    parser.add_argument("-o", "--out", default=str(ROOT / "build" / "course"), help="where the site goes")
    parser.add_argument("--executed", default=str(ROOT / "build" / "executed"),
                        help="where the executed notebooks go")
    parser.add_argument("-j", "--workers", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    parser.add_argument("--no-site", action="store_true", help="only execute the notebooks")
    parser.add_argument("--figure", action="store_true",
                        help=f"only redraw {LEDGER_FIGURE.relative_to(ROOT)} (the README's picture) and exit")
    args = parser.parse_args(argv)
    if args.figure:
        write_ledger_figure(force=True)
        print(f"wrote {LEDGER_FIGURE}")
        return 0
    links_ok = True
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    runs = run_course(args.notebooks or None, args.executed, workers=args.workers, timeout=args.timeout)
    total = time.perf_counter() - start
    width = max((len(r.name) for r in runs), default=10)
    for r in runs:
        status = "ok" if r.ok else f"FAILED: {r.problem}"
        print(f"{r.name:<{width}}  {r.seconds:6.1f} s  {r.images:2d} figures  {status}")
    print(f"{len(runs)} notebooks in {total:.1f} s (wall, {args.workers} kernels at a time) -> {args.executed}")
    if not args.no_site:
        from .site import build_site

        site = build_site(runs, args.executed, args.out)
        links_ok = _report_site(site, Path(args.out))
    if not args.notebooks:
        figure = "redrawn" if write_ledger_figure() else "up to date"
        print(f"{LEDGER_FIGURE.relative_to(ROOT)}: {figure}")
    wall, cpu = time.perf_counter() - start, _cpu_seconds() - cpu_start
    print(f"make course: {wall:.0f} s of wall time (notebooks {total:.0f} s), {cpu:.0f} s of CPU time "
          f"({cpu / wall:.1f} of {os.cpu_count()} cores busy on average)")
    return 0 if all(r.ok for r in runs) and links_ok else 1


def _report_site(site: Any, out: Path) -> bool:
    """Print what the site build made (pages, time, untranslated cells, links); whether every link lands."""
    print(f"site: {site.pages.get('en', 0)} English and {site.pages.get('zh', 0)} Chinese pages in "
          f"{site.seconds:.1f} s; open {(out / 'index.html').resolve()}")
    for lang, cells in site.untranslated.items():
        if cells:
            print(f"{lang}: {len(cells)} prose cell(s) without a translation "
                  "(python -m nanohermes_nb.course.translations)")
    print(f"links: {site.links.summary()}")
    for line in site.links.lines():
        print(f"  broken link: {line}")
    return bool(site.links.ok)


def _cpu_seconds() -> float:
    """CPU time of this process and of every child process it has waited for (kernels, pool workers, builds)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
