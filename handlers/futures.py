"""The scheduling primitives of the workflow runtime: futures, tasks, cancellation.

A ``_Future`` is a value the workflow waits for; it is resolved either by an input event (an
effect's result, via the runtime) or by a finishing task. Nothing here knows about events,
clocks or I/O: the runtime in ``handlers.runtime`` decides when futures resolve.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any


class Cancelled(Exception):
    """Thrown into a workflow task that was cancelled (e.g. its deadline passed)."""


class _Future:
    """A value the workflow waits for; resolved by an input or by a finishing task."""

    __slots__ = ("done", "value", "error", "waiters")

    def __init__(self) -> None:
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None
        self.waiters: list[Task | _Wake] = []

    def __await__(self) -> Generator[_Future, None, Any]:
        if not self.done:
            yield self
        if self.error is not None:
            raise self.error
        return self.value


class Task:
    """A running workflow coroutine. Awaiting a task waits for its result."""

    __slots__ = ("coro", "result", "waiting_on", "effect_waiting", "children", "cancelled", "name")

    def __init__(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        self.coro = coro
        self.name = name
        self.result = _Future()
        self.waiting_on: _Future | None = None
        self.effect_waiting: str | None = None
        self.children: list[Task] = []
        self.cancelled = False

    def __await__(self) -> Generator[_Future, None, Any]:
        return self.result.__await__()

    @property
    def done(self) -> bool:
        return self.result.done


class _Wake:
    """A waiter that resolves another future instead of stepping a task (used by ``first``)."""

    __slots__ = ("target",)

    def __init__(self, target: _Future) -> None:
        self.target = target
