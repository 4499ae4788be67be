"""SIGINT reaches the driver at any moment of its drive (issue 61), with real signals sent to this
process at points chosen by the test itself, not by timing: before the loop starts, and a second
one while the effect in flight is being cancelled. Either way the run ends ``DriverStopped`` (no
``KeyboardInterrupt`` escapes into the unwinding), and the process's own handler comes back."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import anyio
import pytest

from engine.run.driver import Driver
from engine.run.executors import Executors
from events.base import NewEvent
from events.core import AgentCallRequested, DriverStopped, RunStarted
from events.domain import PipelineConfig
from handlers.runtime import Runtime
from handlers.workflow import Workflow
from store.sqlite import SQLiteEventStore
from tests.support.sim import make_task

STRATEGY = "tests.crash.test_stop_signals_driver:one_endless_call"


async def one_endless_call(wf: Workflow) -> None:
    await wf.agent(AgentCallRequested(effect_id=wf.effect_id("endless"), agent_type="toy", prompt="wait"))
    wf.complete(submission_path="", best_score=None, result={})


def _store(tmp_path: Path) -> SQLiteEventStore:
    store = SQLiteEventStore(tmp_path / "e.db")
    started = RunStarted(strategy=STRATEGY, backend="hanging", seed=0, config=PipelineConfig().model_dump(mode="json"),
                         task=make_task(), task_dir=str(tmp_path), run_dir=str(tmp_path))
    store.create_run("r", strategy=STRATEGY, task="sim-task")
    store.append("r", [NewEvent(event=started, scope="run"),
                       *[NewEvent(event=d.event, scope=d.scope, causation_seq=1)
                         for d in Runtime(one_endless_call).feed(started)]], expected_seq=0)
    return store


def _drive(driver: Driver):
    async def drive():
        with anyio.fail_after(60):  # a safety net for a driver that never stops
            return await driver.run()

    return anyio.run(drive)


def _stops(store: SQLiteEventStore) -> list[dict]:
    return [e.payload for e in store.read("r") if e.type == DriverStopped.type_name]


def test_a_sigint_before_the_loop_stops_the_run_before_any_effect_starts(tmp_path: Path) -> None:
    store = _store(tmp_path)
    started: list[str] = []

    async def call(req, _where):
        started.append(req.effect_id)
        await anyio.sleep_forever()

    driver = Driver(store, "r", main=one_endless_call, executors=Executors(agent=call, evaluate=call))
    driver.on_started = lambda: os.kill(os.getpid(), signal.SIGINT)  # DriverStarted is in, no effect yet
    before = signal.getsignal(signal.SIGINT)
    state = _drive(driver)
    assert not state.finished and started == []
    assert [s["reason"] for s in _stops(store)] == ["signal SIGINT"]
    assert signal.getsignal(signal.SIGINT) is before


def test_a_second_sigint_while_the_call_in_flight_is_cancelled_changes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    cut: list[str] = []

    async def call(req, _where):
        os.kill(os.getpid(), signal.SIGINT)  # the first: the call is in flight
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):  # its clean-up, as a killed script's reaping
                os.kill(os.getpid(), signal.SIGINT)  # the second, while the first stop unwinds
                await anyio.sleep(0.2)
                cut.append(req.effect_id)

    driver = Driver(store, "r", main=one_endless_call, executors=Executors(agent=call, evaluate=call))
    state = _drive(driver)
    assert not state.finished and cut == ["run/endless"]
    stops = _stops(store)
    assert len(stops) == 1 and stops[0]["reason"] == "signal SIGINT"
    assert stops[0]["cancelled_effects"] == ["run/endless"]


def test_in_the_engine_command_stop_signals_stay_ignored_once_a_run_was_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later Ctrl-C must not raise ``KeyboardInterrupt`` wherever the ending command then is (in
    a garbage-collection callback Python prints its traceback and goes on). A run that ends
    without a signal gives the handlers back, as a library's caller gets them back either way."""
    import engine.run.stop_signals as stop_signals

    monkeypatch.setattr(stop_signals, "started_as_command", lambda: True)
    previous = {sig: signal.getsignal(sig) for sig in stop_signals.STOP_SIGNALS}
    try:
        store = _store(tmp_path)

        async def call(req, _where):
            os.kill(os.getpid(), signal.SIGINT)
            await anyio.sleep_forever()

        _drive(Driver(store, "r", main=one_endless_call, executors=Executors(agent=call, evaluate=call)))
        assert [s["reason"] for s in _stops(store)] == ["signal SIGINT"]
        assert all(signal.getsignal(sig) is signal.SIG_IGN for sig in stop_signals.STOP_SIGNALS)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def test_in_the_engine_command_a_run_without_a_stop_signal_gives_the_handlers_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.run.stop_signals as stop_signals

    monkeypatch.setattr(stop_signals, "started_as_command", lambda: True)
    before = signal.getsignal(signal.SIGINT)

    async def unsignalled() -> None:
        with stop_signals.StopSignals(asyncio.get_running_loop(), lambda _r: True, lambda _r, _f: None):
            assert signal.getsignal(signal.SIGINT) is not before

    anyio.run(unsignalled)
    assert signal.getsignal(signal.SIGINT) is before
