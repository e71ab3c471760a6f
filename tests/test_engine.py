"""Engine v2: one trigger, policies as configured objects, apply_policy, and the sweep on any executor."""

import concurrent.futures as cf
import json

import pandas as pd
import pytest
from builders import SYSTEM, assistant, session, tool, user

import nanohermes_nb as nh
from nanohermes_nb import POLICIES, replay, resolve_policy, sweep
from nanohermes_nb.context.summarizers import ExtractiveSummarizer
from nanohermes_nb.engine.ledger import reference_replay
from nanohermes_nb.engine.recorded import RecordedSession
from nanohermes_nb.policies import apply_policy, over_budget

S = ExtractiveSummarizer()  # deterministic and picklable (a process pool needs that)


def stub(excerpt):
    return "S"


# --- the one trigger ---------------------------------------------------------------------


def test_the_trigger_is_strictly_over():
    assert not over_budget(100, 100) and over_budget(101, 100) and not over_budget(0, 0)


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_apply_policy_acts_only_over_budget_and_never_touches_the_input(name):
    ctx = session(12, body="x" * 1000)
    before = json.dumps(ctx)
    size = nh.context_size(ctx)
    at = apply_policy(name, ctx, budget=size, summarizer=stub)
    assert at.event is None and at.messages == ctx and at.messages is not ctx and not at.acted
    over = apply_policy(POLICIES[name], ctx, budget=size - 1, summarizer=stub)
    assert over.event is not None and over.event.policy == name and over.acted
    assert over.event.size_before == size == over.size_before
    assert over.event.size_after == nh.context_size(over.messages)
    assert json.dumps(ctx) == before
    assert nh.check_history(over.messages) == []


def test_apply_policy_with_its_own_size_and_token_meters():
    ctx = session(10, body="y" * 400)
    chars = lambda m: len(json.dumps(m))  # noqa: E731 - a size in another unit
    at = apply_policy(nh.policies.CodexPolicy(user_message_max_tokens=5, token_count="meter"), ctx, budget=100,
                      size=chars, tokens=lambda m: 1000, summarizer=stub)
    assert at.event.size_before == sum(chars(m) for m in ctx)
    assert at.event.size_after == sum(chars(m) for m in at.messages)
    assert "tokens truncated" in at.messages[1]["content"]  # the task does not fit 5 tokens: Codex cuts its middle
    assert at.messages[-1]["content"].startswith(nh.policies.codex.CODEX_SUMMARY_PREFIX)


def test_apply_policy_nanohermes_equals_compact():
    ctx = session(14, body="z" * 700)
    at = apply_policy(nh.NanoHermesPolicy(keep_recent=4), ctx, budget=5_000, summarizer=stub)
    r = nh.compact(ctx, budget=5_000, keep_recent=4, summarizer=stub)
    assert at.messages == r.messages and at.event.cut == r.cut and at.event.dropped_count == r.dropped_count


# --- configured policies -------------------------------------------------------------------


def test_policies_are_configured_objects():
    pol = nh.NanoHermesPolicy(keep_recent=4, summary_role="user", cut="backward", excerpt_tool_calls=True)
    assert pol.label == "nanohermes(keep_recent=4, summary_role='user', excerpt_tool_calls=True, cut='backward')"
    assert POLICIES["clear_tool_uses"](clear_at_least=2000).clear_at_least == 2000
    assert resolve_policy(None).name == "nanohermes"
    assert resolve_policy("codex") == resolve_policy(POLICIES["codex"]) == nh.policies.CodexPolicy()
    assert resolve_policy(pol, keep_recent=6).keep_recent == 6 and pol.keep_recent == 4
    with pytest.raises(ValueError, match="cut must be"):
        nh.NanoHermesPolicy(cut="sideways")
    with pytest.raises(ValueError, match="unknown policy"):
        resolve_policy("magic")
    with pytest.raises(TypeError, match="Policy class or a Policy instance"):
        resolve_policy(42)


