"""The package people install (issue 34): built, installed from its wheel into a fresh venv, run outside the checkout.

One slow test does what CI and a new user do: ``python -m build`` (sdist, then the wheel built from
the unpacked sdist, so a file the sdist forgets fails here), ``twine check``, a fresh venv with no
system site-packages, the wheel installed into it, and ``ledger``, ``sessions``, ``whatif`` and
``compare_policies`` with prices run from a folder outside the checkout on copies of
the vendored sample. The issue's failure was ``ledger`` ending in ``…/site-packages/data/pricing.csv:
cannot read``.

Offline-friendly and fast: the build runs without isolation (``setuptools>=77`` is in the dev extra),
and the fresh venv gets the wheel with ``--no-deps`` plus one ``.pth`` line naming this venv's
site-packages for the dependencies. A ``.pth`` line only adds a folder to ``sys.path``: the ``.pth``
files inside it (this checkout's editable install among them) are not run, so ``nanohermes_nb`` can
only come from the wheel, which the test checks. Installing the dependencies from the package
registry instead would test pip's resolver and the network, at minutes a run; ``pip check`` in the
fresh venv still proves that the wheel's declared dependencies are met by what it sees.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import nanohermes_nb
from nanohermes_nb.transcripts.agentlogs import find_sessions

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LOG = ROOT / "data" / "agentlogs" / "claude-code" / "entire-cli_opus45_small_5d755497c182.jsonl"
_SKIP = shutil.ignore_patterns(".git", ".venv", "build", "dist", ".cache", ".tools", "__pycache__", "*.egg-info",
                               ".pytest_cache", ".hypothesis", "*.pyc", "nanohermes-nb")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def source_tree(dest: Path) -> Path:
    """The files of the checkout git knows (tracked, and new ones not ignored); without git, the tree less caches."""
    try:
        names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                               capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        return Path(shutil.copytree(ROOT, dest, ignore=_SKIP))
    for name in filter(None, names):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def build(src: Path, out: Path) -> str:
    """``python -m build`` (sdist, then the wheel from it), its output returned."""
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def fresh_venv(where: Path, wheel: Path) -> Path:
    """A venv without system site-packages, the wheel installed with --no-deps, the dependencies by one .pth line."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    python = where / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-index", "--disable-pip-version-check", str(wheel)], check=True, timeout=300)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "checkout_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin"


def run(bin_dir: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8", "COLUMNS": "200"}
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    log = build(source_tree(tmp_path / "src"), tmp_path / "dist")
    # no deprecation warning from the build (the module _deprecated.py is named in its file listing: not one)
    warned = [ln for ln in log.splitlines() if "deprecat" in ln.replace("_deprecated.py", "").lower()]
    assert not warned, warned
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    twine = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True, timeout=120)
    assert twine.returncode == 0, twine.stdout + twine.stderr

    names = zipfile.ZipFile(wheel).namelist()
    assert "nanohermes_nb/resources/pricing.csv" in names and "nanohermes_nb/resources/summaries/smollm2.json" in names
    assert not [n for n in names if n.split("/")[0] not in ("nanohermes_nb", wheel.name.split("-")[0] + "-"
                                                            + nanohermes_nb.__version__ + ".dist-info")]
    with tarfile.open(sdist) as tar:
        members = {Path(m).parts[1] if len(Path(m).parts) > 1 else "" for m in tar.getnames()}
        assert {"notebooks", "docs", "data", "tests", "nanohermes_nb", "Makefile", "LICENSE"} <= members
        assert any(m.endswith("notebooks/zh/00_course_map.md") for m in tar.getnames())

    bin_dir = fresh_venv(tmp_path / "venv", wheel)
    outside = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "data" / "agentlogs", outside / "agentlogs")
    shutil.copytree(ROOT / "data" / "transcripts", outside / "transcripts")
    log_copy = outside / "agentlogs" / SAMPLE_LOG.relative_to(ROOT / "data" / "agentlogs")

    where = run(bin_dir, outside, bin_dir / "python", "-c", "import nanohermes_nb; print(nanohermes_nb.__file__)")
    assert where.stdout.startswith(str(tmp_path / "venv")), where
    check = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "check"],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr

    version = run(bin_dir, outside, "nanohermes-nb", "--version")
    assert version.returncode == 0 and version.stdout.strip() == f"nanohermes-nb {nanohermes_nb.__version__}"
    ledger = run(bin_dir, outside, "nanohermes-nb", "ledger", log_copy, "--pricing", "claude-sonnet-4.5")
    assert ledger.returncode == 0 and "USD" in ledger.stdout and "reported by claude_code" in ledger.stdout, ledger
    sessions = run(bin_dir, outside, "nanohermes-nb", "sessions", outside / "agentlogs")
    found = len(find_sessions([outside / "agentlogs"]))  # the checkout's count of the same copies
    assert found >= 3 and sessions.returncode == 0 and f"# {found} sessions found" in sessions.stdout, sessions
    whatif = run(bin_dir, outside, "nanohermes-nb", "whatif", log_copy)
    assert whatif.returncode == 0 and "cost_usd" in whatif.stdout and "billed" in whatif.stdout, whatif

    api = run(bin_dir, outside, bin_dir / "python", "-c", f"""if True:
        import nanohermes_nb as nh
        settings = nh.Settings(pricing="claude-sonnet-4.5")
        table = nh.compare_policies("transcripts", settings)
        assert len(table) >= 7 and table["cost_usd"].notna().all(), table
        ledger = nh.replay(nh.load_transcript("agentlogs/claude-code/{SAMPLE_LOG.name}"), settings)
        assert ledger.totals.cost_usd > 0
        print("ok", len(table))""")
    assert api.returncode == 0 and api.stdout.startswith("ok"), api

    course = run(bin_dir, outside, bin_dir / "python", "-m", "nanohermes_nb.course")
    assert course.returncode == 2 and course.stderr.count("\n") == 1, course
    assert "works on a checkout of nanohermes_nb" in course.stderr
    local = run(bin_dir, outside, bin_dir / "python", "-c", "from nanohermes_nb.agent.local import find_model\n"
                "try:\n find_model()\nexcept Exception as e:\n print(e)")
    assert "NANOHERMES_LOCAL_MODEL_DIR" in local.stdout, local
