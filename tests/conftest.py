"""Shared fixtures: no test touches a real home, a real database or colours."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import postgres as postgres_server
import pytest
from typer.testing import CliRunner

from bertdrill.core import i18n

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "decks" / "bert-basics.toml"


@pytest.fixture(scope="session")
def lesson_cache(tmp_path_factory) -> Path:
    """One cache of verified lessons for the whole run: its entries are keyed by the lessons' bytes, so
    sharing it changes no result, and the shipped lesson is verified once, not once per test."""
    cache: Path = tmp_path_factory.mktemp("lesson-cache") / "cache"
    return cache


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch, lesson_cache):
    """Point bertdrill's data directory and database at a temporary folder."""
    home = tmp_path / "home"
    monkeypatch.setenv("BERTDRILL_HOME", str(home))
    monkeypatch.setenv("BERTDRILL_CACHE", str(lesson_cache))
    monkeypatch.setenv("BERTDRILL_DB", str(home / "bertdrill.db"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("BERTDRILL_DEBUG", raising=False)
    monkeypatch.delenv("BERTDRILL_LEARNER", raising=False)
    # English unless a test asks otherwise, whatever the machine's locale; and a language a command
    # chose (--lang tr) does not outlive its test.
    for variable in ("BERTDRILL_LANG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    yield home
    i18n.install(gettext.NullTranslations())


@pytest.fixture
def postgres():
    """A database of this test's own on a real PostgreSQL server (see tests/postgres.py): a
    :class:`postgres.Server`, whose ``url`` bertdrill takes as ``--db``. Skips loudly where no server
    answers, and fails instead under ``CI=true``."""
    yield from postgres_server.create_database()


def pytest_terminal_summary(terminalreporter):
    """Say it loudly at the end when the PostgreSQL tests did not run."""
    for reason in postgres_server.unreachable:
        terminalreporter.write_sep("!", "PostgreSQL tests SKIPPED", red=True, bold=True)
        terminalreporter.write_line(reason, red=True)


@pytest.fixture
def cli():
    """Run the CLI in-process: ``cli("check", "decks/")`` returns a click Result."""
    from bertdrill.cli import app

    runner = CliRunner()

    def invoke(*args: str, input: str | bytes | None = None):
        result = runner.invoke(app, list(args), input=input, catch_exceptions=False)
        result.stdout_bytes, result.output_bytes = (_timeless(result.stdout_bytes), _timeless(result.output_bytes))
        return result

    return invoke


# A review's summary ends with how long the session took: wall time, even under BERTDRILL_NOW (its clock runs on), so
# a scripted session on a loaded machine took "1 s" now and then and its transcript failed. It reads 0 s here.
_SESSION_LENGTH = re.compile("(correct|doğru), (?:[0-9]+ (?:min|dk) )?[0-9]+ (s|sn)\\. ".encode())


def _timeless(shown: bytes) -> bytes:
    return _SESSION_LENGTH.sub(rb"\1, 0 \2. ", shown)


@pytest.fixture(scope="session")
def facts():
    """The shipped lesson's fact cards, in lesson order: what the class tests' learners answer."""
    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.core.kinds import Kind

    return [card for card in all_cards(load_lessons()) if card.kind == Kind.FACT]


@pytest.fixture
def lesson_text() -> str:
    """The shipped lesson's text, a starting point for edited and broken lessons."""
    return SHIPPED.read_text(encoding="utf-8")
