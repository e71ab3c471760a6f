"""The CLI starts at once: the default ledger path and the bare import pull in no heavy library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "pyarrow", "httpx", "numpy", "matplotlib")


def imported(code: str) -> list[str]:
    probe = code + f"\nimport sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    env = {**os.environ, "COLUMNS": "200"}  # the ledger's table at a width where every default column fits
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_nanohermes_nb_imports_no_heavy_library():
    assert imported("import nanohermes_nb as nh; nh.context.compaction; nh.engine.settings") == []


def test_the_ledger_command_imports_no_heavy_library():
    path = ROOT / "data" / "transcripts" / "deerflow_bigcsv_ad76c455.json"
    code = ("import io, contextlib\nfrom nanohermes_nb.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()) as out:\n    assert main(['ledger', {str(path)!r}]) == 0\n"
            "assert 'cumulative_input' in out.getvalue()")
    assert imported(code) == []


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def test_the_plain_rows_equal_the_dataframe():
    from nanohermes_nb import load_transcript, replay

    ledger = replay(load_transcript(ROOT / "data" / "transcripts" / "deerflow_bigcsv_ad76c455.json"), pricing="gpt-4.1")
    frame = ledger.requests
    assert list(frame.columns) == list(ledger.rows) and len(frame) == len(ledger.records()) > 10
    for name, values in ledger.rows.items():
        shown = frame[name].tolist()
        assert [None if _missing(v) else v for v in shown] == [None if _missing(v) else v for v in values], name
