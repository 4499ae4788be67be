"""SIGINT and SIGTERM stop a run, whenever they come during its drive.

The handlers are installed for the whole of ``Driver.run``: from before it reads the log until
after it has recorded ``DriverStopped`` and released its lease. A signal that comes while the log
loads stops the run before its first effect; one that comes while the effects in flight are
cancelled (a second Ctrl-C) is noted and changes nothing. What they replace: anyio's signal
receiver, open only while the loop ran and closed after the first signal, which put Python's
default SIGINT handler back. A second SIGINT then raised ``KeyboardInterrupt`` wherever the main
thread was, in the unwinding of an evaluation or in the event loop's own shutdown, so
``DriverStopped`` was never recorded, and a shutdown cut short never told anyio's worker threads
to end: the interpreter waited for them at exit, for ever.

A Python signal handler runs in the main thread between two bytecodes, possibly in the middle
of the event loop's own code, so the handler does no more than record the reason (one attribute)
and hand the rest to the loop with ``call_soon_threadsafe`` (safe there: asyncio's own signal
handling does the same).

After a stop, the command's process has nothing left to do but print and exit, and Python's
default handler coming back would let an impatient third Ctrl-C raise ``KeyboardInterrupt``
wherever the main thread then is: in a garbage-collection callback it cannot propagate, so the
interpreter prints its traceback ("Exception ignored in ...") and goes on. So in a process
started as the ``engine`` command the stop signals stay ignored once one has stopped the run; a
program that drives runs as a library gets its own handlers back either way.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from engine.run.clock import started_as_command

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """While entered (in the main thread; elsewhere it does nothing), SIGINT and SIGTERM call
    ``on_signal(reason)`` at once (it must only record) and ``then(reason, first)`` soon after
    on ``loop``, ``first`` telling whether it is the first stop signal. The previous handlers
    come back on exit, unless a stop signal came in a process started as the ``engine``
    command: then they stay ignored (see the module's docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_signal: Callable[[str], bool],
                 then: Callable[[str, bool], None]) -> None:
        self._loop = loop
        self._on_signal = on_signal
        self._then = then
        self._previous: dict[signal.Signals, Any] = {}
        self._signalled = False

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        ignore = self._signalled and started_as_command()
        for sig, previous in self._previous.items():
            signal.signal(sig, signal.SIG_IGN if ignore else previous)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        reason = f"signal {signal.Signals(signum).name}"
        self._signalled = True
        first = self._on_signal(reason)
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._then, reason, first)