@pytest.mark.parametrize("option, value", [("keep_recent", 4), ("cut", "backward"), ("summary_role", "user")])
def test_an_option_the_policy_lacks_raises_naming_it(option, value):
    msgs = session(6)
    with pytest.raises(TypeError, match=f"option '{option}' does not apply to policy 'observation_masking'"):
        resolve_policy("observation_masking", **{option: value})
    with pytest.raises(TypeError, match=f"option '{option}' does not apply to policy 'clear_tool_uses'"):
        resolve_policy(POLICIES["clear_tool_uses"](), **{option: value})
    # a policy's option is not a replay setting: the error says where it goes
    with pytest.raises(TypeError, match=rf"replay\(\) has no setting '{option}': it is an option of the policy"):
        replay(msgs, policy="nanohermes", **{option: value})
    with pytest.raises(TypeError, match=option):
        sweep([("s", msgs)], policies=["observation_masking", "clear_tool_uses"],
              **{option: [value] if option == "keep_recent" else value})


def test_replay_takes_a_name_a_class_or_an_instance():
    msgs = session(14, body="x" * 900)
    by_name = replay(msgs, budget=6_000, policy="clear_tool_uses", summarizer=stub)
    by_class = replay(msgs, budget=6_000, policy=POLICIES["clear_tool_uses"], summarizer=stub)
    by_instance = replay(msgs, budget=6_000, policy=nh.policies.ClearToolUsesPolicy(), summarizer=stub)
    for other in (by_class, by_instance):
        pd.testing.assert_frame_equal(by_name.requests, other.requests)
    configured = replay(msgs, budget=6_000, policy=nh.NanoHermesPolicy(keep_recent=4), summarizer=stub)
    same = replay(msgs, nh.Settings(budget=6_000, policy=nh.NanoHermesPolicy(keep_recent=4), summarizer=stub))
    pd.testing.assert_frame_equal(same.requests, configured.requests)
    assert configured.policy_label == "nanohermes(keep_recent=4)"


# --- the loop: stretches and events equal the plain reference --------------------------------


@pytest.mark.parametrize("budget, keep", [(2_000, 1), (5_000, 10), (9_000, 4), (10**9, 10)])
def test_the_loop_equals_the_reference_on_every_column(budget, keep):
    msgs = session(25, body="w" * 700, n_calls=3) + [user("and now?"), assistant("", ["x"]), tool("x", "q" * 3000)]
    fast = replay(msgs, budget=budget, summarizer=stub, policy=nh.NanoHermesPolicy(keep_recent=keep)).requests
    slow = pd.DataFrame(reference_replay(msgs, budget=budget, keep_recent=keep, summarizer=stub))
    pd.testing.assert_frame_equal(fast[slow.columns].reset_index(drop=True), slow, check_dtype=False)


def test_books_can_be_switched_off():
    msgs = session(10, body="x" * 900)
    lean = replay(msgs, budget=4_000, profiles=(), retention=False, prefix_reuse=False, summarizer=stub)
    assert not any(c.startswith("problems_") for c in lean.requests.columns)
    assert "prefix_reuse" not in lean.requests.columns and lean.totals.retention is None
    full = replay(msgs, budget=4_000, summarizer=stub)
    assert list(lean.requests["cumulative_input"]) == list(full.requests["cumulative_input"])


def test_a_recorded_session_is_measured_once_for_many_replays():
    msgs = session(12, body="x" * 900)
    rec = RecordedSession.of(msgs)
    a = replay(rec, budget=5_000, summarizer=stub)
    b = replay(rec, budget=9_000, summarizer=stub)
    assert a.totals.n_compactions > b.totals.n_compactions >= 1
    assert rec.prefix("bytes")[-1] == nh.context_size(msgs)


# --- sweeps: executors, Dask, streaming, skipped files ----------------------------------------


def _named():
    return [("a", session(15, body="x" * 900, n_calls=2)), ("b", session(8, body="y" * 3000)),
            ("c", [SYSTEM, user("hi"), assistant("hello")])]


def _write(tmp_path, named):
    paths = []
    for name, msgs in named:
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(msgs), encoding="utf-8")
        paths.append(str(p))
    return paths


SETTINGS = dict(budgets=[5_000, 20_000], keep_recent=[4, 10], policies=["nanohermes", "codex", "clear_tool_uses"],
                summarizer=S)


def test_process_pool_sweep_equals_the_in_process_sweep(tmp_path):
    paths = _write(tmp_path, _named())
    local = sweep(paths, **SETTINGS)
    with cf.ProcessPoolExecutor(2) as pool:
        pooled = sweep(paths, executor=pool, **SETTINGS)
    pd.testing.assert_frame_equal(local, pooled)
    assert len(local) == 3 * (2 * 2 + 2 + 2)  # nanohermes varies keep_recent, the others one row per budget


