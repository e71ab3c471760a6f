"""The trigger timeline (issue 37): token counts, each rule's firings against its threshold, loops, CLI, plot."""

import json
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from nanohermes_nb.cli import main  # noqa: E402
from nanohermes_nb.engine.recorded import RecordedSession  # noqa: E402
from nanohermes_nb.engine.triggers import (  # noqa: E402
    LOOP_WITHIN,
    loops,
    prompt_tokens,
    real_compactions,
    session_window,
    trigger_timeline,
)
from nanohermes_nb.policies import AGENT_RULES  # noqa: E402
from nanohermes_nb.transcripts import load_transcript  # noqa: E402
from nanohermes_nb.views.trigger_plots import LOOP_COLOR, plot_triggers  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
CODEX = next((DATA / "agentlogs" / "codex").glob("*.jsonl"))
CLAUDE_1M = next((DATA / "agentlogs" / "claude-code").glob("oh-my-posh*"))
PLAIN = DATA / "transcripts" / "deerflow_bigcsv_ad76c455.json"


@pytest.fixture(scope="module")
def codex():
    return load_transcript(CODEX)


@pytest.fixture(scope="module")
def small(codex):
    """The Codex sample timed as if its model were gpt-4o (128K: every prompt rule fires, no 1M inference)."""
    return trigger_timeline(codex, model="gpt-4o")


def test_prompt_tokens_are_the_bill_where_there_is_one_else_o200k(codex):
    session = RecordedSession.of(codex)
    tokens, sources = prompt_tokens(session)
    assert set(sources) == {"reported"} and len(tokens) == session.n_requests
    assert tokens[0] == next(q.usage.prompt_tokens for q in codex.requests if q.usage)
    plain = RecordedSession.of(load_transcript(PLAIN))
    tokens, sources = prompt_tokens(plain)
    assert set(sources) == {"o200k"} and tokens == [plain.prefix("o200k")[i] for i in plain.reply]


@pytest.mark.parametrize("rule", [r for r in AGENT_RULES if r not in ("aider_rule", "swe_agent_rule",
                                                                       "opencode_rule")])
def test_each_prompt_rule_fires_first_where_its_threshold_is_crossed(small, rule):
    lane = small.lane(rule)
    t = lane.trigger
    assert t.window == 128_000 and t.basis == "prompt" and lane.firings, rule
    first = lane.firings[0]
    before = small.uncompacted[: first - 2]
    assert small.uncompacted[first - 1] >= t.threshold - 1
    assert not before or max(before) <= t.threshold
    assert lane.sizes and max(lane.sizes[: first - 1]) <= small.uncompacted[first - 2] + 1


def test_the_log_lane_and_the_1m_window_are_read_from_the_log():
    t = load_transcript(CLAUDE_1M)
    session = RecordedSession.of(t)
    assert real_compactions(t, session) == [1]
    assert session_window(t, prompt_tokens(session)[0]).context_window == 1_000_000  # preTokens 998,659
    timeline = trigger_timeline(t)
    assert timeline.lane("log").firings == (1,) and timeline.lane("log").agent == "claude_code"


def test_loops():
    assert loops([1, 3, 10, 12, 13]) == 3 and loops([1, 1 + LOOP_WITHIN + 1]) == 0 and loops([]) == 0


def test_tables_rows_and_swe_agent_fires_once_past_its_window(small):
    rows = small.rows()
    assert [r["rule"] for r in rows][: len(AGENT_RULES)] == list(AGENT_RULES)
    assert {r["rule"] for r in rows} >= {"nanohermes", "log"}
    swe = small.lane("swe_agent_rule")
    assert swe.firings and swe.loops == loops(swe.firings)
    assert small.table().shape[0] == len(rows)


def test_cli_ledger_triggers(capsys):
    assert main(["ledger", str(CODEX), "--triggers"]) == 0
    out = capsys.readouterr().out
    assert all(rule in out for rule in AGENT_RULES) and "window 272,000" in out
    assert main(["ledger", str(CODEX), "--triggers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["rule"] for r in rows} >= set(AGENT_RULES)


def test_cli_triggers_on_a_session_with_no_request_is_one_line(tmp_path, capsys):
    path = tmp_path / "only_user.json"
    path.write_text(json.dumps([{"role": "user", "content": "hello"}]))
    assert main(["ledger", str(path), "--triggers"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no model request" in err


def test_plot_one_lane_per_rule_with_loops_in_red(small):
    ax = plot_triggers(small)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[: len(AGENT_RULES)] == list(AGENT_RULES) and labels[-1].endswith("(log)")
    colors = {tuple(c) for coll in ax.collections for c in coll.get_colors()}
    assert any(abs(c[0] - int(LOOP_COLOR[1:3], 16) / 255) < 0.01 for c in colors)


def test_the_trigger_plot_is_legible_on_the_site_and_in_chinese(codex):
    from conftest import LEGIBLE_PX, figure_on_site

    px, english = figure_on_site(plot_triggers(trigger_timeline(codex)).figure)
    assert px >= LEGIBLE_PX and english == []


def test_claude_codes_own_auto_compactions_fire_at_one_of_the_two_reserves():
    """Every real auto compaction of the Claude Code logs with a reported size came at or just past a threshold
    the rule computes: 167,000 on a 200K window (reserve 20,000, the default) or 155,000 (reserve 32,000, Claude
    Code 2.1.2-2.1.17); on the 1M window, past 967,000. Never between: the 13,000 buffer is reported, not fitted."""
    from agentlog_files import agent_logs

    from nanohermes_nb.policies import ClaudeCodePolicy

    seen = []
    for path in agent_logs(("claude-code",), synthetic=False):
        t = load_transcript(path)
        window = session_window(t, prompt_tokens(RecordedSession.of(t))[0])
        new = ClaudeCodePolicy().trigger(window).threshold
        old = ClaudeCodePolicy(compact_max_output_tokens=32_000).trigger(window).threshold
        for c in t.compactions:
            if c.trigger == "auto" and c.pre_tokens:
                seen.append(c.pre_tokens)
                assert c.pre_tokens >= old, (path.name, c.pre_tokens)  # never before either threshold
                assert not old + 3_000 <= c.pre_tokens < new, (path.name, c.pre_tokens)  # nor between them
    assert seen, "no auto compaction with a reported size in the logs"


def test_loop_table_counts_rules_beside_the_agents_own(codex):
    from nanohermes_nb.engine.triggers import loop_table

    named = [("codex", codex), ("claude", load_transcript(CLAUDE_1M))]
    table = loop_table(named).set_index("rule")
    lanes = set(table.index)
    assert set(AGENT_RULES) <= lanes and {"log:codex_cli", "log:claude_code", "nanohermes"} <= lanes
    assert (table["sessions"].loc[list(AGENT_RULES)] == 2).all() and table.loc["log:codex_cli", "firings"] == 1
    assert (table["loops"] <= table["firings"]).all() and (table["looping_sessions"] <= table["fired_in"]).all()
    assert table.loc["swe_agent_rule", "loops"] > 0  # masking every request once past its window
