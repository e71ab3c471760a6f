"""The transcript corpora: data/transcripts/ always, the extended folder only when it exists.

A fresh clone has no ``../shared``: its tests must still run over real transcripts
(the vendored sample) and say, in one line, that the extended corpus was skipped.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ENV, ROOT, find_corpora


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    (root / "data" / "transcripts").mkdir(parents=True)
    (root / "data" / "transcripts" / "a.json").write_text("[]")
    return root


def test_without_shared_the_lookup_falls_back_to_data_transcripts(tmp_path):
    root = _checkout(tmp_path)
    corpora, skipped = find_corpora(root, {})
    assert [(c.name, c.path) for c in corpora] == [("vendored", root / "data" / "transcripts")]
    assert [p.name for p in corpora[0].files] == ["a.json"]
    assert skipped and str(tmp_path / "shared" / "transcripts") in skipped and ENV in skipped


def test_shared_beside_the_checkout_is_the_extended_corpus(tmp_path):
    root = _checkout(tmp_path)
    shared = tmp_path / "shared" / "transcripts"
    shared.mkdir(parents=True)
    corpora, skipped = find_corpora(root, {})
    assert [c.name for c in corpora] == ["vendored", "extended"] and corpora[1].path == shared
    assert skipped is None


def test_the_environment_names_the_extended_corpus_and_a_wrong_name_is_an_error(tmp_path):
    root = _checkout(tmp_path)
    elsewhere = tmp_path / "logs"
    elsewhere.mkdir()
    corpora, skipped = find_corpora(root, {ENV: str(elsewhere)})
    assert corpora[1].path == elsewhere and skipped is None
    with pytest.raises(ValueError, match="is not a folder"):
        find_corpora(root, {ENV: str(tmp_path / "missing")})


@pytest.mark.subprocess  # a nested pytest
def test_a_run_without_the_extended_corpus_passes_and_says_so_in_one_line(tmp_path):
    """A real pytest run from a copy of the tests with no shared folder beside it."""
    clone = tmp_path / "clone"
    (clone / "data").mkdir(parents=True)
    os.symlink(ROOT / "data" / "transcripts", clone / "data" / "transcripts")
    (clone / "tests").mkdir()
    for name in ("conftest.py", "test_transcripts.py", "builders.py", "strategies.py"):
        (clone / "tests" / name).write_bytes((ROOT / "tests" / name).read_bytes())
    (clone / "tests" / "malformed").symlink_to(ROOT / "tests" / "malformed")
    env = {k: v for k, v in os.environ.items() if k != ENV}
    p = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-k", "corpus or raw or real",
                        "tests/test_transcripts.py"], cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    lines = [ln for ln in p.stdout.splitlines() if "extended transcript corpus skipped" in ln]
    assert len(lines) == 1 and str(tmp_path / "shared" / "transcripts") in lines[0], p.stdout[-2000:]
    assert "skipped" not in p.stdout.splitlines()[-1] and "passed" in p.stdout.splitlines()[-1]
    ran = [ln for ln in p.stdout.splitlines() if " PASSED" in ln]
    assert any("[vendored" in ln for ln in ran) and not any("extended" in ln for ln in ran)
    json.loads((clone / "data" / "transcripts" / "manifest.json").read_text())  # the vendored copy is readable
