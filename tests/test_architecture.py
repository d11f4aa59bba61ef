"""The architecture holds, and every rule of it can fail: each is shown catching a planted violation."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from architecture import Layers, import_cycles, violations

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src" / "bertdrill"
LAYERS = Layers.from_pyproject(REPO / "pyproject.toml")


def test_the_tree_keeps_every_rule():
    assert violations(SRC, LAYERS) == []


def test_no_module_imports_itself_round_a_loop():
    """Imports inside functions and under TYPE_CHECKING count: each hides a loop rather than removing it."""
    assert import_cycles(SRC) == []


CYCLE_PLANTS = {
    "at the top": ("core/numbers", "from bertdrill.core.lesson import model",
                   ["bertdrill.core.lesson.model", "bertdrill.core.numbers"]),
    "inside a function": ("core/number_words", "def f():\n    from bertdrill.core.textmatch import gives_away",
                          ["bertdrill.core.number_words", "bertdrill.core.textmatch"]),
    "in the types only": ("core/lesson/claims", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                          "    from bertdrill.core.lesson.items import ItemReader",
                          ["bertdrill.core.lesson.claims", "bertdrill.core.lesson.items"]),
    "relative, across layers": ("ports", "def f():\n    from ..app import session",  # from the package's __init__
                                ["bertdrill.app.session", "bertdrill.ports"]),
}


@pytest.mark.parametrize("plant", CYCLE_PLANTS)
def test_a_planted_import_cycle_is_caught(tmp_path, plant):
    root = shutil.copytree(SRC, tmp_path / "bertdrill", ignore=shutil.ignore_patterns("__pycache__"))
    unit, code, loop = CYCLE_PLANTS[plant]
    _append(_module(root, unit), code)
    cycles = import_cycles(root)
    assert len(cycles) == 1 and set(loop) <= set(cycles[0]), cycles  # the loop, and any module it runs through


def _module(root: Path, dotted: str) -> Path:
    """The file of a module given as ``core/formula`` or a package given as ``adapters/store``."""
    return root / f"{dotted}.py" if (root / f"{dotted}.py").exists() else root / dotted / "__init__.py"


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n" + text + "\n", encoding="utf-8")


CORE, CORE2, CORE_INNER = "core/formula", "core/cards", "core/lesson/items"
PORTS = "ports"
ADAPTER, ADAPTER2 = "adapters/store", "adapters/export/anki"
APP, APP2 = "app/session", "app/practice"
PLANTS = {
    "absolute import of an adapter from the core": (CORE, "from bertdrill.adapters.store import x",
                                                     "imports bertdrill.adapters.store"),
    "relative import of an adapter from the core": (CORE, "from ..adapters import store",
                                                     "imports bertdrill.adapters.store"),
    "relative import of the interface": (CORE2, "from ..cli import base", "imports bertdrill.cli"),
    "the clock in the core": (CORE, "from datetime import datetime\nNOW = datetime.now()", ".now()"),
    "the date in the core": (CORE2, "import datetime\nTODAY = datetime.date.today()", ".today()"),
    "a file opened in the core": (CORE, "TEXT = open('x').read()", "calls open()"),
    "a file read through a path": (CORE2, "def f(p):\n    return p.read_text()", ".read_text()"),
    "an I/O module in the core": (CORE, "import os", "imports os"),
    "randomness in the core": (CORE2, "def f():\n    import random\n    return random.random()", "imports random"),
    "a third-party library in the core": (CORE, "import sqlmodel", "imports sqlmodel"),
    "a third-party library in the ports": (PORTS, "import sqlalchemy", "imports sqlalchemy"),
    "the ports importing an adapter": (PORTS, "from ..adapters import store", "imports bertdrill.adapters.store"),
    "an adapter importing another": (ADAPTER, "from bertdrill.adapters.export import anki",
                                     "imports bertdrill.adapters.export.anki"),
    "an adapter importing another, relatively": (ADAPTER2, "from ...adapters.store import Store",
                                                 "imports bertdrill.adapters.store"),
    "the application importing an adapter": (APP, "from ..adapters.store import x", "imports bertdrill.adapters.store"),
    "an adapter importing the interface": (ADAPTER2, "from bertdrill.cli import app", "imports bertdrill.cli"),
    "the application importing the interface": (APP, "from bertdrill.cli import app", "imports bertdrill.cli"),
    # the ports are the core for calls
    "the clock in the ports": (PORTS, "from datetime import datetime\nNOW = datetime.now()", "the ports calls .now()"),
    "a file opened in the ports": (PORTS, "TEXT = open('x').read()", "the ports calls open()"),
    "a file read through a path in the ports": (PORTS, "def f(p):\n    return p.read_text()",
                                                "the ports calls .read_text()"),
    # the application goes through the store's port
    "SQLAlchemy in the application": (APP, "import sqlalchemy", "reaches storage through the ports only"),
    "SQLModel in the application, inside a function": (APP2, "def f():\n    from sqlmodel import Session",
                                                        "reaches storage through the ports only"),
    "psycopg in the application": (APP, "import psycopg", "reaches storage through the ports only"),
    "a database file opened by the application": (APP2, "import sqlite3\nDB = sqlite3.connect('x.db')",
                                                  "reaches storage through the ports only"),
    # only the interface talks to a person, in every other layer
    "print in the core": (CORE, "def f():\n    print('x')", "calls print()"),
    "print in the ports": (PORTS, "def f():\n    print('x')", "calls print()"),
    "print in the application": (APP, "def f():\n    print('x')", "application calls print()"),
    "print in an adapter": (ADAPTER, "def f():\n    print('x')", "adapters calls print()"),
    "input in the application": (APP2, "def f():\n    return input()", "application calls input()"),
    "input in an adapter": (ADAPTER2, "def f():\n    return input()", "adapters calls input()"),
    "the standard output written by the application": (APP, "import sys\ndef f():\n    sys.stdout.write('x')",
                                                        "application uses sys.stdout"),
    "the standard error written by an adapter": (ADAPTER, "import sys\ndef f():\n    sys.stderr.write('x')",
                                                 "adapters uses sys.stderr"),
    "the standard output in the core": (CORE_INNER, "import sys\nOUT = sys.stdout", "uses sys.stdout"),
    "exiting from an adapter": (ADAPTER2, "import sys\ndef f():\n    sys.exit(1)", "adapters uses sys.exit"),
    "exiting from the application": (APP, "def f():\n    exit(1)", "application calls exit()"),
    "rich in the core": (CORE, "from rich.console import Console", "only the interface talks to a person"),
    "rich in the ports": (PORTS, "import rich", "only the interface talks to a person"),
    "rich in the application": (APP, "def f():\n    from rich.console import Console",
                                "only the interface talks to a person"),
    "rich in an adapter": (ADAPTER, "from rich.console import Console", "only the interface talks to a person"),
    "typer in an adapter": (ADAPTER2, "import typer", "only the interface talks to a person"),
    "typer in the application": (APP2, "import typer", "only the interface talks to a person"),
    "print in a program of the application's own": ("app/guard", "def f():\n    print('x')",
                                                     "application calls print()"),
    "a password prompt in an adapter": (ADAPTER, "import getpass\nSECRET = getpass.getpass()",
                                        "adapters uses getpass.getpass"),
}


@pytest.mark.parametrize("plant", PLANTS)
def test_a_planted_violation_is_caught(tmp_path, plant):
    root = shutil.copytree(SRC, tmp_path / "bertdrill", ignore=shutil.ignore_patterns("__pycache__"))
    unit, code, message = PLANTS[plant]
    _append(_module(root, unit), code)
    found = violations(root, LAYERS)
    assert any(message in line for line in found), found


def test_a_two_dot_relative_import_is_resolved(tmp_path):
    root = shutil.copytree(SRC, tmp_path / "bertdrill", ignore=shutil.ignore_patterns("__pycache__"))
    _append(_module(root, CORE_INNER), "from ...adapters.store import x")
    assert any("imports bertdrill.adapters.store" in line for line in violations(root, LAYERS))


def test_a_module_outside_the_layer_folders_is_caught(tmp_path):
    """A module's layer is its first folder: one beside them (or in a folder that is no layer) would escape
    every rule, so it is a violation of its own."""
    root = shutil.copytree(SRC, tmp_path / "bertdrill", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "newthing.py").write_text("X = 1\n")
    (root / "misc").mkdir()
    (root / "misc" / "__init__.py").write_text("")
    found = violations(root, LAYERS)
    assert any("module bertdrill.newthing is in no layer" in line for line in found), found
    assert any("module bertdrill.misc.__init__ is in no layer" in line for line in found), found


def test_the_start_up_path_imports_no_heavy_library():
    """`bertdrill --help` stays within 1.5x of `import typer` (benchmarks/run.py): the command modules
    import rich, SQLModel, genanki and WeasyPrint inside the commands that use them."""
    heavy = ("rich", "sqlmodel", "sqlalchemy", "genanki", "weasyprint", "pygments", "markdown_it", "psycopg",
             "fsrs", "alembic")
    code = ("import sys; from bertdrill.cli import app; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    # Nor bertdrill's own computing modules: the schedulers, the lesson model and json wait for a command (the
    # registry of schedulers loads: `bertdrill scheduler NAME` takes its names, and it imports no scheduler; the
    # sheet formats load: `bertdrill sheet --format` takes their names, and the module imports no renderer).
    code = ("import sys; from bertdrill.cli import app; "
            "print(sorted(m for m in sys.modules if m == 'json' or m.startswith('bertdrill.') and not m.startswith("
            "('bertdrill.cli', 'bertdrill.web'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == str(["bertdrill.adapters", "bertdrill.adapters.catalogs",
                                         "bertdrill.adapters.export", "bertdrill.adapters.export.sheets",
                                         "bertdrill.adapters.export.sheets.formats", "bertdrill.core",
                                         "bertdrill.core.errors", "bertdrill.core.hosts", "bertdrill.core.i18n",
                                         "bertdrill.core.kinds",
                                         "bertdrill.core.limits", "bertdrill.core.scheduling",
                                         "bertdrill.core.scheduling.registry"])
    shown = subprocess.run([sys.executable, "-m", "bertdrill", "--help"], capture_output=True, text=True, check=True)
    assert shown.stdout.startswith("Usage: bertdrill [OPTIONS] COMMAND [ARGS]...")
