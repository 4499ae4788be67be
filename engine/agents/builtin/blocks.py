"""Reading the script blocks (``script_blocks/``) and filling in what varies per spec.

A block is a real Python file. Above its ``# --- script ---`` line it says what it is and
imports the names it reads from the blocks before it (``script_blocks/names.py``), so ruff and
mypy read it as code; below that line is the text a script holds, written out as it stands.

What varies from spec to spec is filled in at four kinds of points, each visible in the block:

- a module-level constant (``SEED = 0``): ``block(name, SEED="3")`` rewrites its value, keeping
  any comment after it;
- a placeholder ``__NAME__`` (an identifier, or inside a string or comment) where a value sits
  inside an expression: ``fill(text, NAME="...")``; every placeholder must be filled;
- an insertion point, a line ``# insert NAME``: ``insert(text, NAME="...")`` puts lines there at
  the point's indentation (none: the line goes);
- an optional region, between ``# when NAME:`` (or ``# when not NAME:``) and ``# end NAME``:
  ``regions(text, NAME=bool)`` keeps or drops it; the marker lines never reach a script.

``body(name, function)`` is the body of one function of a block, for blocks that hold pieces
(a metric, a feature) that the renderer splices into a function of another block.
"""

from __future__ import annotations

import ast
import functools
import re
from importlib import resources

SCRIPT_MARK = "# --- script ---"
PLACEHOLDER = re.compile(r"__([A-Z][A-Z0-9_]*?)__")
INSERT = re.compile(r"^([ \t]*)# insert ([a-z_]+)\n", re.M)
REGION = re.compile(r"^[ \t]*# when (not )?([a-z_]+):\n(.*?)^[ \t]*# end \2\n", re.M | re.S)


class BlockError(ValueError):
    """A block and what the renderer asked of it do not fit (a bug of ours, found by the tests)."""


@functools.cache
def source(name: str) -> str:
    """The whole file ``script_blocks/<name>.py``."""
    return resources.files("engine.agents.builtin.script_blocks").joinpath(f"{name}.py").read_text(encoding="utf-8")


@functools.cache
def script_text(name: str) -> str:
    """What block ``name`` writes into a script: the text below its ``# --- script ---`` line."""
    head, mark, text = source(name).partition(SCRIPT_MARK + "\n")
    if not mark:
        raise BlockError(f"block {name} has no {SCRIPT_MARK!r} line")
    return text


def block(name: str, **constants: str) -> str:
    """Block ``name``'s script text, each given module-level constant set to the given source."""
    return set_constants(script_text(name), **constants)


def set_constants(text: str, **constants: str) -> str:
    for constant, value in constants.items():
        pattern = re.compile(rf"^({re.escape(constant)} = ).*?(?=  #|$)", re.M)
        text, count = pattern.subn(lambda match: match.group(1) + value, text)  # noqa: B023 (used at once)
        if count != 1:
            raise BlockError(f"constant {constant} is set {count} times in the block, not once")
    return text


def fill(text: str, **values: str) -> str:
    """Every ``__NAME__`` placeholder replaced by ``values[NAME]``; each one must be given (a value
    may go unused: its placeholder can sit in a region the renderer dropped)."""

    def value(match: re.Match[str]) -> str:
        if match.group(1) not in values:
            raise BlockError(f"placeholder __{match.group(1)}__ is not filled")
        return values[match.group(1)]

    return PLACEHOLDER.sub(value, text)


def insert(text: str, **parts: str) -> str:
    """Each ``# insert NAME`` line replaced by ``parts[NAME]``'s lines, indented as the line was
    (an empty part: the line goes); each point must be given, a part may go unused."""

    def lines(match: re.Match[str]) -> str:
        indent, point = match.groups()
        if point not in parts:
            raise BlockError(f"insertion point {point} is not given")
        given = parts[point].rstrip("\n")
        return "".join(indent + line + "\n" if line else "\n" for line in given.split("\n")) if given else ""

    return INSERT.sub(lines, text)


def regions(text: str, **kept: bool) -> str:
    """Each optional region kept (without its marker lines) or dropped, as ``kept`` says."""
    used: set[str] = set()

    def region(match: re.Match[str]) -> str:
        negated, name, inner = match.groups()
        if name not in kept:
            raise BlockError(f"region {name} is not decided")
        used.add(name)
        return inner if kept[name] != bool(negated) else ""

    text = REGION.sub(region, text)
    if used != set(kept):
        raise BlockError(f"no region for {sorted(set(kept) - used)}")
    return text


@functools.cache
def body(name: str, function: str) -> str:
    """The body of top-level ``function`` in block ``name``: its lines below the ``def`` line, one
    level (four spaces) out, ready for an insertion point that indents them as it stands."""
    text = script_text(name)
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            lines = text.split("\n")
            if not lines[node.lineno - 1].rstrip().endswith(":"):
                raise BlockError(f"{name}.{function}: its def must fit on one line")
            return "\n".join(line[4:] for line in lines[node.lineno:node.end_lineno])
    raise BlockError(f"block {name} defines no function {function}")


@functools.cache
def functions(name: str) -> tuple[str, ...]:
    """The names of block ``name``'s top-level functions, in the order the file defines them."""
    return tuple(n.name for n in ast.parse(script_text(name)).body if isinstance(n, ast.FunctionDef))


def lines(*parts: str | None) -> str:
    """Parts one after another, line after line (a None part is left out)."""
    return "\n".join(part.rstrip("\n") if part else "" for part in parts if part is not None)


def definitions(*parts: str | None) -> str:
    """Parts two blank lines apart, as top-level definitions stand (a None part is left out)."""
    return "\n\n\n".join(part.rstrip("\n") for part in parts if part is not None)
