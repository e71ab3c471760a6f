"""The test tiers hold together: `make test-fast` leaves out every slow test, and no test reads the wall clock.

The slow tier is named by markers (``SLOW_TIERS`` in conftest.py, registered in pyproject.toml); conftest.py adds
``slow`` to every test carrying one, and the Makefile's ``test-fast`` deselects ``slow``. Here, over every test
this session collected (before ``-m`` deselected any): each tier test is left out by the Makefile's own ``-m``
expression, each test over the extended corpus is in its tier and has a fast twin over the vendored one, the
course's tests share one xdist group, and no test module sleeps or times itself (``clocks.FakeClock``,
``clocks.wait_until``).
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression
from conftest import COLLECTED, COURSE_GROUP, ROOT, SLOW_TIERS, tiers_of

HERE = Path(__file__).resolve().parent
TIMERS = frozenset({"sleep", "monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns", "time_ns"})


def _make_target(name: str) -> str:
    """The recipe of ``make <name>`` (its lines, variables not expanded), and the PYTEST variable."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{re.escape(name)}:.*\n((?:\t.*\n)+)", text, re.M)
    assert found, f"no target {name} in the Makefile"
    pytest_line = re.search(r"^PYTEST := (.*)$", text, re.M)
    return found.group(1) + (pytest_line.group(1) if pytest_line else "")


def _fast_expression() -> str:
    recipe = _make_target("test-fast")
    args = shlex.split(recipe.split("-m ", 1)[1].splitlines()[0]) if " -m " in recipe else []
    assert args, f"make test-fast selects no tier with -m: {recipe!r}"
    return args[0]


def _selected(expression: str, markers: set[str]) -> bool:
    return Expression.compile(expression).evaluate(lambda name, **kwargs: name in markers)


@pytest.fixture(scope="module")
def collected(request: pytest.FixtureRequest) -> list[pytest.Item]:
    items = request.config.stash.get(COLLECTED, [])
    modules = {item.path.name for item in items}
    if len(modules) < len(list(HERE.glob("test_*.py"))) // 2:
        pytest.skip("the tiers are checked over the whole suite (make test, make test-fast), not a few modules")
    return items


def test_the_fast_expression_leaves_out_each_tier_and_keeps_the_rest() -> None:
    expression = _fast_expression()
    for tier in (*SLOW_TIERS, "slow"):
        assert not _selected(expression, {tier, "slow"}), f"make test-fast would run a test marked {tier}"
    assert _selected(expression, set()) and _selected(expression, {"timeout", "parametrize"})


def test_every_tier_marker_is_registered(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in pytestconfig.getini("markers")}
    missing = {*SLOW_TIERS, "slow"} - registered
    assert not missing, f"register {sorted(missing)} in pyproject.toml [tool.pytest.ini_options] markers"


def test_every_test_in_a_tier_is_left_out_of_test_fast(collected: list[pytest.Item]) -> None:
    expression = _fast_expression()
    wrong = [item.nodeid for item in collected
             if tiers_of(item) and _selected(expression, {m.name for m in item.iter_markers()})]
    assert not wrong, f"in a slow tier but run by make test-fast: {wrong[:5]}"
    assert any(tiers_of(item) for item in collected) and any(not tiers_of(item) for item in collected)


def test_the_extended_corpus_is_its_own_tier_with_a_fast_twin(collected: list[pytest.Item]) -> None:
    extended = [item for item in collected if re.search(r"[\[-]extended[-/\]]", item.nodeid)]
    unmarked = [item.nodeid for item in extended if not item.get_closest_marker("corpus_extended")]
    assert not unmarked, f"parametrized over the extended corpus but not marked corpus_extended: {unmarked[:5]}"
    # each test over the extended corpus runs over the vendored one too (in make test-fast unless slow for another
    # reason): the tier moves the bigger corpus out of the fast run, never a test
    vendored = {item.nodeid.split("[", 1)[0]: item for item in collected
                if re.search(r"[\[-]vendored[-/\]]", item.nodeid)}
    orphans = [item.nodeid for item in extended if item.nodeid.split("[", 1)[0] not in vendored]
    assert not orphans, f"over the extended corpus and never over the vendored one: {orphans[:5]}"
    moved = [item.nodeid for item in extended if tiers_of(item) - {"corpus_extended", "slow"}
             and not tiers_of(vendored[item.nodeid.split("[", 1)[0]])]
    assert not moved, f"in another slow tier only over the extended corpus (mark the test, not the corpus): {moved[:5]}"


def test_the_course_s_tests_share_one_worker(collected: list[pytest.Item]) -> None:
    course = [item for item in collected if "built_course" in getattr(item, "fixturenames", ())]
    assert course, "no test reads the built course"
    for item in course:
        group = item.get_closest_marker("xdist_group")
        assert group is not None and group.args == (COURSE_GROUP,) and item.get_closest_marker("slow"), item.nodeid


def test_both_test_targets_run_on_every_core_grouped() -> None:
    for target in ("test", "test-fast"):
        recipe = _make_target(target)
        assert "-n auto" in recipe and "--dist loadgroup" in recipe, f"make {target}: {recipe!r}"
        assert "PYTHONDONTWRITEBYTECODE=" in recipe, f"make {target} must let Python write bytecode"


def _clock_calls(tree: ast.AST) -> list[str]:
    """Every ``time.sleep(...)``-like call and every ``from time import sleep``-like import, as 'line: text'."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr in TIMERS and isinstance(node.value, ast.Name)
                and node.value.id == "time"):
            found.append(f"{node.lineno}: time.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "time":
            found += [f"{node.lineno}: from time import {a.name}" for a in node.names if a.name in TIMERS]
    return found


def test_the_clock_finder_finds_what_it_looks_for() -> None:
    code = "import time\nfrom time import sleep\ntime.sleep(1)\nx = 'time.sleep(2)'\nt = time.monotonic\n"
    assert sorted(_clock_calls(ast.parse(code))) == ["2: from time import sleep", "3: time.sleep", "5: time.monotonic"]


@pytest.mark.parametrize("path", sorted(HERE.glob("test_*.py")), ids=lambda p: p.name)
def test_no_test_module_sleeps_or_reads_the_clock(path: Path) -> None:
    found = _clock_calls(ast.parse(path.read_text(encoding="utf-8")))
    assert not found, (f"{path.name} reads the wall clock or sleeps ({', '.join(found)}): use clocks.FakeClock, "
                       "clocks.wait_until or a timeout marker")
