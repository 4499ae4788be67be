"""Handlers are pure (ARCHITECTURE "handlers/ ... never I/O, clocks, global randomness, network —
enforced by a test"): this is that test.

Every module under ``handlers/`` is parsed (never imported) and fails the test when it imports a
clock, global randomness, the environment, files, processes or the network, or calls a builtin
that does I/O. Time arrives as events (``wf.now``) and randomness from ``wf.rng(key)`` (a
``random.Random`` seeded by the run seed), so the only thing allowed from ``random`` is the
``Random`` class itself.

Two things that look pure are not: ``hash()`` of a string differs from process to process
(``PYTHONHASHSEED``), and the order of a set's elements follows those hashes, so a decision that
walks a set may differ between a run and its replay. ``hash()`` is refused on anything but a
literal, and iterating a set (a ``for``, a comprehension, or ``list``/``tuple``/``enumerate``/
``iter``/``zip``/``join`` … of one) is refused where the set is visible in the source: a set
display or comprehension, ``set(...)``/``frozenset(...)``, a set operator on one of those, or a
name or attribute the module annotates as a set or assigns one to. ``sorted(...)`` of a set is
the way to walk one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = sorted((ROOT / "handlers").rglob("*.py"))

# Top-level modules a handler may never import (clocks, randomness, environment, files,
# processes, network, and the imperative shell itself).
FORBIDDEN_MODULES = {
    "time", "datetime", "calendar", "zoneinfo",                      # clocks
    "secrets", "uuid", "numpy",                                      # randomness
    "os", "sys", "platform", "getpass",                              # the environment
    "io", "pathlib", "shutil", "tempfile", "glob", "fnmatch", "sqlite3", "pickle", "shelve",
    "logging", "structlog",                                          # files and logs
    "subprocess", "signal", "threading", "multiprocessing", "concurrent", "asyncio", "anyio",
    "psutil",                                                        # processes and event loops
    "socket", "ssl", "http", "urllib", "requests", "httpx", "aiohttp", "openai", "anthropic",
    "claude_agent_sdk",                                              # the network
    "engine", "store",                                               # the shell and the store
}
ALLOWED_FROM = {"random": {"Random"}}   # the seeded generator class; never the module's functions
FORBIDDEN_CALLS = {"open", "input", "print", "exec", "eval", "breakpoint", "__import__"}


# Calls that walk their argument in its iteration order (``sorted`` and membership do not count).
ORDER_TAKING_CALLS = {"list", "tuple", "enumerate", "iter", "next", "zip", "reversed", "map", "filter", "join"}
SET_TYPES = {"set", "frozenset", "Set", "AbstractSet", "MutableSet", "FrozenSet"}


def _name_of(node: ast.AST) -> str | None:
    """``x`` for ``x`` and ``self.x`` (the module-wide name a set may be bound to)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_set_annotation(node: ast.AST | None) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):  # typing.AbstractSet, collections.abc.Set
        return node.attr in SET_TYPES
    return isinstance(node, ast.Name) and node.id in SET_TYPES


def _is_set_expr(node: ast.AST, set_names: set[str]) -> bool:
    if isinstance(node, (ast.Set, ast.SetComp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset"):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor)):
        return _is_set_expr(node.left, set_names) or _is_set_expr(node.right, set_names)
    name = _name_of(node)
    return name is not None and name in set_names


def _set_names(tree: ast.AST) -> set[str]:
    """Names and attributes the module annotates as a set or assigns a set expression to."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and _is_set_annotation(node.annotation):
            name = _name_of(node.target)
        elif isinstance(node, ast.arg) and _is_set_annotation(node.annotation):
            name = node.arg
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and _is_set_expr(node.value, set()):
            name = _name_of(node.targets[0])
        else:
            continue
        if name is not None:
            names.add(name)
    return names


def _walked(node: ast.AST) -> list[ast.AST]:
    """The expressions ``node`` iterates in their order: a loop's or comprehension's iterable,
    or the arguments of an order-taking call."""
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.iter]
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ORDER_TAKING_CALLS:
            return list(node.args)
    return []


def order_violations(tree: ast.AST, where: Callable[[ast.AST], str]) -> list[str]:
    """``hash()`` of a non-literal, and iteration over a set."""
    found: list[str] = []
    set_names = _set_names(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hash"
                and not all(isinstance(a, ast.Constant) for a in node.args)):
            found.append(f"{where(node)} calls hash() on a value (it differs between processes)")
        for walked in _walked(node):
            if _is_set_expr(walked, set_names):
                found.append(f"{where(walked)} iterates a set (its order follows string hashes): sort it")
    return found


def violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []

    def where(node: ast.AST) -> str:
        return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"

    found.extend(order_violations(tree, where))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in FORBIDDEN_MODULES or top in ALLOWED_FROM:
                    found.append(f"{where(node)} imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            if top in FORBIDDEN_MODULES:
                found.append(f"{where(node)} imports from {node.module}")
            elif top in ALLOWED_FROM:
                extra = {a.name for a in node.names} - ALLOWED_FROM[top]
                if extra:
                    found.append(f"{where(node)} imports {sorted(extra)} from {node.module}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            found.append(f"{where(node)} calls {node.func.id}()")
    return found


@pytest.mark.parametrize("path", HANDLERS, ids=[str(p.relative_to(ROOT)) for p in HANDLERS])
def test_handler_module_is_pure(path: Path) -> None:
    assert violations(path) == []


def test_the_checker_catches_each_kind_of_impurity(tmp_path: Path) -> None:
    """The rule itself can fail: one module with every kind of forbidden thing."""
    bad = tmp_path / "handlers" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("import time\nimport random\nfrom random import choice, Random\nfrom os import environ\n"
                   "import urllib.request\nfrom pathlib import Path\nfrom engine.run.driver import Driver\n"
                   "open('x')\nprint('y')\n", encoding="utf-8")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = violations(bad)
    finally:
        ROOT = saved
    assert len(found) == 9, found
    assert any("['choice']" in f for f in found) and not any("['Random']" in f for f in found)


def test_the_checker_catches_hash_and_set_iteration(tmp_path: Path) -> None:
    """Each way a set's order or a string's hash can reach a decision, and what stays allowed."""
    bad = tmp_path / "handlers" / "order.py"
    bad.parent.mkdir()
    bad.write_text(
        "seen: set[str] = set()\n"
        "class C:\n"
        "    def __init__(self) -> None:\n"
        "        self.ids: frozenset[str] = frozenset()\n"
        "    def walk(self) -> list[str]:\n"
        "        return [i for i in self.ids]\n"                      # comprehension over an attribute
        "def f(names: set[str], key: str) -> object:\n"
        "    for n in names: pass\n"                                  # a loop over an annotated argument
        "    for n in {1, 2} | set(): pass\n"                         # a set operator on set displays
        "    order = list(seen)\n"                                    # an order-taking call on a set
        "    ','.join(set(key))\n"
        "    return hash(key), order\n"                               # hash of a value
        "def fine(names: set[str], rows: list[str]) -> object:\n"
        "    for n in sorted(names): pass\n"
        "    return [r for r in rows], 'a' in names, len(names), hash('literal')\n",
        encoding="utf-8")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = violations(bad)
    finally:
        ROOT = saved
    assert sorted(int(f.split(":")[1].split()[0]) for f in found) == [6, 8, 9, 10, 11, 12], found
