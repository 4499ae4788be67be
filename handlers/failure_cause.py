"""The common root cause of failed candidates, for the error a failed run reports.

"all 8 candidates produced execution errors" says nothing a user can act on; the first exception
line the candidates share and the file it is about (``UnicodeDecodeError: … (about
./input/train.csv)``) does. Pure: it reads the tracebacks the log already holds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from handlers.evaluation import Evaluated
    from handlers.workflow import Workflow

# The handler change (handlers/patches.py) that adds the cause to a failed run's error: runs
# recorded before it keep the error they recorded.
PATCH = "run-error-names-root-cause"

# The line a traceback ends with: ``ValueError: …``, ``pandas.errors.ParserError: …``, ``KeyError: 'x'``.
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Iteration)\b(?::.*)?$")
_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+')
# A data file a line names: quoted, under input/ or with a data file's suffix.
_DATA_FILE = re.compile(
    r"""['"]((?:\.{0,2}/)?(?:[\w.-]+/)*input/[^'"]+|[^'"\s]+\.(?:csv|tsv|parquet|json|txt|npy|npz|png|jpe?g|zip|gz|feather|pkl))['"]""")
_LIBRARY = ("site-packages", "/lib/python", "<frozen")
_MAX_CHARS = 300


def exception_line(text: str) -> str | None:
    """The last exception line of a traceback (the one that ended the script), if any."""
    lines = [line.strip() for line in text.splitlines()]
    return next((line[:_MAX_CHARS] for line in reversed(lines) if _EXCEPTION.match(line)), None)


def _script_source_line(text: str) -> str | None:
    """The source line of the script's own deepest frame (not a library's)."""
    lines = text.splitlines()
    found = None
    for i, line in enumerate(lines):
        frame = _FRAME.match(line)
        path = frame.group(1) if frame else ""
        # The script is a .py file outside the libraries (compiled frames: pandas/_libs/*.pyx).
        if path.endswith(".py") and not any(part in path for part in _LIBRARY) and i + 1 < len(lines):
            found = lines[i + 1].strip()
    return found


def file_it_is_about(text: str, exception: str) -> str | None:
    """The data file the exception names, else the one the failing script line reads."""
    for source in (exception, _script_source_line(text) or ""):
        match = _DATA_FILE.search(source)
        if match:
            return match.group(1)
    return None


def root_cause(errors: Sequence[str]) -> str | None:
    """``every candidate failed with <exception line> (about <file>)``, or the most common one
    with its count; None when no error holds an exception line."""
    causes = [(line, file_it_is_about(text, line)) for text in errors if (line := exception_line(text))]
    if not causes:
        return None
    counts = Counter(line for line, _ in causes)
    top, count = counts.most_common(1)[0]  # ties: the first seen, so the same log gives the same answer
    file = next((f for line, f in causes if line == top and f), None)
    share = "every candidate" if count == len(errors) else f"{count} of {len(errors)} candidates"
    return f"{share} failed with {top}" + (f" (about {file})" if file else "")


def cause_suffix(wf: Workflow, evaluated: Sequence[Evaluated]) -> str:
    """``": <root cause>"`` for the error of a phase whose candidates all failed, or ""."""
    if not wf.patched(PATCH):
        return ""
    cause = root_cause([ev.result.error_traceback or ev.result.stderr for ev in evaluated])
    return f": {cause}" if cause else ""
