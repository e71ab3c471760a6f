"""Notebook 27's exercise 27.1: its check fails the starter, passes the solution, and rejects plausible mistakes.

The check cell is run as the notebook has it (its source read from the notebook), with the
names it needs, once per implementation; the verdict is the one ``course.exercises`` records.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

import nanohermes_nb as nh
from nanohermes_nb.course import exercises
from nanohermes_nb.engine.own_compactions import own_compactions

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "27_what_was_lost.ipynb"
CC_LOG = ROOT / "data" / "compactions" / "claude-code" / "entire-cli_opus45_fe0600aa.cut95.jsonl"
CODEX_LOG = ROOT / "data" / "agentlogs" / "codex" / "agentv_gpt53-codex-spark_2compactions_019f03e0.cut497.jsonl"


def _cell(prefix: str) -> str:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    return next(c.source for c in nb.cells if c.source.startswith(prefix))


def _stem(term: str) -> str:
    return term.lower()[:6] if term.isalpha() and len(term) > 6 else term.lower()


def _summarized(probe, summary: str, stem=_stem, lower=True) -> bool:
    text = summary.lower() if lower else summary
    terms = bool(probe.terms) and all(stem(t) in text for t in probe.terms)
    return bool(summary) and (all(e in summary for e in probe.evidence) or terms)


def starter(probe, kept, summary):
    raise NotImplementedError("write my_status")


def solution(probe, kept, summary):
    namespace: dict = {}
    exec(_cell("# Solution 27.1"), namespace)
    return namespace["my_status"](probe, kept, summary)


def any_evidence(probe, kept, summary):
    """Kept when any one evidence string is there (a command's line without its output)."""
    if any(e in kept for e in probe.evidence):
        return "kept"
    return "summarized" if _summarized(probe, summary) else "lost"


def summary_first(probe, kept, summary):
    """Asks the summary before the carried-over text."""
    if _summarized(probe, summary):
        return "summarized"
    return "kept" if all(e in kept for e in probe.evidence) else "lost"


def case_sensitive(probe, kept, summary):
    """Matches key terms as written, not lower-cased."""
    if all(e in kept for e in probe.evidence):
        return "kept"
    stem = lambda t: t[:6] if t.isalpha() and len(t) > 6 else t  # noqa: E731
    return "summarized" if _summarized(probe, summary, stem=stem, lower=False) else "lost"


def whole_words(probe, kept, summary):
    """Requires every key term whole (no six-letter stems)."""
    if all(e in kept for e in probe.evidence):
        return "kept"
    return "summarized" if _summarized(probe, summary, stem=str.lower) else "lost"


@pytest.fixture(scope="module")
def verdict():
    cc = nh.load_transcript(CC_LOG)
    (cc_own,) = own_compactions(cc, path=CC_LOG)
    codex_own = own_compactions(nh.load_transcript(CODEX_LOG), path=CODEX_LOG)[0]
    source = _cell("# Check 27.1")

    def run(implementation) -> bool:
        exercises.reset()
        exec(source, {"nh": nh, "cc": cc, "cc_own": cc_own, "codex_own": codex_own, "my_status": implementation})
        return exercises.verdicts()["27.1"][-1]
    return run


def test_the_check_fails_the_starter_and_passes_the_solution(verdict):
    assert verdict(starter) is False
    assert verdict(solution) is True


@pytest.mark.parametrize("wrong", [any_evidence, summary_first, case_sensitive, whole_words],
                         ids=lambda f: f.__name__)
def test_the_check_rejects_plausible_mistakes(verdict, wrong):
    assert verdict(wrong) is False, wrong.__doc__
