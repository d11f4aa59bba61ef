"""Every command's --help reads as written for people: no Python type names."""

from __future__ import annotations

import re

import pytest
import typer.main

from bertdrill.cli import app
from bertdrill.cli.base import BertdrillGroup


def _leaves(command, path=()):
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield " ".join(path)
        return
    for name, sub in subcommands.items():
        yield from _leaves(sub, (*path, name))


COMMANDS = sorted(_leaves(typer.main.get_command(app)))


@pytest.mark.parametrize("command", COMMANDS)
def test_no_argument_shows_a_python_type(cli, command):
    """Issue 21: `practice check --help` showed `[ITEM] SCRIPT <list[str]>`; every argument with a metavar now shows
    just its metavar, and the lesson paths are PATH..., not `paths... <list[Path]>`."""
    shown = cli(*command.split(), "--help").stdout
    assert not re.search(r"<(list\[|str>|Path>|path>)", "\n".join(
        line for line in shown.splitlines() if not line.lstrip().startswith("-"))), shown


@pytest.mark.parametrize("now", ["2025-03-03", "20250303"])
def test_a_date_alone_in_bertdrill_now_is_that_study_day(cli, monkeypatch, now):
    """Issue 21: a date-only BERTDRILL_NOW was midnight, which is before the 04:00 rollover: the day before."""
    monkeypatch.setenv("BERTDRILL_NOW", now)
    assert cli("status").stdout.startswith("Study day 2025-03-03\n")


def test_the_readme_check_shows_a_learner_no_author_warnings(cli):
    """Issue 21: a fresh install's `bertdrill check` printed six author warnings the README does not show. The
    shipped lessons' check is the summary alone; naming the files (as an author does) or --leaks lists them."""
    from pathlib import Path

    shipped = cli("check")
    assert shipped.exit_code == 0 and shipped.stderr == "", shipped.stderr
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    for line in shipped.stdout.splitlines():  # the README shows exactly what a fresh install prints
        assert line.replace("src/bertdrill/decks", "decks") in readme, line
    named = cli("check", str(Path(__file__).parent.parent / "decks" / "bert-basics.toml"))
    assert named.exit_code == 0 and "warning:" in named.stderr
    assert "warning:" in cli("check", "--leaks").stderr
    assert cli("check", str(Path(__file__).parent.parent / "decks"), "--no-leaks").stderr == ""


def test_status_and_stats_count_the_same_cards(cli):
    """Issue 21: `status` said "Learned 10 of 32" where `stats` counted 33 (the practice card, which is checked
    by `practice check`, never reviewed)."""
    import re

    cli("review", "--new", "2", input="5\n109482240\n4\n:quit\n")
    learned = re.search(r"Learned\s+\d+ of (\d+) cards", cli("status").stdout)
    counted = re.search(r"Cards: (\d+)", cli("stats").stdout)
    assert learned and counted and learned.group(1) == counted.group(1) == "32"


def _counting_builds(monkeypatch) -> list[str]:
    """The commands and groups typer builds from now on, by name (the root: "root")."""
    built: list[str] = []
    build_command, build_group = typer.main.get_command_from_info, typer.main.get_group_from_info

    def command_from_info(command_info, **settings):  # typer passes it by this name too
        built.append(command_info.callback.__name__)
        return build_command(command_info, **settings)

    def group_from_info(group_info, **settings):
        built.append("root" if group_info.typer_instance is app else group_info.name)
        return build_group(group_info, **settings)

    monkeypatch.setattr(typer.main, "get_command_from_info", command_from_info)
    monkeypatch.setattr(typer.main, "get_group_from_info", group_from_info)
    return built


def test_a_command_builds_only_its_own_click_command(cli, tmp_path, monkeypatch):
    """Start-up: typer built the click command of all 28 commands and groups (93 options, about 40 ms) before
    reading the command line; the root now builds the one a run looks up."""
    built = _counting_builds(monkeypatch)
    result = cli("status", "--db", str(tmp_path / "one.db"))
    assert result.exit_code == 0, result.stderr
    assert built == ["root", "status"]


def test_help_lists_every_command_in_typers_order(cli):
    """The commands first, then the groups, each in the order its module registered it, as typer lists them."""
    listed = [line.split()[0] for line in cli("--help").stdout.split("Commands:\n")[1].splitlines() if line.strip()]
    root = typer.main.get_command(app)
    assert isinstance(root, BertdrillGroup)
    assert listed == list(root.commands) == [name for name in root.commands if name not in GROUPS] + GROUPS


GROUPS = ["cards", "class", "export", "practice"]


def test_help_builds_no_command_and_lists_them_as_built(cli, monkeypatch):
    """`bertdrill --help` lists each command's name and short help from what was registered, building none (it
    was 1.6x `import typer`); the list is the one the commands built by typer give, word for word."""
    import contextlib

    from bertdrill.cli.base import CommandsBuiltWhenUsed

    built = _counting_builds(monkeypatch)
    listed = cli("--help").stdout
    assert built == ["root"]
    monkeypatch.setattr(CommandsBuiltWhenUsed, "listed", lambda self: contextlib.nullcontext())  # build them all
    assert cli("--help").stdout == listed
    assert "cards" in built and "status" in built and len(built) > 20
