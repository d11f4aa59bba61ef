"""The core knows nothing of terminals, databases or Anki: walk its imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "bertdrill"
CORE = ["errors", "formula", "lesson", "cards", "grading", "sm2", "stats", "i18n"]
FORBIDDEN = {"typer", "rich", "sqlmodel", "sqlalchemy", "genanki", "weasyprint", "sqlite3", "random", "time",
             "subprocess", "os", "pathlib", "click", "platformdirs"}


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_only_stdlib_and_core(module):
    path = SRC / f"{module}.py"
    if not path.exists():
        pytest.skip(f"{module}.py not written yet")
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: must be another core module
                relative = [node.module] if node.module else [alias.name for alias in node.names]
                for name in relative:
                    assert name.split(".")[0] in CORE, f"{module} imports .{name}"
                continue
            names = [node.module or ""]
        else:
            continue
        for name in names:
            assert name.split(".")[0] not in FORBIDDEN, f"{module}.py imports {name}"


def test_the_start_up_path_imports_no_heavy_library():
    """`bertdrill --help` stays within 1.5x of `import typer` (benchmarks/run.py): the command modules
    import rich, SQLModel, genanki and WeasyPrint inside the commands that use them."""
    import subprocess
    import sys

    heavy = ("rich", "sqlmodel", "sqlalchemy", "genanki", "weasyprint", "pygments", "markdown_it")
    code = ("import sys; from bertdrill.cli import app; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    shown = subprocess.run([sys.executable, "-m", "bertdrill", "--help"], capture_output=True, text=True, check=True)
    assert shown.stdout.startswith("Usage: bertdrill [OPTIONS] COMMAND [ARGS]...")
