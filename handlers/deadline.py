"""One value for "how much time is left": a phase's soft and hard end, and the timeout rules.

* ``soft_s`` — the unit of work wraps up: no new step (outer step, inner attempt, ensemble
  round, merge, debug retry) starts once it has passed; what is under way may finish.
* ``hard_s`` — nothing is requested after it (REQ-OR-024: the deadline is checked at every agent
  call and evaluation, centrally in ``Workflow``), every evaluation's timeout ends by it, and the
  phase's guard timer fires there and cancels whatever is still running.

Timeouts (spec README: "never the full 24 h"): an evaluation asks for ``want_s`` (its rule's
share), is never given less than ``MIN_EVAL_TIMEOUT_S`` while the soft end allows it, never more
than ``MAX_EVAL_TIMEOUT_S``, and never past the hard end: the floor only ever fills the grace
between the soft end and the hard end, the window's own end (``handlers.timebudget``), where its
guard timer cuts anyway. A unit whose work may use a longer window gets that window as its
deadline (Phase 1's candidates, while none has a score: the finalize-now point), not a floor.
A debug retry gets the same rule from the clock *at the retry*, so retries shrink as the
deadline nears instead of each keeping the first attempt's full timeout.

* ``fit_s`` — optional: the end a script is asked to size its work to (``fit_within``), sooner
  than the hard end: Phase 1's drafts are told the window they are waited for, while the hard
  end stays where the phase may still be extended to (docs/decisions/0032). Nothing is cut there.

Both ends are driven seconds (``wf.now``); ``None`` means unbounded (a library call without a
limit). Everything here is arithmetic on values: no clock is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from handlers.futures import Cancelled

MIN_EVAL_TIMEOUT_S = 30.0      # an evaluation shorter than this rarely finishes anything useful
MAX_EVAL_TIMEOUT_S = 3600.0    # one script never holds a phase for more than an hour
MIN_START_S = 1.0              # less than this before the hard end: do not start at all


class DeadlineReached(Cancelled):
    """Raised (instead of requesting an effect) when a unit of work asks for an agent call or an
    evaluation after its hard end. A subclass of ``Cancelled``: code that keeps its progress on a
    cut handles both the same way."""


@dataclass(frozen=True)
class Deadline:
    soft_s: float | None = None
    hard_s: float | None = None
    fit_s: float | None = None

    def __post_init__(self) -> None:
        if self.soft_s is not None and self.hard_s is not None and self.soft_s > self.hard_s:
            object.__setattr__(self, "soft_s", self.hard_s)

    @classmethod
    def at(cls, soft_s: float | None, hard_s: float | None = None) -> Deadline:
        """A deadline from a soft end (and a hard end, by default the soft end)."""
        return cls(soft_s, soft_s if hard_s is None else hard_s)

    def soft_left(self, now: float) -> float:
        return math.inf if self.soft_s is None else self.soft_s - now

    def hard_left(self, now: float) -> float:
        return math.inf if self.hard_s is None else self.hard_s - now

    def passed(self, now: float) -> bool:
        """The soft end has passed: start nothing new."""
        return self.soft_s is not None and now >= self.soft_s

    def over(self, now: float) -> bool:
        """Too close to the hard end to request anything."""
        return self.hard_s is not None and self.hard_left(now) < MIN_START_S

    def timeout(self, now: float, want_s: float, *, floor_s: float = MIN_EVAL_TIMEOUT_S,
                cap_s: float = MAX_EVAL_TIMEOUT_S) -> float:
        """An evaluation's timeout: ``want_s`` (capped at ``cap_s``, an hour by default) and at
        most the time to the soft end, never below ``floor_s``, and never past the hard end."""
        t = max(floor_s, min(want_s, cap_s, self.soft_left(now)))
        return max(MIN_START_S, min(t, self.hard_left(now)))

    def cap(self, now: float, timeout_s: float) -> float:
        """A requested timeout clipped at the hard end (the runtime applies this to every
        evaluation, so no caller can ask for time past it)."""
        return max(MIN_START_S, min(timeout_s, self.hard_left(now)))

    def fit_within(self, now: float, timeout_s: float) -> float | None:
        """The seconds an evaluation of ``timeout_s`` requested now is asked to fit its work into,
        when ``fit_s`` is sooner than its timeout; else None, its timeout is its deadline (also once
        ``fit_s`` has passed: a retry after it has nothing to fit to but its timeout)."""
        left = None if self.fit_s is None else self.fit_s - now
        return left if left is not None and MIN_START_S <= left < timeout_s else None

    def narrowed(self, soft_s: float | None = None, hard_s: float | None = None,
                 fit_s: float | None = None) -> Deadline:
        """This deadline with tighter ends (never looser)."""
        def tighter(a: float | None, b: float | None) -> float | None:
            return b if a is None else a if b is None else min(a, b)
        return Deadline(tighter(self.soft_s, soft_s), tighter(self.hard_s, hard_s), tighter(self.fit_s, fit_s))


UNBOUNDED = Deadline()

__all__ = ["MAX_EVAL_TIMEOUT_S", "MIN_EVAL_TIMEOUT_S", "UNBOUNDED", "Deadline", "DeadlineReached"]
