"""What Phase 1 keeps beside Algorithm 1 (``handlers.mlestar.phase1``): its own window, time mode's
step timers, and the ``WorkCut`` it records when its window ends the merges.

Phase 1 runs under two deadlines. Its workflow's (the pipeline sets it to the point Phase 1 may
be extended to, the finalize-now point) bounds the candidates and the safety checks: while no
candidate has a score, their evaluations and debug rounds may use the extension, and an extended
Phase 1 still checks its s_0. Its own window (``deadline_s``, ``end_s``) bounds the merges, which
start only before its soft end, so no merge's timeout reaches past it. Phase 1's guard timer (the
pipeline's) cuts whatever runs past the window of a Phase 1 that has a score.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from events.agent_outputs import RetrievedModel
from events.pipeline import WorkCut
from handlers.deadline import Deadline
from handlers.evaluation import Evaluated
from handlers.step_policy import StepTimer, room_for_another, time_driven
from handlers.toolkit import deadline_of, info, past
from handlers.workflow import Workflow

T = TypeVar("T")


class Phase1Time:
    """Phase 1's window and time mode (``handlers.step_policy``): in time mode the models are
    drafted while the window holds one more draft, and a merge starts only while it holds one more
    merge (a call and a run, as long as a draft took)."""

    def __init__(self, wf: Workflow, deadline_s: float | None, end_s: float | None) -> None:
        self.wf, self.deadline_s = wf, deadline_s
        self.own = wf if deadline_s is None else wf.within(Deadline(deadline_s, end_s))  # the merges' workflow
        self.timed = time_driven(wf.config)
        self.drafts = StepTimer()
        self.merges = StepTimer()

    @property
    def budget_s(self) -> float | None:
        """The time Phase 1's own window gives it from now (None: unbounded)."""
        return None if self.deadline_s is None else self.deadline_s - self.wf.now

    def drafted(self, models: list[RetrievedModel], evaluated: list[Evaluated]) -> list[RetrievedModel]:
        """The models that were drafted (time mode may have drafted fewer than were retrieved); a
        merge is then expected to take as long as a draft did."""
        self.merges = StepTimer(prior_s=self.drafts.estimate_s)
        if len(evaluated) == len(models):
            return models
        info(self.wf, f"time mode: {len(evaluated)} of {len(models)} candidates drafted, no time for another in "
                      "phase 1's window", drafted=len(evaluated), retrieved=len(models),
             draft_s=self.drafts.estimate_s)
        return models[:len(evaluated)]

    def merges_end(self, n: int, merges: int, kept_id: str, kept_score: float) -> bool:
        """Whether merge ``n`` (of ``merges``) may not start: Phase 1's soft end has passed, or in
        time mode its window does not hold one more merge. s_0 then goes to the checks as it is,
        and the cut is recorded."""
        wf = self.wf
        passed = past(wf, self.deadline_s)
        no_time = self.timed and not room_for_another(deadline_of(wf, self.deadline_s), wf.now,
                                                      self.merges.estimate_s)
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
