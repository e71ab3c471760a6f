"""Execute the course notebooks into ``build/course/`` (executed ``.ipynb`` and ``.html``).

``python -m nanohermes_nb.course`` is what ``make course`` runs. Each notebook runs
in a fresh kernel from its own folder, widget state is stored in the executed
notebook, and a ``parameters`` cell can be overridden (papermill style: a cell
tagged ``parameters`` is followed by an injected one).

The HTML pages work offline: they load no script at all. nbconvert's lab
template would fetch require.js, MathJax, mermaid and the widget manager from
CDNs; the course needs none of them (no math, no diagrams, no JavaScript
outputs), so the template used here leaves them out, and a widget output is
shown by the static snapshot every explorer puts beside its widget view (see
``views.widgets``). ``index.html`` is the course's home page, built from the
notebooks themselves: each one's first heading is its topic.

``make course`` also keeps ``docs/ledger_vs_article.png`` (the README's picture)
current: it is redrawn only when the data it plots has changed.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["NotebookRun", "execute_notebook", "run_course", "notebook_paths", "notebook_info", "write_index",
           "html_exporter", "ledger_figure_data", "write_ledger_figure", "figure_hash", "NotebookInfo", "main"]

ROOT = Path(__file__).resolve().parents[2]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LEDGER_FIGURE = ROOT / "docs" / "ledger_vs_article.png"
FIGURE_KEY = "nanohermes-data-sha256"  # PNG text chunk: the hash of the data the figure plots

# nbconvert's lab template without the blocks that load scripts from the network
# (require.js, the widget manager, MathJax, mermaid). The widget-state JSON stays in
# the page as data.
OFFLINE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block any_cell %}
{%- if 'solution' in cell.metadata.get('tags', []) -%}
<details class="solution"><summary>Solution (open it after you have tried)</summary>
{{ super() }}
</details>
{%- else -%}
{{ super() }}
{%- endif -%}
{% endblock any_cell %}
"""
_NOTEBOOK_LINK = re.compile(r'href="(\d\d_[\w-]+)\.ipynb(#[^"]*)?"')


@dataclass(frozen=True)
class NotebookRun:
    """What happened when one notebook ran."""

    name: str
    seconds: float
    ipynb: str | None
    html: str | None
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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


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


def html_exporter():
    """nbconvert's HTML exporter with the offline template, showing a widget output's snapshot.

    The widget view's mimetype is dropped from the display priority, so an output
    that carries a widget view and its snapshot renders the snapshot.
    """
    import jinja2
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    default = HTMLExporter().default_config.NbConvertBase.display_data_priority
    config = Config({"NbConvertBase": {"display_data_priority": [m for m in default if m != WIDGET_VIEW]}})
    return HTMLExporter(config=config, template_name="lab", template_file="offline.html.j2",
                        extra_loaders=[jinja2.DictLoader({"offline.html.j2": OFFLINE_TEMPLATE})])


def execute_notebook(
    path: str | os.PathLike,
    out_dir: str | os.PathLike,
    parameters: Mapping[str, Any] | None = None,
    timeout: int = 600,
    suffix: str = "",
    html: bool = True,
) -> NotebookRun:
    """Run one notebook in a fresh kernel; write the executed copy (and HTML) to ``out_dir``."""
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
    nb = nbformat.read(path, as_version=4)
    _inject(nb, parameters or {})
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(path.parent)}})
    error = None
    start = time.perf_counter()
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        lines = [ln for ln in str(exc).splitlines() if ln.strip()]
        error = f"{type(exc).__name__}: {lines[-1] if lines else exc}"
    seconds = time.perf_counter() - start
    stem = path.stem + suffix
    ipynb_path = out / f"{stem}.ipynb"
    _write_atomic(ipynb_path, nbformat.writes(nb))
    html_path = None
    if html:
        body, _ = html_exporter().from_notebook_node(nb)
        body = _NOTEBOOK_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)  # pages link pages
        html_path = out / f"{stem}.html"
        _write_atomic(html_path, body)
    images, errors, widgets, bare = _count(nb)
    return NotebookRun(path.name, seconds, str(ipynb_path), str(html_path) if html_path else None, error,
                       images, errors, dict(parameters or {}), widgets, bare)


