"""The clean filter: a notebook saved from JupyterLab shows no change in git, and the committed ones are clean."""

import json
import shutil
import subprocess
import sys

import nbformat
import pytest
from conftest import ROOT

from nanohermes_nb.course.build import notebook_paths
from nanohermes_nb.course.strip import clean, pre_save

NOTEBOOKS = notebook_paths(ROOT / "notebooks")


def _as_lab_saves(text):
    """What JupyterLab writes after a run: outputs, counts, timings, widget state, its kernel's name."""
    nb = json.loads(text)
    nb["metadata"]["kernelspec"] = {"display_name": "Python 3 (nanohermes_nb)", "language": "python", "name": "python3"}
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.2", "mimetype": "text/x-python"}
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    for k, cell in enumerate(nb["cells"]):
        cell["metadata"]["execution"] = {"iopub.status.idle": "2026-12-02T10:00:00Z"}
        if cell["cell_type"] == "code":
            cell["execution_count"] = k
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["printed\n"]}]
    return json.dumps(nb, indent=2)


def _strip(text):
    return subprocess.run([sys.executable, "-m", "nanohermes_nb.course.strip"], input=text, capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.parametrize("path", NOTEBOOKS[:3] + NOTEBOOKS[-2:], ids=lambda p: p.name)
def test_strip_gives_back_the_committed_notebook(path):
    text = path.read_text(encoding="utf-8")
    assert _strip(_as_lab_saves(text)) == text
    assert _strip(text) == text                         # committed notebooks are already clean


def test_clean_does_not_change_its_input_and_passes_non_json_through():
    nb = json.loads(_as_lab_saves(NOTEBOOKS[0].read_text(encoding="utf-8")))
    before = json.dumps(nb)
    clean(nb)
    assert json.dumps(nb) == before
    assert _strip("not a notebook") == "not a notebook"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_notebook_saved_from_lab_is_no_change_in_git(tmp_path):
    repo = tmp_path / "repo"
    (repo / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / ".gitattributes", repo / ".gitattributes")
    target = repo / "notebooks" / NOTEBOOKS[1].name
    shutil.copy(NOTEBOOKS[1], target)

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    git("config", "filter.nbstrip.clean", f"{sys.executable} -m nanohermes_nb.course.strip")   # what `make lab` sets
    git("config", "filter.nbstrip.smudge", "cat")
    git("add", ".")
    git("commit", "-qm", "course")
    committed = target.read_text(encoding="utf-8")
    # JupyterLab under `make lab`: the pre-save hook cleans the model, then the server writes it (nbformat.write)
    model = {"type": "notebook", "content": nbformat.reads(_as_lab_saves(committed), as_version=4)}
    pre_save(model, path=str(target))
    nbformat.write(model["content"], target)
    assert target.read_text(encoding="utf-8") == committed and git("status", "--porcelain") == ""
    # saved by anything else, with outputs: the clean filter keeps them out of git
    target.write_text(_as_lab_saves(committed), encoding="utf-8")
    assert subprocess.run(["git", "-C", str(repo), "diff", "--quiet"]).returncode == 0
    git("add", ".")
    assert git("status", "--porcelain") == ""
    edited = json.loads(target.read_text(encoding="utf-8"))
    edited["cells"][1]["source"] = "changed by the learner"
    target.write_text(json.dumps(edited), encoding="utf-8")
    assert git("status", "--porcelain").strip() == f"M notebooks/{target.name}"


def test_the_makefile_configures_the_filter_for_lab():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "filter.nbstrip.clean" in makefile and "lab: $(LAB_STAMP) git-filter" in makefile
    assert "--ContentsManager.pre_save_hook=nanohermes_nb.course.strip.pre_save" in makefile
    assert "notebooks/*.ipynb filter=nbstrip" in (ROOT / ".gitattributes").read_text(encoding="utf-8")
