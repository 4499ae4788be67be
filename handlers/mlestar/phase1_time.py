"""What Phase 1 keeps beside Algorithm 1 (``handlers.mlestar.phase1``): its own window, time mode's
step timers, and the ``WorkCut`` it records when its window ends the merges.

Phase 1 runs under two deadlines, each a workflow's. Its workflow's (the pipeline sets it to
the point Phase 1 may be extended to, the finalize-now point) bounds the candidates and the
safety checks: while no candidate has a score, their evaluations and debug rounds may use the
extension, and an extended Phase 1 still checks its s_0. Its own window (``window``: a soft and a
hard end inside the extension) bounds the merges, which run in ``own`` (the workflow within the
window) and start only before its soft end, so no merge's timeout reaches past it. ``paced`` is
the workflow with the window's soft end and the extension's hard end: what says that Phase 1's
time is up (no draft starts, none is waited for, no merge starts) and what the safety checks'
timeouts are sized to. Phase 1's guard timer (the pipeline's) cuts whatever runs past the window
of a Phase 1 that has a score.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from events.agent_outputs import RetrievedModel
from events.pipeline import WorkCut
from handlers.deadline import UNBOUNDED, Deadline
from handlers.evaluation import Evaluated
from handlers.step_policy import StepTimer, room_for_another, time_driven
from handlers.toolkit import info, pacing_deadline, past
from handlers.workflow import Workflow

T = TypeVar("T")


class Phase1Time:
    """Phase 1's window and time mode (``handlers.step_policy``): in time mode the models are
    drafted while the window holds one more draft, and a merge starts only while it holds one more
    merge (a call and a run, as long as a draft took)."""

    def __init__(self, wf: Workflow, window: Deadline = UNBOUNDED) -> None:
        self.wf, self.window = wf, window
        self.own = wf.within(window)                      # the merges' workflow
        self.paced = wf.within(Deadline(window.soft_s))   # Phase 1's soft end, the extension's hard end
        self.timed = time_driven(wf.config)
        self.drafts = StepTimer()
        self.merges = StepTimer()

    @property
    def budget_s(self) -> float | None:
        """The time Phase 1's own window gives it from now (None: unbounded)."""
        return None if self.window.soft_s is None else self.window.soft_s - self.wf.now

    def drafted(self, models: list[RetrievedModel], evaluated: list[Evaluated]) -> None:
        """The drafts are over: a merge is expected to take as long as a draft did, and a time mode
        that drafted fewer models than were retrieved says so."""
        self.merges = StepTimer(prior_s=self.drafts.estimate_s)
        if len(evaluated) < len(models):
            info(self.wf, f"time mode: {len(evaluated)} of {len(models)} candidates drafted, no time for another "
                          "in phase 1's window", drafted=len(evaluated), retrieved=len(models),
                 draft_s=self.drafts.estimate_s)

    def merges_end(self, n: int, merges: int, kept_id: str, kept_score: float) -> bool:
        """Whether merge ``n`` (of ``merges``) may not start: Phase 1's soft end has passed, or in
        time mode its window does not hold one more merge. s_0 then goes to the checks as it is,
        and the cut is recorded."""
        wf = self.wf
        passed = past(self.paced)
        no_time = self.timed and not room_for_another(pacing_deadline(self.paced), wf.now, self.merges.estimate_s)
        if not (passed or no_time):
            return False
        wf.record(WorkCut(unit="phase1", reason="phase1 deadline reached" if passed
                          else "no time for another merge in phase 1's window", at_s=wf.now,
                          where=f"merge {n + 1} of {merges}", steps_done=n, kept_solution_id=kept_id,
                          kept_score=kept_score))
        return True

    async def timed_merge(self, merge: Awaitable[T]) -> T:
        """A merge, its duration measured for the next one's estimate."""
        started = self.wf.now
        merged = await merge
        self.merges.took(started, self.wf.now)
        return merged
