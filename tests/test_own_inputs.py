"""A command never overwrites its own inputs (issue 23): every command that writes a file refuses an output
that is one of the lessons it reads or the review database in use, by any path, link or hard link, and
leaves the file byte for byte as it was."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

SHIPPED = Path(__file__).resolve().parent.parent / "decks" / "bert-basics.toml"


@pytest.fixture
def lesson(tmp_path) -> Path:
    path: Path = tmp_path / "lessons" / "bert.toml"
    path.parent.mkdir()
    shutil.copy(SHIPPED, path)
    return path


@pytest.fixture
def database(cli, lesson) -> Path:
    assert cli("review", "--new", "0", "--file", str(lesson)).exit_code == 0  # the learner's database, with its tables
    path = Path(os.environ["BERTDRILL_DB"])
    assert path.exists()
    return path


def writers(output: Path, lesson: Path) -> dict[str, list[str]]:
    return {
        "sheet": ["sheet", str(lesson), "--format", "html", "-o", str(output)],
        "export anki": ["export", "anki", str(lesson), "-o", str(output)],
        "practice start": ["practice", "start", "-f", str(lesson), "-o", str(output), "--force"],
    }


def ways_to(target: Path, tmp_path: Path) -> dict[str, Path]:
    """The same file through its own path, another spelling, a symbolic link and a hard link."""
    symbolic = tmp_path / "symbolic.apkg"
    symbolic.symlink_to(target)
    hard = tmp_path / "hard.apkg"
    os.link(target, hard)
    return {"itself": target, "another spelling": target.parent / ".." / target.parent.name / target.name,
            "symbolic link": symbolic, "hard link": hard}


@pytest.mark.parametrize("command", ["sheet", "export anki", "practice start"])
@pytest.mark.parametrize("way", ["itself", "another spelling", "symbolic link", "hard link"])
def test_no_command_writes_over_the_lesson_it_reads(cli, tmp_path, lesson, command, way):
    before = lesson.read_bytes()
    output = ways_to(lesson, tmp_path)[way]
    result = cli(*writers(output, lesson)[command])
    assert result.exit_code == 1
    assert "which this command reads; write somewhere else" in result.output
    assert lesson.read_bytes() == before and output.exists()


@pytest.mark.parametrize("command", ["sheet", "export anki", "practice start"])
@pytest.mark.parametrize("way", ["itself", "symbolic link", "hard link"])
def test_no_command_writes_over_the_review_database(cli, tmp_path, lesson, database, command, way):
    before = database.read_bytes()
    output = ways_to(database, tmp_path)[way]
    result = cli(*writers(output, lesson)[command])
    assert result.exit_code == 1
    assert f"it is the review database {database}" in result.output
    assert database.read_bytes() == before
    assert cli("status", "--file", str(lesson)).exit_code == 0  # still the learner's database


def test_nor_over_the_databases_journal_or_a_database_named_by_db(cli, tmp_path, lesson, database):
    wal = database.with_name(database.name + "-wal")
    result = cli("sheet", str(lesson), "-o", str(wal), "--format", "html")
    assert result.exit_code == 1 and "journal files" in result.output and not wal.exists()
    other = tmp_path / "class.db"
    shutil.copy(database, other)
    result = cli("sheet", str(lesson), "-o", str(other), "--format", "gift", "--db", str(other))
    assert result.exit_code == 1 and f"review database {other}" in result.output


@pytest.mark.parametrize(("named", "options"), [("quiz-key.md", ["--key", "separate"]),
                                                ("quiz-B.md", ["--split", "-n", "2"])])
def test_a_split_sheet_or_a_separate_key_checks_every_file_it_writes(cli, lesson, named, options):
    read = lesson.with_name(named)
    lesson.rename(read)
    before = read.read_bytes()
    result = cli("sheet", str(read), "-o", str(read.with_name("quiz.md")), *options)
    assert result.exit_code == 1 and f"it is the lesson file {read}" in result.output
    assert read.read_bytes() == before


def test_the_shipped_lessons_are_inputs_when_no_lesson_is_named(tmp_path):
    # Not tried by writing over them: a regression would replace the repository's own lesson.
    from bertdrill.adapters.export.files import InputKind, Replace, check_writable
    from bertdrill.adapters.lessons import shipped_paths
    from bertdrill.cli.base import inputs
    from bertdrill.core.errors import BertdrillError

    read = inputs(None)
    assert {each.path for each in read if each.kind is InputKind.LESSON} == set(shipped_paths())
    link = tmp_path / "shipped.md"
    link.symlink_to(shipped_paths()[0])
    with pytest.raises(BertdrillError, match="which this command reads"):
        check_writable(link, replace=Replace.ANY, inputs=read)  # even with --force


def test_an_output_beside_the_inputs_is_written(cli, tmp_path, lesson, database):
    output = lesson.with_name("quiz.html")
    assert cli("sheet", str(lesson), "-o", str(output)).exit_code == 0 and output.exists()
