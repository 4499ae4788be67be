"""What a run id may be: the one rule, used wherever a run gets its name (``engine start``,
``engine import``, campaigns, the library API).

A run id names a directory (``<runs root>/<run id>/``) and is printed inside shell commands, so it
is a single path component of safe characters: letters, digits, '.', '_', '-' and ':' (a campaign's
own stream is ``campaign:NAME``), beginning with a letter or a digit (so never '.', '..' or an
option), at most ``MAX_RUN_ID_LENGTH`` characters.
"""

from __future__ import annotations

import re

from store.base import StoreError

MAX_RUN_ID_LENGTH = 160
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")


class InvalidRunId(StoreError):
    """A run id that could not name a run's directory safely."""


def check_run_id(run_id: str) -> str:
    """``run_id`` itself if it is a valid run id; otherwise InvalidRunId saying what is wrong."""
    shown = run_id if len(run_id) <= 60 else run_id[:60] + "…"
    if not run_id:
        problem = "it is empty"
    elif len(run_id) > MAX_RUN_ID_LENGTH:
        problem = f"it is {len(run_id)} characters long (at most {MAX_RUN_ID_LENGTH})"
    elif "/" in run_id or "\\" in run_id:
        problem = "it holds a path separator"
    elif not _RUN_ID.fullmatch(run_id):
        problem = "it must begin with a letter or a digit and hold only letters, digits, '.', '_', '-' or ':'"
    else:
        return run_id
    raise InvalidRunId(f"run id {shown!r} is not usable: {problem}; choose another (e.g. --run-id my-run-1)")
