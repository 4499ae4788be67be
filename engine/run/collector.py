"""Python's cyclic garbage collector in an ``engine`` process: paused while long-lived objects are
built (``gc_paused``: a resume's log and handlers), kept off what the process loads.

An ``engine`` command loads about 90,000 objects that live as long as the process (the event
models pydantic builds, above all). The collector would scan them again and again while they load,
then again at every full collection of a run that lasts hours: an eighth of a quick run's own CPU
(0.42 s of 3.3 s on breast-cancer; 0.18 s with what is loaded frozen). So the entry point
(engine/cli/entry.py) keeps the collector off while the command loads, then *freezes* what is
loaded (moves it where collections never look: it lives as long as the process anyway) and turns
the collector back on; a run freezes once more when its own modules are loaded (the strategy's
handlers, the agent backend), just before it drives; and the command freezes everything as it
ends, since the collections the interpreter runs at exit free nothing the OS does not (they cost
seconds on a busy machine with scikit-learn loaded: a run stopped by SIGINT recorded DriverStopped
in 0.3 s, then its process took 11 s to go).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from engine.run.clock import started_as_command

_run_frozen = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC paused while the log and the handlers' state are built: they allocate
    hundreds of thousands of objects that live on, and each collection would rescan them all
    (a fifth of a day-long evolve run's rebuild). Cycles made meanwhile are collected after."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@contextmanager
def loading_command() -> Iterator[None]:
    """The entry point loads the command inside this: the collector paused, then what was loaded
    frozen and the collector on again, whatever the loading did."""
    with gc_paused():
        try:
            yield
        finally:
            gc.freeze()


def run_loaded() -> None:
    """Called as a run is about to be driven, its modules loaded: what is loaded frozen, in a
    process started as the ``engine`` command (a program that imports the engine as a library keeps
    its collector as it set it), and only for its first run (a cycle frozen is never collected: a
    process that drove several runs would keep every earlier run's objects)."""
    global _run_frozen
    if _run_frozen or not started_as_command():
        return
    _run_frozen = True
    gc.freeze()


def command_ending() -> None:
    """The command is done and its process ends next: nothing is left for a collection to free."""
    if started_as_command():
        gc.freeze()
