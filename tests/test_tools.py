"""The capped tools: every cap at its limit and one past it, with its exact note."""

from __future__ import annotations

import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from clocks import FakeClock, wait_until
from servers import POLL_SECONDS

from nanohermes_nb.agent.tools.toolbox import (
    TOOL_NAMES,
    TOOL_SPECS,
    ToolError,
    Tools,
    html_to_text,
    tool_specs,
)
from nanohermes_nb.context.budgets import DEFAULT_BUDGETS, Budgets

E = "\u2026"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def tools(ws: Path, **caps: int) -> Tools:
    return Tools(ws, DEFAULT_BUDGETS.replace(**caps) if caps else DEFAULT_BUDGETS)


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --------------------------------------------------------------------------- read_file


def test_read_file_numbers_lines_from_one(ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\nbeta\r\ngamma\n")
    assert tools(ws).run("read_file", {"path": "a.txt"}) == "1\u2192alpha\n2\u2192beta\n3\u2192gamma"


def test_read_file_line_cap_at_and_past(ws: Path) -> None:
    t = tools(ws, read_max_lines=3)
    (ws / "three.txt").write_text("a\nb\nc\n")
    (ws / "four.txt").write_text("a\nb\nc\nd\n")
    assert t.run("read_file", {"path": "three.txt"}) == "1\u2192a\n2\u2192b\n3\u2192c"
    assert t.run("read_file", {"path": "four.txt"}) == f"1\u2192a\n2\u2192b\n3\u2192c\n{E} 1 more lines (total 4)"
    # an explicit limit never exceeds the per-call cap
    assert t.run("read_file", {"path": "four.txt", "limit": 10}) == t.run("read_file", {"path": "four.txt"})


def test_read_file_offset_and_limit(ws: Path) -> None:
    (ws / "ten.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    t = tools(ws)
    assert t.run("read_file", {"path": "ten.txt", "offset": 4, "limit": 2}) == (
        f"4\u2192line4\n5\u2192line5\n{E} 5 more lines (total 10)")
    assert t.run("read_file", {"path": "ten.txt", "offset": 9}) == "9\u2192line9\n10\u2192line10"
    assert "past the end" in t.run("read_file", {"path": "ten.txt", "offset": 11})
    assert t.run("read_file", {"path": "ten.txt", "offset": 0}).startswith("error: offset must be >= 1")


def test_read_file_size_cap_tuned_at_and_past(ws: Path) -> None:
    t = tools(ws, max_file_bytes=10)
    (ws / "ok.txt").write_bytes(b"123456789\n")
    (ws / "big.txt").write_bytes(b"1234567890\n")
    assert t.run("read_file", {"path": "ok.txt"}) == "1\u2192123456789"
    assert t.dispatch("read_file", {"path": "big.txt"}) == (
        "big.txt is 11 bytes (> 10); read it in chunks with offset/limit")


def test_read_file_default_cap_4_mib(ws: Path) -> None:
    (ws / "d").mkdir()
    with open(ws / "d" / "huge.bin", "wb") as f:
        f.truncate(4_194_304 + 1)  # sparse: instant to create
    with open(ws / "d" / "exact.bin", "wb") as f:
        f.truncate(4_194_304)
    t = tools(ws)
    assert t.dispatch("read_file", {"path": "./d/huge.bin"}) == (
        "./d/huge.bin is 4194305 bytes (> 4194304); read it in chunks with offset/limit")
    exact = t.dispatch("read_file", {"path": "d/exact.bin"})
    assert exact.startswith("1\u2192\x00")
    assert exact.endswith(f"{E} output truncated ({4_194_304 + 4 - 20_000} chars omitted)")


def test_read_file_any_encoding_never_crashes(ws: Path) -> None:
    (ws / "latin1.txt").write_bytes("caf\u00e9 na\u00efve\n".encode("latin-1"))
    (ws / "utf16.txt").write_bytes("h\u00e9llo\nw\u00f6rld\n".encode("utf-16"))
    (ws / "gbk.txt").write_bytes("中文\n".encode("gbk"))
    t = tools(ws)
    assert t.run("read_file", {"path": "latin1.txt"}) == "1\u2192caf\ufffd na\ufffdve"
    assert t.run("read_file", {"path": "utf16.txt"}) == "1\u2192h\u00e9llo\n2\u2192w\u00f6rld"
    assert t.run("read_file", {"path": "gbk.txt"}).startswith("1\u2192\ufffd")


# --------------------------------------------------------------------------- paths


def test_paths_outside_the_workspace_are_refused(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password = hunter2\n")
    (ws / "escape").symlink_to(secret)
    (ws / "outdir").symlink_to(tmp_path)
    (ws / "inside.txt").write_text("fine\n")
    (ws / "alias").symlink_to(ws / "inside.txt")
    t = tools(ws)
    for path in ("escape", "outdir/secret.txt", "../secret.txt", str(secret), "sub/../../secret.txt"):
        out = t.dispatch("read_file", {"path": path})
        assert out.startswith("error:"), path
        assert "hunter2" not in out
    assert "leaves the workspace" in t.run("read_file", {"path": "escape"})
    assert "absolute" in t.run("read_file", {"path": str(secret)})
    assert t.run("read_file", {"path": "alias"}) == "1\u2192fine"  # a link that stays inside is fine
    assert t.run("grep", {"pattern": "hunter2"}) == "no matches for 'hunter2'"
    assert t.run("grep", {"pattern": "x", "path": "../"}).startswith("error:")
    assert t.run("glob", {"pattern": "../*"}).startswith("error:")
    assert "secret" not in t.run("glob", {"pattern": "**/*"})


# --------------------------------------------------------------------------- grep


def test_grep_rows_sorted_relative(ws: Path) -> None:
    (ws / "b").mkdir()
    (ws / "b" / "z.py").write_text("x = 1\ntodo: fix\n")
    (ws / "a.py").write_text("TODO upper\ntodo lower\n")
    assert tools(ws).run("grep", {"pattern": "todo"}) == "a.py:2: todo lower\nb/z.py:2: todo: fix"
    assert tools(ws).run("grep", {"pattern": "(?i)todo", "path": "b"}) == "b/z.py:2: todo: fix"


def test_grep_skips_binary_big_and_git(ws: Path) -> None:
    t = tools(ws, grep_max_file_bytes=100)
    (ws / "fits.txt").write_bytes(b"needle" + b"." * 93 + b"\n")  # exactly 100 bytes
    (ws / "over.txt").write_bytes(b"needle" + b"." * 94 + b"\n")  # 101 bytes
    (ws / "bin.dat").write_bytes(b"needle\x00\x01\x02")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("needle\n")
    assert t.run("grep", {"pattern": "needle"}) == "fits.txt:1: needle" + "." * 93


def test_grep_line_width_cap(ws: Path) -> None:
    t = tools(ws, grep_max_line_chars=10)
    (ws / "w.txt").write_text("k123456789\nk1234567890\n")
    assert t.run("grep", {"pattern": "k"}) == f"w.txt:1: k123456789\nw.txt:2: k123456789{E}"


def test_grep_match_cap_at_and_past(ws: Path) -> None:
    t = tools(ws, grep_max_matches=3)
    (ws / "three.txt").write_text("m\nm\nm\n")
    assert t.run("grep", {"pattern": "m"}) == "three.txt:1: m\nthree.txt:2: m\nthree.txt:3: m"
    (ws / "two.txt").write_text("m\n")
    assert t.run("grep", {"pattern": "m"}) == (
        f"three.txt:1: m\nthree.txt:2: m\nthree.txt:3: m\n{E} stopped after 3 matches")


def test_grep_default_match_cap_note(ws: Path) -> None:
    (ws / "many.txt").write_text("hit\n" * 201)
    out = tools(ws).run("grep", {"pattern": "hit"})
    assert out.count("\n") == 200 and out.endswith(f"many.txt:200: hit\n{E} stopped after 200 matches")


@pytest.mark.parametrize("pattern, line", [
    ("(a+)+$", "a" * 30 + "!"),  # the pattern: exponential in a backtracking engine
    ("(a+)+$", "a" * 100_000 + "!"),
    ("(a|aa)+$", "a" * 50_000 + "!"),
    ("(.*a){20}", "a" * 5_000),
    ("^(\\w+\\s?)*$", "word " * 5_000 + "!"),
])
@pytest.mark.timeout(30)  # the hang guard: linear time, where a backtracking engine takes years on these
def test_grep_has_no_catastrophic_pattern(ws: Path, pattern: str, line: str) -> None:
    (ws / "evil.txt").write_text(line + "\n" + "a\n")
    out = tools(ws).run("grep", {"pattern": pattern})
    assert out.startswith("evil.txt:") or out.startswith("no matches")


@pytest.mark.parametrize("pattern, why", [
    ("(a)\\1", "invalid escape sequence: \\1"),  # a backreference
    ("foo(?=bar)", "invalid perl operator: (?="),  # look-ahead
    ("(?<!x)y", "invalid perl operator: (?<"),  # look-behind
    ("a{1001}", "invalid repetition size: {1001}"),  # RE2 caps counted repetition at 1000
])
def test_grep_refuses_what_a_linear_engine_cannot_do(ws: Path, pattern: str, why: str) -> None:
    (ws / "a.txt").write_text("foobar\n")
    out = tools(ws).run("grep", {"pattern": pattern})
    assert out.startswith(f"error: invalid regular expression {pattern!r}: {why}")
    assert "no backreferences, no look-around" in out and "\n" not in out


@pytest.mark.timeout(30)  # the hang guard: a backtracking matcher takes years on this name
def test_glob_has_no_catastrophic_pattern(ws: Path) -> None:
    (ws / ("a" * 200)).write_text("")
    out = tools(ws).run("glob", {"pattern": "*a*a*a*a*a*a*a*a*a*a*a*a*b"})
    assert out.startswith("no files match")
    assert tools(ws).run("glob", {"pattern": "**/**/**/*a"}) == "a" * 200


def test_grep_invalid_regex_is_error_text(ws: Path) -> None:
    out = tools(ws).dispatch("grep", {"pattern": "(unclosed"})
    assert out.startswith("error: invalid regular expression")


# --------------------------------------------------------------------------- glob


def test_glob_sorted_relative_and_capped(ws: Path) -> None:
    (ws / "src" / "pkg").mkdir(parents=True)
    for name in ("src/b.py", "src/a.py", "src/pkg/c.py", "top.py", "notes.md"):
        (ws / name).write_text("")
    (ws / ".git").mkdir()
    (ws / ".git" / "hook.py").write_text("")
    t = tools(ws, glob_max_paths=4)
    assert t.run("glob", {"pattern": "**/*.py"}) == "src/a.py\nsrc/b.py\nsrc/pkg/c.py\ntop.py"
    assert t.run("glob", {"pattern": "*.py"}) == "top.py"
    assert t.run("glob", {"pattern": "src/*.py"}) == "src/a.py\nsrc/b.py"
    assert t.run("glob", {"pattern": "**/*"}) == f"notes.md\nsrc/a.py\nsrc/b.py\nsrc/pkg/c.py\n{E} capped at 4 files"
    assert t.run("glob", {"pattern": "*.rs"}).startswith("no files match")


def test_glob_default_cap_note(ws: Path) -> None:
    for i in range(501):
        (ws / f"f{i:03}.txt").write_text("")
    out = tools(ws).run("glob", {"pattern": "*.txt"})
    assert out.splitlines()[-2:] == ["f499.txt", f"{E} capped at 500 files"]


# --------------------------------------------------------------------------- run_command


def py(code: str) -> str:
    return f"{sys.executable} -c '{code}'"


def test_run_command_layout(ws: Path) -> None:
    out = tools(ws).run("run_command", {"command": "echo out; echo err >&2; exit 3"})
    assert out == "exit code: 3\nout\n[stderr]\nerr"
    assert tools(ws).run("run_command", {"command": "true"}) == "exit code: 0"
    (ws / "here.txt").write_text("")
    assert "here.txt" in tools(ws).run("run_command", {"command": "ls"})  # runs in the workspace


def test_run_command_capture_caps_at_and_past(ws: Path) -> None:
    t = tools(ws, command_capture_bytes=100)
    at = t.run("run_command", {"command": py("import sys; sys.stdout.write(\"a\"*100); sys.stderr.write(\"b\"*100)")})
    assert at == "exit code: 0\n" + "a" * 100 + "\n[stderr]\n" + "b" * 100
    past = t.run("run_command", {"command": py("import sys; sys.stdout.write(\"a\"*101); sys.stderr.write(\"b\"*102)")})
    assert past == ("exit code: 0\n" + "a" * 100 + f"\n{E} stdout truncated (1 bytes not shown)"
                    + "\n[stderr]\n" + "b" * 100 + f"\n{E} stderr truncated (2 bytes not shown)")


@pytest.mark.timeout(60)
def test_run_command_drains_50_mb_promptly(ws: Path) -> None:
    command = ("head -c 50000000 /dev/zero | tr '\\0' a; "
               "head -c 20000000 /dev/zero | tr '\\0' b >&2; echo done > finished.txt")
    out = tools(ws).run("run_command", {"command": command, "timeout": 30})
    assert out.startswith("exit code: 0\n")  # not "timed out": the pipes were drained while the child wrote
    assert f"{E} stdout truncated ({50_000_000 - 262_144} bytes not shown)" in out
    assert out.endswith(f"{E} stderr truncated ({20_000_000 - 262_144} bytes not shown)")
    assert (ws / "finished.txt").read_text() == "done\n"  # the child was never blocked


@pytest.mark.timeout(25)  # the hang guard: under the commands' 30 s, so waiting for them fails
def test_run_command_timeout_kills_grandchildren(ws: Path) -> None:
    command = "sleep 30 & echo $! > grandchild.pid; sleep 30"
    out = tools(ws).run("run_command", {"command": command, "timeout": 1})
    assert out.startswith("timed out after 1s; process group killed")
    assert _dies(int((ws / "grandchild.pid").read_text()))


@pytest.mark.timeout(25)
def test_run_command_background_child_holding_the_pipe(ws: Path) -> None:
    out = tools(ws).run("run_command", {"command": "sleep 30 & echo $! > bg.pid; echo started", "timeout": 10})
    # the shell's own answer, not "timed out after 10s": the call returns when the shell does
    assert out == "exit code: 0\nbackground processes still running when the command ended were killed (1)\nstarted"
    assert _dies(int((ws / "bg.pid").read_text()))


def _dies(pid: int, within: float = 3.0) -> bool:
    return wait_until(lambda: not alive(pid), within)


@pytest.mark.parametrize("command", [
    "(sleep 300 >/dev/null 2>&1 & echo $! > bg.pid)",  # the case: a detached subshell child
    "setsid sh -c 'echo $$ > bg.pid; exec sleep 300' >/dev/null 2>&1 &",  # left the process group
    "nohup sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; disown",
    py("import os, time; os.fork() and os._exit(0); os.setsid(); os.fork() and os._exit(0); "
       "open(\"bg.pid\", \"w\").write(str(os.getpid())); os.close(1); os.close(2); time.sleep(300)"),
])
def test_run_command_leaves_nothing_running(ws: Path, command: str) -> None:
    wait_for_pid = "\nwhile [ ! -s bg.pid ]; do sleep 0.01; done"  # the shell ends once the child is set up
    out = tools(ws).run("run_command", {"command": command + wait_for_pid, "timeout": 10})
    assert out.startswith("exit code: 0"), out
    wait_until((ws / "bg.pid").exists, 3)
    pid = int((ws / "bg.pid").read_text())
    assert _dies(pid), f"pid {pid} survived {command!r}"


def test_run_command_without_leftovers_says_nothing_more(ws: Path) -> None:
    assert tools(ws).run("run_command", {"command": "sleep 0.1; echo done"}) == "exit code: 0\ndone"


# --------------------------------------------------------------------------- background tasks


def test_task_capture_at_and_past(ws: Path) -> None:
    with tools(ws, task_capture_bytes=100) as t:
        assert t.run("start_task", {"command": py("print(\"x\"*99)")}).startswith("started task t1")
        assert t.run("start_task", {"command": py("print(\"y\"*149)")}).startswith("started task t2")
        for task in t.tasks.values():
            task.proc.wait(timeout=10)
        assert t.run("task_output", {"id": "t1"}) == "task t1: exited (code 0)\n" + "x" * 99
        assert t.run("task_output", {"id": "t2"}) == (
            "task t2: exited (code 0)\n" + "y" * 100 + f"\n{E} output truncated (50 bytes not shown)")


def test_task_running_then_exit_code_and_close(ws: Path) -> None:
    t = tools(ws)
    t.run("start_task", {"command": "echo begin; exit 4"})
    t.run("start_task", {"command": "echo waiting; sleep 30 & echo $! > bg.pid; sleep 30"})
    t.tasks["t1"].proc.wait(timeout=10)
    assert t.run("task_output", {"id": "t1"}) == "task t1: exited (code 4)\nbegin"
    wait_until((ws / "bg.pid").exists, 5)
    assert t.run("task_output", {"id": "t2"}).startswith("task t2: running")
    assert t.run("task_output", {"id": "t9"}).startswith("error: no task 't9'")
    t.close()
    assert t.run("task_output", {"id": "t2"}).startswith("task t2: killed (signal 9)")
    assert _dies(int((ws / "bg.pid").read_text()))


def test_a_finished_task_leaves_nothing_running(ws: Path) -> None:
    with tools(ws) as t:
        t.run("start_task", {"command": "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo bye"})
        t.tasks["t1"].proc.wait(timeout=10)
        assert _dies(int((ws / "bg.pid").read_text()))
        assert t.run("task_output", {"id": "t1"}) == "task t1: exited (code 0)\nbye"


def test_close_ends_every_process_a_task_started(ws: Path) -> None:
    t = tools(ws)
    t.run("start_task", {"command": "sleep 300 & echo $! > a.pid; wait"})
    t.run("start_task", {"command": "setsid sh -c 'echo $$ > b.pid; exec sleep 300' & wait"})
    wait_until(lambda: (ws / "a.pid").exists() and (ws / "b.pid").exists(), 5)
    pids = [int((ws / name).read_text()) for name in ("a.pid", "b.pid")]
    assert all(alive(pid) for pid in pids)
    t.close()
    assert all(_dies(pid) for pid in pids)
    assert t.run("task_output", {"id": "t1"}).startswith("task t1: killed (signal 9)")


def test_a_forgotten_tools_object_still_ends_its_tasks(ws: Path) -> None:
    import gc

    t = tools(ws)
    t.run("start_task", {"command": "echo $$ > t.pid; exec sleep 300"})
    wait_until((ws / "t.pid").exists, 5)
    pid = int((ws / "t.pid").read_text())
    del t
    gc.collect()
    assert _dies(pid)


# --------------------------------------------------------------------------- web_fetch


class _Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    pages: dict[str, tuple[str, bytes]] = {}
    big_sent: list[int] = []
    big_done = threading.Event()

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/big":
            self._big()
            return
        ctype, body = self.pages.get(self.path, ("text/plain", b"missing"))
        self.send_response(200 if self.path in self.pages else 404)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _big(self) -> None:
        total, sent, chunk = 50_000_000, 0, b"z" * 65536
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(total))
        self.end_headers()
        try:
            while sent < total:
                self.wfile.write(chunk)
                sent += len(chunk)
        except OSError:
            pass  # the client hung up: what we want
        finally:
            self.big_sent.append(sent)
            self.big_done.set()


@pytest.fixture(scope="module")
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Site
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.timeout(60)
def test_web_fetch_stops_reading_a_50_mb_body(ws: Path, site) -> None:
    base, handler = site
    out = tools(ws).run("web_fetch", {"url": f"{base}/big", "max_chars": 10_000_000})
    assert out.endswith("\n[response truncated at 2097152 bytes]")
    assert out == "z" * 2_097_152 + "\n[response truncated at 2097152 bytes]"
    assert handler.big_done.wait(10), "the server never noticed the client hung up"
    assert handler.big_sent[-1] < 12_000_000  # about 2 MiB plus socket buffers, far from 50 MB


def test_web_fetch_response_cap_at_and_past(ws: Path, site) -> None:
    base, handler = site
    handler.pages["/1000"] = ("text/plain", b"a" * 1000)
    handler.pages["/1001"] = ("text/plain", b"a" * 1001)
    t = tools(ws, web_max_response_bytes=1000)
    assert t.run("web_fetch", {"url": f"{base}/1000"}) == "a" * 1000
    assert t.run("web_fetch", {"url": f"{base}/1001"}) == "a" * 1000 + "\n[response truncated at 1000 bytes]"


def test_web_fetch_max_chars_at_and_past(ws: Path, site) -> None:
    base, handler = site
    handler.pages["/fifty"] = ("text/plain; charset=utf-8", ("\u00e9" * 50).encode())
    t = tools(ws, web_max_chars=50)
    assert t.run("web_fetch", {"url": f"{base}/fifty"}) == "\u00e9" * 50
    assert t.run("web_fetch", {"url": f"{base}/fifty", "max_chars": 49}) == "\u00e9" * 49 + f"\n{E} 1 chars omitted"
    assert tools(ws, web_max_chars=20).run("web_fetch", {"url": f"{base}/fifty"}).endswith(f"\n{E} 30 chars omitted")


def test_web_fetch_html_to_text(ws: Path, site) -> None:
    base, handler = site
    page = (b"<!doctype html><html><head><title>Doc</title><style>p { color: red }</style>"
            b"<script>var s = '<p>not text</p>';</script></head><body>"
            b"<h1>Install &amp; run</h1><p>Use   <b>pnpm</b>\n install.</p>"
            b"<ul><li>one</li><li>two</li></ul><div>end<br>line</div>"
            b"<noscript>enable js</noscript></body></html>")
    handler.pages["/page"] = ("text/html; charset=utf-8", page)
    out = tools(ws).run("web_fetch", {"url": f"{base}/page"})
    assert "color" not in out and "not text" not in out and "enable js" not in out
    lines = [line for line in out.splitlines() if line]
    assert lines == ["Doc", "Install & run", "Use pnpm install.", "- one", "- two", "end", "line"]


def test_web_fetch_http_error_status_is_reported(ws: Path, site) -> None:
    base, _ = site
    assert tools(ws).run("web_fetch", {"url": f"{base}/nothing"}) == (
        "error: HTTP 404 Not Found for " + f"{base}/nothing" + "\nmissing")


@pytest.mark.timeout(30)
def test_web_fetch_errors_are_text(ws: Path) -> None:
    t = Tools(ws, web_timeout=0.5)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    closed_port = probe.getsockname()[1]
    probe.close()
    assert t.dispatch("web_fetch", {"url": f"http://127.0.0.1:{closed_port}/"}).startswith(
        "error: could not connect to")
    silent = socket.socket()  # accepts connections (kernel backlog) but never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    try:
        out = t.dispatch("web_fetch", {"url": f"http://127.0.0.1:{silent.getsockname()[1]}/"})
        assert out.startswith("error: timed out fetching")  # its 0.5 s timeout, not a hang (the marker's bound)
    finally:
        silent.close()
    assert t.dispatch("web_fetch", {"url": "file:///etc/passwd"}) == (
        "error: only http and https URLs can be fetched, not 'file'")
    assert t.dispatch("web_fetch", {"url": "ftp://example.com/x"}).startswith("error: only http and https")
    assert t.dispatch("web_fetch", {"url": "not a url"}).startswith("error:")


def test_html_to_text_keeps_pre_layout() -> None:
    assert html_to_text("<p>a</p><pre>  x = 1\n  y</pre>") == "a\n\n  x = 1\n  y"


# --------------------------------------------------------------------------- the door


def test_dispatch_never_raises_on_bad_calls(ws: Path) -> None:
    t = tools(ws)
    assert t.dispatch("rm_rf", {}).startswith("error: unknown tool 'rm_rf'")
    assert t.dispatch("read_file", {}) == "error: read_file: missing required argument 'path'"
    assert t.dispatch("read_file", {"path": 3}) == "error: read_file: argument 'path' must be a string, got int"
    assert t.dispatch("read_file", {"path": "x", "limit": "5"}).startswith(
        "error: read_file: argument 'limit' must be an integer")
    assert t.dispatch("read_file", {"path": "x", "offest": 2}).startswith("error: read_file: unknown argument 'offest'")
    assert t.dispatch("grep", ["pattern"]).startswith("error: grep: arguments must be an object")
    assert t.dispatch("glob", "{not json").startswith("error: glob: arguments are not valid JSON")
    assert t.dispatch("run_command", {"command": "true", "timeout": True}).startswith("error:")
    assert t.dispatch("read_file", {"path": "missing.txt"}) == "error: missing.txt does not exist"
    assert t.dispatch("read_file", {"path": "."}) == "error: . is not a file"
    assert t.dispatch("web_fetch", {"url": "http://x", "max_chars": 0}).startswith("error: max_chars")


def test_dispatch_accepts_json_string_arguments(ws: Path) -> None:
    (ws / "a.txt").write_text("hi\n")
    assert tools(ws).dispatch("read_file", '{"path": "a.txt"}') == "1\u2192hi"


def test_dispatch_clamps_run_does_not(ws: Path) -> None:
    (ws / "long.txt").write_text("x" * 100 + "\n")
    t = tools(ws, max_output=50)
    full = t.run("read_file", {"path": "long.txt"})
    assert full == "1\u2192" + "x" * 100
    clamped = t.dispatch("read_file", {"path": "long.txt"})
    # "1→" is 4 bytes: 46 x's fit in 50 bytes, 54 bytes cut
    assert clamped == "1\u2192" + "x" * 46 + f"\n{E} output truncated (54 chars omitted)"


def test_per_tool_methods_raise_tool_error(ws: Path) -> None:
    with pytest.raises(ToolError, match="leaves the workspace"):
        tools(ws).read_file("../x")


def test_tool_specs_cover_the_seven_tools() -> None:
    assert TOOL_NAMES == ("read_file", "grep", "glob", "run_command", "start_task", "task_output", "web_fetch")
    for spec in TOOL_SPECS:
        assert spec.parameters["type"] == "object"
        assert set(spec.parameters["required"]) <= set(spec.parameters["properties"])
        assert spec.as_openai()["function"]["name"] == spec.name
    assert "2000 lines" in TOOL_SPECS[0].description
    assert "7 lines" in tool_specs(Budgets(read_max_lines=7))[0].description


def test_workspace_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        Tools(tmp_path / "nope")


# --------------------------------------------------------------------------- web_fetch against hostile servers


@pytest.fixture
def hostile():
    from servers import Hostile

    server = Hostile(drip_every=0.02)  # the drip's pace on a fake clock is its tick
    yield server
    server.close()


@pytest.mark.timeout(20)  # the hang guard: a byte arriving for ever would reset a per-read timeout
def test_web_fetch_drip_is_cut_at_the_total_timeout(ws: Path, hostile) -> None:
    clock = FakeClock(tick=0.05)  # every reading of the deadline (once per byte read) costs 0.05 s on this clock
    out = Tools(ws, web_timeout=1, clock=clock).dispatch("web_fetch", {"url": f"{hostile.url}/drip"})
    assert out == f"error: timed out fetching {hostile.url}/drip (after 1s)"
    head = len(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n")
    assert hostile.sent["/drip"] > head and clock.readings <= 1 / 0.05 + 3  # cut in the body, at the total deadline


def test_web_fetch_gzip_bomb_and_nul_bodies_never_reach_the_model(ws: Path, hostile) -> None:
    t = tools(ws)
    bomb = t.run("web_fetch", {"url": f"{hostile.url}/bomb"})  # 256 MiB of zeros once inflated
    assert bomb == "(binary content: text/plain, 2097152 bytes, not shown)\n[response truncated at 2097152 bytes]"
    assert t.run("web_fetch", {"url": f"{hostile.url}/nul"}) == "(binary content: text/plain, 20000 bytes, not shown)"
    assert t.run("web_fetch", {"url": f"{hostile.url}/nul-gzip"}) == (
        "(binary content: text/plain, 20005 bytes, not shown)")
    assert t.run("web_fetch", {"url": f"{hostile.url}/utf16"}) == "caf\u00e9 \u6587\u4ef6"  # NUL bytes, no NUL text
    assert t.run("web_fetch", {"url": f"{hostile.url}/deflate"}) == "deflated text " * 99 + "deflated text "


def test_web_fetch_redirects(ws: Path, hostile) -> None:
    from servers import Hostile

    t = tools(ws)
    assert t.run("web_fetch", {"url": f"{hostile.url}/loop"}).startswith(
        f"error: fetching {hostile.url}/loop: more than 5 redirects")
    assert hostile.hits["/loop"] == 6
    assert t.run("web_fetch", {"url": f"{hostile.url}/to?file:///etc/passwd"}).startswith("error: fetching")
    other = Hostile()
    try:  # another port: followed, as reqwest does by default
        assert t.run("web_fetch", {"url": f"{hostile.url}/to?{other.url}/text"}) == f"plain text from {other.url}"
    finally:
        other.close()


def test_web_fetch_can_refuse_private_addresses(ws: Path, hostile) -> None:
    assert tools(ws).run("web_fetch", {"url": f"{hostile.url}/text"}) == f"plain text from {hostile.url}"
    guarded = Tools(ws, refuse_private_addresses=True)
    for url in (f"{hostile.url}/text", hostile.url.replace("127.0.0.1", "localhost") + "/text"):
        out = guarded.dispatch("web_fetch", {"url": url})
        assert out.startswith(f"error: refused to fetch {url}: ") and "loopback, private or link-local" in out
    assert hostile.hits.get("/text") == 1
