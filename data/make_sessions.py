"""Build every generated file of data/: the sessions and the article's tables.

    python data/make_sessions.py           # (re)write the files
    python data/make_sessions.py --check   # exit 1, naming the files that differ

The sessions are recorded by the toolkit's own agent loop, ``nh.Agent``, over a
temporary copy of ``data/workspace/``: each session is a story (a generator of
user messages and assistant messages, authored here) played by an
``nh.ScriptedModel``, and the agent really runs every tool call through
``Tools.dispatch`` and sends the story the results. Everything is
deterministic: no temporary paths, timings, process ids or timestamps reach the
output, and every command's result is checked while the session is built, so a
story that stops being true fails the build instead of being written.
``build_all()`` returns the files as objects so a test can compare them with
the committed ones without writing; ``record(story)`` returns the agent's
result (its live ledger included).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

DATA = Path(__file__).resolve().parent
sys.path.insert(0, str(DATA.parent))

from nanohermes_nb import Agent, ScriptedModel  # noqa: E402
from nanohermes_nb.agent.loop import AgentResult  # noqa: E402
from nanohermes_nb.agent.models import ModelError  # noqa: E402
from nanohermes_nb.agent.prompt import (  # noqa: E402
    PROJECT_CONTEXT_HEADER,
    PROJECT_DOCS_HEADER,
    project_context,
    system_prompt,
)

WORKSPACE = DATA / "workspace"
SHOWN_WORKSPACE = "/workspace"  # the workspace path the recorded system message names
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "test_output.txt", "build", "feedback")
ELLIPSIS = "\u2026"
ARROW = "\u2192"

Message = dict[str, Any]


class BuildError(RuntimeError):
    """A recorded step did not do what the story says it does."""


# --------------------------------------------------------------------------- recording


@contextlib.contextmanager
def scratch_workspace() -> Iterator[Path]:
    """A fresh copy of data/workspace/ in a temporary folder, removed afterwards.

    Commands in the copy find ``python3`` next to this interpreter first, write
    no bytecode and use UTF-8, whatever the machine's settings.
    """
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="nanohermes-data-") as tmp:
        root = Path(tmp) / "workspace"
        shutil.copytree(WORKSPACE, root, ignore=IGNORED)
        os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + saved.get("PATH", "")
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        os.environ["PYTHONIOENCODING"] = "utf-8"
        os.environ["PYTHONHASHSEED"] = "0"
        os.environ.pop("PYTHONPATH", None)
        try:
            yield root
        finally:
            os.environ.clear()
            os.environ.update(saved)


def system_text(root: Path) -> str:
    """messages[0]: the built-in prompt for /workspace, the workspace AGENTS.md, NANOHERMES.md.

    Same order as ``system_content`` (SPEC 6), but only the workspace's own
    AGENTS.md is read, so the machine's home and parent folders cannot leak in.
    """
    text = system_prompt(PurePosixPath(SHOWN_WORKSPACE))
    text = re.sub(r"^Workspace: .*$", f"Workspace: {SHOWN_WORKSPACE}", text, count=1, flags=re.M)
    agents = (root / "AGENTS.md").read_text(encoding="utf-8").strip()
    text += PROJECT_DOCS_HEADER + agents
    context = project_context(root)
    if context:
        text += PROJECT_CONTEXT_HEADER + context + "\n"
    return text


class User(NamedTuple):
    """A user message: the start of a turn (one ``Agent.run``)."""

    text: str


class Call(NamedTuple):
    """An assistant message with tool calls; the story receives the real results."""

    say: str
    calls: tuple


class Reply(NamedTuple):
    """An assistant message without tool calls: the turn's answer."""

    text: str


Story = Iterator  # yields User / Call / Reply; each Call is sent back the list of its results


def call(say: str, *calls: tuple[str, dict[str, Any]]) -> Call:
    return Call(say, calls)


class StoryEnded(ModelError):
    """The story has no reply left for the model's next request (a session that ends on tool results)."""


