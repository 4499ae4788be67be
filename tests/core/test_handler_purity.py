"""Handlers are pure (ARCHITECTURE "handlers/ ... never I/O, clocks, global randomness, network —
enforced by a test"): this is that test.

Every module under ``handlers/`` is parsed (never imported) and fails the test when it imports a
clock, global randomness, the environment, files, processes or the network, or calls a builtin
that does I/O. Time arrives as events (``wf.now``) and randomness from ``wf.rng(key)`` (a
``random.Random`` seeded by the run seed), so the only thing allowed from ``random`` is the
``Random`` class itself.
"""

from __future__ import annotations

import ast
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


def violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []

    def where(node: ast.AST) -> str:
        return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"

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
