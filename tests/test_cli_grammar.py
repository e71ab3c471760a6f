"""The command line explains itself (issue 34): every command named, every argument helped, choices from the registries.

The parser is walked, not read: a command or an argument another module adds later is held to the
same rules the day it is added.
"""

from __future__ import annotations

import argparse
import re

import pytest
from test_cli import TWELVE, call

import nanohermes_nb
from nanohermes_nb.cli import build_parser
from nanohermes_nb.cli.parser import MAX_JOBS_PER_CPU, max_jobs
from nanohermes_nb.context.compaction import SUMMARY_ROLES
from nanohermes_nb.policies import POLICIES


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def test_every_argument_of_every_command_has_help():
    parser = build_parser()
    missing = [f"nanohermes-nb {a.dest}" for a in _arguments(parser) if not (a.help or "").strip()]
    for name, sub in _subparsers(parser).items():
        missing += [f"nanohermes-nb {name} {'/'.join(a.option_strings) or a.dest}" for a in _arguments(sub)
                    if not (a.help or "").strip() or a.help == argparse.SUPPRESS]
    assert not missing, f"arguments without help: {missing}"


def test_the_description_names_every_command_with_its_help():
    parser = build_parser()
    commands = _subparsers(parser)
    assert set(commands) >= {"ledger", "check", "compact", "sweep", "sessions", "run"}
    for name in commands:
        assert re.search(rf"\b{name}: ", parser.description), name
    assert "Replay, check, compact and sweep" in parser.format_help()


def test_choices_come_from_the_library():
    commands = _subparsers(build_parser())
    for name in ("ledger", "compact", "run"):
        (role,) = [a for a in commands[name]._actions if a.dest == "summary_role"]
        assert tuple(role.choices) == SUMMARY_ROLES and "assistant" in role.choices
    for name in ("ledger", "run"):
        (policy,) = [a for a in commands[name]._actions if a.dest == "policy"]
        assert sorted(policy.choices) == sorted(POLICIES)
    (policies,) = [a for a in commands["sweep"]._actions if a.dest == "policies"]
    assert all(p in policies.help for p in POLICIES)
    assert policies.type(" codex,nanohermes ") == ["codex", "nanohermes"]
    with pytest.raises(argparse.ArgumentTypeError, match="invalid choice: 'magic' \\(choose from "):
        policies.type("codex,magic")


def test_csv_and_out_are_one_option():
    (out,) = [a for a in _subparsers(build_parser())["sweep"]._actions if a.dest == "out"]
    assert {"--out", "--csv", "-o"} == set(out.option_strings)


def test_version(capsys):
    done = call(capsys, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"nanohermes-nb {nanohermes_nb.__version__}"


def test_summary_role_assistant_is_accepted(capsys):
    done = call(capsys, "compact", TWELVE, "--force", "--summary-role", "assistant", "--json")
    assert done.returncode == 0, done.stderr


def test_jobs_is_bounded_and_names_the_bound(capsys):
    assert max_jobs() >= MAX_JOBS_PER_CPU
    for value in ("100000", str(10**20)):
        done = call(capsys, "sweep", TWELVE, "--jobs", value)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert f"argument --jobs: takes 1 to {max_jobs()} on this machine" in done.stderr


@pytest.mark.parametrize("args", [
    ["sweep", TWELVE, "--budgets", "x" * 100_000],
    ["sweep", TWELVE, "--policies", "p" * 100_000],
    ["ledger", TWELVE, "--unit", "u" * 100_000],
    ["ledger", TWELVE, "--budget", "9" * 50_000 + "x"],
    ["ledger", "/nonexistent/" + "f" * 100_000 + ".json"],
    ["compact", TWELVE, "-o", "/nonexistent/" + "o" * 100_000],
])
def test_a_100_kb_value_comes_back_clipped(capsys, args):
    done = call(capsys, *args)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[:300]
    assert len(done.stderr) < 1500 and "more characters)" in done.stderr, done.stderr[:300]


def test_run_timeout_is_bounded(capsys, tmp_path):
    done = call(capsys, "run", "task", "--workspace", tmp_path, "-o", tmp_path / "s.json", "--timeout", str(10**20))
    assert done.returncode == 2 and "argument --timeout: takes 1 to 86,400 seconds" in done.stderr, done.stderr


SETTING_OPTIONS = ("budget", "budgets", "unit", "policy", "policies", "summarizer", "retention")


def test_the_options_that_set_a_replay_default_to_none_so_that_settings_decides():
    """Issue 34: a default written in the parser was a second place for it; now ``Settings`` (``Budgets`` for the
    numbers) is the one place, and each help text shows its value from there."""
    from nanohermes_nb.context.budgets import DEFAULT_BUDGETS

    found = 0
    for name, sub in _subparsers(build_parser()).items():
        for action in _arguments(sub):
            if action.dest in SETTING_OPTIONS:
                found += 1
                assert action.default is None, f"{name} --{action.dest} defaults to {action.default!r}"
                if action.dest in ("budget", "budgets") and name != "whatif":  # whatif: each tool's own trigger
                    assert f"default {DEFAULT_BUDGETS.context_char_budget}" in action.help
            if action.dest == "keep_recent" and name != "whatif" and name != "sweep":
                assert f"default {DEFAULT_BUDGETS.keep_recent}" in action.help
    assert found >= 14


def test_without_options_the_ledger_is_the_settings_default_replay(capsys, tmp_path):
    import json

    from test_cli import TWELVE

    import nanohermes_nb as nh

    done = call(capsys, "ledger", TWELVE, "--json")
    ledger = nh.replay(nh.load_transcript(TWELVE), nh.Settings())
    rows = json.loads(done.stdout)
    assert done.returncode == 0 and [r["size"] for r in rows] == list(ledger.requests["size"])
    assert [r["event"] or "" for r in rows] == [r["event"] or "" for r in ledger.records()]
    assert any(r["event"] for r in rows)  # the default budget compacts this session
