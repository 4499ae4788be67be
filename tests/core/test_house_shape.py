"""The production code keeps the shape a reader can hold: short functions, and one class per name.

A function over 80 lines is several jobs in one (the longest today is under 60); two classes with
one name (there were two ``Driver``s, and an event and an exception both called
``BudgetExhausted``) make every import a question of which one is meant. Read from the source with
``ast``, like the layer test beside this one.
"""

from __future__ import annotations

import ast
from collections import defaultdict

import pytest

from tests.core.test_layers import production_modules

MAX_FUNCTION_LINES = 80


@pytest.fixture(scope="module")
def trees() -> dict[str, ast.Module]:
    """Parsed when a test here runs, not when the suite is collected (every worker collects)."""
    return {name: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for name, path in production_modules().items()}


def long_functions(modules: dict[str, ast.Module], limit: int) -> list[str]:
    return sorted(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
                  for name, tree in modules.items() for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > limit)


def shared_class_names(modules: dict[str, ast.Module]) -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for name, tree in sorted(modules.items()):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(name)
    return {cls: modules_ for cls, modules_ in sorted(where.items()) if len(modules_) > 1}


def test_no_production_function_is_longer_than_80_lines(trees):
    assert len(trees) > 150
    assert long_functions(trees, MAX_FUNCTION_LINES) == []


def test_no_two_production_classes_share_a_name(trees):
    assert shared_class_names(trees) == {}


def test_the_checks_find_what_they_look_for():
    body = "\n".join(f"    x{i} = {i}" for i in range(81))
    planted = {
        "a": ast.parse(f"class Reply:\n    pass\n\ndef long():\n{body}\n"),
        "b": ast.parse("class Reply:\n    pass\n\ndef short():\n    return 1\n"),
    }
    assert long_functions(planted, MAX_FUNCTION_LINES) == ["a.long: 82 lines"]
    assert shared_class_names(planted) == {"Reply": ["a", "b"]}