class _RecordingExecutor(cf.Executor):
    """Runs each task at once, in the caller, and remembers the order tasks were submitted in."""

    def __init__(self):
        self.submitted = []

    def submit(self, fn, *args, **kwargs):
        self.submitted.append(args[0].name)
        future = cf.Future()
        future.set_result(fn(*args, **kwargs))
        return future


def test_an_executor_gets_the_largest_transcripts_first_and_rows_keep_the_given_order(tmp_path):
    named = _named()
    paths = _write(tmp_path, named)  # a (the longest), b, c (the shortest)
    sizes = {n: len(json.dumps(m)) for n, m in named}
    ex = _RecordingExecutor()
    rows = sweep(list(reversed(paths)), executor=ex, **SETTINGS)
    assert ex.submitted[:3] == [f"{n}.json" for n in sorted(sizes, key=lambda n: -sizes[n])]  # largest first
    assert list(dict.fromkeys(rows["transcript"])) == [f"{n}.json" for n, _ in reversed(named)]
    pd.testing.assert_frame_equal(rows, sweep(list(reversed(paths)), **SETTINGS))
    ex = _RecordingExecutor()
    sweep(paths, executor=ex, window=1, **SETTINGS)  # a window of one: submitted in the given order
    assert ex.submitted == [f"{n}.json" for n, _ in named]


def test_dask_sweep_equals_the_in_process_sweep(tmp_path):
    distributed = pytest.importorskip("distributed")
    paths = _write(tmp_path, _named())
    local = sweep(paths, **SETTINGS)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        remote = sweep(paths, executor=client.get_executor(), **SETTINGS)
    pd.testing.assert_frame_equal(local, remote)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_sweep_streams_to_a_file_and_reads_back_equal(tmp_path, suffix):
    paths = _write(tmp_path, _named())
    local = sweep(paths, **SETTINGS)
    out = tmp_path / f"rows{suffix}"
    report = sweep(paths, out=out, window=1, **SETTINGS)
    assert report.rows == len(local) and report.transcripts == 3 and report.skipped == []
    if suffix == ".parquet":
        back = pd.read_parquet(out)
    else:
        back = pd.read_csv(out, keep_default_na=False, na_values={"keep_recent": [""], "retention": [""]})
    back["keep_recent"] = back["keep_recent"].astype("Int64")
    pd.testing.assert_frame_equal(local, back, check_dtype=False)
    assert not list(tmp_path.glob(".rows*"))  # no temporary file left


def test_sweep_over_a_folder_streams_to_parquet(corpus, tmp_path):
    out = tmp_path / "corpus.parquet"
    report = sweep([corpus.path], budgets=[30_000, 60_000], out=out)
    back = pd.read_parquet(out)
    assert report.rows == len(back) == 2 * len(corpus.files)
    local = sweep([corpus.path], budgets=[30_000, 60_000])
    assert list(back["cumulative_input"]) == list(local["cumulative_input"])


def test_a_file_that_cannot_be_loaded_is_skipped_and_listed(tmp_path):
    paths = _write(tmp_path, _named()[:2])
    bad = tmp_path / "notes.json"
    bad.write_text('{"not": "a transcript"}', encoding="utf-8")
    frame = sweep([*paths, str(bad)], budgets=[5_000], summarizer=S)
    assert set(frame["transcript"]) == {"a.json", "b.json"}
    (skipped,) = frame.attrs["skipped"]
    assert skipped.transcript == "notes.json" and "\n" not in skipped.reason
    with pytest.raises(nh.TranscriptError, match="notes.json"):
        sweep([*paths, str(bad)], budgets=[5_000], summarizer=S, strict=True)
    report = sweep([str(bad)], budgets=[5_000], out=tmp_path / "none.csv")
    assert report.rows == 0 and len(report.skipped) == 1
    assert (tmp_path / "none.csv").read_text().startswith("transcript,")


def test_sweep_validates_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="unknown unit"):
        sweep([("s", session(3))], unit="furlongs")
    with pytest.raises(ValueError, match="must end in"):
        sweep([("s", session(3))], out=tmp_path / "rows.xlsx")
