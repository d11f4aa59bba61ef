"""The one output writer (`sheet -o`, `export anki -o`): whole files, regular files only, modes kept."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import pytest

from bertdrill.adapters.export.files import Replace, WriteError, check_writable, write_atomic


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_replaces_and_leaves_nothing_behind(tmp_path):
    target = tmp_path / "quiz.html"
    target.write_text("old")
    write_atomic(target, "new ğ".encode(), replace=Replace.ANY)
    assert target.read_text(encoding="utf-8") == "new ğ"
    assert os.listdir(tmp_path) == ["quiz.html"]


def test_a_new_file_gets_what_open_would_give(tmp_path):
    target = tmp_path / "quiz.html"
    write_atomic(target, b"new", replace=Replace.ANY)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])
def test_the_mode_of_a_replaced_file_is_kept(tmp_path, mode):
    """A private 0600 sheet stays private (it used to become 0644)."""
    target = tmp_path / "quiz.html"
    target.write_text("old")
    target.chmod(mode)
    write_atomic(target, b"new", replace=Replace.ANY)
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == mode


def test_a_writer_function_that_fails_leaves_the_old_file(tmp_path):
    target = tmp_path / "bert.apkg"
    target.write_bytes(b"before")

    def fails(stream):
        stream.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(WriteError, match="the disk is full"):
        write_atomic(target, fails, replace=Replace.ANY)
    assert target.read_bytes() == b"before" and os.listdir(tmp_path) == ["bert.apkg"]


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_is_refused_and_left_alone(device):
    before = os.stat(device)
    with pytest.raises(WriteError, match=f"cannot write {device}: it is a device, not a regular file"):
        write_atomic(__import__("pathlib").Path(device), b"x", replace=Replace.ANY)
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = threading.Event()

    def attempt():
        with pytest.raises(WriteError, match="named pipe"):
            write_atomic(fifo, b"x", replace=Replace.ANY)
        done.set()

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(5)
    assert done.is_set(), "writing to a FIFO blocked"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_socket_is_refused(tmp_path):
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(WriteError, match="socket"):
            write_atomic(path, b"x", replace=Replace.ANY)
    assert stat.S_ISSOCK(path.lstat().st_mode)


def test_a_folder_is_refused_with_an_example(tmp_path):
    with pytest.raises(WriteError, match=f"it is a folder; give a file name such as {tmp_path / 'quiz.html'}"):
        write_atomic(tmp_path, b"x", example="quiz.html", replace=Replace.ANY)


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    """The documented choice: the file a link points to is replaced (keeping its mode); the link stays."""
    real = tmp_path / "real" / "quiz.html"
    real.parent.mkdir()
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "quiz.html"
    link.symlink_to(real)
    write_atomic(link, b"new", replace=Replace.ANY)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new" and stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(os.listdir(real.parent)) == ["quiz.html"]


def test_a_dangling_symlink_creates_its_target(tmp_path):
    real = tmp_path / "made.html"
    link = tmp_path / "link.html"
    link.symlink_to(real)
    write_atomic(link, b"new", replace=Replace.ANY)
    assert link.is_symlink() and real.read_bytes() == b"new"


def test_a_symlink_to_a_device_is_refused(tmp_path):
    link = tmp_path / "null.html"
    link.symlink_to("/dev/null")
    with pytest.raises(WriteError, match="it is a device"):
        check_writable(link, replace=Replace.ANY)
    assert link.is_symlink()


@pytest.mark.parametrize("command", [["sheet", "-o", "/dev/null", "--format", "html"],
                                     ["export", "anki", "-o", "/dev/null"],
                                     ["practice", "start", "-o", "/dev/null", "--force"]])
def test_the_commands_refuse_a_device(command):
    """Through the real CLI: an error, exit 1, and /dev/null still the character device it was."""
    before = os.stat("/dev/null")
    result = subprocess.run([sys.executable, "-m", "bertdrill", *command], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: cannot write /dev/null: it is a device, not a regular file")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_sheet_keeps_a_private_file_private(cli, tmp_path):
    target = tmp_path / "quiz.html"
    target.write_text("old")
    target.chmod(0o600)
    result = cli("sheet", "-o", str(target), "--seed", "1", "--force")
    assert result.exit_code == 0, result.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and "<html" in target.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", [["sheet", "--format", "html"], ["export", "anki"],
                                     ["practice", "start", "--force"]])
def test_the_commands_refuse_a_fifo_without_blocking(tmp_path, command):
    """Issue 11, item 4: `practice start -o fifo --force` blocked in open() before; every output goes one way."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = subprocess.run([sys.executable, "-m", "bertdrill", *command, "-o", str(fifo)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith(f"Error: cannot write {fifo}: it is a named pipe (FIFO), not a regular file")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_practice_start_keeps_the_mode_of_the_file_it_replaces(cli, tmp_path):
    target = tmp_path / "model.py"
    target.write_text("old")
    target.chmod(0o600)
    result = cli("practice", "start", "-o", str(target), "--force")
    assert result.exit_code == 0, result.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and "Check it with" in target.read_text(encoding="utf-8")
