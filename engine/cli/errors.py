"""What a user sees when a command cannot do what it was asked: one ``error:`` line that names
what was wrong and what to do, exit code 2 (1 when the run or the storage under it failed for
good), never a traceback.

Every verb runs inside :class:`EngineGroup` (the ``engine`` app's group class), so this is the one
place where an input or OS error becomes that line: a verb does not catch them itself. Typer's
``CliRunner`` and the ``engine`` script take the same path (the tests drive both).
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

err = Console(stderr=True)

#: What a value that failed to parse should have been, by pydantic's error type (typer >= 0.25
#: parses option values with pydantic; older typers give click's own message, used as it is).
_EXPECTED = {
    "int_parsing": "a whole number", "int_from_float": "a whole number", "int_type": "a whole number",
    "float_parsing": "a number", "float_type": "a number", "finite_number": "a finite number",
    "bool_parsing": "true or false",
}


def fail(message: str, code: int = 2) -> NoReturn:
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def user_errors() -> tuple[type[BaseException], ...]:
    """The engine's own input errors: their message is what the user reads."""
    from engine.agents.select import BackendUnavailable
    from engine.cli.stores import UsageError
    from engine.config.presets import ConfigError
    from engine.run.errors import EngineError
    from engine.run.strategies import StrategyError
    from engine.tasks import TaskError  # loaded on use: the CLI starts faster without it
    from store.base import StoreError

    return (StoreError, EngineError, ConfigError, StrategyError, UsageError, TaskError, BackendUnavailable)


def exit_code_of(exc: BaseException) -> int:
    """1 when the run or the storage under it failed for good (a full disk, a damaged file), else 2
    (bad input; also a lock that outlasted the busy timeout: nothing failed, try again)."""
    from engine.run.errors import HandlersChanged
    from store.base import StorageFault

    return 1 if isinstance(exc, (HandlersChanged, StorageFault)) else 2


def internal_error(exc: Exception) -> NoReturn:
    """The last resort of the ``engine`` script: an error no rule above foresaw (a bug, the
    engine's or in a module the user named) is one line (exit 1); ENGINE_LOG_LEVEL=DEBUG prints
    where it happened."""
    import os
    import traceback

    if os.environ.get("ENGINE_LOG_LEVEL", "").upper() == "DEBUG":
        traceback.print_exception(exc)
    fail(f"unexpected error: {type(exc).__name__}: {exc} (ENGINE_LOG_LEVEL=DEBUG shows where it happened; unless "
         "it is in your own --strategy or --agent module, please report it with the command that gave it)", 1)


class EngineGroup(TyperGroup):
    """The ``engine`` command's group: a verb's bad option value, input error, OS error or
    undecodable file ends as :func:`fail`'s one line."""

    def invoke(self, ctx: Any) -> Any:
        protected = ctx._protected_args if hasattr(ctx, "_protected_args") else ctx.protected_args  # click < 8.2
        args = [*protected, *ctx.args]
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            fail(bad_option_message(exc))
        except UnicodeDecodeError as exc:
            fail(undecodable_message(exc, args))
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # `engine log | head`: the reader left; click ends quietly
                raise
            fail(os_error_message(exc))
        except user_errors() as exc:
            fail(str(exc), exit_code_of(exc))


def bad_option_message(exc: typer.BadParameter) -> str:
    """``--seed '1e99': expected a whole number (…)``: the option, the value given, what it takes."""
    param = exc.param
    if param is None or type(exc) is not typer.BadParameter:  # a missing option: click's words name it
        return exc.format_message()
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("-")]
    name = opts[-1] if opts else str(param.name or "").upper()
    cause = exc.__cause__
    problems = cause.errors() if cause is not None and hasattr(cause, "errors") else []
    if not problems:
        return f"{name}: {exc.message}"
    given, kind, bounds = problems[0].get("input"), str(problems[0].get("type", "")), problems[0].get("ctx") or {}
    expected = _EXPECTED.get(kind) or _bounded(bounds) or str(problems[0].get("msg", "")).lower()
    helps = str(getattr(param, "help", "") or "").strip()
    return f"{name} {given!r}: expected {expected}" + (f" ({helps})" if helps else "")


def _bounded(bounds: dict[str, Any]) -> str:
    """``at least 0``, ``at most 4294967295``: a number out of the option's range."""
    for key, words in (("ge", "at least"), ("gt", "more than"), ("le", "at most"), ("lt", "less than")):
        if key in bounds:
            return f"a number {words} {bounds[key]}"
    return ""


def undecodable_message(exc: UnicodeDecodeError, args: Sequence[str]) -> str:
    """The file a command could not read as text, named when it was given on the command line."""
    values_of_db = {i + 1 for i, a in enumerate(args) if a == "--db"}  # a database is not read as text
    files = [a for i, a in enumerate(args) if i not in values_of_db and not a.startswith("-") and _is_file(a)]
    what = " or ".join(files) if files else "a file this command read"
    return (f"{what} is not UTF-8 text ({exc.reason} at byte {exc.start}); give the text file the command "
            "expects (an export of `engine export`, a YAML/JSON config, a CSV)")


def os_error_message(exc: OSError) -> str:
    """The path and what is wrong with it, in words that say what to give instead."""
    where = exc.filename if exc.filename is not None else ""
    if isinstance(exc, IsADirectoryError):
        return f"{where} is a directory; give a file path (a file inside it, for instance)"
    if isinstance(exc, FileNotFoundError) and where:
        parent = Path(str(where)).parent
        if not parent.is_dir():
            return f"{where}: the folder {parent} does not exist; create it or give another path"
        return f"{where}: no such file or directory (it cannot be read, nor created there)"
    if isinstance(exc, PermissionError) and where:
        return f"{where}: permission denied; give a path you may read and write"
    if isinstance(exc, NotADirectoryError) and where:
        return f"{where}: a part of this path is a file, not a folder; give another path"
    reason = exc.strerror or str(exc)
    return f"{where}: {reason}" if where else reason


def _is_file(arg: str) -> bool:
    try:
        return Path(arg).is_file()
    except (OSError, ValueError):  # a name too long, or with a NUL: not a file this command read
        return False
