"""Writing a solution to disk, after the static checks of REQ-EX-005/006/044/045."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

import structlog

from events.domain import SolutionScript

log = structlog.get_logger(__name__)

# REQ-EX-006 + REQ-EX-044. ``\bexit`` does not match ``os._exit(`` (``_`` is a word character),
# hence its own pattern.
_EXIT_CALLS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("sys.exit()", re.compile(r"\bsys\.exit\s*\(")),
    ("os._exit()", re.compile(r"\bos\._exit\s*\(")),
    ("exit()", re.compile(r"\bexit\s*\(")),
    ("quit()", re.compile(r"\bquit\s*\(")),
)


class ScriptRejected(ValueError):
    """A script failed the pre-write checks. A ``ValueError`` as REQ-EX-006 requires; the
    evaluator turns it into an error ``EvaluationResult`` whose text is ``str(exc)``, so the
    debugger sees it like any other error (Known decisions)."""


def _without_comments(content: str) -> str:
    # A comment such as "# never call exit()" must not reject a script; strings still count,
    # because a string can be exec'd and the checks are meant to be conservative.
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(content).readline) if t.type != tokenize.COMMENT]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return content


def validate_script_content(content: str) -> None:
    """REQ-EX-006/044: raise ``ScriptRejected`` for empty code or an exit call.

    Exit calls are refused because they end the script before it prints its score line or
    writes its submission, hiding failures (the paper's debugger prompt forbids them too).
    Checked with the spec's regular expressions on the code minus comments.
    """
    if not content.strip():
        raise ScriptRejected("script rejected: the code is empty")
    code = _without_comments(content)
    for label, pattern in _EXIT_CALLS:
        match = pattern.search(code)
        if match:
            line_no = code.count("\n", 0, match.start()) + 1
            raise ScriptRejected(
                f"script rejected: it calls {label} (line {line_no}); remove every exit call "
                "(exit(), quit(), sys.exit(), os._exit()) and let the script finish normally"
            )


def write_script(
    solution: SolutionScript,
    working_dir: str | os.PathLike[str],
    filename: str = "solution.py",
) -> str:
    """REQ-EX-005: write ``solution.content`` (UTF-8, exactly, overwriting) and return the absolute path.

    Raises ``ScriptRejected`` (a ``ValueError``) before writing anything if the checks fail.
    """
    return write_code(solution.content, working_dir, filename)


def write_code(content: str, working_dir: str | os.PathLike[str], filename: str) -> str:
    """``write_script`` for bare code, so callers need not build a ``SolutionScript``."""
    validate_script_content(content)
    path = (Path(working_dir) / filename).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    # newline="" keeps the content byte-exact (no \n -> os.linesep translation).
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(content)
    log.debug("harness.script_written", path=str(path), length=len(content))
    return str(path)


def detect_error_masking(content: str) -> list[str]:
    """REQ-EX-045 (advisory, never blocks): warn about handlers that swallow errors.

    Flags bare ``except:`` and ``except Exception:`` / ``except BaseException:`` whose body is
    only ``pass``. Unparseable code gives no warnings: the run itself will report the syntax error.
    """
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError):
        return []
    warnings: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ExceptHandler):
            continue
        if node.type is None:
            warnings.append(f"line {node.lineno}: bare 'except:' hides errors")
            continue
        caught = node.type.id if isinstance(node.type, ast.Name) else None
        only_pass = all(isinstance(stmt, ast.Pass) for stmt in node.body)
        if caught in {"Exception", "BaseException"} and only_pass:
            warnings.append(f"line {node.lineno}: 'except {caught}: pass' silently swallows errors")
    return warnings
