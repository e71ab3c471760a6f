"""hermes-agent's ``ContextCompressor.compress`` as a policy: protected head and tail, pruning, a grounded summary."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..context.messages import Message, pair_tool_results, tool_call_of
from ..context.summarizers import PREVIOUS_SUMMARY_ROLE, default_summarizer
from .base import Event, Policy, PolicyEnv, check_positive, make_event, register
from .hermes_fallback import fallback_summary
from .hermes_text import (
    ALL_SUMMARY_PREFIXES,
    COMPACTION_NOTE,
    DUPLICATE_NOTE,
    MERGED_PRIOR_CONTEXT_HEADER,
    MERGED_SUMMARY_DELIMITER,
    PRUNED_TOOL_PLACEHOLDER,
    SUMMARY_END_MARKER,
    append_text,
    content_text,
    ground_task_snapshot,
    hermes_message_tokens,
    is_summary_content,
    shrink_arguments,
    strip_summary_prefix,
    tool_result_line,
    with_summary_prefix,
)

__all__ = ["HermesAgentPolicy", "hermes_message_tokens"]

Sizer = Callable[[Message], int]
_IMAGE_TYPES = ("image", "image_url", "input_image")


def _role(m: Mapping[str, Any], default: Any = None) -> Any:
    return m.get("role", default)


def _call_id(call: Any) -> Any:
    """hermes' ``_get_tool_call_id``: ``call_id`` first, then ``id`` (Responses-API calls carry both)."""
    return (call.get("call_id", "") or call.get("id", "") or "") if isinstance(call, dict) else ""


def _strip_image_parts(parts: list, text: str) -> list | None:
    """A copy with every image part replaced by a text part, or None when there was none."""
    if not any(isinstance(p, dict) and p.get("type") in _IMAGE_TYPES for p in parts):
        return None
    return [{"type": "text", "text": text} if isinstance(p, dict) and p.get("type") in _IMAGE_TYPES else p
            for p in parts]


