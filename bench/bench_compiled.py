"""How far the sweep bar is from this engine: compiled or not, with or without the history and prefix columns.

Run: .venv/bin/python bench/bench_compiled.py [--runs N]   (needs ``pip install mypy`` and a C compiler)

Issue #10 asks a 100-setting sweep for at most 12x the floor (reading the files,
``json.loads``, serializing every message once). This script measures the four
corners that bound what the pure-Python engine could still gain without a second
implementation of the loop:

- the engine as it is, and the same source compiled to C with mypyc (the eleven
  modules the replay loop runs through; the rest stays Python);
- the default sweep, and ``profiles=(), prefix_reuse=False`` (no history checks,
  no prefix-reuse column: the fewest books a sweep can keep).

Each figure is a ratio to the floor measured in the same cold process just
before (CPU time); the corners alternate, run after run, so a busy machine hits
them alike. The compiled rows are compared with the pure rows (they must be equal).

mypyc needs three mechanical edits, made in a temporary copy only and checked to
apply (the script stops, naming the edit, when the source has moved): a method
alias (``__call__ = size``) becomes a method; the three ``Sequence`` views stop
inheriting the ABC (mypyc cannot compile an ABC subclass; nothing in the loop
asks ``isinstance(view, Sequence)``); the exception class stays a Python class.
Lines mypy flags (mostly ``int | None`` where the code knows it is set) get a
``# type: ignore``; mypyc then checks those values at run time.
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import BUDGETS, FLOOR, KEEPS, corpus, files  # noqa: E402

MODULES = ["context/sizing", "context/summarizers", "engine/books", "context/compaction", "engine/ledger",
           "engine/recorded", "engine/fast", "context/history", "engine/costbook", "context/messages",
           "policies/nanohermes"]

EDITS = [  # (module, pattern, replacement): each must apply exactly once
    ("context/sizing", r"\n    __call__ = size\n",
     "\n    def __call__(self, message: Message) -> int:\n        return self.size(message)\n"),
    ("engine/fast", r"\nclass RecordRun\(Sequence\):", "\nclass RecordRun:"),
    ("engine/fast", r"\nclass RunRecords\(Sequence\):", "\nclass RunRecords:"),
    ("engine/recorded", r"\nclass ContextView\(Sequence\):", "\nclass ContextView:"),
    ("context/summarizers", r"\nclass SummarizerError\(RuntimeError\):",
     "\nfrom mypy_extensions import mypyc_attr\n\n\n@mypyc_attr(native_class=False)\n"
     "class SummarizerError(RuntimeError):"),
]

CHILD = rf"""
import json, pickle, sys, time
from pathlib import Path
corner, out, paths = sys.argv[1], sys.argv[2], [Path(p) for p in sys.argv[3:]]
import pandas, pyarrow.pandas_compat  # imports are outside the figure, as in bench_engine.py
import nanohermes_nb as nh
compiled = nh.context.sizing.__file__.endswith(".so")

def cpu(fn):
    t = time.process_time(); fn(); return time.process_time() - t

{FLOOR}
kw = {{}} if corner == "default" else {{"profiles": (), "prefix_reuse": False}}
rows = []
f = cpu(floor)
s = cpu(lambda: rows.append(nh.sweep([str(p) for p in paths], budgets={BUDGETS!r},
                                     keep_recent={KEEPS!r}, **kw)))
pickle.dump(rows[0], open(out, "wb"))
print(json.dumps({{"ratio": s / f, "compiled": compiled}}))
"""


def fail(message: str) -> None:
    print(f"bench_compiled: {message}", file=sys.stderr)
    sys.exit(2)


def compiled_copy(tmp: Path) -> Path:
    """A copy of the package with the edits made and the loop's modules compiled; returns its root."""
    shutil.copytree(ROOT / "nanohermes_nb", tmp / "nanohermes_nb", ignore=shutil.ignore_patterns("__pycache__"))
    for module, pattern, replacement in EDITS:
        path = tmp / "nanohermes_nb" / f"{module}.py"
        text, n = re.subn(pattern, replacement, path.read_text(encoding="utf-8"))
        if n != 1:
            fail(f"{path.name}: the edit {pattern!r} applied {n} times, not once; update EDITS")
        path.write_text(text, encoding="utf-8")
    sources = [f"nanohermes_nb/{m}.py" for m in MODULES]
    flags = ["--ignore-missing-imports", "--follow-imports=silent"]
    for _ in range(3):  # an ignore can uncover a line mypy had not reached
        check = subprocess.run([sys.executable, "-m", "mypy", *flags, *sources], cwd=tmp, capture_output=True,
                               text=True)
        flagged = re.findall(r"^(\S+\.py):(\d+): error", check.stdout, flags=re.M)
        if not flagged:
            break
        for name in {f for f, _ in flagged}:
            lines = (tmp / name).read_text(encoding="utf-8").split("\n")
            for n in {int(line) for f, line in flagged if f == name}:
                lines[n - 1] += "  # type: ignore"
            (tmp / name).write_text("\n".join(lines), encoding="utf-8")
    build = subprocess.run([sys.executable, "-m", "mypyc", *flags, *sources], cwd=tmp, capture_output=True, text=True)
    if build.returncode != 0:
        fail("mypyc failed: " + (build.stdout + build.stderr).strip().splitlines()[-1])
    return tmp


def run(corner: str, where: Path, paths: list[Path], out: Path) -> dict:
    env = {"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-c", CHILD, corner, str(out), *map(str, paths)], cwd=where,
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        fail(f"the {corner} sweep in {where} failed: " + done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout)


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    if subprocess.run([sys.executable, "-c", "import mypy, mypyc"], capture_output=True).returncode != 0:
        fail("needs mypy (pip install mypy) and a C compiler")
    import pandas as pd

    folder = corpus()
    paths = files(folder)
    print(f"corpus: {folder} ({len(paths)} transcripts); {runs} cold runs per corner, interleaved")
    with tempfile.TemporaryDirectory() as tmp:
        built = compiled_copy(Path(tmp))
        print(f"compiled {len(MODULES)} modules with mypyc: {', '.join(MODULES)}")
        ratios: dict[tuple[str, str], list[float]] = {}
        for _ in range(runs):
            for corner in ("default", "fewest books"):
                frames = {}
                for label, where in (("Python", ROOT), ("mypyc", built)):
                    out = Path(tmp) / f"{label}.pkl"
                    r = run(corner, where, paths, out)
                    if r["compiled"] != (label == "mypyc"):
                        fail(f"the {label} run imported the wrong build")
                    ratios.setdefault((label, corner), []).append(r["ratio"])
                    frames[label] = pickle.loads(out.read_bytes())
                pd.testing.assert_frame_equal(frames["Python"], frames["mypyc"])
    print("100-setting sweep, x floor (CPU, cold; best / median); compiled rows equal the Python rows:")
    print(f"{'':10} {'default columns':>22} {'no history, no prefix':>24}")
    for label in ("Python", "mypyc"):
        cells = [ratios[(label, c)] for c in ("default", "fewest books")]
        print(f"{label:10} " + " ".join(f"{min(v):>11.1f}x / {statistics.median(v):5.1f}x  " for v in cells))
    print("target: <= 12x (issue #10)")


if __name__ == "__main__":
    main()
