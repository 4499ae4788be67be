"""Python's cyclic garbage collector in an ``engine`` process: kept off what the process loads.

An ``engine`` command loads about 90,000 objects that live as long as the process (the event
models pydantic builds, above all). The collector would scan them again and again while they load,
then again at every full collection of a run that lasts hours: an eighth of a quick run's own CPU
(0.42 s of 3.3 s on breast-cancer; 0.18 s with what is loaded frozen). So the entry point keeps the
collector off while the command loads, then *freezes* what is loaded (moves it where collections
never look: it lives as long as the process anyway) and turns the collector back on; a run
freezes once more when its own modules are loaded (the strategy's handlers, the agent backend),
just before it drives.

Only a process started as the ``engine`` command (``clock.started_as_command``) does this: a
program that imports the engine as a library keeps its collector as it set it.
"""

from __future__ import annotations

import gc

from engine.run.clock import started_as_command


def loading_command() -> None:
    """Called by the entry point before it loads the command: the collector off while it loads."""
    gc.disable()


_run_frozen = False


def loaded() -> None:
    """What is loaded so far lives as long as the process: frozen, and the collector on again."""
    if started_as_command():
        gc.freeze()
        gc.enable()


def run_loaded() -> None:
    """Called as a run is about to be driven, its modules loaded: :func:`loaded`, once a process.
    What a run builds is frozen only in a process's first run (a cycle frozen is never collected:
    a process that drove several runs would keep every earlier run's objects)."""
    global _run_frozen
    if not _run_frozen:
        _run_frozen = True
        loaded()
