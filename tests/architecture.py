"""The architecture rules as a checker: it reads the layers from pyproject.toml and walks every module's syntax.

Used by tests/test_architecture.py on the real tree, and on copies with planted violations to prove that each
rule can fail. It sees absolute and relative imports (at any depth, inside functions too) and the calls that
would let the core read the clock or touch files.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "bertdrill"
# A module's layer is its first folder under src/bertdrill (``ports/``, the ports layer);
# ``bertdrill/__init__.py`` holds only the version and counts as core, ``__main__`` as the interface.
FOLDER_LAYER = {"core": "core", "ports": "ports", "app": "application", "adapters": "adapters",
                "cli": "interface", "web": "interface", "__init__": "core", "__main__": "interface"}
LAYERS = ("core", "ports", "application", "adapters", "interface")
# What each layer may import from the project itself (a module may always import its own unit).
ALLOWED = {
    "core": {"core"},
    "ports": {"core"},
    "application": {"core", "ports"},
    "adapters": {"core", "ports"},
    "interface": set(LAYERS),
}
# The core computes; it never does I/O, reads the clock or draws random numbers.
CORE_FORBIDDEN_MODULES = {
    "os", "sys", "io", "pathlib", "shutil", "tempfile", "glob", "subprocess", "signal", "socket", "sqlite3",
    "time", "random", "secrets", "threading", "multiprocessing", "asyncio", "locale", "platform", "ctypes",
    "urllib", "http", "logging", "builtins", "importlib",
}
CORE_FORBIDDEN_CALLS = {"open", "input", "print", "eval", "exec", "compile", "__import__", "breakpoint"}
CORE_FORBIDDEN_METHODS = {"now", "today", "utcnow", "read_text", "write_text", "read_bytes", "write_bytes",
                          "unlink", "mkdir", "touch", "rename"}
# The ports are core for calls too: a Protocol or a record reads no clock and opens no file.
PURE_LAYERS = ("core", "ports")
# The application reaches storage through the store's port only: no database library, no database file.
DATABASE_LIBRARIES = {"sqlalchemy", "sqlmodel", "psycopg", "psycopg2", "sqlite3", "alembic"}
# Only the interfaces (cli/, web/) talk to a person: everywhere else no print/input, no terminal library, no
# writing to the standard streams and no exiting the process behind the interface's error boundary.
INTERFACE_LIBRARIES = {"rich", "typer", "click", "starlette", "jinja2", "uvicorn", "readline"}
INTERFACE_CALLS = {"print", "input", "exit", "quit", "breakpoint"}
INTERFACE_ATTRIBUTES = {("sys", "stdout"), ("sys", "stderr"), ("sys", "stdin"), ("sys", "exit"), ("os", "_exit"),
                        ("getpass", "getpass")}
EXITS = {("sys", "exit"), ("os", "_exit")}
# A module run as a program of its own (`if __name__ == "__main__":`, such as the practice runner's guard
# process) ends its process itself: only the exits are allowed to it, never the person's streams.


@dataclass(frozen=True)
class Layers:
    pure_libraries: frozenset[str]

    @classmethod
    def from_pyproject(cls, pyproject: Path) -> Layers:
        table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["bertdrill"]["architecture"]
        return cls(frozenset(table.get("pure_libraries", ())))


DATA_FOLDERS = {"decks", "locale"}  # shipped data, not code: the lessons (bertdrill.decks) and the catalogs


def modules(root: Path) -> Iterator[tuple[str, Path]]:
    """Every module under ``root`` (the bertdrill package folder) as (dotted name, path)."""
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[0] in DATA_FOLDERS:
            continue
        yield ".".join((PACKAGE, *parts)), path


def layer_of(dotted: str) -> str | None:
    """A module's layer, from its first folder: ``bertdrill.adapters.store.schema`` -> ``adapters``."""
    parts = dotted.split(".")
    return FOLDER_LAYER.get(parts[1] if len(parts) > 1 else "__init__")


def unit_of(dotted: str) -> str:
    """The unit a module belongs to: an adapter is its second folder (``bertdrill.adapters.store.schema`` ->
    ``adapters.store``), which may not import another adapter; every other layer is one unit."""
    parts = dotted.split(".")
    if len(parts) > 2 and parts[1] == "adapters":
        return f"adapters.{parts[2]}"
    return parts[1] if len(parts) > 1 else "__init__"