@register
@dataclass(frozen=True)
class HermesAgentPolicy(Policy):
    """hermes-agent ``ContextCompressor.compress``: prune old tool results, protect head and tail, summarize the middle.

    Source: NousResearch hermes-agent 0.19.0 (PyPI ``hermes-agent==0.19.0``),
    ``agent/context_compressor.py``, ``ContextCompressor.compress`` [3312-3727];
    proven identical to it by ``tests/test_peers_hermes.py`` (every tool-batch
    point of the corpus, three budgets, hermes' own token estimator on both
    sides, the summary LLM stubbed). One call, as hermes does it:

    1. If there are no more than head + 4 messages, nothing happens.
    2. Prune (``_prune_old_tool_results``): a tail is protected by walking back
       ``summary_target_ratio`` x budget with a floor of ``protect_last_n`` (20)
       messages; tool results of 200+ chars that repeat a newer one (anywhere)
       become a duplicate note; outside the tail, results over 200 chars become
       hermes' one-line stand-in (``[terminal] ran `cmd` ...`` only for the tool
       named ``terminal``; ``[tool] k=v ... (N chars result)`` for tools hermes
       does not know), image parts a text note, and call arguments over 500 chars
       are re-serialized with string values cut to 200.
    3. Head: the system message plus ``protect_first_n`` (3) messages, moved
       forward past tool results; after a first compaction (a hermes summary in
       the context) only the system message (``_effective_protect_first_n``).
    4. Tail (``_find_tail_cut_by_tokens``): up to 1.5 x the tail budget with a
       floor of ``min(protect_last_n, 8)`` messages, never splitting a call from
       its results, the last user message and the last assistant reply kept;
       the cut is always after the head, so there is always a window (when the
       head covers every message hermes raises ``IndexError``; the policy declines).
    5. The summary: the summarizer's answer, grounded with a task snapshot quoting
       the newest real user message of the summarized turns, under hermes'
       reference-only prefix, followed by its end marker; on a failure hermes'
       deterministic fallback summary. A previous summary in the window is not
       summarized again: it goes to the summarizer first, marked by the record
       role ``PREVIOUS_SUMMARY_ROLE``, and the turns before it are dropped.
    6. Assembly: hermes' compaction note appended to the system message once;
       the summary role chosen to alternate with its neighbours, or the summary
       merged into the first tail message when both roles collide; call/result
       pairs repaired by id set (orphan results dropped, unanswered calls
       stripped anywhere, the last message included); older image parts replaced.

    Quirks reproduced (``docs/policies.md``, section hermes_agent): a reused
    call id labels an old result with the tool name *and arguments* of the id's
    last use (hermes' id->name map keeps the last one); pairs repaired by id set
    keep a second result of an answered id; a summary that must merge into a
    missing tail message is lost. Departures, off by default:
    ``label_by_position`` (label by the call each result answers),
    ``decay_head=False`` (keep protecting the first messages),
    ``system_note=False``, ``redact`` (hermes' redaction is not ported: pass
    ``agent.redact.redact_sensitive_text`` or any str -> str), and hermes'
    own option ``abort_on_summary_failure`` (no summary on a failure: hermes
    then returns the pruned list, old tool results still pruned).

    Lab mapping: hermes' threshold is the lab budget, so the tail budget is
    ``int(summary_target_ratio x env.budget)`` in the trigger's unit
    (``env.meter``); ``size=hermes_message_tokens`` measures as hermes does.
    hermes' state across calls is read from the context: "has compressed
    before" is "a hermes summary is in the context". The trigger side of hermes
    (threshold floors, anti-thrashing, the summary-failure cooldown) decides
    *when* to compact and stays outside the policy.

    hermes' other constants, as options: ``max_tail_message_floor`` (8) and
    ``tail_soft_factor`` (1.5) bound the protected tail; ``prune_min_chars`` and
    ``dedup_min_chars`` (200) are the sizes below which old tool results are
    left alone; ``tool_args_max_chars`` (500) and ``tool_args_head_chars`` (200)
    shrink long tool-call arguments; ``excerpt_tool_calls`` renders calls in the
    summarizer's excerpt.
    """

    protect_first_n: int = 3
    protect_last_n: int = 20
    summary_target_ratio: float = 0.20
    max_tail_message_floor: int = 8
    tail_soft_factor: float = 1.5
    prune_min_chars: int = 200
    dedup_min_chars: int = 200
    tool_args_max_chars: int = 500
    tool_args_head_chars: int = 200
    decay_head: bool = True
    system_note: bool = True
    excerpt_tool_calls: bool = True
    label_by_position: bool = False
    abort_on_summary_failure: bool = False
    redact: Callable[[str], str] | None = None
    name: ClassVar[str] = "hermes_agent"
    summary_prefixes: ClassVar[tuple[str, ...]] = ALL_SUMMARY_PREFIXES

    def __post_init__(self) -> None:
        if not 0.10 <= self.summary_target_ratio <= 0.80:
            raise ValueError(f"summary_target_ratio must be within [0.10, 0.80] (hermes clamps it there), "
                             f"got {self.summary_target_ratio!r}")
        check_positive(self.protect_first_n, "protect_first_n", zero=True)
        check_positive(self.protect_last_n, "protect_last_n", zero=True)
        check_positive(self.tail_soft_factor, "tail_soft_factor")

    # -- phase 1: prune ---------------------------------------------------------------------

    def _call_labels(self, msgs: Sequence[Message]) -> Callable[[int], tuple[Any, Any]]:
        """Tool message index -> (tool name, arguments) of its call: by id, the last use winning (hermes)."""
        if self.label_by_position:
            pairs = pair_tool_results(msgs)
            return lambda i: tool_call_of(msgs, pairs, i)
        by_id: dict[Any, tuple[Any, Any]] = {}
        for m in msgs:
            if _role(m) == "assistant":
                for call in m.get("tool_calls") or []:
                    if isinstance(call, dict):
                        fn = call.get("function", {})
                        fn = fn if isinstance(fn, Mapping) else {}
                        by_id[call.get("id", "")] = (fn.get("name", "unknown"), fn.get("arguments", ""))
        return lambda i: by_id.get(msgs[i].get("tool_call_id", ""), ("unknown", ""))

    def _prune_boundary(self, msgs: Sequence[Message], tail_budget: int, meter: Sizer) -> int:
        n = len(msgs)
        if tail_budget <= 0:
            return n - self.protect_last_n
        min_protect = min(self.protect_last_n, n)
        used, boundary = 0, n
        for i in range(n - 1, -1, -1):
            size = meter(msgs[i])
            if used + size > tail_budget and n - i >= min_protect:
                boundary = i
                break
            used += size
            boundary = i
        return n - max(n - boundary, min_protect)

    def _dedupe(self, result: list) -> int:
        seen: set[str] = set()
        changed = 0
        for i in range(len(result) - 1, -1, -1):
            m = result[i]
            content = m.get("content") or ""
            if _role(m) != "tool" or not isinstance(content, str) or len(content) < self.dedup_min_chars:
                continue
            if content in seen:
                result[i] = {**m, "content": DUPLICATE_NOTE}
                changed += 1
            else:
                seen.add(content)
        return changed

    def _stand_in(self, m: Message, label: Callable[[], tuple[Any, Any]]) -> Any:
        """The pruned content of an old tool result, or None to keep it."""
        content = m.get("content", "")
        if isinstance(content, list):
            return _strip_image_parts(content, "[screenshot removed to save context]")
        if isinstance(content, dict) and content.get("_multimodal"):
            summary = content.get("text_summary") or "[screenshot removed to save context]"
            return f"[screenshot removed] {summary[:200]}"
        if (not isinstance(content, str) or not content or content == PRUNED_TOOL_PLACEHOLDER
                or content.startswith("[Duplicate tool output") or len(content) <= self.prune_min_chars):
            return None
        name, args = label()
        return tool_result_line(name, args, content)

    def _shrink_calls(self, m: Message) -> Message | None:
        calls, changed = [], False
        for call in m["tool_calls"]:
            fn = call.get("function") if isinstance(call, dict) else None
            args = fn.get("arguments", "") if isinstance(fn, Mapping) else None
            if isinstance(fn, Mapping) and isinstance(args, str) and len(args) > self.tool_args_max_chars:
                shrunk = shrink_arguments(args, self.tool_args_head_chars)
                if shrunk != args:
                    call, changed = {**call, "function": {**fn, "arguments": shrunk}}, True
            calls.append(call)
        return {**m, "tool_calls": calls} if changed else None

    def _prune(self, msgs: list, tail_budget: int, meter: Sizer) -> tuple[list, int]:
        """``_prune_old_tool_results``: (pruned copy, messages changed); unchanged messages stay the same objects."""
        result = list(msgs)
        label = self._call_labels(msgs)
        boundary = self._prune_boundary(msgs, tail_budget, meter)
        changed = self._dedupe(result)
        for i in range(max(0, boundary)):
            m = result[i]
            if _role(m) == "tool":
                new = self._stand_in(m, functools.partial(label, i))
                if new is not None:
                    result[i] = {**m, "content": new}
                    changed += 1
            elif _role(m) == "assistant" and m.get("tool_calls"):
                shrunk = self._shrink_calls(m)
                if shrunk is not None:
                    result[i], changed = shrunk, changed + 1
        return result, changed

    # -- phase 2: boundaries ----------------------------------------------------------------

    def _head_size(self, msgs: Sequence[Message]) -> int:
        first_n = self.protect_first_n
        if self.decay_head and any(is_summary_content(m.get("content")) for m in msgs):
            first_n = 0  # hermes: protect_first_n decays once the session has been compacted (#11996)
        return int(bool(msgs) and _role(msgs[0]) == "system") + first_n

    @staticmethod
    def _align_forward(msgs: Sequence[Message], idx: int) -> int:
        while idx < len(msgs) and _role(msgs[idx]) == "tool":
            idx += 1
        return idx

    @staticmethod
    def _align_backward(msgs: Sequence[Message], idx: int) -> int:
        if idx <= 0 or idx >= len(msgs):
            return idx
        check = idx - 1
        while check >= 0 and _role(msgs[check]) == "tool":
            check -= 1
        if check >= 0 and _role(msgs[check]) == "assistant" and msgs[check].get("tool_calls"):
            idx = check
        return idx

    def _keep_last_user(self, msgs: Sequence[Message], cut: int, head_end: int) -> int:
        last = next((i for i in range(len(msgs) - 1, head_end - 1, -1)
                     if _role(msgs[i]) == "user" and not is_summary_content(msgs[i].get("content"))), -1)
        if last < 0 or last >= cut:
            return cut
        if head_end + 1 <= last:
            return last
        # the user message sits at the head boundary: summarize its whole turn (#22523)
        end = last + 1
        if end < len(msgs) and _role(msgs[end]) == "assistant":
            end = self._align_forward(msgs, end + 1)
        return max(end, head_end + 1)

    @staticmethod
    def _has_text(m: Message) -> bool:
        content = m.get("content")
        if isinstance(content, str):
            return bool(content.strip())
        if isinstance(content, list):
            for part in content:
                text = (part.get("text") or part.get("content")) if isinstance(part, dict) else None
                if isinstance(text, str) and text.strip():
                    return True
        return False

    def _keep_last_assistant(self, msgs: Sequence[Message], cut: int, head_end: int) -> int:
        last_any = last = -1
        for i in range(len(msgs) - 1, head_end - 1, -1):
            if _role(msgs[i]) != "assistant":
                continue
            last_any = i if last_any < 0 else last_any
            if self._has_text(msgs[i]):
                last = i
                break
        last = last if last >= 0 else last_any
        if last < 0 or last >= cut:
            return cut
        return max(self._align_backward(msgs, last), head_end + 1)

    def _walk_back(self, msgs: Sequence[Message], head_end: int, limit: int, min_tail: int,
                   meter: Sizer) -> tuple[int, int]:
        """Walk back from the end while under ``limit`` (or under the floor): (cut, size walked)."""
        n, used, cut = len(msgs), 0, len(msgs)
        for i in range(n - 1, head_end - 1, -1):
            size = meter(msgs[i])
            if used + size > limit and n - i >= min_tail:
                return cut, used
            used += size
            cut = i
        return cut, used

    def _tail_cut(self, msgs: Sequence[Message], head_end: int, budget: int, meter: Sizer) -> int:
        """``_find_tail_cut_by_tokens``: the first message of the protected tail."""
        n = len(msgs)
        available = max(0, n - head_end - 1)
        floor = max(3, min(self.protect_last_n, self.max_tail_message_floor))
        min_tail = min(floor, max(3, available - 2), available) if available > 1 else 0
        soft = int(budget * self.tail_soft_factor)
        cut, used = self._walk_back(msgs, head_end, soft, min_tail, meter)
        if cut <= head_end and 0 < used <= soft:  # everything fits the soft ceiling: re-walk at 1x (#40803)
            cut = self._rewalk(msgs, head_end, budget, min_tail, meter)
        cut = min(cut, n - min_tail)
        if cut <= head_end:
            cut = max(n - min_tail, head_end + 1)
        cut = self._align_backward(msgs, cut)
        cut = self._keep_last_user(msgs, cut, head_end)
        cut = self._keep_last_assistant(msgs, cut, head_end)
        return self._align_forward(msgs, max(cut, head_end + 1))

    @staticmethod
    def _rewalk(msgs: Sequence[Message], head_end: int, budget: int, min_tail: int, meter: Sizer) -> int:
        n, used, cut = len(msgs), 0, len(msgs)
        for j in range(n - 1, head_end - 1, -1):
            size = meter(msgs[j])
            if used + size > budget and n - j >= min_tail:
                return j
            used += size
            cut = j
        return cut

    # -- phase 3: the summary ---------------------------------------------------------------

    def _summary_text(self, previous: str, turns: list, env: PolicyEnv) -> tuple[str, str | None]:
        """(summary with prefix, failure or None): the answer grounded, or hermes' fallback summary.

        hermes calls its LLM even for an empty window; so is the summarizer here.
        """
        redact = self.redact or (lambda text: text)
        records = ([(PREVIOUS_SUMMARY_ROLE, previous)] if previous else [])
        records += env.excerpts.records(turns, tool_calls=self.excerpt_tool_calls)
        summarizer = env.summarizer or default_summarizer()
        failure = None
        try:
            reply = env.excerpts.ask(summarizer, records)
            if not isinstance(reply, str) or not reply.strip():
                failure = "the summarizer returned no text"
        except Exception as exc:  # a failed extra call must not break the agent loop (hermes: fallback)
            failure = (str(exc).strip() or type(exc).__name__)
            failure = failure[:217].rstrip() + "..." if len(failure) > 220 else failure
        if failure is not None:
            return fallback_summary(turns, previous=bool(previous), reason=failure, redact=redact), failure
        grounded = ground_task_snapshot(redact(reply.strip()), turns, redact)
        return with_summary_prefix(grounded), None

    @staticmethod
    def _summary_role(msgs: Sequence[Message], start: int, end: int) -> tuple[str, bool]:
        """(role, merge into the first tail message): hermes' alternation rules (#52160, #58753)."""
        n = len(msgs)
        last_head = _role(msgs[start - 1], "user") if start > 0 else "user"
        first_tail = _role(msgs[end], "user") if end < n else "user"
        force_user = last_head == "system" or not any(
            _role(msgs[i]) == "user" for i in [*range(0, start), *range(end, n)])
        role = "user" if last_head in ("assistant", "tool") or force_user else "assistant"
        if role != first_tail:
            return role, False
        flipped = "assistant" if role == "user" else "user"
        if flipped != last_head and not force_user:
            return flipped, False
        return role, True

    # -- phase 4: assembly ------------------------------------------------------------------

    def _head(self, msgs: Sequence[Message], start: int) -> list:
        head = list(msgs[:start])
        if self.system_note and head and _role(head[0]) == "system":
            content = head[0].get("content")
            if COMPACTION_NOTE not in content_text(content):
                sep = "\n\n" + COMPACTION_NOTE if isinstance(content, str) and content else COMPACTION_NOTE
                head[0] = {**head[0], "content": append_text(content, sep)}
        return head

    @staticmethod
    def _merge(first: Message, summary: str) -> dict:
        suffix = f"\n\n{MERGED_SUMMARY_DELIMITER}\n\n{summary}\n\n{SUMMARY_END_MARKER}"
        content = append_text(append_text(first.get("content", ""), suffix), MERGED_PRIOR_CONTEXT_HEADER + "\n",
                              prepend=True)
        return {**{k: v for k, v in first.items() if k != "api_content"}, "content": content}

    @staticmethod
    def _repair_pairs(msgs: list) -> tuple[list, int]:
        """``_sanitize_tool_pairs``: by id set, orphan results dropped and unanswered calls stripped anywhere."""
        calls = {_call_id(c) for m in msgs if _role(m) == "assistant" for c in (m.get("tool_calls") or [])}
        calls.discard("")
        results = {m.get("tool_call_id") for m in msgs if _role(m) == "tool" and m.get("tool_call_id")}
        orphans, missing = results - calls, calls - results
        out = [m for m in msgs if not (_role(m) == "tool" and m.get("tool_call_id") in orphans)]
        repairs = len(msgs) - len(out)
        for i, m in enumerate(out):
            tcs = m.get("tool_calls") if _role(m) == "assistant" else None
            if not missing or not tcs:
                continue
            kept = [c for c in tcs if _call_id(c) not in missing]
            if len(kept) == len(tcs):
                continue
            m = {k: v for k, v in m.items() if k != "tool_calls"}
            if kept:
                m["tool_calls"] = kept
            elif not m.get("content") or (isinstance(m.get("content"), str) and not m["content"].strip()):
                m["content"] = "(tool call removed)"
            out[i], repairs = m, repairs + 1
        return out, repairs

    @staticmethod
    def _strip_old_images(msgs: list) -> list:
        """``_strip_historical_media``: image parts before the newest image-bearing user message replaced."""
        def has_images(m: Message) -> bool:
            return isinstance(m.get("content"), list) and _strip_image_parts(m["content"], "") is not None

        anchor = next((i for i in range(len(msgs) - 1, -1, -1)
                       if _role(msgs[i]) == "user" and has_images(msgs[i])), -1)
        for i in range(max(anchor, 0)):
            m = msgs[i]
            if has_images(m):
                stripped = _strip_image_parts(m["content"], "[Attached image — stripped after compression]")
                msgs[i] = {**{k: v for k, v in m.items() if k != "api_content"}, "content": stripped}
        return msgs

    def _aborted(self, context: list, pruned: list, n_pruned: int, env: PolicyEnv, size: int,
                 failure: str) -> tuple[list, Event | None]:
        """``abort_on_summary_failure``: hermes returns its *pruned* list (its comment says "unchanged")."""
        if not n_pruned:
            return context, None
        ev = make_event(self, "mask", context, pruned, env, size)
        return pruned, replace(ev, failure=failure, summarizer_calls=1, detail=(
            f"hermes_agent: summarizer failed ({failure}), compaction aborted (abort_on_summary_failure); "
            f"the {n_pruned} old messages pruned stay pruned; {size:,} -> {ev.size_after:,}"))

    def compact(self, context: list, env: PolicyEnv, size: int) -> tuple[list, Event | None]:
        msgs = list(context)
        n = len(msgs)
        head_size = self._head_size(msgs)
        if n <= head_size + 3 + 1:  # hermes: the head plus 3 tail messages at least
            return context, None
        tail_budget = int(env.budget * self.summary_target_ratio)
        pruned, n_pruned = self._prune(msgs, tail_budget, env.meter)
        start = self._align_forward(pruned, head_size)
        end = self._tail_cut(pruned, start, tail_budget, env.meter)  # always > start in hermes 0.19.0
        if end > n:  # the head covers every message: hermes raises IndexError here; the lab declines
            return context, None
        first = 1 if _role(pruned[0]) == "system" else 0
        found = next((i for i in range(end - 1, first - 1, -1) if is_summary_content(pruned[i].get("content"))), None)
        previous = strip_summary_prefix(content_text(pruned[found].get("content"))) if found is not None else ""
        turns = pruned[max(start, found + 1):end] if found is not None else pruned[start:end]
        summary, failure = self._summary_text(previous, turns, env)
        if failure and self.abort_on_summary_failure:
            return self._aborted(context, pruned, n_pruned, env, size, failure)
        role, merge = self._summary_role(pruned, start, end)
        tail = list(pruned[end:])
        note = {"role": role, "content": summary + "\n\n" + SUMMARY_END_MARKER}
        if merge and tail:
            note = tail[0] = self._merge(tail[0], summary)
        assembled = self._head(pruned, start) + ([] if merge else [note]) + tail  # merge, no tail: lost (hermes)
        new, repairs = self._repair_pairs(assembled)
        new = self._strip_old_images(new)
        ev = make_event(self, "placeholder" if failure else "summary", context, new, env, size)
        detail = _detail(len(turns), start, end, n, bool(previous), merge, bool(tail), n_pruned, repairs,
                         failure, size, ev.size_after)
        return new, replace(ev, cut=end, note=note["content"], failure=failure, summarizer_calls=1, detail=detail)


def _detail(turns: int, start: int, end: int, n: int, previous: bool, merge: bool, tail: bool, pruned: int,
            repairs: int, failure: str | None, before: int, after: int) -> str:
    """One line saying what a compaction did."""
    where = ""
    if merge:
        where = (" (summary merged into the first tail message)" if tail
                 else " (summary lost: it should merge into a tail message and there is none, as in hermes)")
    text = (f"hermes_agent: summarized {turns} messages ({start}..{end - 1})"
            f"{' updating the previous summary' if previous else ''}; kept head {start} + tail {n - end}{where}; "
            f"{pruned} old messages pruned, {repairs} pairs repaired; {before:,} -> {after:,}")
    if failure:
        text += f"; summarizer failed ({failure}): hermes' deterministic fallback summary"
    return text