class Storyteller:
    """Turns a story into a ``ScriptedModel`` script: the model's next reply, from the recorded session.

    The story is a generator. The agent's request after a ``Call`` sends the
    story the tool results the agent recorded (read from the session, so a
    compaction of the context cannot hide them). Call ids are
    ``call_<turn>_<k>``, k counting the calls of the turn.
    """

    def __init__(self, story: Story) -> None:
        self.story = story
        self.agent: Agent | None = None
        self.turn = 0
        self.calls_in_turn = 0
        self.ended = False

    def next_user(self) -> User | None:
        """The next user message (the story resumes after the turn's answer), or None at the end."""
        try:
            item = self.story.send(None)
        except StopIteration:
            return None
        if not isinstance(item, User):
            raise BuildError(f"expected a user message after the turn's answer, got {item!r}")
        self.turn += 1
        self.calls_in_turn = 0
        return item

    def __call__(self, context: list) -> Message:
        """The model's reply to the agent's request (``context`` is what it sent)."""
        assert self.agent is not None
        results = _last_results(self.agent.messages)
        try:
            item = self.story.send(results)
        except StopIteration:
            self.ended = True
            raise StoryEnded("the story has no reply left") from None
        if isinstance(item, Reply):
            return {"role": "assistant", "content": item.text}
        if not isinstance(item, Call):
            raise BuildError(f"expected the assistant's next message, got {item!r}")
        tool_calls = []
        for name, args in item.calls:
            self.calls_in_turn += 1
            tool_calls.append({"id": f"call_{self.turn}_{self.calls_in_turn}", "type": "function",
                               "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}})
        return {"role": "assistant", "content": item.say, "tool_calls": tool_calls}


def _last_results(messages: Sequence[Message]) -> list[str] | None:
    """The contents of the tool results at the end of the session (None when it ends otherwise)."""
    k = len(messages)
    while k and messages[k - 1].get("role") == "tool":
        k -= 1
    return [m["content"] for m in messages[k:]] or None


def record(story: Callable[[Path], Story], *, ends_on_tools: bool = False) -> AgentResult:
    """Run ``story`` through ``nh.Agent`` with a ``ScriptedModel``, in a scratch workspace.

    One ``Agent.run`` per user message, with the defaults (budget 120,000, NanoHermes's
    compaction; the summaries are the scripted model's offline ones). The session
    recorded is the agent's, uncompacted. ``ends_on_tools``: the story stops after
    a tool batch, so the run's last request finds no reply (and that is expected).
    """
    with scratch_workspace() as root:
        teller = Storyteller(story(root))
        with Agent(root, ScriptedModel(teller), system=system_text(root)) as agent:
            teller.agent = agent
            result = None
            while (user := teller.next_user()) is not None:
                result = agent.run(user.text)
                if result.error and not (ends_on_tools and teller.ended):
                    raise BuildError(f"{story.__name__}: {result.error}")
                if teller.ended:
                    break
        if result is None or (ends_on_tools and not teller.ended):
            raise BuildError(f"{story.__name__}: the story did not run as told")
        return result


def session_of(story: Callable[[Path], Story], **options: Any) -> Callable[[], list[Message]]:
    """A builder of the session's messages (what the data file holds)."""
    def build() -> list[Message]:
        return record(story, **options).messages

    build.__name__ = story.__name__
    return build


def expect_exit(result: str, code: int) -> str:
    """``result`` of run_command, checked for its exit code."""
    head = result.splitlines()[0] if result else ""
    if head != f"exit code: {code}":
        raise BuildError(f"expected exit code {code}, got:\n{result[:2000]}")
    return result


def expect_in(result: str, *needles: str) -> str:
    for needle in needles:
        if needle not in result:
            raise BuildError(f"expected {needle!r} in:\n{result[:2000]}")
    return result


def patch_command(edits: Sequence[tuple[str, str, str]], *, quiet: bool = False) -> str:
    """A ``python3 - <<'EOF'`` script replacing each ``old`` (exactly once) by ``new``.

    The tool set has no edit tool, so edits go through run_command like this.
    """
    lines = ["python3 - <<'EOF'", "from pathlib import Path", "", "EDITS = ["]
    lines += [f"    ({path!r}, {old!r}, {new!r})," for path, old, new in edits]
    lines += [
        "]",
        "for path, old, new in EDITS:",
        "    p = Path(path)",
        "    text = p.read_text(encoding='utf-8')",
        "    assert text.count(old) == 1, f'{path}: expected exactly one match'",
        "    p.write_text(text.replace(old, new), encoding='utf-8')",
    ]
    if not quiet:
        lines.append("    print(f'patched {path}')")
    lines.append("EOF")
    return "\n".join(lines)


def run(say: str, command: str, code: int = 0) -> Story:
    """One run_command call whose exit code is checked: ``result = yield from run(...)``."""
    results = yield call(say, ("run_command", {"command": command}))
    return expect_exit(results[0], code)


def last_line_shown(result: str) -> int:
    """The number of the last numbered line in a read_file result (possibly cut short)."""
    numbers = [int(m.group(1)) for m in re.finditer(rf"^(\d+){ARROW}", result, flags=re.M)]
    if not numbers:
        raise BuildError("no numbered lines in the read result")
    return numbers[-1]


def summary_line(result: str) -> str:
    """The runner's closing ``N passed, M failed`` line."""
    m = re.search(r"^\d+ passed, \d+ failed.*$", result, flags=re.M)
    if m is None:
        raise BuildError(f"no test summary in:\n{result[-2000:]}")
    return m.group(0)


# --------------------------------------------------------------------------- the twelve-turn session

GOAL = (
    "logstat counts `/search?q=shoes` and `/search?q=hats` as two different paths, so the "
    "top-paths report is full of search rows. Please change `logstat/parse.py` so a record "
    "keeps the bare path and the query string separately, and `logstat/report.py` so the "
    "report groups by the bare path and still shows how many distinct queries a path had. "
    "After that, the JSON export in `logstat/export.py` and its contract `docs/json-schema.md` "
    "must follow. Keep `python3 run_tests.py` green and update or add tests as needed."
)

PARSE_EDITS = [
    ("logstat/parse.py",
     '    """One request. ``path`` is the request target exactly as sent."""',
     '    """One request. ``path`` is the request target without its query string;\n'
     '    ``query`` is what followed the first ``?`` (empty when there was none)."""'),
    ("logstat/parse.py",
     '    agent: str = "-"\n',
     '    agent: str = "-"\n    query: str = ""\n'),
    ("logstat/parse.py",
     '    size = 0 if m["size"] == "-" else int(m["size"])\n',
     '    size = 0 if m["size"] == "-" else int(m["size"])\n'
     '    path, _, query = m["target"].partition("?")\n'),
    ("logstat/parse.py",
     '        path=m["target"],\n',
     '        path=path,\n'),
    ("logstat/parse.py",
     '        agent=m["agent"] or "-",\n',
     '        agent=m["agent"] or "-",\n        query=query,\n'),
]

REPORT_EDITS = [
    ("tests/test_parse.py",
     'def test_query_string_kept_in_path():\n'
     '    expect_equal(parse_line(LINE).path, "/search?q=shoes", "path")\n',
     'def test_query_string_split_from_path():\n'
     '    r = parse_line(LINE)\n'
     '    expect_equal((r.path, r.query), ("/search", "q=shoes"), "path and query")\n\n\n'
     'def test_empty_query_keeps_bare_path():\n'
     '    r = parse_line(LINE.replace("/search?q=shoes", "/search?"))\n'
     '    expect_equal((r.path, r.query), ("/search", ""), "path and query")\n'),
    ("logstat/report.py",
     '    """What the top-paths report shows for one path."""\n\n'
     '    path: str\n    hits: int\n    errors: int\n    bytes: int\n',
     '    """What the top-paths report shows for one path (``queries``: distinct query strings)."""\n\n'
     '    path: str\n    hits: int\n    errors: int\n    bytes: int\n    queries: int = 0\n'),
    ("logstat/report.py",
     '    """Hits, errors (status >= 400) and bytes per path."""\n'
     '    hits: Counter[str] = Counter()\n',
     '    """Hits, errors (status >= 400), bytes and distinct non-empty queries per path."""\n'
     '    hits: Counter[str] = Counter()\n'
     '    queries: defaultdict[str, set[str]] = defaultdict(set)\n'),
    ("logstat/report.py",
     '        sizes[r.path] += r.size\n',
     '        sizes[r.path] += r.size\n'
     '        if r.query:\n'
     '            queries[r.path].add(r.query)\n'),
    ("logstat/report.py",
     '    return {p: PathStats(p, hits[p], errors[p], sizes[p]) for p in hits}\n',
     '    return {p: PathStats(p, hits[p], errors[p], sizes[p], len(queries[p])) for p in hits}\n'),
    ("logstat/report.py",
     '    """The top-paths table: rank, path, hits, error rate, bytes."""\n'
     '    rows = [\n'
     '        (str(k), s.path, str(s.hits), f"{s.error_rate:.0%}", human_bytes(s.bytes))\n'
     '        for k, s in enumerate(stats, start=1)\n'
     '    ]\n'
     '    return _table(("#", "path", "hits", "errors", "bytes"), rows, right={0, 2, 3, 4})\n',
     '    """The top-paths table: rank, path, hits, distinct queries, error rate, bytes."""\n'
     '    rows = [\n'
     '        (str(k), s.path, str(s.hits), str(s.queries), f"{s.error_rate:.0%}", human_bytes(s.bytes))\n'
     '        for k, s in enumerate(stats, start=1)\n'
     '    ]\n'
     '    return _table(("#", "path", "hits", "queries", "errors", "bytes"), rows, right={0, 2, 3, 4, 5})\n'),
    ("tests/test_report.py",
     '    expect_equal(stats["/products/1001"], PathStats("/products/1001", 3, 1, 4216), "stats")\n',
     '    expect_equal(stats["/products/1001"], PathStats("/products/1001", 3, 1, 4216, 0), "stats")\n'),
    ("tests/test_report.py",
     '        "#  path            hits  errors    bytes",\n'
     '        "-  --------------  ----  ------  -------",\n'
     '        "1  /products/1001     3     33%  4.1 KiB",\n'
     '        "2  /cart              2     50%    300 B",\n'
     '        "3  /                  1      0%   1000 B",\n',
     '        "#  path            hits  queries  errors    bytes",\n'
     '        "-  --------------  ----  -------  ------  -------",\n'
     '        "1  /products/1001     3        0     33%  4.1 KiB",\n'
     '        "2  /cart              2        0     50%    300 B",\n'
     '        "3  /                  1        0      0%   1000 B",\n'),
    ("tests/test_report.py",
     'def test_top_paths_n_larger_than_paths():\n',
     'def test_queries_counted_per_bare_path():\n'
     '    records = [Record("h", T0, "GET", "/search", "HTTP/1.1", 200, 10, query=q)\n'
     '               for q in ("q=a", "q=b", "q=a", "")]\n'
     '    expect_equal(path_stats(records)["/search"].queries, 2, "distinct queries")\n\n\n'
     'def test_top_paths_n_larger_than_paths():\n'),
]

EXPORT_EDITS = [
    ("logstat/export.py", "SCHEMA_VERSION = 2\n", "SCHEMA_VERSION = 3\n"),
    ("logstat/export.py",
     '        "path": s.path,\n        "hits": s.hits,\n',
     '        "path": s.path,\n        "queries": s.queries,\n        "hits": s.hits,\n'),
    ("tests/test_export.py",
     '    expect_equal(path_entry(1, PathStats("/cart", 2, 1, 100)),\n'
     '                 {"rank": 1, "path": "/cart", "hits": 2, "errors": 1, "error_rate": 0.5, "bytes": 100},\n',
     '    expect_equal(path_entry(1, PathStats("/cart", 2, 1, 100, 3)),\n'
     '                 {"rank": 1, "path": "/cart", "queries": 3, "hits": 2, "errors": 1, "error_rate": 0.5,\n'
     '                  "bytes": 100},\n'),
    ("tests/test_export.py",
     """    expect_equal(text.splitlines()[1], '  "schema_version": 2,', "second line")\n""",
     """    expect_equal(text.splitlines()[1], '  "schema_version": 3,', "second line")\n"""),
]

DOC_EDITS = [
    ("docs/json-schema.md", "# logstat JSON report — schema version 2\n",
     "# logstat JSON report — schema version 3\n"),
    ("docs/json-schema.md", '| `"schema_version"` | integer | `2` for this layout |',
     '| `"schema_version"` | integer | `3` for this layout |'),
    ("docs/json-schema.md",
     '| `"path"` | string | the request target exactly as sent by the client, '
     'query string included (`"/search?q=shoes"`) |\n',
     '| `"path"` | string | the request target without its query string (`"/search"` for `/search?q=shoes`) |\n'
     '| `"queries"` | integer | distinct non-empty query strings seen for this path |\n'),
    ("docs/json-schema.md",
     '  "path": "/search?q=shoes",\n',
     '  "path": "/search",\n  "queries": 14,\n'),
    ("docs/json-schema.md",
     '- An empty query keeps its question mark: `"/search?"` and `"/search"` are\n'
     '  different paths in schema version 2.\n',
     '- The query string is not part of `"path"`: `"/search?q=shoes"`, `"/search?"`\n'
     '  and `"/search"` all count as `"/search"`; `"queries"` says how many distinct\n'
     '  query strings were seen (an empty query is not counted).\n'),
    ("docs/json-schema.md",
     '| 2 | 0.3– | added `"bytes"`, `"period"`, `"top_hosts"`; '
     '`"top_paths"` gained `"errors"`, `"error_rate"`, `"bytes"` and `"rank"` |\n',
     '| 2 | 0.3–0.4 | added `"bytes"`, `"period"`, `"top_hosts"`; '
     '`"top_paths"` gained `"errors"`, `"error_rate"`, `"bytes"` and `"rank"` |\n'
     '| 3 | 0.5– | `"path"` is the bare path (query string removed); added `"queries"` |\n'),
    ("docs/json-schema.md",
     '  "schema_version": 2,\n  "requests": 0,\n',
     '  "schema_version": 3,\n  "requests": 0,\n'),
    ("docs/json-schema.md",
     "## A complete report\n\n",
     "## A complete report (schema version 2)\n\n"
     "Written by logstat 0.4; a version 3 report differs only in `\"path\"` (no query\n"
     "string) and the added `\"queries\"` of each `\"top_paths\"` element.\n\n"),
    ("docs/json-schema.md",
     'if report["schema_version"] not in (2,):',
     'if report["schema_version"] not in (2, 3):'),
    ("CHANGELOG.md", "# Changelog\n\n",
     "# Changelog\n\n## 0.5.0\n\n"
     "- Paths are counted without their query string: `Record.path` is the bare path and\n"
     "  `Record.query` holds what followed the `?`.\n"
     "- The top-paths table has a `queries` column (distinct query strings per path).\n"
     "- JSON schema version 3: `top_paths[].path` is the bare path, new `queries` field.\n\n"),
]


def twelve_turns(root: Path) -> Story:
    """The article's twelve actions, one user turn each, over a copy of the workspace."""

    yield User(GOAL)
    expect_in((yield call("I'll start with the parser.", ("read_file", {"path": "logstat/parse.py"})))[0],
              "def parse_line")
    yield Reply("`parse_line` matches the whole line with one regular expression and stores the "
                "request target, query included, in `Record.path`. I'll split it there: `path` "
                "before the first `?`, a new `query` field after it. The new field goes last, with "
                "a default, so code and tests that build a `Record` by position keep working.")

    yield User("Sounds right. Before you edit anything, look at how the report and the CLI use the path.")
    (yield call("Reading the report module and the command line.",
                ("read_file", {"path": "logstat/report.py"}), ("read_file", {"path": "logstat/cli.py"})))
    yield Reply("`path_stats` keys every counter on `r.path`, so once the parser strips the query the "
                "report groups by the bare path with no further change. For the distinct-query count "
                "I'll add a `queries` field to `PathStats` and a column to `render_top_paths`. The CLI "
                "only passes records through; `--json` and `--csv` call `logstat/export.py`, which "
                "I'll handle last.")

    yield User("Is `path` used anywhere else? I don't want surprises in the tests.")
    (yield call("Searching the whole project for the word `path`.", ("grep", {"pattern": r"\bpath\b"})))
    (yield call("`tests/test_report.py` builds records by position and checks tables exactly; reading it.",
                ("read_file", {"path": "tests/test_report.py"})))
    yield Reply("Besides the report, `logstat/export.py` reads `s.path` in `path_entry`, and the tests "
                "use it. `tests/test_report.py` builds `Record` positionally (fine with a trailing "
                "default) and compares the rendered table character by character, so the new column "
                "will change `test_render_top_paths`. `tests/test_parse.py` has "
                "`test_query_string_kept_in_path`, which asserts the old behaviour.")

    yield User("Go ahead with the parser change and run the tests.")
    expect_in((yield from run("Splitting the target in `parse_line` and adding `Record.query`.",
                              patch_command(PARSE_EDITS))), "patched logstat/parse.py")
    result = (yield from run("Running the fast tests.", "python3 run_tests.py -v", code=1))
    expect_in(result, "3 failed", "test_query_string_kept_in_path", "test_top_paths_report", "test_csv_report")
    yield Reply("The parser change is in. Three tests fail, which is expected after a change of "
                "meaning: the old parse test and the two CLI goldens. The full details are in "
                "`test_output.txt`.")

    yield User("Show me exactly what failed.")
    details = (yield call("Reading the full failure report.", ("read_file", {"path": "test_output.txt"})))[0]
    expect_in(details, "1  /search              9 ")
    yield Reply("1. `test_query_string_kept_in_path` still expects `/search?q=shoes` as the path; it "
                "should now check `path == \"/search\"` and `query == \"q=shoes\"`.\n"
                "2. and 3. The CLI goldens `tests/fixtures/small_report.txt` and "
                "`tests/fixtures/small_top3.csv` predate the change: the nine `/search` requests now "
                "form one row at the top, which is the point of the change. I'll update the parse test "
                "and regenerate the goldens with the CLI, as NANOHERMES.md asks, once the report has "
                "its new column.")

    yield User("OK. Do that, and add the distinct-query count to the report.")
    expect_in((yield from run("Updating the parse test, adding `PathStats.queries` and the `queries` column, "
                              "and updating the report test.", patch_command(REPORT_EDITS))),
              "patched logstat/report.py")
    result = (yield from run("Regenerating the two CLI goldens and running the fast tests.",
                             "python3 -m logstat tests/fixtures/small.log --top 8 --status"
                             " > tests/fixtures/small_report.txt"
                             " && python3 -m logstat tests/fixtures/small.log --top 3 --csv"
                             " > tests/fixtures/small_top3.csv"
                             " && python3 run_tests.py"))
    fast = summary_line(result)
    expect_in(fast, " 0 failed")
    yield Reply(f"All fast tests pass ({fast}). `logstat/report.py` now counts distinct non-empty query "
                "strings per path and shows them in a `queries` column; `tests/test_parse.py` and "
                "`tests/test_report.py` are updated and both CLI goldens regenerated.")

    yield User("Before we trust this, check the sample log for odd request targets: empty queries, "
               "encoded characters, anything like that.")
    first = (yield call("Reading the sample log.", ("read_file", {"path": "samples/access.log"})))[0]
    expect_in(first, f"{ELLIPSIS} output truncated (")
    resume = last_line_shown(first)
    rest = (yield call(f"That read was cut at 20,000 bytes, in the middle of line {resume}; reading the rest "
                       f"from line {resume}.",
                       ("read_file", {"path": "samples/access.log", "offset": resume})))[0]
    total = last_line_shown(rest)
    expect_in(first + rest, "/search? ", "q=red+shoes", "&page=3", "q=rain%20coat")
    yield Reply(f"I've now seen all {total} lines. Odd targets: `/search?` with an empty query (now path "
                "`/search`, query empty, not counted as a distinct query), percent-encoded terms such as "
                "`q=rain%20coat`, a `+` in `q=red+shoes`, and extra parameters like `&page=3`, all kept "
                "as sent. No target has a second `?` or a `#` fragment, so splitting on the first `?` "
                "is safe.")

    yield User("Now run the full suite, slow tests included.")
    result = (yield from run("Running everything, one line per case.", "python3 run_tests.py --all -v", code=1))
    expect_in(result, "FAIL tests/slow/test_sample.py::test_sample_report_golden", " 1 failed")
    result = (yield from run("Only the sample-report golden fails, for the same reason as the small one; "
                             "regenerating it with the CLI and running the full suite again.",
                        "python3 -m logstat samples/access.log --top 12 --status > tests/fixtures/sample_report.txt"
                        " && python3 run_tests.py --all"))
    full = summary_line(result)
    expect_in(full, " 0 failed")
    yield Reply(f"Full suite green: {full}. The only failure was the golden "
                "`tests/fixtures/sample_report.txt`, now regenerated with the command the test runs.")

    yield User("Next is the JSON export. Read its contract first.")
    (yield call("Reading `docs/json-schema.md`.", ("read_file", {"path": "docs/json-schema.md"})))
    yield Reply("The contract defines `top_paths[].path` as the request target \"query string "
                "included\", and says a change of meaning needs a new `schema_version` and a "
                "CHANGELOG entry. So the plan is: `schema_version` 3, `path` becomes the bare path, "
                "a new `queries` field, and both documented.")

    yield User("Agreed, schema version 3. Make the change in `logstat/export.py`.")
    (yield call("Reading the exporter, its tests, and the CLI test that checks the JSON keys.",
                ("read_file", {"path": "logstat/export.py"}), ("read_file", {"path": "tests/test_export.py"}),
                ("read_file", {"path": "tests/test_cli.py"})))
    yield Reply("`path_entry` builds each element from `PathStats`, so `path` is already the bare path. "
                "I'll add `queries` next to it, set `SCHEMA_VERSION = 3`, and update "
                "`tests/test_export.py` (the entry test and the second-line check).")

    yield User("Continue.")
    expect_in((yield from run("Updating `logstat/export.py` and `tests/test_export.py`.",
                              patch_command(EXPORT_EDITS))), "patched logstat/export.py")
    result = (yield from run("Running the fast tests.", "python3 run_tests.py -v"))
    fast = summary_line(result)
    expect_in(fast, " 0 failed")
    yield Reply(f"Fast tests pass with schema version 3 ({fast}).")

    yield User("Finish up: the contract, the changelog, and a last full run.")
    expect_in((yield from run("Updating `docs/json-schema.md` for version 3 and adding a 0.5.0 entry to "
                              "`CHANGELOG.md`.", patch_command(DOC_EDITS))), "patched CHANGELOG.md")
    result = (yield from run("Last full run.", "python3 run_tests.py --all -v"))
    full = summary_line(result)
    expect_in(full, " 0 failed")
    yield Reply("Done. Paths are now counted without their query string.\n"
                "Changed: `logstat/parse.py` (`Record.query`, bare `path`), `logstat/report.py` "
                "(`PathStats.queries`, `queries` column), `logstat/export.py` (schema version 3, "
                "`queries` field), `docs/json-schema.md`, `CHANGELOG.md`; tests in "
                "`tests/test_parse.py`, `tests/test_report.py`, `tests/test_export.py`; goldens "
                "`tests/fixtures/small_report.txt`, `tests/fixtures/small_top3.csv`, "
                f"`tests/fixtures/sample_report.txt`.\nFull suite: {full}.")


# --------------------------------------------------------------------------- trap: pure chat

PASTES = (
    ("logstat/parse.py", "python",
     "Let's review logstat without tools today: I'll paste what matters and you answer. First, "
     "`logstat/parse.py`. Does it handle query strings sensibly?",
     "It stores the whole request target in `Record.path`, query string included, so "
     "`/search?q=a` and `/search?q=b` become two paths downstream. Splitting on the first `?` "
     "into `path` and `query` (a new field with a default, placed last) would fix that without "
     "breaking positional constructions. The regular expression itself is fine; note that a "
     "`-` size becomes 0, so `304` responses add nothing to the byte totals."),
    ("logstat/report.py", "python",
     "Here's `logstat/report.py`.",
     "Every counter in `path_stats` is keyed on `r.path`, so the report inherits whatever the "
     "parser puts there: fix the parser and the grouping follows. `top_paths` breaks ties by "
     "path, good for stable goldens. `human_bytes` has an unreachable `raise`; harmless. If you "
     "want to keep the query information, count distinct queries per path in `path_stats`."),
    ("logstat/export.py", "python",
     "And `logstat/export.py`.",
     "`path_entry` copies `s.path` into the JSON, so the exported `path` changes meaning if the "
     "parser strips the query. The module docstring says that needs a new `schema_version`; "
     "I'd bump it to 3 and add a `queries` field at the same time. `to_markdown` escapes `|` "
     "in paths; keep that, since a bare path can still contain one."),
    ("logstat/cli.py", "python",
     "The CLI, `logstat/cli.py`.",
     "Thin and fine. Two small points: `--top` is checked after parsing arguments, so a "
     "negative value gets a clean message; and reading the whole file with `read_text` keeps "
     "every line in memory, which will hurt on multi-gigabyte logs. Iterating over the open "
     "file would stream it."),
    ("tests/test_report.py", "python",
     "The report tests, `tests/test_report.py`.",
     "They build `Record` positionally, so a new field must go last with a default. "
     "`test_render_top_paths` compares the table character by character: any new column "
     "changes it, which is what you want from a golden, but regenerate rather than hand-edit."),
    ("docs/json-schema.md", "markdown",
     "This is the JSON contract, `docs/json-schema.md`.",
     "It states explicitly that `top_paths[].path` includes the query string, and that a change "
     "of meaning needs a new version. So stripping the query is a version 3 change: update the "
     "table, the examples (both still say version 2), the Versions table, and CHANGELOG.md."),
    ("samples/access.log", "text",
     "Here is an hour of traffic from the sample log, all of it. What stands out?",
     "More than a quarter of the requests are `/search` with different queries, including empty "
     "ones (`/search?`) and percent-encoded terms such as `rain%20coat`. `/api/v1/cart` POSTs "
     "are the single busiest target. Errors are rare: a handful of 404s and a few 500/503s, "
     "mostly on product and API paths. Static files answer 304 fairly often, logged with size "
     "`-`."),
)
EXTRA_HOURS = ((2, 404), (3, 211))  # (hour label, seed) of the extra pasted logs


def trap_pure_chat(root: Path) -> Story:
    """A long review where the user pastes files and logs: no tool call, so never a compaction."""
    for path, lang, ask, answer in PASTES:
        body = (root / path).read_text(encoding="utf-8").rstrip("\n")
        yield User(f"{ask}\n\n```{lang}\n{body}\n```")
        yield Reply(answer)
    for hour, seed in EXTRA_HOURS:
        log = subprocess.run(
            ["python3", "tools/make_log.py", "--lines", "200", "--seed", str(seed)],
            cwd=root, check=True, capture_output=True, text=True, encoding="utf-8",
        ).stdout.rstrip("\n")
        yield User(f"Hour {hour} of the same day, for comparison:\n\n```text\n{log}\n```")
        yield Reply(f"Hour {hour} looks like the first: search dominates, the cart API is "
                    "busy, errors stay in the low single digits per hundred requests. "
                    "Nothing here argues against grouping search by the bare path.")
    yield User("So what's the plan, in order?")
    yield Reply("1. `logstat/parse.py`: split the target into `path` and `query`.\n"
                "2. `logstat/report.py`: count distinct queries per path, add a column.\n"
                "3. Regenerate the goldens in `tests/fixtures/` with the CLI.\n"
                "4. `logstat/export.py`: schema version 3 with `queries`; update "
                "`docs/json-schema.md` and CHANGELOG.md.\n"
                "5. Run `python3 run_tests.py --all`.")


# --------------------------------------------------------------------------- trap: parallel tail

BATCH = ("logstat/__init__.py", "logstat/parse.py", "logstat/report.py", "logstat/export.py",
         "logstat/cli.py", "tests/support.py", "tests/test_parse.py", "tests/test_report.py",
         "tests/test_export.py", "tests/test_cli.py", "tests/slow/test_sample.py", "run_tests.py",
         "docs/json-schema.md", "README.md", "CHANGELOG.md", "tools/make_log.py", "tools/make_feedback.py")


def trap_parallel_tail(root: Path) -> Story:
    """Ends on one assistant message with 17 parallel reads: the last 10 messages are all tool results."""
    yield User("Audit logstat before the 0.5 release: list every place that assumes a request path "
               "never contains a `?`. Start with an overview of the Python files.")
    files = (yield call("Listing the Python files.", ("glob", {"pattern": "**/*.py"})))[0].splitlines()
    expect_in("\n".join(files), "logstat/parse.py", "run_tests.py")
    yield Reply(f"{len(files)} Python files: the package in `logstat/`, the tests in `tests/` (slow ones in "
                "`tests/slow/`), the runner, and two generators in `tools/`.")
    yield User("Run the whole suite verbosely first, so we have a baseline.")
    expect_in((yield from run("Running every test, one line per case.", "python3 run_tests.py --all -v")),
              " 0 failed")
    yield Reply("Baseline: everything passes.")
    yield User("Look at the sample log as well; I want to see real targets.")
    first = (yield call("Reading the sample log.", ("read_file", {"path": "samples/access.log"})))[0]
    expect_in(first, f"{ELLIPSIS} output truncated (")
    resume = last_line_shown(first)
    (yield call(f"Cut at 20,000 bytes; reading on from line {resume}.",
                ("read_file", {"path": "samples/access.log", "offset": resume})))
    yield Reply("Targets include `/search?q=...`, `/search?` with an empty query, and "
                "`/api/v1/stock?sku=...`.")
    yield User("Now read every module, test and doc in one go, and then give me the list.")
    (yield call("Reading all of them at once.", *[("read_file", {"path": p}) for p in BATCH]))


# --------------------------------------------------------------------------- trap: recent over budget

BIG_LOG_LINES = 1600
CHUNK = 200


def trap_recent_over_budget(root: Path) -> Story:
    """The last ten messages alone weigh more than the budget, so compaction cannot get under it."""
    yield User(f"I want to see how logstat copes with a bigger log. Make one with tools/make_log.py: "
               f"{BIG_LOG_LINES:,} lines into build/big.log.")
    (yield from run("Generating the log.",
                    f"mkdir -p build && python3 tools/make_log.py --lines {BIG_LOG_LINES} --seed 21 > build/big.log"))
    yield Reply(f"`build/big.log` now holds {BIG_LOG_LINES:,} synthetic requests.")
    yield User(f"Read the whole file, {CHUNK} lines at a time, all chunks at once.")
    offsets = range(1, BIG_LOG_LINES + 1, CHUNK)
    results = (yield call(f"Reading {len(offsets)} chunks of {CHUNK} lines in parallel.",
                          *[("read_file", {"path": "build/big.log", "offset": o, "limit": CHUNK}) for o in offsets]))
    for r in results:
        expect_in(r, f"{ELLIPSIS} output truncated (")
    shown = [last_line_shown(r) - o + 1 for r, o in zip(results, offsets, strict=False)]
    missing = 1 - sum(shown) / BIG_LOG_LINES
    yield Reply(f"Every chunk came back cut at 20,000 bytes: I saw only {min(shown)}–{max(shown)} of each "
                f"{CHUNK} lines, so about {missing:.0%} of the file is missing from what I read. Smaller chunks "
                "(about 100 lines) would fit under the cap; for counting, running the CLI is far cheaper "
                "than reading the log.")


# --------------------------------------------------------------------------- a summary that loses a path

def lost_path(root: Path) -> Story:
    """The edited file is named only in tool-call arguments, which the summary excerpt leaves out."""
    yield User("The default for --top should be 20, not 10: the weekly mail wants more rows. Please fix it.")
    expect_in((yield call("Let me look at the argument parser.", ("read_file", {"path": "logstat/cli.py"})))[0],
              "default=10")
    (yield from run("The default is set in `build_parser`; changing it and the help text.",
                    patch_command([("logstat/cli.py", 'default=10, metavar="N", help="paths to show (default 10)"',
                                    'default=20, metavar="N", help="paths to show (default 20)"')], quiet=True)))
    expect_in((yield from run("Running the tests.", "python3 run_tests.py")), " 0 failed")
    yield Reply("Done: the default is now 20 and the help text says so. All tests pass.")
    yield User("Does the README mention the old default?")
    expect_in((yield call("Checking the readme.", ("read_file", {"path": "README.md"})))[0], "(default 10)")
    yield Reply("Yes, the options list says `--top N` shows 10 paths by default. I'll update that line.")
    yield User("Yes please.")
    (yield from run("Updating the options list.",
                    patch_command([("README.md", "how many paths to show (default 10).",
                                    "how many paths to show (default 20).")], quiet=True)))
    expect_in((yield from run("Running the tests again.", "python3 run_tests.py")), " 0 failed")
    yield Reply("Updated; tests still pass.")


# --------------------------------------------------------------------------- Chinese session

FEEDBACK = "feedback/2026-h2.txt"
FEEDBACK_COUNT = 480
FEEDBACK_CHUNK = 60


def feedback_counts(text: str) -> tuple[Counter, int]:
    """Items per topic (the 【...】 label) and the number of urgent ones."""
    topics: Counter = Counter()
    urgent = 0
    for line in text.splitlines():
        m = re.search(r"【(.+?)】", line)
        if m:
            topics[m.group(1)] += 1
        urgent += line.endswith("紧急程度：高")
    return topics, urgent


def chinese_session(root: Path) -> Story:
    """A triage of synthetic Chinese feedback: about 3 bytes per character in the tool results."""
    yield User("下半年的用户反馈导出脚本是 tools/make_feedback.py（数据是合成的）。请先用 "
               f"`python3 tools/make_feedback.py --count {FEEDBACK_COUNT} > {FEEDBACK}` 生成文件，然后通读一遍，"
               "按问题类型归类：哪三类最多、各有多少条，紧急程度为「高」的一共有多少条。")
    (yield from run("好的，先生成反馈文件。",
                    f"mkdir -p feedback && python3 tools/make_feedback.py --count {FEEDBACK_COUNT} > {FEEDBACK}"))
    first = (yield call("读取整个文件。", ("read_file", {"path": FEEDBACK})))[0]
    expect_in(first, f"{ELLIPSIS} output truncated (")
    start = last_line_shown(first)
    say = (f"结果在 20,000 字节处被截断了（提示里写的是 chars，实际是字节数）。一个汉字占 3 个字节，"
           f"所以只看到了前 {start - 1} 行多一点。改为从第 {start} 行起每次读 {FEEDBACK_CHUNK} 行。")
    while start <= FEEDBACK_COUNT:
        chunk = (yield call(say, ("read_file", {"path": FEEDBACK, "offset": start, "limit": FEEDBACK_CHUNK})))[0]
        if "output truncated" in chunk:
            raise BuildError(f"chunk at line {start} was clamped; lower FEEDBACK_CHUNK")
        start += FEEDBACK_CHUNK
        say = f"继续读第 {start} 行起的 {FEEDBACK_CHUNK} 行。"
    text = (root / FEEDBACK).read_text(encoding="utf-8")
    topics, urgent = feedback_counts(text)
    top3 = sorted(topics.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    lines = "\n".join(f"{k}. 【{name}】{n} 条" for k, (name, n) in enumerate(top3, start=1))
    yield Reply(f"已经读完全部 {FEEDBACK_COUNT} 条，共 {len(topics)} 类问题。数量最多的三类：\n{lines}\n"
                f"紧急程度为「高」的一共 {urgent} 条。搜索统计和 JSON 导出这两类，正好对应我们正在做的"
                "「按去掉查询字符串的路径统计」和 schema 版本 3 的改动。")
    yield User("好的。把「搜索统计」和「JSON 导出」两类的条目编号列出来，我要转给开发。")
    wanted = ("搜索统计", "JSON 导出")
    results = (yield call("两类分别用 grep 找出来。",
                          *[("grep", {"pattern": f"【{name}】", "path": FEEDBACK}) for name in wanted]))
    by_topic = {}
    for name, rows in zip(wanted, results, strict=False):
        if "output truncated" in rows:
            raise BuildError(f"grep for {name} was clamped")
        by_topic[name] = re.findall(r": #(\d{4})｜", rows)
        if len(by_topic[name]) != topics[name]:
            raise BuildError(f"grep found {len(by_topic[name])} items of {name}, expected {topics[name]}")
    yield Reply("\n".join(f"【{name}】{len(ids)} 条：" + "、".join(f"#{n}" for n in ids)
                for name, ids in by_topic.items()))


# --------------------------------------------------------------------------- the article's numbers

ARTICLE = {
    "title": "Agent 上下文：留什么，丢什么 (Agent context: what to keep, what to drop)",
    "date": "2026-10-22",
    "file": "shared/seed/000_ef691a67fd9e8f02.txt",
}

# turn, messages, serialized size, action, compacted, size after (the article marks them illustrative)
ARTICLE_LEDGER = (
    (1, 3, 4_000, "read one file", False, 4_000),
    (2, 6, 12_000, "read two files", False, 12_000),
    (3, 10, 26_000, "grep and read a file", False, 26_000),
    (4, 14, 38_000, "edit and run the tests", False, 38_000),
    (5, 20, 52_000, "read the test output", False, 52_000),
    (6, 24, 64_000, "make another change", False, 64_000),
    (7, 30, 78_000, "read a large file (clamped at 20k)", False, 78_000),
    (8, 36, 96_000, "run the full test suite", False, 96_000),
    (9, 42, 118_000, "read another file", False, 118_000),
    (10, 48, 132_000, "over 120k: compaction fires", True, 32_000),
    (11, 54, 46_000, "continue the change", False, 46_000),
    (12, 60, 60_000, "finish", False, 60_000),
)
LEDGER_COLUMNS = ("turn", "messages", "size", "action", "compacted", "size_after")


def article_ledger() -> list[dict[str, Any]]:
    """The article's illustrative twelve-turn ledger, one dict per turn."""
    return [dict(zip(LEDGER_COLUMNS, row, strict=True)) for row in ARTICLE_LEDGER]


def _cap(layer: str, limit: str, values: dict[str, int], unit: str, where: str, over: str) -> dict[str, Any]:
    return {"layer": layer, "limit": limit, "values": values, "unit": unit, "where": where, "over_the_cap": over}


def article_facts() -> dict[str, Any]:
    """The article's other numeric tables, as data (numbers from the article, wording ours)."""
    return {
        "source": ARTICLE,
        "notes": [
            "Numbers are the article's; descriptions are paraphrased in English.",
            "The article says 'characters' for caps that the Rust code measures with String::len(), "
            "which counts UTF-8 bytes; 'unit' below gives what the code really counts (SPEC section 1).",
            "Ranges are [low, high]; shares are fractions of the 120,000 session budget.",
            "Two figures disagree with the article's own arithmetic and are kept as printed: "
            "messages_per_turn gives 7 for a turn with 5 tool calls, but its own count "
            "(user + assistant + 5 tool + assistant) is 8; and the clamp table keeps 20,000 bytes "
            "of pure Chinese text, which cannot end on a character boundary (3 bytes each): it is "
            "19,998, the third row's case.",
            "The 12-turn metrics are kept as stated; arithmetic_slips puts three of them next to what "
            "the article's own ledger (article_ledger.csv) adds up to.",
        ],
        "caps": [
            _cap("read_file", "4 MB per file; 2,000 lines per call by default",
                 {"max_file_bytes": 4_194_304, "read_max_lines": 2_000}, "bytes / lines",
                 "fs::MAX_FILE_BYTES", "refuse a big file and suggest offset/limit chunks; stop at the line cap"),
            _cap("grep", "1 MB per file, 200 matches, 240 characters per line",
                 {"grep_max_file_bytes": 1_048_576, "grep_max_matches": 200, "grep_max_line_chars": 240},
                 "bytes / matches / chars", "search.rs", "skip big files; stop at the match cap"),
            _cap("glob", "500 files", {"glob_max_paths": 500}, "paths", "search.rs", "cut and say 'capped'"),
            _cap("every tool result", "20,000 bytes", {"max_output": 20_000}, "bytes",
                 "Ctx.max_output + clamp", "cut and say how much was omitted"),
            _cap("run_command capture", "256 KB each for stdout and stderr", {"command_capture_bytes": 262_144},
                 "bytes", "shell::CAPTURE_BYTES", "keep reading, discard the excess"),
            _cap("background task", "512 KB", {"task_capture_bytes": 524_288}, "bytes",
                 "tasks::CAPTURE_BYTES", "keep the first 512 KB, note the omission"),
            _cap("web_fetch: response", "2 MB", {"web_max_response_bytes": 2_097_152}, "bytes",
                 "web::MAX_RESPONSE_BYTES", "cut the body, still extract text"),
            _cap("web_fetch: text", "20,000 characters by default", {"web_max_chars": 20_000}, "chars",
                 "web_fetch.max_chars", "cut and note"),
            _cap("project docs (AGENTS.md chain)", "20,000 characters", {"max_project_docs": 20_000}, "bytes",
                 "prompt::MAX_PROJECT_DOCS", "cut and note"),
            _cap("skill body", "20,000 characters", {"skill_max_body_chars": 20_000}, "chars",
                 "skills::MAX_BODY_CHARS", "cut and note"),
            _cap("memory injection", "2,400 characters, at most 4 entries",
                 {"memory_inject_char_budget": 2_400, "memory_inject_top_k": 4}, "chars",
                 "memory::INJECT_*", "entries that do not fit are not injected"),
            _cap("memory store", "500 entries of at most 400 characters",
                 {"memory_max_entries": 500, "memory_max_text_chars": 400}, "entries / chars",
                 "memory::MAX_TEXT", "cut an entry on write; evict beyond the store cap"),
            _cap("session", "120,000 characters", {"context_char_budget": 120_000}, "bytes of compact JSON",
                 "CONTEXT_CHAR_BUDGET", "summarise the older messages"),
        ],
        "compaction": {"context_char_budget": 120_000, "keep_recent": 10, "summary_max_words": 300,
                       "min_messages": 12, "note": "compaction needs size > 120,000 and more than 11 messages "
                                                   "unless forced; the cut never lands on a tool message"},
        "request_parts": [
            {"part": "system prompt", "source": "prompt::system_prompt", "size": "fixed, about 30 lines",
             "max": None, "changes": "at start-up or on a config change"},
            {"part": "project conventions", "source": "AGENTS.md chain", "size": "at most 20,000 characters",
             "max": 20_000, "changes": "when the files change"},
            {"part": "project context", "source": "NANOHERMES.md", "size": "no cap of its own",
             "max": None, "changes": "when the file changes"},
            {"part": "skills listing", "source": "skills::listing", "size": "one line per skill",
             "max": None, "changes": "at start-up"},
            {"part": "memory block", "source": "memory::render_block", "size": "at most 2,400 characters",
             "max": 2_400, "changes": "re-retrieved every turn"},
            {"part": "conversation", "source": "user / assistant / tool messages", "size": "grows every turn",
             "max": None, "changes": "every turn"},
            {"part": "compaction summary", "source": "summarize_messages", "size": "at most 300 words",
             "max": None, "changes": "when over budget"},
        ],
        "request_shares": [
            {"content": "system prompt + project conventions", "size": [2_000, 22_000], "share": [0.02, 0.18]},
            {"content": "memory block", "size": [0, 2_400], "share": [0.0, 0.02]},
            {"content": "an ordinary tool result", "size": [200, 2_000], "share": [0.002, 0.017]},
            {"content": "a clamped tool result", "size": [20_000, 20_000], "share": [0.17, 0.17]},
            {"content": "the last 10 messages", "size": [5_000, 40_000], "share": [0.04, 0.33]},
            {"content": "compaction summary", "size": [1_500, 2_500], "share": [0.01, 0.02]},
        ],
        "one_tool_result": {
            "example": {"lines": 2_000, "chars_per_line": 80, "raw_chars": 160_000, "clamped_bytes": 20_000,
                        "json_growth": 0.03, "serialized": 20_600, "share": 0.17, "five_reads_share": 0.85,
                        "five_reads_bytes": 100_000},
            "rows": [
                {"scenario": "read a 200-line file", "raw": 16_000, "returned": 16_000, "share": 0.13},
                {"scenario": "read a 2,000-line file", "raw": 160_000, "returned": 20_000, "share": 0.17},
                {"scenario": "grep the whole repository, 200 matches", "raw": 48_000, "returned": 20_000,
                 "share": 0.17},
                {"scenario": "git diff of a large change", "raw": 500_000, "returned": 20_000, "share": 0.17},
                {"scenario": "web_fetch of an article", "raw": 2_097_152, "returned": 20_000, "share": 0.17},
            ],
        },
        "json_inflation": {
            "rows": [
                {"content": "1,000-line log", "raw_chars": 50_000, "serialized": 52_000, "growth": 0.04},
                {"content": "2,000-line code", "raw_chars": 80_000, "serialized": 84_000, "growth": 0.05},
                {"content": "quote-heavy JSON", "raw_chars": 20_000, "serialized": 24_000, "growth": 0.20},
            ],
            "newline_heavy_growth": [0.05, 0.10],
        },
        "chars_per_token": [
            {"text": "English prose", "chars_per_token": [4, 4], "tokens_for_120k": [30_000, 30_000]},
            {"text": "source code", "chars_per_token": [3, 3.5], "tokens_for_120k": [34_000, 40_000]},
            {"text": "Chinese", "chars_per_token": [1, 1.5], "tokens_for_120k": [80_000, 120_000]},
            {"text": "mixed Chinese/English with code", "chars_per_token": [2, 3],
             "tokens_for_120k": [40_000, 60_000]},
        ],
        "clamp": [
            {"input": "pure ASCII", "input_bytes": 30_000, "input_chars": 30_000, "cap": 20_000,
             "kept_bytes": 20_000, "kept_chars": 20_000, "output": "first 20,000 bytes + note"},
            {"input": "Chinese", "input_bytes": 30_000, "input_chars": 10_000, "cap": 20_000,
             "kept_bytes": 20_000, "kept_chars": 6_666, "output": "first 20,000 bytes + note"},
            {"input": "cap falls inside a Chinese character", "input_bytes": None, "input_chars": None,
             "cap": 20_000, "kept_bytes": 19_998, "kept_chars": None,
             "output": "cut moves back to 19,998 bytes: valid UTF-8"},
        ],
        "messages_per_turn": [
            {"turn": "question + plain text answer", "messages": 2, "count": "user + assistant"},
            {"turn": "question + 1 tool call + summary", "messages": 4, "count": "user + assistant + tool + assistant"},
            {"turn": "question + 5 tool calls + summary", "messages": 7,
             "count": "user + assistant + 5 tool + assistant"},
            {"turn": "question + 3 rounds of 2 tool calls", "messages": 11, "count": "1 + 3 × (1 + 2) + 1"},
        ],
        "summary_length": [
            {"words": 100, "chars": [500, 800], "share": [0.0, 0.01], "use": "short tasks"},
            {"words": 300, "chars": [1_500, 2_500], "share": [0.01, 0.02], "use": "the default"},
            {"words": 1_000, "chars": [5_000, 8_000], "share": [0.04, 0.07],
             "use": "long tasks, but it crowds out recent messages"},
        ],
        "twelve_turn_metrics": {
            "illustrative": True,
            "peak_request": 132_000,
            "compactions": 1,
            "size_after_compaction": 32_000,
            "cumulative_input": 700_000,
            "first_nine_turns_average": 60_000,
            "first_nine_turns_input": 540_000,
            "saving_per_later_turn": 100_000,
            "compaction_turn": 10,
        },
        "arithmetic_slips": _ledger_slips(),
    }


def _ledger_slips() -> list[dict[str, Any]]:
    """The 12-turn metrics the article states next to what its own ledger adds up to (sums computed here)."""
    sizes = [row[2] for row in ARTICLE_LEDGER]
    after = [row[5] for row in ARTICLE_LEDGER]
    nine = sum(sizes[:9])
    return [
        {"figure": "first_nine_turns_input", "stated": 540_000, "computed": nine,
         "how": "sum of the size column, turns 1-9"},
        {"figure": "first_nine_turns_average", "stated": 60_000, "computed": round(nine / 9),
         "how": "mean of the size column, turns 1-9 (the stated 540,000 is 9 x this stated 60,000)"},
        {"figure": "cumulative_input", "stated": 700_000, "computed": sum(sizes),
         "how": "sum of the size column, turns 1-12; with turn 10 at its size after compaction: "
                f"{sum(sizes[:9]) + sum(after[9:]):,}"},
    ]


# --------------------------------------------------------------------------- files

SESSIONS = {
    "data/sessions/twelve_turns.json": session_of(twelve_turns),
    "data/sessions/trap_pure_chat.json": session_of(trap_pure_chat),
    "data/sessions/trap_parallel_tail.json": session_of(trap_parallel_tail, ends_on_tools=True),
    "data/sessions/trap_recent_over_budget.json": session_of(trap_recent_over_budget),
    "data/sessions/trap_lost_path.json": session_of(lost_path),
    "data/sessions/chinese_session.json": session_of(chinese_session),
}
REPO = DATA.parent


def build_all() -> dict[str, Any]:
    """Every generated file as an object, keyed by its path relative to the repository."""
    out: dict[str, Any] = {rel: make() for rel, make in SESSIONS.items()}
    out["data/article_ledger.csv"] = article_ledger()
    out["data/article_facts.json"] = article_facts()
    return out


def render(rel: str, obj: Any) -> str:
    """The exact text written for ``rel``: indented JSON, or CSV with a header row."""
    if rel.endswith(".json"):
        return json.dumps(obj, ensure_ascii=False, indent=1) + "\n"
    if rel.endswith(".csv"):
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(obj[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(obj)
        return buf.getvalue()
    raise ValueError(f"no renderer for {rel}")


def stale(files: dict[str, Any]) -> list[str]:
    """The files whose committed text differs from what would be written."""
    out = []
    for rel, obj in files.items():
        path = REPO / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != render(rel, obj):
            out.append(rel)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Build the generated files of data/.")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file would change")
    args = p.parse_args(argv)
    files = build_all()
    if args.check:
        changed = stale(files)
        for rel in changed:
            print(f"differs: {rel}")
        return 1 if changed else 0
    for rel, obj in files.items():
        path = REPO / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(render(rel, obj))
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
