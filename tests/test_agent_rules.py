"""The eight agent rules (issue 37): registry, pinned cases from their sources' tests, triggers, bad input."""

import dataclasses
import json

import pytest
from builders import SYSTEM, session, user
from test_cli import call as cli

import nanohermes_nb as nh
from nanohermes_nb.context.history import check_history
from nanohermes_nb.peers import PINNED, _load_all, canonical, check_pinned
from nanohermes_nb.peers.agent_cases import AGENT_CASES, run_agent_case
from nanohermes_nb.policies import AGENT_RULES, POLICIES, PolicyError, apply_policy, resolve_policy
from nanohermes_nb.policies.agent_windows import ModelWindow, anthropic_turns, window_for
from nanohermes_nb.policies.cline import DUPLICATE_FILE_READ_NOTICE, TRUNCATION_NOTICE
from nanohermes_nb.policies.opencode import CLEARED
from nanohermes_nb.policies.swe_agent import elided_text
from nanohermes_nb.transcripts.base import AGENTS

_load_all()
W200 = ModelWindow("claude-sonnet-4-5", 200_000, 64_000)


def test_every_rule_is_registered_named_after_its_agent_and_documents_its_options():
    assert set(AGENT_RULES) <= set(POLICIES) and list(POLICIES)[-len(AGENT_RULES):] == list(AGENT_RULES)
    for name in AGENT_RULES:
        cls = POLICIES[name]
        assert name == f"{cls.agent}_rule" and name not in AGENTS  # never a log's own row name
        assert "Source" in cls.__doc__ and cls.__dataclass_params__.frozen
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in cls.__doc__]
        assert not missing, (name, missing)


@pytest.mark.parametrize("name", sorted(AGENT_CASES))
def test_pinned_cases_from_the_sources_tests(name):
    result = check_pinned(PINNED[name])
    assert result.compared >= 1 and result.identical == result.compared, result.mismatches


def test_the_pinning_can_fail():
    case = next(c for c in AGENT_CASES["cline_rule"]() if c.name == "first truncation with half keep")
    wrong = dataclasses.replace(case, history=[{"args": [11, "quarter"]}])
    assert canonical(run_agent_case(wrong)) != canonical(case.expected)


@pytest.mark.parametrize(("rule", "threshold"), [
    ("claude_code_rule", 167_000), ("codex_cli_rule", 180_000), ("cline_rule", 160_000),
    ("roo_code_rule", 180_000 - 64_000), ("goose_rule", 160_000), ("aider_rule", 8_192),
    ("opencode_rule", 200_000 - 32_000), ("swe_agent_rule", 0)])
def test_triggers_on_a_200k_window(rule, threshold):
    t = resolve_policy(rule).trigger(W200)
    assert t.threshold == threshold and t.reserve == 200_000 - threshold and t.window == 200_000


def test_windows_are_data():
    assert window_for("claude-opus-4-6").context_window == 200_000
    assert window_for("claude-opus-4-8[1m]").context_window == 1_000_000
    assert window_for("gpt-5.4").context_window == 272_000
    assert window_for("who-knows").context_window == 128_000


