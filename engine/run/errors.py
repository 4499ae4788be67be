"""The errors of driving a run, each with a message for the user (``engine/cli/errors.py`` prints them)."""

from __future__ import annotations

from replay.verify import Divergence


class EngineError(Exception):
    """A problem driving a run; the message is for the user."""


class RunFinished(EngineError):
    pass


class HandlersChanged(EngineError):
    def __init__(self, divergence: Divergence) -> None:
        super().__init__(
            "this run's log no longer matches the handlers (the code changed since it was recorded), "
            "so it cannot be resumed exactly; `engine rerun` replays its agent answers on the new code.\n"
            + divergence.describe()
        )
        self.divergence = divergence


__all__ = ["EngineError", "HandlersChanged", "RunFinished"]