def _execute(args: tuple) -> NotebookRun:
    return execute_notebook(*args)


def run_course(
    notebooks: Sequence[str | os.PathLike] | None = None,
    out_dir: str | os.PathLike = ROOT / "build" / "course",
    parameters: Mapping[str, Mapping[str, Any]] | None = None,
    workers: int = 2,
    timeout: int = 600,
    html: bool = True,
) -> list[NotebookRun]:
    """Run notebooks (all of ``notebooks/`` by default), ``workers`` kernels at a time."""
    paths = [Path(p) for p in notebooks] if notebooks else notebook_paths()
    parameters = parameters or {}
    jobs = [(p, out_dir, parameters.get(p.name), timeout, "", html) for p in paths]
    if workers <= 1 or len(jobs) <= 1:
        return [_execute(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_execute, jobs))


# ---------------------------------------------------------------- the course home page

WORDS_PER_MINUTE = 200  # prose; a line of code counts as 3 words, an output as nothing


@dataclass(frozen=True)
class NotebookInfo:
    """What the home page says about a notebook, read from the notebook itself."""

    name: str
    number: str
    topic: str
    minutes: int


def notebook_info(path: str | os.PathLike) -> NotebookInfo:
    """The notebook's topic and reading time.

    The topic is ``metadata["nanohermes"]["topic"]`` when set, else the text of the
    first Markdown heading without a leading ``NN ·`` number. The reading time
    counts the words of the Markdown cells and three words per line of code.
    """
    import nbformat

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    topic = str(nb.metadata.get("nanohermes", {}).get("topic", "")).strip()
    words = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            words += len(cell.source.split())
            if not topic:
                heading = next((ln for ln in cell.source.splitlines() if ln.startswith("#")), "")
                topic = re.sub(r"^#+\s*(\d+\s*[·.:-]\s*)?", "", heading).strip()
        elif cell.cell_type == "code":
            words += 3 * sum(1 for ln in cell.source.splitlines() if ln.strip())
    number = re.match(r"\d*", path.stem).group(0)
    return NotebookInfo(path.name, number, topic or path.stem.replace("_", " "),
                        max(1, round(words / WORDS_PER_MINUTE)))


def _inline_markdown(text: str) -> str:
    """The little Markdown a heading may hold: `code`, **bold**, *emphasis*; everything else escaped."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    return re.sub(r"\*([^*]+)\*", r"<i>\1</i>", out)


INDEX_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 52rem; margin: 2rem auto;
       padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
p.lead { color: #555; margin-top: 0; }
ol { list-style: none; padding: 0; }
li { display: grid; grid-template-columns: 2.5rem 1fr auto; gap: .6rem; padding: .55rem 0;
     border-bottom: 1px solid #e5e5e5; align-items: baseline; }
li .n { color: #888; font-variant-numeric: tabular-nums; }
li .time { color: #666; font-size: .85rem; white-space: nowrap; }
li .failed { color: #b00020; }
code { background: #f3f3f3; padding: 0 .2rem; border-radius: 3px; }
footer { color: #777; font-size: .85rem; margin-top: 1.5rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
td, th { border-bottom: 1px solid #e5e5e5; padding: .35rem .4rem; text-align: left; vertical-align: top; }
"""


def _map_html(sources: Sequence[Path]) -> str:
    """The article's sections, each linked to the heading that teaches it, and the glossary (from the course map)."""
    from .map import anchor, course_map

    cmap = course_map()
    present = {p.name for p in sources}
    rows = []
    for s in cmap.sections:
        where = html.escape(s.heading)
        if s.notebook in present:
            where = f"<a href='{html.escape(s.notebook[:-6])}.html#{html.escape(anchor(s.heading))}'>{s.notebook[:2]} · {where}</a>"
        rows.append(f"<tr><td>§{s.n}</td><td lang='zh'>{html.escape(s.zh)}</td><td>{html.escape(s.en)}</td>"
                    f"<td>{where}</td></tr>")
    terms = "".join(f"<tr><td lang='zh'>{html.escape(g['zh'])}</td><td>{html.escape(g['en'])}</td>"
                    f"<td>{_inline_markdown(g['code'])}</td></tr>" for g in cmap.glossary)
    art = cmap.article
    return (f"<h2>The article, section by section</h2><p class='lead'>{html.escape(art['title_zh'])} "
            f"({html.escape(art['title_en'])}, {html.escape(art['date'])}): where each of its "
            f"{len(cmap.sections)} sections is taught.</p>"
            f"<table><tr><th>§</th><th>article</th><th>in English</th><th>taught in</th></tr>{''.join(rows)}</table>"
            f"<h2>Glossary</h2><table><tr><th>article</th><th>English</th><th>in the code</th></tr>{terms}</table>")


