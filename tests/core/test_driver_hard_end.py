"""The driver's hard end (REQ-OR-024, issue 27): a run still going past its time limit is stopped.

The handlers end every window by the limit themselves (tests/core/test_time_plan_property.py);
this is the backstop for a strategy that does not. The strategy here waits on an agent call
that never answers, so the only way the run can stop is the backstop: no verdict depends on
how fast the machine is (the test's own 60 s guard only catches a driver that never stops).
"""

from __future__ import annotations

from pathlib import Path

import anyio

from engine.run import driver as driver_mod
from engine.run.driver import Driver
from engine.run.executors import Executors
from events.base import NewEvent
from events.core import AgentCallRequested, DriverStopped, RunStarted
from events.domain import PipelineConfig
from handlers.runtime import Runtime
from handlers.workflow import Workflow
from store.sqlite import SQLiteEventStore
from tests.support.sim import make_task

STRATEGY = "tests.core.test_driver_hard_end:waits_forever"


async def waits_forever(wf: Workflow) -> None:
    """A strategy that ignores its time limit: it waits on one agent call, unbounded."""
    await wf.agent(AgentCallRequested(effect_id=wf.effect_id("endless"), agent_type="toy", prompt="wait"))
    wf.complete(submission_path="", best_score=None, result={})


def test_REQ_OR_024_the_driver_stops_a_run_past_its_limit_and_cancels_what_is_in_flight(tmp_path: Path,
                                                                                        monkeypatch) -> None:
    monkeypatch.setattr(driver_mod, "HARD_END_AFTER_S", 0.5)
    store = SQLiteEventStore(tmp_path / "e.db")
    started = RunStarted(strategy=STRATEGY, backend="hanging", seed=0,
                         config=PipelineConfig(time_limit_seconds=1).model_dump(mode="json"), task=make_task(),
                         task_dir=str(tmp_path), run_dir=str(tmp_path))
    store.create_run("r", strategy=STRATEGY, task="sim-task")
    store.append("r", [NewEvent(event=started, scope="run"),
                       *[NewEvent(event=d.event, scope=d.scope, causation_seq=1)
                         for d in Runtime(waits_forever).feed(started)]], expected_seq=0)
    cut: list[str] = []

    async def hang(req, _where):
        try:
            await anyio.sleep_forever()
        finally:
            cut.append(req.effect_id)

    driver = Driver(store, "r", main=waits_forever, executors=Executors(agent=hang, evaluate=hang),
                    handle_signals=False)

    async def drive():
        with anyio.fail_after(60):
            return await driver.run()

    state = anyio.run(drive)
    assert not state.finished
    stopped = [e.payload for e in store.read("r") if e.type == DriverStopped.type_name]
    assert len(stopped) == 1 and stopped[0]["reason"].startswith("time limit")
    assert stopped[0]["cancelled_effects"] == ["run/endless"]
    assert cut == ["run/endless"]                      # the call in flight was cancelled
    assert stopped[0]["elapsed_s"] >= 1.5
