"""The system message: built-in prompt, AGENTS.md chain, NANOHERMES.md, skills, prefix stability."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from nanohermes_nb.agent.memory import BLOCK_START, MemoryStore, inject
from nanohermes_nb.agent.prompt import (
    MODES,
    PROJECT_CONTEXT_HEADER,
    PROJECT_DOCS_HEADER,
    PrefixReport,
    SystemConfig,
    prefix_reuse,
    project_doc_paths,
    project_docs,
    refresh_system,
    system_content,
    system_prompt,
)
from nanohermes_nb.agent.skills import listing, load_skills
from nanohermes_nb.context.budgets import DEFAULT_BUDGETS

E = "\u2026"


@pytest.fixture
def chain(tmp_path: Path) -> dict[str, Path]:
    """A fake root chain: home and a workspace nested two levels under tmp_path."""
    for d in [tmp_path, *tmp_path.parents]:
        assert not (d / "AGENTS.md").exists(), f"stray {d / 'AGENTS.md'} would join every chain"
    home = tmp_path / "home"
    (home / ".nanohermes").mkdir(parents=True)
    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    return {"home": home, "global": home / ".nanohermes" / "AGENTS.md", "outer": outer,
            "inner": inner, "root": tmp_path}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- built-in prompt


def test_system_prompt_identity_rules_workspace_and_mode(tmp_path: Path) -> None:
    text = system_prompt(tmp_path, "plan")
    assert text.startswith("You are NanoHermes")
    assert f"Workspace: {tmp_path}" in text
    assert [line[:2] for line in text.splitlines() if line[:1].isdigit()] == ["1.", "2.", "3.", "4.", "5.", "6."]
    assert text.endswith(MODES["plan"])
    assert set(MODES) == {"goal", "debug", "plan"}
    assert all("\n" not in line for line in MODES.values())
    assert len(text.splitlines()) <= 30


def test_persona_and_unknown_mode(tmp_path: Path) -> None:
    assert system_prompt(tmp_path, persona="  Answer like a pirate.\n").endswith("\n\nPersona:\nAnswer like a pirate.")
    assert "Persona" not in system_prompt(tmp_path, persona="   ")
    with pytest.raises(ValueError, match="unknown permission mode 'yolo'"):
        system_prompt(tmp_path, "yolo")


# --------------------------------------------------------------------------- AGENTS.md chain


def test_chain_order_global_outer_inner(chain: dict[str, Path]) -> None:
    write(chain["global"], "GLOBAL rules\n")
    write(chain["outer"] / "AGENTS.md", "\nOUTER rules\n\n")
    write(chain["inner"] / "AGENTS.md", "INNER rules")
    assert project_docs(chain["inner"], home=chain["home"]) == "GLOBAL rules\n\nOUTER rules\n\nINNER rules"
    paths = project_doc_paths(chain["inner"], home=chain["home"])
    assert paths[0] == chain["global"]
    assert paths[-2:] == [chain["outer"] / "AGENTS.md", chain["inner"] / "AGENTS.md"]
    assert paths[1] == Path("/AGENTS.md")


def test_chain_uses_home_env_by_default(chain: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    write(chain["global"], "from home")
    monkeypatch.setenv("HOME", str(chain["home"]))
    assert project_docs(chain["inner"]) == "from home"


def test_no_docs_is_none(chain: dict[str, Path]) -> None:
    assert project_docs(chain["inner"], home=chain["home"]) is None
    write(chain["inner"] / "AGENTS.md", "  \n")
    assert project_docs(chain["inner"], home=chain["home"]) is None


def test_same_file_through_a_link_is_read_once(chain: dict[str, Path]) -> None:
    write(chain["global"], "SHARED")
    write(chain["outer"] / "AGENTS.md", "OUTER")
    (chain["inner"] / "AGENTS.md").symlink_to(chain["global"])
    assert project_docs(chain["inner"], home=chain["home"]) == "SHARED\n\nOUTER"


def test_cut_lands_on_a_utf8_boundary(chain: dict[str, Path]) -> None:
    # 1 + 3*7000 bytes; 20,000 falls inside a 3-byte character, so the cut backs off to 19,999
    write(chain["inner"] / "AGENTS.md", "a" + "\u4e2d" * 7000)
    docs = project_docs(chain["inner"], home=chain["home"])
    assert docs == "a" + "\u4e2d" * 6666 + f"\n{E} project guidance truncated"
    assert len(docs.split("\n")[0].encode()) == 19_999


def test_cut_at_and_past_the_cap(chain: dict[str, Path]) -> None:
    write(chain["global"], "g" * 9_998)
    write(chain["inner"] / "AGENTS.md", "i" * 10_000)  # joined: 9,998 + 2 + 10,000 = 20,000 bytes
    assert project_docs(chain["inner"], home=chain["home"]) == "g" * 9_998 + "\n\n" + "i" * 10_000
    write(chain["inner"] / "AGENTS.md", "i" * 10_001)
    assert project_docs(chain["inner"], home=chain["home"]) == (
        "g" * 9_998 + "\n\n" + "i" * 10_000 + f"\n{E} project guidance truncated")
    tuned = DEFAULT_BUDGETS.replace(max_project_docs=5)
    assert project_docs(chain["inner"], home=chain["home"], budgets=tuned) == f"ggggg\n{E} project guidance truncated"


# --------------------------------------------------------------------------- system_content


def skills_dir(root: Path) -> Path:
    folder = root / "skills"
    write(folder / "review" / "SKILL.md", "---\nname: review\ndescription: Review a diff\n---\nbody\n")
    return folder


def test_system_content_order(chain: dict[str, Path]) -> None:
    write(chain["global"], "GLOBAL")
    write(chain["inner"] / "NANOHERMES.md", "\n\nThis project is a CLI.\n\n")
    folder = skills_dir(chain["root"])
    config = SystemConfig(chain["inner"], mode="debug", persona="Be terse.", home=chain["home"],
                          skills_dir=folder)
    expected = (system_prompt(chain["inner"], "debug", "Be terse.")
                + PROJECT_DOCS_HEADER + "GLOBAL"
                + PROJECT_CONTEXT_HEADER + "This project is a CLI." + "\n"
                + "\n" + listing(load_skills(folder)))
    assert system_content(config) == expected
    assert expected.endswith("\n\n=== Project context (NANOHERMES.md) ===\nThis project is a CLI.\n\n"
                             "- review: Review a diff")


def test_system_content_minimal(chain: dict[str, Path]) -> None:
    write(chain["inner"] / "NANOHERMES.md", " \n ")
    config = SystemConfig(chain["inner"], home=chain["home"])
    assert system_content(config) == system_prompt(chain["inner"])


def test_refresh_system_replaces_the_stored_message(chain: dict[str, Path]) -> None:
    config = SystemConfig(chain["inner"], home=chain["home"])
    stale = {"role": "system", "content": f"old rules\n\n{BLOCK_START}\nold memory"}
    history = [stale, {"role": "user", "content": "hi"}]
    fresh = refresh_system(history, config)
    assert fresh is not history and history[0] is stale  # input untouched
    assert fresh[0] == {"role": "system", "content": system_content(config)}
    assert BLOCK_START not in fresh[0]["content"]
    assert fresh[1] is history[1]
    no_system = [{"role": "user", "content": "hi"}]
    assert refresh_system(no_system, config) == [fresh[0], no_system[0]]
    assert no_system == [{"role": "user", "content": "hi"}]


def test_refresh_follows_a_changed_configuration(chain: dict[str, Path]) -> None:
    history = refresh_system([], SystemConfig(chain["inner"], home=chain["home"]))
    write(chain["inner"] / "AGENTS.md", "new rule: use tabs")
    resumed = refresh_system(history, SystemConfig(chain["inner"], mode="plan", home=chain["home"]))
    assert "new rule: use tabs" in resumed[0]["content"]
    assert MODES["plan"] in resumed[0]["content"] and MODES["goal"] not in resumed[0]["content"]


# --------------------------------------------------------------------------- prefix stability


def test_memory_block_at_the_end_keeps_the_prefix(chain: dict[str, Path]) -> None:
    store = MemoryStore(chain["root"] / "memory.json")
    store.add("preference", "The user wants answers in English")
    store.add("fact", "Tests run with pytest -q")
    config = SystemConfig(chain["inner"], home=chain["home"])
    base = refresh_system([{"role": "user", "content": "how do tests run?"}], config)
    turn1 = inject(base, "how do tests run with pytest", store)
    turn2 = inject(turn1 + [{"role": "assistant", "content": "pytest -q"},
                            {"role": "user", "content": "answer in English please"}],
                   "answer in English", store)
    assert turn1[0]["content"] != turn2[0]["content"]  # the block changed between turns
    report = prefix_reuse(turn1, turn2)
    assert isinstance(report, PrefixReport)
    stable = len(('[{"role":"system","content":"' + system_content(config)).encode())
    assert report.shared_bytes >= stable
    assert 0 < report.fraction < 1 and report.total_bytes > report.shared_bytes


def test_timestamp_first_costs_the_whole_prefix(chain: dict[str, Path]) -> None:
    config = SystemConfig(chain["inner"], home=chain["home"])
    assert system_content(config, timestamp="2026-01-01T10:00:00") == (
        "Current time: 2026-01-01T10:00:00\n" + system_content(config))
    ask = {"role": "user", "content": "hi"}
    t1 = refresh_system([ask], config, timestamp=dt.datetime(2026, 1, 1, 10, 0, 0))
    t2 = refresh_system([ask], config, timestamp=dt.datetime(2026, 1, 1, 10, 0, 1))
    stamped = prefix_reuse(t1, t2)
    plain = prefix_reuse(refresh_system([ask], config), refresh_system([ask], config))
    assert plain.fraction == 1.0
    # only the bytes up to the first differing character of the time line are shared
    assert stamped.shared_bytes == len('[{"role":"system","content":"Current time: 2026-01-01T10:00:0')
    assert stamped.fraction < 0.1
