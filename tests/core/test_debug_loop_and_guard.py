"""The one debug loop (``handlers.debugloop``) and the one guard-timer race (``Workflow.guard``),
driven by the real runtime: time passes only as recorded inputs say (``TimerFired.elapsed_s``).

A version is an int; version ``n`` fails while ``n < GOOD``. Asking the debugger for a fix waits
for a timer (the test's stand-in for an agent call's time), so the fed inputs decide when each
fix arrives relative to the unit's soft end.
"""

from __future__ import annotations

from typing import Any

from events.base import NewEvent
from events.core import EffectCancelled, RunCompleted, RunStarted, TimerFired, TimerRequested
from events.values import TaskDescription
from handlers.deadline import Deadline
from handlers.debugloop import DebugRules, debug_loop
from handlers.runtime import Runtime
from handlers.workflow import Workflow

TASK = TaskDescription(competition_id="toy", task_type="regression", data_modality="tabular",
                       evaluation_metric="rmse", metric_direction="minimize", description="toy")
GOOD = 3
SOFT_END_S = 100.0


class Ints:
    """DebugSteps over ints: each fix takes one timer; the log says what happened."""

    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self.log: list[str] = []

    def failed(self, version: int) -> bool:
        return version < GOOD

    async def fix(self, version: int, attempt: int) -> int | None:
        await self.wf.sleep_until(0.0, name=f"fix-{attempt}")
        self.log.append(f"fix {version + 1}")
        return version + 1

    async def run(self, version: int, attempt: int, previous: int) -> int:
        self.log.append(f"run {version}")
        return version

    async def leakage_check(self, version: int, attempt: int) -> int:
        self.log.append(f"leak {version}")
        return version


def _main(**rules: Any):
    async def main(wf: Workflow) -> None:
        steps = Ints(wf)
        leak = rules.pop("leak", False)
        last, attempts = await debug_loop(wf, steps, 0, DebugRules(
            deadline=Deadline.at(SOFT_END_S), leakage_check=steps.leakage_check if leak else None, **rules))
        wf.complete(submission_path="", best_score=None,
                    result={"last": last, "attempts": attempts, "log": steps.log})
    return main


def _drive(main: Any, fix_times: list[float]) -> dict[str, Any]:
    """Feed RunStarted, then each timer the run asks for at the next of ``fix_times``."""
    rt = Runtime(main)
    out = rt.feed(RunStarted(strategy="t", backend="t", seed=0, config={}, task=TASK, task_dir="/t", run_dir="/r"))
    times = iter(fix_times)
    while True:
        timers = [d.event for d in out if isinstance(d.event, TimerRequested)]
        done = [d.event for d in out if isinstance(d.event, RunCompleted)]
        if done:
            return done[0].result
        assert timers, out
        out = rt.feed(TimerFired(effect_id=timers[0].effect_id, elapsed_s=next(times)))


def test_the_loop_debugs_until_a_version_runs_clean() -> None:
    result = _drive(_main(attempts=5), [10.0, 20.0, 30.0])
    assert (result["last"], result["attempts"]) == (GOOD, GOOD)
    assert result["log"] == ["fix 1", "run 1", "fix 2", "run 2", "fix 3", "run 3"]


def test_no_more_rounds_than_allowed() -> None:
    result = _drive(_main(attempts=2), [10.0, 20.0])
    assert (result["last"], result["attempts"]) == (2, 2)


def test_every_fix_passes_the_leakage_check_before_it_runs() -> None:
    result = _drive(_main(attempts=5, leak=True), [10.0, 20.0, 30.0])
    assert result["log"] == ["fix 1", "leak 1", "run 1", "fix 2", "leak 2", "run 2", "fix 3", "leak 3", "run 3"]


def test_a_fix_that_arrives_after_the_soft_end_never_runs_unless_late_fixes_run() -> None:
    late = [10.0, SOFT_END_S + 5]
    stopped = _drive(_main(attempts=5), late)
    assert (stopped["last"], stopped["attempts"], stopped["log"][-1]) == (1, 2, "fix 2")
    ran = _drive(_main(attempts=5, late_fixes_run=True), late)
    # The late fix runs, and then no round starts: the soft end has passed.
    assert (ran["last"], ran["attempts"], ran["log"][-1]) == (2, 2, "run 2")


def _race(work_ends_s: float, guard_at_s: float) -> list[NewEvent]:
    async def work(wf: Workflow) -> str:
        await wf.sleep_until(work_ends_s, name="work")
        return "done"

    async def main(wf: Workflow) -> None:
        task = wf.spawn(work(wf), name="work")
        guard = wf.guard(guard_at_s, "unit")
        if await guard.first(task) == 0:
            guard.stand_down("the work finished first")
            verdict = await task
        else:
            await wf.cut([task], "the guard fired")
            verdict = "cut"
        wf.complete(submission_path="", best_score=None, result={"verdict": verdict})

    rt = Runtime(main)
    out = rt.feed(RunStarted(strategy="t", backend="t", seed=0, config={}, task=TASK, task_dir="/t", run_dir="/r"))
    first = min(work_ends_s, guard_at_s)
    effect = "run/work" if first == work_ends_s else "run/deadline/unit"
    return out + rt.feed(TimerFired(effect_id=effect, elapsed_s=first))


def test_the_guard_cancels_whichever_loses() -> None:
    won = _race(work_ends_s=10.0, guard_at_s=50.0)
    assert [(e.event.effect_id, e.event.reason) for e in won if isinstance(e.event, EffectCancelled)] == [
        ("run/deadline/unit", "the work finished first")]
    assert [e.event.result for e in won if isinstance(e.event, RunCompleted)] == [{"verdict": "done"}]
    lost = _race(work_ends_s=90.0, guard_at_s=50.0)
    assert [(e.event.effect_id, e.event.reason) for e in lost if isinstance(e.event, EffectCancelled)] == [
        ("run/work", "the guard fired")]
    assert [e.event.result for e in lost if isinstance(e.event, RunCompleted)] == [{"verdict": "cut"}]
