"""Skills: a cheap one-line listing in the system message, the full body only on demand.

A skills folder holds ``<name>/SKILL.md`` files. Each starts with front matter
giving a ``name`` and a one-line ``description``; the rest is the body. The system
message carries only the listing (one line per skill), so knowing a skill exists
costs a line, and reading it costs its body, cut at ``skill_max_body_chars``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..context.budgets import DEFAULT_BUDGETS, Budgets

__all__ = ["Skill", "SkillError", "load_skills", "parse_skill", "listing", "skill_body",
           "SKILL_FILE"]

SKILL_FILE = "SKILL.md"
ELLIPSIS = "\u2026"
_FENCE = "---"


class SkillError(ValueError):
    """A SKILL.md that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Skill:
    """One skill as the listing knows it; the body stays on disk until asked for."""

    name: str
    description: str
    path: Path  # the SKILL.md file


def _split_front_matter(path: Path, text: str) -> tuple[dict[str, str], str]:
    """The front-matter fields and the body of a SKILL.md text."""
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != _FENCE:
        raise SkillError(f"{path}: front matter missing (the file must start with a '---' line)")
    fields: dict[str, str] = {}
    for number, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip("\r")
        if line.strip() == _FENCE:
            return fields, "\n".join(lines[number:])
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[:1].isspace():
            raise SkillError(f"{path}: line {number}: values must fit on one line")
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise SkillError(f"{path}: line {number}: expected 'key: value', got {line.strip()!r}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if value in ("|", ">", "|-", ">-"):
            raise SkillError(f"{path}: line {number}: {key} must be a one-line value")
        if key in fields:
            raise SkillError(f"{path}: line {number}: {key!r} given twice")
        fields[key] = value
    raise SkillError(f"{path}: front matter not closed (no second '---' line)")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise SkillError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise SkillError(f"{path}: cannot read ({e.strerror})") from None


def parse_skill(path: str | os.PathLike[str]) -> Skill:
    """The ``Skill`` of one SKILL.md file; ``SkillError`` naming the file if malformed."""
    path = Path(path)
    fields, _ = _split_front_matter(path, _read(path))
    for key in ("name", "description"):
        if not fields.get(key):
            raise SkillError(f"{path}: front matter has no {key!r}")
    return Skill(fields["name"], fields["description"], path)


def load_skills(folder: str | os.PathLike[str] | None) -> list[Skill]:
    """Every ``<name>/SKILL.md`` of ``folder``, sorted by folder name; none if it is absent."""
    if folder is None:
        return []
    root = Path(folder).expanduser()
    if not root.is_dir():
        return []
    skills: list[Skill] = []
    seen: dict[str, Path] = {}
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        file = sub / SKILL_FILE
        if not file.is_file():
            continue
        skill = parse_skill(file)
        if skill.name in seen:
            raise SkillError(f"{file}: skill name {skill.name!r} already used by {seen[skill.name]}")
        seen[skill.name] = file
        skills.append(skill)
    return skills


def listing(skills: list[Skill] | tuple[Skill, ...]) -> str:
    """One line per skill, ``- name: description``: what the system message carries."""
    return "\n".join(f"- {s.name}: {s.description}" for s in skills)


def skill_body(skill: Skill, budgets: Budgets = DEFAULT_BUDGETS) -> str:
    """The skill's body, read now, cut at ``skill_max_body_chars`` characters with a note."""
    _, body = _split_front_matter(skill.path, _read(skill.path))
    body = body.strip()
    cap = budgets.skill_max_body_chars
    if len(body) <= cap:
        return body
    return f"{body[:cap]}\n{ELLIPSIS} skill body truncated ({len(body) - cap} chars omitted)"
