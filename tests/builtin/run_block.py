"""Run one block of a builtin script on its own, on a bundled task, and see what it defines.

``python -m tests.builtin.run_block NAME`` prepares a bundled task (``--task``, iris by default),
has the builtin agent write its first draft for it (``--model``, or several comma-separated; a
blend method with ``--combine``; the search's row cap of a short run, ``--rows``), and runs that script from its first line to the end of block
``NAME`` (``script_blocks/NAME.py``) in a fresh folder, as the engine runs a script: the task's
files in ``./input``. Then it prints each name the block defines, with its type and shape. A block
runs with what the blocks before it defined, so this is how one runs alone. ``--show`` prints the
script up to the block instead of running it.

The blocks are marked by wrapping ``blocks.script_text`` in this process only: a comment line
before and after each block's text, so the script's end can be cut at the block's. A block that
sits inside another block's function (a feature, a metric, a member of ``model``) cannot be cut
there: the tool names the block that holds it.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from engine.agents.builtin import blocks
from engine.agents.builtin.catalog import FAMILIES, family_for_name
from engine.agents.builtin.image_task import with_images
from engine.agents.builtin.render import new_spec, render_solution, with_families
from engine.agents.builtin.render_train import COMBINE_METHODS
from engine.agents.builtin.search_rows import MIN_SEARCH_ROWS
from engine.agents.builtin.spec import task_kind_and_metric
from engine.agents.builtin.text_task import with_text
from engine.tasks import bundled, loader
from engine.tasks.loader import LoadedTask

_BEGIN, _END = "# >>> block ", "# <<< block "
_MARKER = re.compile(rf"^[ \t]*({re.escape(_BEGIN)}|{re.escape(_END)})[a-z_0-9]+\n", re.M)
_unmarked_script_text = blocks.script_text


def _refuse(message: str) -> SystemExit:
    """Bad input: the message on stderr, exit code 2."""
    print(f"run_block: {message}", file=sys.stderr)
    return SystemExit(2)


def _marked_script_text(name: str) -> str:
    return f"{_BEGIN}{name}\n{_unmarked_script_text(name)}{_END}{name}\n"


def marked_script(spec: dict[str, Any]) -> str:
    """The solution script of this spec with each block's text between marker comments."""
    blocks.script_text = _marked_script_text  # type: ignore[assignment]
    try:
        return render_solution(spec)
    finally:
        blocks.script_text = _unmarked_script_text


def draft_spec(task: LoadedTask, models: list[str], combine: str, rows: int) -> dict[str, Any]:
    """The agent's first draft for the task (``retrieval.initial_spec``), with these models."""
    kind, metric = task_kind_and_metric(task.description)
    families = [family_for_name(m) for m in models]
    unknown = [m for m, f in zip(models, families) if f is None]
    if unknown:
        raise _refuse(f"no model family matches {unknown}; known: {sorted(FAMILIES)}")
    known = [f for f in families if f is not None]
    spec = new_spec(kind, metric, 0, rows or None, known[0])
    if len(known) > 1:
        spec = with_families(spec, known)
    spec["train"]["combine"] = combine
    return with_text(with_images(spec, task.public_dir), task.public_dir)


def cut_after(script: str, name: str) -> str:
    """The script from its start to the end of block ``name`` (its first stand at top level),
    marker lines removed."""
    lines = script.split("\n")
    ends = [i for i, line in enumerate(lines) if line.strip() == f"{_END}{name}"]
    if not ends:
        held = sorted({line.strip()[len(_END):] for line in lines if line.strip().startswith(_END)})
        raise _refuse(f"this script holds no block {name!r}; it holds {held}. Choose one of "
                         "those, or a task, --model or --combine whose script holds it.")
    top = [i for i in ends if lines[i].startswith(_END)]
    if not top:
        raise _refuse(f"block {name!r} sits inside a function of another block; run the "
                         f"block that holds it ({_holder(lines, ends[0])}).")
    return _MARKER.sub("", "\n".join(lines[: top[0] + 1]) + "\n")


def _holder(lines: list[str], index: int) -> str:
    """The innermost top-level block whose text holds line ``index``."""
    for line in reversed(lines[:index]):
        if line.startswith(_BEGIN):
            return line[len(_BEGIN):]
    return "none"


def defined_names(name: str) -> list[str]:
    """The names block ``name`` defines at its top level, in its order."""
    found: list[tuple[int, int, str]] = []
    todo: list[ast.AST] = list(ast.parse(_unmarked_script_text(name)).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.lineno, node.col_offset, node.name))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.append((node.lineno, node.col_offset, node.id))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [(node.lineno, node.col_offset, a.asname or a.name.split(".")[0]) for a in node.names]
        elif not isinstance(node, (ast.Lambda, ast.comprehension, ast.ListComp, ast.SetComp, ast.DictComp,
                                   ast.GeneratorExp)):
            todo.extend(ast.iter_child_nodes(node))   # names bound in a comprehension stay in it
    return list(dict.fromkeys(name for _, _, name in sorted(found)))


def report_code(names: list[str]) -> str:
    """Lines that print each name's type and shape (or length, or value) when the script ends."""
    return (f"\nfor _name in {names!r}:\n"
            "    if _name not in globals():\n"
            "        print(f'{_name}: not bound (a branch not taken, or a loop that did not run)')\n"
            "        continue\n"
            "    _value = globals()[_name]\n"
            "    _size = '' if callable(_value) else getattr(_value, 'shape', None) or (\n"
            "        len(_value) if hasattr(_value, '__len__') else _value)\n"
            "    print(f'{_name}: {type(_value).__name__} {_size}'[:160])\n")


def run(script: str, public_dir: Path, work: Path) -> int:
    shutil.copytree(public_dir, work / "input")
    (work / "final").mkdir()
    (work / "solution.py").write_text(script)
    return subprocess.run([sys.executable, "solution.py"], cwd=work, timeout=1800).returncode


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.builtin.run_block", description=__doc__.split("\n")[0])
    parser.add_argument("block", help="a file name of engine/agents/builtin/script_blocks/, without .py")
    parser.add_argument("--task", default="iris", help="a bundled task (`engine tasks list` names them)")
    parser.add_argument("--model", default="random forest", help="model names, comma-separated")
    parser.add_argument("--combine", default="mean", choices=COMBINE_METHODS, help="how several models blend")
    parser.add_argument("--rows", type=int, default=MIN_SEARCH_ROWS,
                        help="the search's cap on training rows (subsample.py), as a short run's; 0: every row")
    parser.add_argument("--show", action="store_true", help="print the script up to the block; do not run it")
    args = parser.parse_args(argv)
    if args.task not in bundled.bundled_names():
        parser.error(f"no bundled task {args.task!r}")
    with tempfile.TemporaryDirectory(prefix="run_block-") as tmp:
        task = loader.load_task(bundled.prepare_bundled(args.task, Path(tmp) / "task"))
        spec = draft_spec(task, [m.strip() for m in args.model.split(",")], args.combine, args.rows)
        script = cut_after(marked_script(spec), args.block)
        if args.show:
            print(script, end="")
            return 0
        return run(script + report_code(defined_names(args.block)), task.public_dir, Path(tmp) / "work")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
