"""The architecture holds, and every rule of it can fail: each is shown catching a planted violation."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from architecture import Layers, violations

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src" / "bertdrill"
LAYERS = Layers.from_pyproject(REPO / "pyproject.toml")


def test_the_tree_keeps_every_rule():
    assert violations(SRC, LAYERS) == []


def _module(root: Path, unit: str) -> Path:
    """The file of a unit: its module, or its package's ``__init__``."""
    return root / f"{unit}.py" if (root / f"{unit}.py").exists() else root / unit / "__init__.py"


def _first(layer: str, but: str = "") -> str:
    return next(u for u, lay in LAYERS.unit_layer.items() if lay == layer and u not in (but, "__init__", "__main__"))


def _in_subpackage(root: Path) -> Path | None:
    """A module one level down in a package of the core, for relative imports with two dots."""
    for unit, layer in LAYERS.unit_layer.items():
        if layer == "core" and (root / unit).is_dir():
            return next((root / unit).glob("[!_]*.py"), None)
    return None


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n" + text + "\n", encoding="utf-8")


CORE, CORE2 = _first("core"), _first("core", but=_first("core"))
ADAPTER, ADAPTER2 = _first("adapters"), _first("adapters", but=_first("adapters"))
APP = _first("application")
PLANTS = {
    "absolute import of an adapter from the core": (CORE, f"from bertdrill.{ADAPTER} import x", "imports bertdrill."),
    "relative import of an adapter from the core": (CORE, f"from . import {ADAPTER}", f"imports bertdrill.{ADAPTER}"),
    "relative import of the interface": (CORE2, "from .cli import base", "imports bertdrill.cli"),
    "the clock in the core": (CORE, "from datetime import datetime\nNOW = datetime.now()", ".now()"),
    "the date in the core": (CORE2, "import datetime\nTODAY = datetime.date.today()", ".today()"),
    "a file opened in the core": (CORE, "TEXT = open('x').read()", "calls open()"),
    "a file read through a path": (CORE2, "def f(p):\n    return p.read_text()", ".read_text()"),
    "an I/O module in the core": (CORE, "import os", "imports os"),
    "randomness in the core": (CORE2, "def f():\n    import random\n    return random.random()", "imports random"),
    "a third-party library in the core": (CORE, "import sqlmodel", "imports sqlmodel"),
    "an adapter importing another": (ADAPTER, f"from bertdrill import {ADAPTER2}", f"imports bertdrill.{ADAPTER2}"),
    "the application importing an adapter": (APP, f"from .{ADAPTER} import x", f"imports bertdrill.{ADAPTER}"),
    "an adapter importing the interface": (ADAPTER2, "from bertdrill.cli import app", "imports bertdrill.cli"),
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
    inner = _in_subpackage(root)
    if inner is None:  # no core package yet: make one of a core module
        (root / CORE).mkdir()
        (root / f"{CORE}.py").rename(root / CORE / "__init__.py")
        inner = root / CORE / "inner.py"
        inner.write_text("")
    _append(inner, f"from ..{ADAPTER} import x")
    assert any(f"imports bertdrill.{ADAPTER}" in line for line in violations(root, LAYERS))


def test_a_module_that_is_gone_or_new_is_caught(tmp_path):
    """A layer listing a module that no longer exists fails (it would silently check nothing), and so does a
    module in no layer (it would escape every rule)."""
    root = shutil.copytree(SRC, tmp_path / "bertdrill", ignore=shutil.ignore_patterns("__pycache__"))
    gone = _module(root, CORE2)
    shutil.rmtree(gone.parent) if gone.name == "__init__.py" else gone.unlink()
    (root / "newthing.py").write_text("X = 1\n")
    found = violations(root, LAYERS)
    assert any(f"{CORE2} is in the core layer but no such module exists" in line for line in found), found
    assert any("module newthing is in no layer" in line for line in found), found


def test_the_start_up_path_imports_no_heavy_library():
    """`bertdrill --help` stays within 1.5x of `import typer` (benchmarks/run.py): the command modules
    import rich, SQLModel, genanki and WeasyPrint inside the commands that use them."""
    heavy = ("rich", "sqlmodel", "sqlalchemy", "genanki", "weasyprint", "pygments", "markdown_it", "psycopg",
             "fsrs", "alembic")
    code = ("import sys; from bertdrill.cli import app; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    shown = subprocess.run([sys.executable, "-m", "bertdrill", "--help"], capture_output=True, text=True, check=True)
    assert shown.stdout.startswith("Usage: bertdrill [OPTIONS] COMMAND [ARGS]...")
