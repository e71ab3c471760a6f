"""The cost model proven out of sample: priors learned on other sessions, every session predicted leave-one-out.

``case_of`` prepares a session once (its requests as the model sees them, its bill, its file's
facts); ``costlearn.learn_priors`` learns ``costmodel.Priors`` from a set of sessions' bills;
``leave_one_out`` predicts each session with priors learned on all the *others* and its own
first ``FIT_REQUESTS`` requests (the per-session fit), and compares with its bill:

- ``cost_error``: predicted session dollars over billed, minus 1 (priced sessions only);
- ``ratio_error``: the same with every token class at its provider's usual relative price
  (``RATIOS``: an unpriced session counts too; labelled wherever shown);
- ``within_share``: requests whose predicted cache read is within 5% of the reported prompt,
  free-running (the what-if's model) and, beside it, bill-anchored (``within_share_anchored``:
  the previous request's bill known, as when explaining a recorded session);
- ``uncached_error``, ``write_error``, ``paid_error``: the session's uncached input, its cache
  writes, and the two together (what costs money at the full price or more).

``figures`` pools them per agent against the issue's targets; ``in_sample`` does the same with
priors learned on every session, the session itself included (labelled as such wherever
shown). ``variant="recorded"`` uses the recorded replies' output and reasoning tokens (part of
the bill: a what-if that keeps the recorded replies could use them; labelled). ``ablation``
takes one part of the model away at a time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..transcripts.session import Session, SessionLike
from .calibrate import TOLERANCE, RequestFacts, facts_from_transcript
from .costlearn import learn_priors, rewrites
from .costmodel import Priors, Tokens, fit_for, predict, provider_of, request_dollars, steps_of_facts
from .logmeta import SessionMeta, session_meta

__all__ = ["Case", "case_of", "learn_priors", "evaluate", "leave_one_out", "in_sample", "figures", "LONG",
           "session_prediction", "TARGETS", "RATIOS", "ablation", "ABLATIONS", "corpus_cases", "shipped_priors"]

LONG = 30  # the targets are stated on sessions of 30 requests or more
TARGETS = {"cost_within_5": 0.80, "cost_within_10": 1.0, "within_claude_code": 0.97, "within_codex_cli": 0.90,
           "paid_within_10": 1.0}
# each token class at its provider's usual price relative to uncached input: cache read, 5-minute and
# 1-hour write, output (Anthropic: 0.1x, 1.25x, 2x, 5x; OpenAI's GPT-5 family: 0.1x, no writes, 8x)
RATIOS = {"anthropic": (0.1, 1.25, 2.0, 5.0), "openai": (0.1, 0.0, 0.0, 8.0)}


@dataclass(frozen=True)
class Case:
    """One session prepared for the model: what does not change with the priors."""

    name: str
    agent: str
    facts: tuple
    steps: tuple
    meta: SessionMeta
    writes_1h: dict  # request index -> 1-hour share of its writes
    prices: dict  # model -> Pricing or None
    step: int = 1

    @property
    def billed(self) -> list[RequestFacts]:
        return [f for f in self.facts if f.usage is not None]


def case_of(transcript: SessionLike, name: str = "", session: Any = None, priors: Priors | None = None) -> Case:
    """A loaded agent log as a ``Case`` (each request's model priced by ``bill.price_for_model``).

    ``session``: its ``costmodel.provider_session`` when the caller has one already; ``priors``:
    what its ``steps`` are made with (the shipped ones by default).
    """
    from .bill import price_for_model
    from .costmodel import load_priors, provider_session

    log = Session.of(transcript)
    session = session if session is not None else provider_session(log)
    meta = session_meta(log)
    facts = tuple(facts_from_transcript(log, session, meta=meta))
    agent = log.agent
    requests = log.requests
    hours = {j: meta.writes_1h[r.id] for j, r in enumerate(requests) if r.id in meta.writes_1h}
    prices = {f.model: price_for_model(f.model) for f in facts}
    step = next((p.rounding for p in prices.values() if p is not None and p.cache == "openai"), 1)
    steps = steps_of_facts(facts, provider_of(agent), priors or load_priors(), agent)
    return Case(name or log.name or "session", agent, facts, tuple(steps), meta,
                hours, prices, step if provider_of(agent) == "openai" else 1)


def session_prediction(case: Case, priors: Priors, anchored: bool = False,
                       variant: str = "free") -> list[Tokens] | None:
    """The case's requests as the model predicts them under ``priors`` (None when too few are billed to fit)."""
    steps = steps_of_facts(case.facts, provider_of(case.agent), priors, case.agent)
    replies = [f.usage for f in case.facts] if variant == "recorded" else None
    fit = fit_for(case.facts, case.agent, priors, continued=case.meta.continued, writes_1h=case.writes_1h,
                  steps=steps, replies=replies)
    if fit is None:
        return None
    anchor = [None] + [f.usage for f in case.facts[:-1]] if anchored else None
    return predict(steps, fit, priors, case.agent, case.step, anchor, replies)


# ---------------------------------------------------------------- a session against its bill


def _billed_tokens(case: Case, f: RequestFacts) -> Tokens:
    u = f.usage
    hour = case.writes_1h.get(f.index, 0.0) * u.cache_write_tokens
    return Tokens(u.prompt_tokens, u.cached_tokens, u.cache_write_tokens - hour, hour, u.completion_tokens)


def ratio_units(tokens: Tokens, provider: str) -> float:
    """A request's cost in uncached-input tokens, each class at its provider's usual relative price (``RATIOS``)."""
    read, w5, w1, out = RATIOS["anthropic" if provider == "anthropic" else "openai"]
    return tokens.uncached + read * tokens.cached + w5 * tokens.write_5m + w1 * tokens.write_1h + out * tokens.output


def _relative(predicted: float, reported: float) -> float | None:
    return (predicted - reported) / reported if reported else None


def _dollars(case: Case, rows: Sequence[tuple]) -> tuple[float | None, float | None]:
    """Billed and predicted dollars of the rows; (None, None) when a request's model has no price."""
    billed = predicted = 0.0
    for f, t, _ in rows:
        price = case.prices.get(f.model)
        b, p = request_dollars(_billed_tokens(case, f), price), request_dollars(t, price)
        if b is None or p is None:
            return None, None
        billed, predicted = billed + b, predicted + p
    return billed, predicted


def evaluate(case: Case, priors: Priors, variant: str = "free") -> dict | None:
    """The case predicted under ``priors``, against its bill (see the module docstring); None when it cannot fit."""
    free = session_prediction(case, priors, variant=variant)
    if free is None:
        return None
    anchored = session_prediction(case, priors, anchored=True, variant=variant) or free
    rows = [(f, t, a) for f, t, a in zip(case.facts, free, anchored, strict=True) if f.usage is not None]
    n = len(rows)
    within = sum(abs(t.cached - f.usage.cached_tokens) <= TOLERANCE * f.usage.prompt_tokens for f, t, _ in rows)
    within_a = sum(abs(a.cached - f.usage.cached_tokens) <= TOLERANCE * f.usage.prompt_tokens for f, _, a in rows)
    rep_unc = sum(f.usage.prompt_tokens - f.usage.cached_tokens - f.usage.cache_write_tokens for f, _, _ in rows)
    rep_w = sum(f.usage.cache_write_tokens for f, _, _ in rows)
    pred_unc, pred_w = sum(t.uncached for _, t, _ in rows), sum(t.write for _, t, _ in rows)
    provider = provider_of(case.agent)
    ratio_b = sum(ratio_units(_billed_tokens(case, f), provider) for f, _, _ in rows)
    ratio_p = sum(ratio_units(t, provider) for _, t, _ in rows)
    billed, predicted = _dollars(case, rows)
    return {"agent": case.agent, "file": case.name, "requests": n, "within": within, "within_share": within / n,
            "within_anchored": within_a, "within_share_anchored": within_a / n,
            "cost_usd": billed, "predicted_usd": predicted,
            "cost_error": None if predicted is None or not billed else predicted / billed - 1,
            "ratio_error": _relative(ratio_p, ratio_b),
            "uncached_error": _relative(pred_unc, rep_unc), "write_error": _relative(pred_w, rep_w),
            "paid_error": _relative(pred_unc + pred_w, rep_unc + rep_w),
            "continued": case.meta.continued is not None}


def leave_one_out(cases: Sequence[Case], variant: str = "free",
                  adjust: Callable[[Priors, list[Case]], Priors] | None = None) -> Any:
    """One row per session, predicted with priors learned on every *other* session (``evaluate``).

    ``adjust``: a change made to each fold's priors, given the fold's other sessions (``ablation``).
    """
    from .frames import frame

    rows = []
    for k, case in enumerate(cases):
        others = [c for i, c in enumerate(cases) if i != k]
        priors = learn_priors(others, source=f"the {len(others)} other sessions")
        row = evaluate(case, adjust(priors, others) if adjust else priors, variant)
        if row is not None:
            rows.append(row)
    return frame(rows)


def in_sample(cases: Sequence[Case], variant: str = "free") -> Any:
    """The same rows with priors learned on every session, each one's own bill included (in-sample: label it)."""
    from .frames import frame

    priors = learn_priors(cases, source="every session, in-sample")
    return frame([r for r in (evaluate(c, priors, variant) for c in cases) if r is not None])


def _share(values: Any, bound: float) -> float | None:
    return float((values <= bound).mean()) if len(values) else None


def figures(rows: Any, long: int = LONG) -> dict:
    """Per agent, over the sessions of ``long`` requests or more: the targets' figures."""
    out: dict = {}
    for agent, g in rows[rows["requests"] >= long].groupby("agent", sort=False):
        priced = g["cost_error"].dropna().abs()
        ratio = g["ratio_error"].dropna().abs()
        paid = g["paid_error"].dropna().abs()
        out[agent] = {
            "sessions": len(g), "requests": int(g["requests"].sum()), "priced_sessions": len(priced),
            "cost_within_5": _share(priced, 0.05), "cost_within_10": _share(priced, 0.10),
            "cost_error_median": float(priced.median()) if len(priced) else None,
            "cost_error_p90": float(priced.quantile(0.9)) if len(priced) else None,
            "cost_error_worst": float(priced.max()) if len(priced) else None,
            "cost_error_mean": float(g["cost_error"].dropna().mean()) if len(priced) else None,
            "ratio_within_5": _share(ratio, 0.05), "ratio_within_10": _share(ratio, 0.10),
            "ratio_error_median": float(ratio.median()), "ratio_error_p90": float(ratio.quantile(0.9)),
            "ratio_error_worst": float(ratio.max()), "ratio_error_mean": float(g["ratio_error"].dropna().mean()),
            "within_share": float(g["within"].sum() / g["requests"].sum()),
            "within_share_anchored": float(g["within_anchored"].sum() / g["requests"].sum()),
            "paid_within_10": _share(paid, 0.10),
            "write_within_10": _share(g["write_error"].dropna().abs(), 0.10),
            "uncached_within_10": _share(g["uncached_error"].dropna().abs(), 0.10),
        }
    return out


# ---------------------------------------------------------------- one part of the model taken away at a time


def _facts(cases: Sequence[Case], change: Callable[[RequestFacts], RequestFacts]) -> list[Case]:
    return [dataclasses.replace(c, facts=tuple(change(f) for f in c.facts)) for c in cases]


def _no_reasoning(f: RequestFacts) -> RequestFacts:
    if f.usage is None or not f.usage.reasoning_tokens:
        return f
    return dataclasses.replace(f, usage=dataclasses.replace(f.usage, reasoning_tokens=0))


_Adjust = Callable[[Priors, list[Case]], Priors]
ABLATIONS: dict[str, tuple[Callable[[Sequence[Case]], list[Case]] | None, _Adjust | None]] = {
    "without thinking from signatures (H1)": (
        lambda cs: _facts(cs, lambda f: dataclasses.replace(f, thinking=0.0)), None),
    "without the injections the log records (H3)": (
        lambda cs: _facts(cs, lambda f: dataclasses.replace(f, injected=None)),
        lambda p, _: dataclasses.replace(p, unlogged={})),
    "without the unlogged-injection rate (H3)": (None, lambda p, _: dataclasses.replace(p, unlogged={})),
    "without what a compaction restores (H3)": (None, lambda p, _: dataclasses.replace(p, restored={})),
    "without the read share after a compaction": (None, lambda p, _: dataclasses.replace(p, compact_read={})),
    "without a Codex reply's reasoning in its turn (H4)": (lambda cs: _facts(cs, _no_reasoning), None),
    "without Claude Code's read share (the whole previous prompt read within the TTL)": (
        None, lambda p, _: dataclasses.replace(p, read_share={k: v for k, v in p.read_share.items()
                                                              if k != "claude_code"})),
    "the same, with a rate of rewrites at user turns instead (H3, not shipped)": (
        None, lambda p, others: dataclasses.replace(
            p, read_share={k: v for k, v in p.read_share.items() if k != "claude_code"},
            rewrite={k: v for k, v in rewrites(others, p).items() if k == "claude_code"})),
}


def ablation(cases: Sequence[Case], names: Sequence[str] | None = None) -> dict[str, dict]:
    """``figures`` of the leave-one-out rows with each part of ``ABLATIONS`` taken away (the rest unchanged)."""
    out = {}
    for name in names or list(ABLATIONS):
        change, adjust = ABLATIONS[name]
        out[name] = figures(leave_one_out(change(cases) if change else list(cases), adjust=adjust))
    return out


def corpus_cases(folder: Any) -> list[Case]:
    """Every real (not synthetic) Claude Code and Codex log of an agent-log folder, as cases, in name order."""
    from pathlib import Path

    from ..transcripts import load_transcript

    base = Path(folder)
    paths = [p for sub in ("claude-code", "codex") for p in sorted((base / sub).glob("*.jsonl"))
             if "FIXTURE" not in p.name]
    return [case_of(load_transcript(p)) for p in paths]


def shipped_priors(cases: Sequence[Case], source: str) -> tuple[Priors, Any]:
    """The priors to ship: learned on every case, each agent's band the 90th percentile of its leave-one-out
    |error| at the providers' usual relative prices (``ratio_error``: unpriced sessions count, and the band
    does not move when a price table does), over the sessions of ``LONG`` requests or more."""
    rows = leave_one_out(cases)
    band, counts = {}, {}
    for agent, g in rows[rows["requests"] >= LONG].groupby("agent", sort=False):
        errors = g["ratio_error"].dropna().abs()
        if len(errors):
            band[agent] = round(float(errors.quantile(0.9)), 3)
            counts[agent] = int(len(errors))
    priors = learn_priors(cases, source=source)
    return dataclasses.replace(priors, band=band, band_sessions=counts), rows


def _print(label: str, figs: dict) -> None:
    for agent, f in figs.items():
        print(label, agent, {k: round(v, 4) if isinstance(v, float) else v for k, v in f.items()})


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m nanohermes_nb.engine.validation [FOLDER] [--write] [--in-sample] [--recorded] [--ablation]``.

    Prints the leave-one-out figures; ``--write`` ships the priors; the other flags add the
    in-sample figures, the recorded-replies variant and the ablation (each labelled).
    """
    import sys
    from pathlib import Path

    from ..resources import resource_path
    from .costmodel import PRIORS_FILE

    args = list(sys.argv[1:] if argv is None else argv)
    flags = {a for a in args if a.startswith("--")}
    folders = [a for a in args if not a.startswith("--")] or [
        str(Path(__file__).resolve().parents[3] / "shared" / "agentlogs")]
    cases = corpus_cases(folders[0])
    priors, rows = shipped_priors(cases, f"{len(cases)} real Claude Code and Codex sessions of ../shared/agentlogs")
    _print("out of sample:", figures(rows))
    if "--in-sample" in flags:
        _print("in-sample:", figures(in_sample(cases)))
    if "--recorded" in flags:
        _print("recorded replies, out of sample:", figures(leave_one_out(cases, "recorded")))
        _print("recorded replies, in-sample:", figures(in_sample(cases, "recorded")))
    if "--ablation" in flags:
        for name, figs in ablation(cases).items():
            _print(f"{name}, out of sample:", figs)
    if "--write" in flags:
        from .._files import write_text_atomic

        target = write_text_atomic(resource_path(PRIORS_FILE), priors.as_json())
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
