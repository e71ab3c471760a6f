"""Execute the course notebooks into ``build/course/`` (executed ``.ipynb`` and ``.html``).

``python -m nanohermes_nb.course`` is what ``make course`` runs. Each notebook runs
in a fresh kernel from its own folder, widget state is stored so the HTML keeps
the widgets' last view, and a ``parameters`` cell can be overridden (papermill
style: a cell tagged ``parameters`` is followed by an injected one).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["NotebookRun", "execute_notebook", "run_course", "notebook_paths", "main"]

ROOT = Path(__file__).resolve().parents[1]


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

    @property
    def ok(self) -> bool:
        return self.error is None and self.error_outputs == 0


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


def _count(nb) -> tuple[int, int]:
    images = errors = 0
    for c in nb.cells:
        for out in c.get("outputs", []):
            if out.get("output_type") == "error":
                errors += 1
            data = out.get("data", {})
            if "image/png" in data or "image/svg+xml" in data:
                images += 1
    return images, errors


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
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

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
        from nbconvert import HTMLExporter

        body, _ = HTMLExporter().from_notebook_node(nb)
        html_path = out / f"{stem}.html"
        _write_atomic(html_path, body)
    images, errors = _count(nb)
    return NotebookRun(path.name, seconds, str(ipynb_path), str(html_path) if html_path else None, error,
                       images, errors, dict(parameters or {}))


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nanohermes_nb.course", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to run (default: all of notebooks/)")
    parser.add_argument("-o", "--out", default=str(ROOT / "build" / "course"))
    parser.add_argument("-j", "--workers", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    runs = run_course(args.notebooks or None, args.out, workers=args.workers, timeout=args.timeout)
    total = time.perf_counter() - start
    width = max((len(r.name) for r in runs), default=10)
    for r in runs:
        status = "ok" if r.ok else f"FAILED: {r.error or f'{r.error_outputs} error outputs'}"
        print(f"{r.name:<{width}}  {r.seconds:6.1f} s  {r.images:2d} figures  {status}")
    print(f"{len(runs)} notebooks in {total:.1f} s (wall, {args.workers} kernels at a time)")
    print(f"executed notebooks and HTML: {Path(args.out).resolve()}")
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
