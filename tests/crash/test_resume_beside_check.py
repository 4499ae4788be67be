"""A resume starts the pending effects from the fold of the last snapshot, and checks the handlers
against the whole log beside them (docs/decisions/0030-resume-beside-the-check.md).

The order is proven by the check itself, not by timing: a wrapper around the check waits for the
pending effect to start (its time-out is only a safety net), so on a driver that checked first it
would find the effect not started. A run whose log the handlers no longer match is refused as
before, but the effects it started are cancelled and named, nothing they produced is recorded,
and the code that recorded the run still resumes it to its end."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from engine.run import driver as driver_module
from engine.run.driver import Driver
from engine.run.errors import HandlersChanged
from engine.run.executors import Executors
from events.base import NewEvent
from events.core import AgentCallCompleted, AgentCallRequested, DriverStopped, RunStarted
from events.domain import PipelineConfig
from handlers.runtime import Runtime
from handlers.workflow import Workflow
from store.sqlite import SQLiteEventStore
from tests.support.sim import make_task

SAFETY_NET_S = 120.0


async def one_call(wf: Workflow) -> None:
    await wf.agent(AgentCallRequested(effect_id=wf.effect_id("ask"), agent_type="toy", prompt="answer"))
    wf.complete(submission_path="", best_score=None, result={})


async def another_call(wf: Workflow) -> None:
    """``one_call`` changed without a marker: its first decision is another request."""
    await wf.agent(AgentCallRequested(effect_id=wf.effect_id("ask"), agent_type="toy", prompt="answer, briefly"))
    wf.complete(submission_path="", best_score=None, result={})


def _recorded(tmp_path: Path) -> SQLiteEventStore:
    """A run recorded by ``one_call`` up to its pending call, as a crash would leave it."""
    store = SQLiteEventStore(tmp_path / "e.db")
    started = RunStarted(strategy="tests.crash.test_resume_beside_check:one_call", backend="toy", seed=0,
                         config=PipelineConfig().model_dump(mode="json"), task=make_task(),
                         task_dir=str(tmp_path), run_dir=str(tmp_path))
    store.create_run("r", strategy=started.strategy, task="sim-task")
    store.append("r", [NewEvent(event=started, scope="run"),
                       *[NewEvent(event=d.event, scope=d.scope, causation_seq=1)
                         for d in Runtime(one_call).feed(started)]], expected_seq=0)
    return store


class CheckAfterStart:
    """The driver's check, entered only once the effect has started (or the safety net passed)."""

    def __init__(self) -> None:
        self.effect_started = threading.Event()
        self.started_before_check_ended: bool | None = None
        self.real = driver_module.rebuild

    def __call__(self, *args: Any) -> Any:
        self.started_before_check_ended = self.effect_started.wait(SAFETY_NET_S)
        return self.real(*args)


def _drive(driver: Driver) -> Any:
    async def drive() -> Any:
        with anyio.fail_after(SAFETY_NET_S * 2):
            return await driver.run()

    return anyio.run(drive)


def test_the_pending_effect_runs_before_the_handlers_check_ends(tmp_path: Path, monkeypatch) -> None:
    store = _recorded(tmp_path)
    check = CheckAfterStart()
    monkeypatch.setattr(driver_module, "rebuild", check)

    async def answer(req: AgentCallRequested, _where: Path) -> AgentCallCompleted:
        check.effect_started.set()
        return AgentCallCompleted(effect_id=req.effect_id, text="done", cost_usd=0.0)

    driver = Driver(store, "r", main=one_call, executors=Executors(agent=answer, evaluate=answer),
                    handle_signals=False)
    state = _drive(driver)
    assert check.started_before_check_ended is True
    assert state.finished and state.status == "completed"
    types = [e.type for e in store.read("r")]
    assert types.count("AgentCallCompleted") == 1 and types[-1] == "RunCompleted"


def test_a_check_that_disagrees_cancels_what_it_started_and_the_old_code_still_finishes(tmp_path: Path,
                                                                                         monkeypatch) -> None:
    store = _recorded(tmp_path)
    check = CheckAfterStart()
    monkeypatch.setattr(driver_module, "rebuild", check)
    cancelled: list[str] = []

    async def hang(req: AgentCallRequested, _where: Path) -> AgentCallCompleted:
        check.effect_started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.append(req.effect_id)
        raise AssertionError("unreachable")

    before = store.last_seq("r")
    changed = Driver(store, "r", main=another_call, executors=Executors(agent=hang, evaluate=hang),
                     handle_signals=False)
    with pytest.raises(HandlersChanged, match="first divergence at seq 2"):
        _drive(changed)
    assert check.started_before_check_ended is True and cancelled == ["run/ask"]
    added = list(store.read("r", before + 1))
    assert [e.type for e in added] == ["DriverStarted", "DriverStopped"], "nothing the effect did is recorded"
    stop = added[-1].event()
    assert isinstance(stop, DriverStopped) and stop.cancelled_effects == ["run/ask"]
    assert "no longer agree" in stop.reason

    async def answer(req: AgentCallRequested, _where: Path) -> AgentCallCompleted:
        return AgentCallCompleted(effect_id=req.effect_id, text="done", cost_usd=0.0)

    monkeypatch.setattr(driver_module, "rebuild", check.real)
    recorded_by = Driver(store, "r", main=one_call, executors=Executors(agent=answer, evaluate=answer),
                         handle_signals=False)
    assert _drive(recorded_by).status == "completed"
