"""Whether a loop starts another step: counted (the fixed-step presets) or timed (the time mode).

``PipelineConfig.step_policy``:

* ``"fixed"`` (the ``paper`` and ``quick`` presets, and every config recorded before the field
  existed): a loop runs its configured number of steps (``num_retrieved_models`` candidates,
  ``outer_loop_steps`` × ``inner_loop_steps`` refinements per path, ``ensemble_rounds`` rounds,
  ``max_steps`` evolve nodes), each only checking that its window's soft end has not passed.
* ``"time"`` (the ``time`` preset): those counts are upper bounds; the time plan decides how many
  run. A loop starts another step while the time left before its window's soft end holds one
  more step as long as its earlier steps took (``StepTimer``: the mean of the steps it finished,
  on the driven clock; before any finished, a prior from the run's measured agent calls and
  evaluations, ``handlers.timebudget.Measured``). So each phase fills its share, a longer limit
  gives more steps, and no step is started that is not expected to end inside the window; one
  that runs long is still cut by the window's guard timer, as in the fixed mode.

Everything here is arithmetic on driven times (``wf.now``) and recorded durations: no clock is
read, so a replay decides the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from events.config import PipelineConfig
from handlers.deadline import Deadline
from handlers.timebudget import Measured

FIXED = "fixed"
TIME = "time"
INNER_CAP_FACTOR = 4   # time mode: one outer step's inner loop runs at most 4 × inner_loop_steps attempts


def time_driven(config: PipelineConfig) -> bool:
    return config.step_policy == TIME


def room_for_another(deadline: Deadline, now: float, step_s: float, finalize_at_s: float = math.inf) -> bool:
    """The one rule of the time mode: a step starts when the window's soft end has not passed and
    the time left before it holds one more step of ``step_s`` seconds, and so does the time left
    before ``finalize_at_s``: the run's finalize-now point should the step produce the solution to
    finalize (``Workflow.finalize_point``). A window is given once, but finalization's reserve
    grows with the solution it finalizes (Phase 3's seed bags make each round slower than the
    last, so a window sized for the first round's reserve would let the last round's final
    script be cut at T), and finalization must still get it."""
    return not deadline.passed(now) and min(deadline.soft_left(now), finalize_at_s - now) >= step_s


@dataclass
class StepTimer:
    """How long one loop's steps take, measured on the driven clock (``wf.now``)."""

    prior_s: float = 0.0                     # the estimate before any step finished
    durations: list[float] = field(default_factory=list)

    def took(self, started_s: float, now: float) -> None:
        self.durations.append(max(0.0, now - started_s))

    @property
    def estimate_s(self) -> float:
        return sum(self.durations) / len(self.durations) if self.durations else self.prior_s

    @property
    def latest_s(self) -> float:
        """The estimate for steps that grow as they go (Phase 3's seed bags of 3, 5, then 8 fits):
        the last step's duration when it is above the mean."""
        return max(self.estimate_s, self.durations[-1]) if self.durations else self.prior_s


def agent_and_eval_prior(measured: Measured, agent_calls: int, evaluations: int = 1) -> float:
    """A step of ``agent_calls`` agent calls and ``evaluations`` script runs, as long as the
    slowest ones the run has measured (0 before anything was measured)."""
    return agent_calls * measured.slowest_agent_s + evaluations * measured.slowest_eval_s


def steps_that_fit(left_s: float, step_s: float, cap: int) -> int:
    """How many steps of ``step_s`` fit in ``left_s``, between 1 and ``cap``."""
    if step_s <= 0:
        return max(1, cap)
    return max(1, min(cap, int(left_s // step_s)))


__all__ = ["FIXED", "INNER_CAP_FACTOR", "TIME", "StepTimer", "agent_and_eval_prior", "room_for_another",
           "steps_that_fit", "time_driven"]
