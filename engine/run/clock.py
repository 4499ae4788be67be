"""Where a run's clock starts (REQ-OR-024: a run's limit is the wall clock of the command that starts it)."""

from __future__ import annotations

import sys
import time


def process_started_monotonic() -> float:
    """When this process started, on ``time.monotonic()``'s scale (REQ-OR-024: a run's limit is
    the wall clock of the command that starts it, so its clock counts the interpreter's start-up
    and the imports before the command's first line: 0.7 s of ``engine start`` here)."""
    import psutil

    try:
        age = time.time() - psutil.Process().create_time()
    except psutil.Error:      # a process table we may not read: count from now
        age = 0.0
    return time.monotonic() - max(0.0, age)


def command_clock_started() -> float:
    """Where ``engine start``'s run clock starts (REQ-OR-024): when this process started if it was
    started as the ``engine`` command (its ``__main__`` is the command's entry: the console script,
    ``engine.cli.entry``, or ``python -m engine.cli``), else now. A call of the command inside a
    long-lived process (a test or a notebook calling ``main()``) counts from the call: that
    process's age is not the run's (a pytest worker 1,072 s old had used up a 900 s limit before
    the run began)."""
    return process_started_monotonic() if started_as_command() else time.monotonic()


def started_as_command() -> bool:
    """This process was started as the ``engine`` command: its ``__main__`` is the command's entry."""
    entry = sys.modules.get("__main__")
    spec = getattr(entry, "__spec__", None)
    entry_module = getattr(getattr(entry, "main", None), "__module__", None)
    return entry_module in ("engine.cli.entry", "engine.cli.main") or (
        spec is not None and spec.name in ("engine.cli.__main__", "engine.cli.main"))


__all__ = ["command_clock_started", "process_started_monotonic", "started_as_command"]
