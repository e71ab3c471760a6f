"""Predictions of notebook 05: the AGENTS.md chain, the skill body and the memory block."""

from __future__ import annotations

import nanohermes_nb as nh

from ..exercises import Wrong, close_to, same_value
from . import Judge


def p5_2(survives, whole, *, workspace, home, budgets, last_rule):
    """At a 30,000-byte cap: does the last rule survive, and how many of the numbered rules are seen whole?"""
    docs = nh.agent.prompt.project_docs(workspace, home, budgets.replace(max_project_docs=30_000))
    rules_whole = sum(1 for ln in docs.splitlines() if ln.startswith("- 第") and ln.endswith("。"))
    same_value(survives, last_rule in docs, "whether the last rule survives")
    close_to(whole, rules_whole, rel=0.05, what="your count of whole rules")


def p5_3(chars, note_survives, *, skills, budgets):
    """Characters of each skill body the dispatch door lets through, and whether the skill's note survives."""
    door = {name: nh.clamp(nh.agent.skills.skill_body(s), budgets.max_output) for name, s in skills.items()}
    if not isinstance(chars, dict) or set(chars) != set(door):
        raise Wrong("my_chars should map both skill names to a number of characters")
    for name, text in door.items():
        close_to(chars[name], len(text) - len(text.splitlines()[-1]) - 1, rel=0.05, what=f"{name}'s characters")
    same_value(note_survives, any("skill body truncated" in t for t in door.values()), "whether the note survives")


def p5_5(prediction, longer, *, ranked, budgets, shown):
    """The entries the renderer keeps with continue instead of break, and whether the block grows."""
    room, kept, used = budgets.memory_inject_char_budget, [], 0
    lines = [len(f"\n- [{e['kind']}] {e['text']}") for e in ranked]
    for e in ranked[: budgets.memory_inject_top_k]:
        size = len(f"\n- [{e['kind']}] {e['text']}")
        if used + size <= room:
            used += size
            kept.append(e["kind"] + ":" + e["text"][0])
    same_value(prediction, kept, "your list of entries")
    same_value(longer, used > sum(lines[: len(shown)]), "longer or shorter")


JUDGES: dict[str, Judge] = {"5.2": p5_2, "5.3": p5_3, "5.5": p5_5}
