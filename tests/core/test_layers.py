"""The import graph, drawn from the code: layers flow one way and nothing imports in a circle.

ARCHITECTURE "The five packages": imports flow ``events`` ← ``store``, ``replay`` ← ``handlers`` ←
``engine``. Inside ``engine/`` the rooms form layers too, and no module imports another that
(directly or through others) imports it back, at any depth — an import hidden inside a function or
under ``TYPE_CHECKING`` is an import all the same (it is how circles used to hide here).

The graph is read from the source (every ``import`` statement in the file, wherever it stands), not
from ``sys.modules``, so a circle that only closes at run time is caught before it is written.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("events", "store", "replay", "handlers", "engine")

# Which top-level packages each may import (itself always).
ALLOWED = {
    "events": set(),
    "store": {"events"},
    "replay": {"events"},
    "handlers": {"events", "replay"},
    "engine": {"events", "store", "replay", "handlers"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def production_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports, anywhere in its file (the deepest known prefix)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def deepest(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # ruff bans relative imports; resolve them anyway so the test stands alone
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, base] if base else here)
            # ``from pkg import mod`` depends on pkg.mod; ``from mod import name`` on mod. (Every
            # import also runs the parent packages' __init__; that is not an edge of ours.)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        for target in targets:
            module = deepest(target)
            if module is not None and module != name:
                found.add(module)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = production_modules()
    known = set(modules)
    return {name: imported_modules(name, path, known) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def room(module: str) -> str:
    """A module's room: ``engine.<room>`` inside engine/, else its top-level package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "engine" and len(parts) > 1 else parts[0]


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = defaultdict(set)
    for source, targets in graph.items():
        for target in targets:
            if room(source) != room(target):
                rooms[room(source)].add(room(target))
    return rooms


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """Read when a test here runs, not when the suite is collected (every worker collects)."""
    return import_graph()


def test_the_graph_is_read_from_every_production_module(graph):
    assert len(graph) > 150
    assert "handlers.mlestar.pipeline" in graph and "engine.run.driver" in graph
    # Hidden imports count: the driver imports store/ and handlers/ (some of them inside functions).
    assert any(t.startswith("handlers.") for t in graph["engine.run.strategies"] | graph["engine.run.driver"])


@pytest.mark.parametrize("package", PACKAGES)
def test_layers_flow_one_way(graph, package):
    """events ← store, replay ← handlers ← engine (ARCHITECTURE "The five packages")."""
    wrong = sorted(f"{source} imports {target}" for source, targets in graph.items()
                   if source.split(".")[0] == package
                   for target in targets
                   if target.split(".")[0] not in ALLOWED[package] | {package})
    assert wrong == []


def test_no_module_imports_itself_in_a_circle(graph):
    """The import graph's cycle count is 0, top-level imports and hidden ones alike."""
    assert cycles(graph) == []


def test_no_circle_among_engines_rooms(graph):
    """engine/'s rooms (cli, run, config, agents, harness, …) form layers: no room reaches back."""
    rooms = room_graph(graph)
    assert cycles(rooms) == []


def test_the_cycle_finder_finds_a_hidden_circle(tmp_path):
    """The checks above can fail: a circle closed by a function-level import is found."""
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from a import x\n")
    known = {"a", "b"}
    graph = {name: imported_modules(name, tmp_path / f"{name}.py", known) for name in known}
    assert cycles(graph) == [["a", "b"]]
    assert cycles(room_graph({"engine.run.x": {"engine.cli.y"}, "engine.cli.y": {"engine.run.x"}})) == [
        ["engine.cli", "engine.run"]]