def imported(dotted: str, path: Path, tree: ast.AST, known: set[str]) -> Iterator[tuple[int, str]]:
    """Every module name an import statement brings in, relative imports resolved: (line, dotted name).

    ``from . import store`` brings in the module ``bertdrill.adapters.store``; ``from . import __version__`` a name of
    ``bertdrill`` itself: ``known`` (every module's dotted name) tells them apart."""
    package = dotted.removesuffix(".__init__") if path.name == "__init__.py" else dotted.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                yield node.lineno, submodule if submodule in known else module


def violations(root: Path, layers: Layers) -> list[str]:
    """Every broken rule in the tree at ``root``, as ``file:line: what``; empty when the tree is clean."""
    found: list[str] = []
    known = {dotted.removesuffix(".__init__") for dotted, _ in modules(root)}
    for dotted, path in modules(root):
        layer = layer_of(dotted)
        if layer is None:
            found.append(f"{path}: module {dotted} is in no layer: its first folder must be one of "
                         f"{', '.join(sorted(set(FOLDER_LAYER) - {'__init__', '__main__'}))}")
            continue
        unit = unit_of(dotted)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for line, name in imported(dotted, path, tree, known):
            found.extend(_import_rule(f"{path}:{line}", unit, layer, name, layers))
            found.extend(_library_rule(f"{path}:{line}", unit, layer, name))
        if layer in PURE_LAYERS:
            found.extend(_core_calls(path, tree, layer))
        if layer != "interface":
            found.extend(_interface_calls(path, tree, layer))
    return found


def _library_rule(where: str, unit: str, layer: str, name: str) -> Iterator[str]:
    top = name.split(".")[0]
    if layer == "application" and top in DATABASE_LIBRARIES:
        yield f"{where}: {unit} ({layer}) imports {name}: the application reaches storage through the ports only"
    if layer != "interface" and top in INTERFACE_LIBRARIES:
        yield f"{where}: {unit} ({layer}) imports {name}: only the interface talks to a person"


def _interface_calls(path: Path, tree: ast.AST, layer: str) -> Iterator[str]:
    """print(), input(), the standard streams, exiting: what only the interface does."""
    program = any(isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"'
                  for node in ast.walk(tree))
    for node in ast.walk(tree):
        if program and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and (node.value.id, node.attr) in EXITS:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in INTERFACE_CALLS:
            yield f"{path}:{node.lineno}: {layer} calls {node.func.id}(): only the interface talks to a person"
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and (node.value.id, node.attr) in INTERFACE_ATTRIBUTES):
            yield (f"{path}:{node.lineno}: {layer} uses {node.value.id}.{node.attr}: only the interface talks to a "
                   "person")


def _import_rule(where: str, unit: str, layer: str, name: str, layers: Layers) -> Iterator[str]:
    top = name.split(".")[0]
    if top == PACKAGE:
        target = unit_of(name)
        target_layer = layer_of(name) or "unknown"
        if target == unit:
            return
        if target_layer not in ALLOWED[layer]:  # adapters are not allowed adapters: they never import each other
            yield f"{where}: {unit} ({layer}) imports {name} ({target_layer})"
    elif layer in ("core", "ports"):
        if top in CORE_FORBIDDEN_MODULES or (top not in sys.stdlib_module_names and top not in layers.pure_libraries
                                             and top != "__future__"):
            yield f"{where}: {unit} ({layer}) imports {name}: the core does no I/O, clock or randomness"


def _core_calls(path: Path, tree: ast.AST, layer: str) -> Iterator[str]:
    what = "the core" if layer == "core" else f"the {layer}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in CORE_FORBIDDEN_CALLS:
            yield f"{path}:{node.lineno}: {what} calls {node.func.id}()"
        elif isinstance(node.func, ast.Attribute) and node.func.attr in CORE_FORBIDDEN_METHODS:
            yield f"{path}:{node.lineno}: {what} calls .{node.func.attr}(): clock and files are arguments"


def import_graph(root: Path) -> dict[str, set[str]]:
    """Which project modules each module imports: every import statement counts (inside functions, and under
    ``TYPE_CHECKING``, which is a loop in the types even when it is none at run time). A package's
    ``__init__`` is the package's name; importing a module does not count as importing its package."""
    known = {dotted.removesuffix(".__init__") for dotted, _ in modules(root)}
    graph: dict[str, set[str]] = {}
    for dotted, path in modules(root):
        name = dotted.removesuffix(".__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = {target for _line, target in imported(dotted, path, tree, known)
                       if target in known and target != name}
    return graph


def import_cycles(root: Path) -> list[list[str]]:
    """Every set of modules that import one another round a loop (strongly connected components of the import
    graph with more than one module), each sorted, as Tarjan's algorithm finds them."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles
