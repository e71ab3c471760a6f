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
from .files import Capped, NotRegularFile, read_regular

__all__ = ["Skill", "SkillError", "load_skills", "parse_skill", "listing", "skill_body",
           "SKILL_FILE"]

SKILL_FILE = "SKILL.md"
FRONT_MATTER_BYTES = 65_536  # the listing reads this much of a SKILL.md, no more
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
            raise SkillError(f"{path}: line {number}: expected 'key: value', got {line.strip()[:80]!r}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if value in ("|", ">", "|-", ">-"):
            raise SkillError(f"{path}: line {number}: {key} must be a one-line value")
        if key in fields:
            raise SkillError(f"{path}: line {number}: {key!r} given twice")
        fields[key] = value
    raise SkillError(f"{path}: front matter not closed (no second '---' line)")


def _read(path: Path, limit: int) -> tuple[str, Capped]:
    """The file's text up to ``limit`` bytes (a regular file only) and what was read."""
    try:
        capped = read_regular(path, limit)
    except NotRegularFile as e:
        raise SkillError(f"{path}: is not a regular file but {e.kind}") from None
    except OSError as e:
        raise SkillError(f"{path}: cannot read ({e.strerror})") from None
    try:
        return capped.data.decode("utf-8"), capped
    except UnicodeDecodeError as e:
        raise SkillError(f"{path}: not UTF-8 text (byte {e.start})") from None


def _front_matter(path: Path, limit: int) -> tuple[dict[str, str], str, Capped]:
    text, capped = _read(path, limit)
    try:
        fields, body = _split_front_matter(path, text)
    except SkillError as e:
        if capped.more and "not closed" in str(e):
            raise SkillError(f"{path}: front matter not closed within the first {FRONT_MATTER_BYTES} bytes") from None
        raise
    return fields, body, capped


def parse_skill(path: str | os.PathLike[str]) -> Skill:
    """The ``Skill`` of one SKILL.md file; ``SkillError`` naming the file if malformed."""
    path = Path(path)
    fields, _, _ = _front_matter(path, FRONT_MATTER_BYTES)
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
    """The skill's body, read now, cut at ``skill_max_body_chars`` characters with a note.

    Only as much of the file is read as can hold the front matter and one character
    past the cap; when the file goes on, the note says how many characters at least.
    """
    cap = budgets.skill_max_body_chars
    _, body, capped = _front_matter(skill.path, FRONT_MATTER_BYTES + 4 * (cap + 1))
    body = body.lstrip() if capped.more else body.strip()
    if len(body) <= cap and not capped.more:
        return body
    omitted = f"more than {len(body) - cap}" if capped.more else str(len(body) - cap)
    return f"{body[:cap]}\n{ELLIPSIS} skill body truncated ({omitted} chars omitted)"