@pytest.mark.parametrize("name", AGENT_RULES)
def test_each_rule_keeps_a_real_history_legal_and_never_touches_its_input(name):
    ctx = session(14, body="q" * 900, n_calls=2)
    before = json.dumps(ctx)
    out = apply_policy(name, ctx, budget=nh.context_size(ctx) // 2, summarizer=lambda _e: "S")
    assert json.dumps(ctx) == before and out.event is not None and check_history(out.messages) == []


@pytest.mark.parametrize(("name", "options", "says"), [
    ("claude_code_rule", {"autocompact_buffer_tokens": -1}, "autocompact_buffer_tokens"),
    ("codex_cli_rule", {"context_window": 0}, "context_window"),
    ("cline_rule", {"keep": "most"}, "keep"),
    ("roo_code_rule", {"auto_condense_context_percent": 2}, "auto_condense_context_percent"),
    ("opencode_rule", {"prune_protect": -5}, "prune_protect"),
    ("goose_rule", {"threshold": 1.5}, "threshold"),
    ("swe_agent_rule", {"n": 0}, "n must be"),
    ("aider_rule", {"weak_model_max_input_tokens": -3}, "weak_model_max_input_tokens")])
def test_options_out_of_range_are_one_line_errors(name, options, says):
    with pytest.raises(ValueError, match=says) as err:
        resolve_policy(name, **options)
    assert "\n" not in str(err.value)


def test_a_window_smaller_than_the_reserve_is_one_line():
    with pytest.raises(ValueError, match="leaves no room"):
        resolve_policy("claude_code_rule").trigger(ModelWindow("tiny", 20_000, 8_000))


@pytest.mark.parametrize("name", ["cline_rule", "roo_code_rule"])
def test_no_user_message_is_one_line(name):
    ctx = [SYSTEM, {"role": "assistant", "content": "x" * 500}, {"role": "assistant", "content": "y" * 500}]
    with pytest.raises(PolicyError, match="no user message") as err:
        apply_policy(name, ctx, budget=10)
    assert "\n" not in str(err.value) and str(err.value).startswith(name)


# an assistant whose call was never answered, and no user message: over a small budget the check runs after it
NO_USER = [SYSTEM, {"role": "assistant", "content": "x" * 300,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]


@pytest.mark.parametrize("name", ["cline_rule", "roo_code_rule"])
def test_a_history_the_rule_cannot_work_on_is_a_one_line_usage_error_in_the_cli(name, tmp_path, capsys):
    """Was exit 70 (internal error: ValueError): now exit 2, one line naming the file; a sweep skips the file."""
    path = tmp_path / "no_user.json"
    path.write_text(json.dumps(NO_USER), encoding="utf-8")
    done = cli(capsys, "ledger", path, "--policy", name, "--budget", "10")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "internal error" not in done.stderr
    assert done.stderr.startswith(f"nanohermes-nb: error: {path}: {name}: the history has no user message")
    done = cli(capsys, "sweep", path, "--policies", f"{name},nanohermes", "--budgets", "10")
    assert done.returncode == 1 and "internal error" not in done.stderr
    assert f"skipped no_user.json: {name}: the history has no user message" in done.stderr
    assert cli(capsys, "ledger", path, "--policy", name).returncode == 0  # the default budget never fires


def test_cline_dedupes_repeated_reads_before_it_truncates():
    read = "[read_file for 'src/a.py'] Result:\n" + "code\n" * 400
    ctx = [SYSTEM, user("task"), {"role": "assistant", "content": "reading"}]
    for k in range(3):
        ctx += [{"role": "user", "content": read}, {"role": "assistant", "content": f"step {k}"}]
    out = apply_policy("cline_rule", ctx, budget=100).messages
    assert [m["content"].endswith(DUPLICATE_FILE_READ_NOTICE) for m in out[3::2]] == [True, True, False]
    assert len(out) == len(ctx)  # saved over 30%: nothing else is dropped
    plain = [SYSTEM, user("task")]
    plain += [m for k in range(8) for m in (user(f"q{k}"), {"role": "assistant", "content": "a"})]
    cut = apply_policy("cline_rule", [plain[0], plain[1], {"role": "assistant", "content": "first"}, *plain[2:]],
                       budget=10).messages
    assert cut[2]["content"] == TRUNCATION_NOTICE and len(cut) < len(plain) + 1


def test_opencode_prunes_only_past_two_turns_and_over_20000_tokens():
    big = [{"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "type": "function",
                                                                 "function": {"name": "bash", "arguments": "{}"}}]}
           for i in range(3)]
    ctx = [SYSTEM, user("one")]
    for i, call in enumerate(big):
        ctx += [call, {"role": "tool", "tool_call_id": f"c{i}", "content": "x" * 120_000}]
    ctx += [user("two"), user("three")]
    pol = resolve_policy("opencode_rule", summarize_on_overflow=False)
    out = apply_policy(pol, ctx, budget=10).messages
    # 30,000 tokens each: the newest stays within the 40,000 protected, both older ones are cleared
    assert [m["content"] == CLEARED for m in out if m["role"] == "tool"] == [True, True, False]
    assert apply_policy(pol, ctx[:-2], budget=10).event is None  # the current turn is protected


def test_swe_agent_elides_to_a_line_count_and_keeps_the_task():
    ctx = session(9, body="line\n" * 3)
    out = apply_policy("swe_agent_rule", ctx, budget=0).messages
    tools = [m for m in out if m["role"] == "tool"]
    elided = [m for m in tools if m["content"].startswith("Old environment output")]
    # 10 observations (the task and 9 results): observations 1-4 elided, the task and the last 5 kept
    assert out[1] is ctx[1] and len(elided) == 4 and elided[0]["content"] == elided_text(ctx[3])


def test_anthropic_turns():
    ctx = session(2)[1:]
    assert [t[0] for t in anthropic_turns(ctx)] == ["user", "assistant", "user", "assistant", "user",
                                                          "assistant"]
