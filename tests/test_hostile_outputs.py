"""The CLI never destroys what it was given (issue 34), and a sweep over a FIFO returns.

An output path is written only when it is absent or a regular file, and none of the inputs:
``compact X --force -o X`` (or ``-o ./X``, or a link to X) overwrote the input, ``sweep X --csv X``
too, and ``-o`` naming a device node or a FIFO replaced it with a regular file. The device nodes and
FIFOs here are made by the test in its own temporary folder, never the machine's.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading

import pytest
from test_cli import TWELVE, call

from nanohermes_nb import sweep
from nanohermes_nb._files import AtomicOutput, OutputRefused, output_target, read_regular, write_atomic

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def folder(tmp_path):
    shutil.copy(TWELVE, tmp_path / "X.json")
    (tmp_path / "L.json").symlink_to("X.json")
    os.mkfifo(tmp_path / "F.json")
    os.mkfifo(tmp_path / "F.csv")
    return tmp_path


def _device(path) -> bool:
    """A character device node like /dev/null (1, 3), made here; False where the test may not make one."""
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        return False
    return True


def _unchanged(folder, before: bytes) -> None:
    assert (folder / "X.json").read_bytes() == before
    assert (folder / "L.json").is_symlink() and stat.S_ISFIFO(os.lstat(folder / "F.json").st_mode)
    assert stat.S_ISFIFO(os.lstat(folder / "F.csv").st_mode)
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("output, fragment", [
    ("X.json", "is the input"), ("./X.json", "is the input"), ("L.json", "is the input"),
    ("F.json", "is a named pipe (FIFO), not a regular file"),
])
def test_compact_never_writes_onto_its_input_or_a_fifo(folder, capsys, monkeypatch, output, fragment):
    monkeypatch.chdir(folder)
    before = (folder / "X.json").read_bytes()
    done = call(capsys, "compact", "X.json", "--force", "-o", output)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and fragment in done.stderr, done.stderr
    _unchanged(folder, before)


def test_an_output_naming_a_device_node_is_refused(folder, capsys):
    node = folder / "null"
    if not _device(node):
        pytest.skip("mknod needs root (CI runs as root)")
    before = (folder / "X.json").read_bytes()
    for args in (["compact", folder / "X.json", "--force", "-o", node],
                 ["sweep", folder / "X.json", "--no-progress", "--out", folder / "dev.csv"]):
        if args[0] == "sweep":
            os.rename(node, folder / "dev.csv")
            node = folder / "dev.csv"
        done = call(capsys, *args)
        assert done.returncode == 2 and "is a character device, not a regular file" in done.stderr, done.stderr
        assert stat.S_ISCHR(os.lstat(node).st_mode)
    _unchanged(folder, before)


def test_sweep_never_writes_onto_its_input_or_a_fifo(folder, capsys):
    before = (folder / "X.json").read_bytes()
    shutil.copy(folder / "X.json", folder / "in.csv")  # a transcript named .csv, swept and named as the output
    for out, fragment in ((folder / "X.json", "is the input"), (folder / "in.csv", "is the input"),
                          (folder / "F.csv", "is a named pipe (FIFO)")):
        done = call(capsys, "sweep", folder / "X.json", folder / "in.csv", "--no-progress", "--csv", out)
        assert done.returncode == 2 and fragment in done.stderr, done.stderr
    assert (folder / "in.csv").read_bytes() == before
    _unchanged(folder, before)


def test_a_sweep_output_through_a_link_writes_the_file_it_names(folder, capsys):
    (folder / "real.csv").write_text("old\n")
    (folder / "link.csv").symlink_to("real.csv")
    done = call(capsys, "sweep", folder / "X.json", "--no-progress", "--out", folder / "link.csv")
    assert done.returncode == 0, done.stderr
    assert (folder / "link.csv").is_symlink() and (folder / "real.csv").read_text().startswith("transcript,")


def test_a_sweep_over_a_folder_holding_fifos_returns_and_lists_them_as_skipped(folder, capsys):
    (folder / "F.csv").unlink()
    done = call(capsys, "sweep", folder, "--no-progress")
    assert done.returncode == 1, done.stderr
    assert "skipped F.json" in done.stderr and "named pipe (FIFO)" in done.stderr
    assert "X.json" in done.stdout and "L.json" in done.stdout
    frame = sweep(folder)
    assert [s.transcript for s in frame.attrs["skipped"]] == ["F.json"] and len(frame) == 2


def test_a_folder_holding_only_a_fifo_is_swept_and_the_fifo_skipped(tmp_path, capsys):
    os.mkfifo(tmp_path / "only.jsonl")
    done = call(capsys, "sweep", tmp_path, "--no-progress")
    assert done.returncode == 1 and "skipped only.jsonl" in done.stderr, done.stderr


def test_the_file_helpers_refuse_what_is_not_a_regular_file(folder):
    with pytest.raises(OSError, match="named pipe"):
        read_regular(folder / "F.json")  # returns at once: opened without blocking
    with pytest.raises(OSError, match="larger than 10 bytes"):
        read_regular(folder / "X.json", limit=10)
    with pytest.raises(OutputRefused, match="is the input"):
        output_target(folder / "L.json", [folder / "X.json"])

    def swap(f) -> None:  # the target turns into a FIFO while the output is being written
        f.write(b"new")
        (folder / "late.json").unlink()
        os.mkfifo(folder / "late.json")

    (folder / "late.json").write_text("old")
    with pytest.raises(OutputRefused, match="named pipe"):
        write_atomic(folder / "late.json", swap)
    assert stat.S_ISFIFO(os.lstat(folder / "late.json").st_mode)
    assert not [p for p in folder.iterdir() if p.name.startswith(".late")]


def test_no_thread_is_left_blocked_on_a_fifo(folder, capsys):
    """The FIFO is never opened for reading: nothing waits on it after the sweep returned."""
    before = set(threading.enumerate())  # other tests of this process may have left their own threads
    call(capsys, "sweep", folder / "F.json", "--no-progress")
    left = [t.name for t in set(threading.enumerate()) - before if t.is_alive()]
    assert not left, f"threads still running after the sweep returned: {left}"


def test_run_refuses_an_output_that_is_a_fifo_before_any_request(folder, capsys):
    (folder / "ws").mkdir()
    done = call(capsys, "run", "a task", "--workspace", folder / "ws", "-o", folder / "F.json",
                "--base-url", "http://127.0.0.1:9/v1")
    assert done.returncode == 2 and "-o " in done.stderr and "named pipe (FIFO)" in done.stderr, done.stderr
    assert stat.S_ISFIFO(os.lstat(folder / "F.json").st_mode)


def test_the_atomic_writer_keeps_the_targets_permissions_and_gives_a_new_file_the_umasks(tmp_path):
    """mkstemp makes 0600: an output replacing a 0644 file used to come out 0600. Now it keeps the file's
    mode; a new file gets 0666 less the umask, as ``open`` would give it; ``mode`` overrides both."""
    old = tmp_path / "old.json"
    old.write_text("old")
    old.chmod(0o640)
    write_atomic(old, lambda f: f.write(b"new"))
    assert old.read_text() == "new" and stat.S_IMODE(old.stat().st_mode) == 0o640
    mask = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.json", lambda f: f.write(b"x"))
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640  # 0666 & ~0027
    write_atomic(old, lambda f: f.write(b"private"), mode=0o600)
    assert stat.S_IMODE(old.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json", "old.json"]


def test_the_atomic_writer_leaves_the_target_whole_when_the_work_fails(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("before")
    with pytest.raises(RuntimeError):
        with AtomicOutput(target) as out:
            out.tmp.write_text("half")
            raise RuntimeError("the sweep failed")
    assert target.read_text() == "before" and [p.name for p in tmp_path.iterdir()] == ["t.csv"]
    out = AtomicOutput(target)
    assert out.tmp.parent == tmp_path and out.tmp.name.startswith(".t.csv.") and out.tmp.name.endswith(".tmp")
    out.tmp.write_text("after")
    assert out.commit() == target and target.read_text() == "after" and not out.tmp.exists()
