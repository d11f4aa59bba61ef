"""Why the system refused a file or a socket is said in the learner's language (core.errors.os_reason), wherever
a message shows it: OSError's own strerror is English whatever --lang says."""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from bertdrill.adapters import catalogs
from bertdrill.core import i18n
from bertdrill.core.errors import os_reason


@contextmanager
def turkish() -> Iterator[None]:
    with i18n.speaking(catalogs.translation("tr"), "tr"):
        yield

ENGLISH = {errno.ENOTDIR: "a part of the path is not a folder", errno.EEXIST: "a part of the path is not a folder",
           errno.EACCES: "permission denied", errno.ENOSPC: "the disk is full", errno.EROFS:
           "the file system is read-only", errno.EADDRINUSE: "another program is using that port",
           errno.ECONNRESET: "the connection was cut"}


@pytest.mark.parametrize("number", sorted(ENGLISH))
def test_each_reason_is_worded_and_translated(number):
    exc = OSError(number, os.strerror(number))  # OSError picks the subclass (NotADirectoryError, ...) by errno
    assert os_reason(exc) == ENGLISH[number]
    with turkish():
        translated = os_reason(exc)
    assert translated != ENGLISH[number] and translated != os.strerror(number)


def test_an_unlisted_error_keeps_the_systems_words():
    assert os_reason(OSError(errno.EIO, os.strerror(errno.EIO))) == os.strerror(errno.EIO)


def test_a_home_that_is_a_file_is_told_in_turkish(cli, tmp_path, monkeypatch):
    """BERTDRILL_HOME naming a file: no command can keep its database there; the reason is Turkish, and the
    login file under it is not mistaken for a broken login."""
    home = tmp_path / "home"
    home.write_text("a file, not a folder\n")
    monkeypatch.setenv("BERTDRILL_HOME", str(home))
    monkeypatch.delenv("BERTDRILL_DB", raising=False)
    for command in ("status", "review"):
        result = cli(command, "--lang", "tr")
        assert result.exit_code == 1
        with turkish():
            reason = os_reason(NotADirectoryError())
        assert reason in result.stderr and "login" not in result.stderr
        assert "Not a directory" not in result.stderr and "File exists" not in result.stderr
    assert home.read_text() == "a file, not a folder\n"


def test_a_port_in_use_is_told_in_turkish(cli):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = cli("serve", "--port", str(port), "--lang", "tr")
    assert result.exit_code == 1
    with turkish():
        assert os_reason(OSError(errno.EADDRINUSE, "")) in result.stderr