def write_index(runs: Sequence[NotebookRun], out_dir: str | os.PathLike,
                notebooks: Sequence[str | os.PathLike] | None = None) -> Path:
    """Write ``index.html``: one line per notebook (link, topic, reading time, run time), no script.

    ``notebooks`` are the source notebooks (default: ``notebooks/``); each run's
    HTML page is linked by name. Returns the path written.
    """
    out = Path(out_dir)
    by_name = {r.name: r for r in runs}
    sources = [Path(p) for p in notebooks] if notebooks else notebook_paths()
    items = []
    total_minutes = 0
    for src in sources:
        if src.name not in by_name:
            continue
        run, info = by_name[src.name], notebook_info(src)
        total_minutes += info.minutes
        page = Path(run.html).name if run.html else f"{src.stem}.ipynb"
        status = "" if run.ok else f" <span class='failed'>(failed: {html.escape(run.problem or '')})</span>"
        items.append(
            f"<li><span class='n'>{html.escape(info.number)}</span>"
            f"<a href='{html.escape(page)}'>{_inline_markdown(info.topic)}</a>{status}"
            f"<span class='time'>about {info.minutes} min to read &middot; runs in {run.seconds:.1f} s</span></li>")
    ran = sum(r.seconds for r in runs)
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>nanohermes_nb: the course</title>
<style>{INDEX_STYLE}</style>
</head>
<body>
<h1>nanohermes_nb: the course</h1>
<p class="lead">How a small coding agent keeps its context window under control, one executed notebook at a
time. Read them in order; each ends with a cell that asserts its claims.</p>
<ol>
{chr(10).join(items)}
</ol>
{_map_html(sources)}
<footer>{len(items)} notebooks, about {total_minutes} minutes of reading; executed in {ran:.0f} s of kernel time
by <code>make course</code>. These pages are static: open the notebooks in JupyterLab (<code>make lab</code>)
to move the explorers' controls.</footer>
</body>
</html>
"""
    path = out / "index.html"
    out.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, page)
    return path


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
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.text.get(FIGURE_KEY)
    except (OSError, AttributeError):
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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        figure.savefig(tmp, format="png", dpi=100, metadata={"Software": None, FIGURE_KEY: digest})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nanohermes_nb.course", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to run (default: all of notebooks/)")
    parser.add_argument("-o", "--out", default=str(ROOT / "build" / "course"))
    parser.add_argument("-j", "--workers", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    parser.add_argument("--figure", action="store_true",
                        help=f"only redraw {LEDGER_FIGURE.relative_to(ROOT)} (the README's picture) and exit")
    args = parser.parse_args(argv)
    if args.figure:
        write_ledger_figure(force=True)
        print(f"wrote {LEDGER_FIGURE}")
        return 0
    start = time.perf_counter()
    runs = run_course(args.notebooks or None, args.out, workers=args.workers, timeout=args.timeout)
    total = time.perf_counter() - start
    width = max((len(r.name) for r in runs), default=10)
    for r in runs:
        status = "ok" if r.ok else f"FAILED: {r.problem}"
        print(f"{r.name:<{width}}  {r.seconds:6.1f} s  {r.images:2d} figures  {status}")
    index = write_index(runs, args.out, [Path(p) for p in args.notebooks] if args.notebooks else None)
    print(f"{len(runs)} notebooks in {total:.1f} s (wall, {args.workers} kernels at a time)")
    print(f"executed notebooks and HTML: {Path(args.out).resolve()}; open {index.resolve()}")
    if not args.notebooks:
        figure = "redrawn" if write_ledger_figure() else "up to date"
        print(f"{LEDGER_FIGURE.relative_to(ROOT)}: {figure}")
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
