"""Skills: front matter, one-line listing, bodies on demand with their cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanohermes_nb.agent.skills import (
    Skill,
    SkillError,
    listing,
    load_skills,
    parse_skill,
    skill_body,
)
from nanohermes_nb.context.budgets import DEFAULT_BUDGETS

E = "\u2026"


def skill(folder: Path, name: str, text: str) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_load_and_list(tmp_path: Path) -> None:
    skill(tmp_path, "release", "---\nname: release\ndescription: Cut a release of the package\n---\n# Steps\n1. tag\n")
    skill(tmp_path, "debug",
          '---\n# a comment\nname: "debug"\ndescription: \'Bisect a failing test\'\nversion: 2\n---\nbody\n')
    (tmp_path / "not-a-skill").mkdir()
    (tmp_path / "README.md").write_text("ignored")
    skills = load_skills(tmp_path)
    assert [s.name for s in skills] == ["debug", "release"]
    assert skills[0] == Skill("debug", "Bisect a failing test", tmp_path / "debug" / "SKILL.md")
    assert listing(skills) == "- debug: Bisect a failing test\n- release: Cut a release of the package"
    assert listing([]) == ""


def test_missing_folder_has_no_skills(tmp_path: Path) -> None:
    assert load_skills(tmp_path / "absent") == []
    assert load_skills(None) == []


def test_body_on_demand_and_its_cap(tmp_path: Path) -> None:
    path = skill(tmp_path, "s", "---\nname: s\ndescription: d\n---\n\n" + "x" * 10 + "\n")
    found = load_skills(tmp_path)[0]
    assert skill_body(found, DEFAULT_BUDGETS.replace(skill_max_body_chars=10)) == "x" * 10
    assert skill_body(found, DEFAULT_BUDGETS.replace(skill_max_body_chars=9)) == (
        "x" * 9 + f"\n{E} skill body truncated (1 chars omitted)")
    path.write_text("---\nname: s\ndescription: d\n---\nchanged\n")
    assert skill_body(found) == "changed"  # read when asked, not at load time


def test_body_default_cap_counts_characters(tmp_path: Path) -> None:
    skill(tmp_path, "zh", "---\nname: zh\ndescription: d\n---\n" + "\u4e2d" * 20_001)
    body = skill_body(load_skills(tmp_path)[0])
    assert body == "\u4e2d" * 20_000 + f"\n{E} skill body truncated (1 chars omitted)"


@pytest.mark.parametrize("text, message", [
    ("name: x\ndescription: y\n", "front matter missing"),
    ("---\nname: x\ndescription: y\n", "front matter not closed"),
    ("---\nname: x\n---\nbody", "no 'description'"),
    ("---\ndescription: y\n---\n", "no 'name'"),
    ("---\nname: x\ndescription: >\n  folded\n---\n", "one-line"),
    ("---\nname: x\njust words\ndescription: y\n---\n", "line 3: expected 'key: value'"),
    ("---\nname: x\nname: z\ndescription: y\n---\n", "'name' given twice"),
])
def test_malformed_front_matter_names_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = skill(tmp_path, "bad", text)
    with pytest.raises(SkillError) as err:
        load_skills(tmp_path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_duplicate_names_are_refused(tmp_path: Path) -> None:
    skill(tmp_path, "a", "---\nname: same\ndescription: one\n---\n")
    second = skill(tmp_path, "b", "---\nname: same\ndescription: two\n---\n")
    with pytest.raises(SkillError, match="already used"):
        load_skills(tmp_path)
    assert str(second) in str(pytest.raises(SkillError, load_skills, tmp_path).value)


def test_not_utf8_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(b"---\nname: \xff\n---\n")
    with pytest.raises(SkillError, match="not UTF-8"):
        parse_skill(path)
