"""One agent call's deadline on the wall clock, as every backend applies it (REQ-OR-034).

The engine gives a call its time limit (``AgentContext.time_limit_s``: from now to the request's
``deadline_s``). The limit covers the whole call, retries included: each try gets what is left,
and no retry starts when its wait would leave less than ``MIN_TRY_S``. Near the end the backend
asks the agent to stop (no new turn once less than ``wrap_up_s`` is left, so it ends with what
it has); at the limit whatever is still in flight is cut.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from engine.agents.base import AgentContext

#: The agent is asked to stop once less than this share of its time limit is left ...
WRAP_UP_FRACTION = 0.1
#: ... or less than this many seconds, whichever is smaller.
MAX_WRAP_UP_S = 30.0
#: A try (or a retry after its wait) with less time than this left is not started.
MIN_TRY_S = 1.0


def wrap_up_s(time_limit_s: float) -> float:
    """How long before its time limit a call is asked to stop starting new turns."""
    return min(MAX_WRAP_UP_S, WRAP_UP_FRACTION * time_limit_s)


def cut_message(time_limit_s: float, detail: str) -> str:
    """Why a call cut at its deadline failed (the same words on every backend)."""
    return f"the agent call reached its deadline ({time_limit_s:g} s) and was cut: {detail}"


class CallClock:
    """The time left of one call across its tries (``None`` everywhere: no deadline)."""

    def __init__(self, time_limit_s: float | None, now: Callable[[], float] = time.monotonic) -> None:
        self.time_limit_s = time_limit_s
        self._now = now
        self._end = None if time_limit_s is None else now() + time_limit_s

    def left(self) -> float | None:
        return None if self._end is None else self._end - self._now()

    def allows(self, wait_s: float = 0.0) -> bool:
        """A try may start after waiting ``wait_s``."""
        left = self.left()
        return left is None or left - wait_s >= MIN_TRY_S

    def for_try(self, ctx: AgentContext) -> AgentContext:
        """``ctx`` with the time this try may take (what is left of the call's limit)."""
        left = self.left()
        return ctx if left is None else dataclasses.replace(ctx, time_limit_s=max(0.0, round(left, 3)))
