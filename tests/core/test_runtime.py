"""The deterministic coroutine runtime, the pure ``react`` (issue "Event-sourced core";
ARCHITECTURE "Handlers are pure": no clock, no global random, deterministic effect ids;
"Concurrency": several effects in flight, results in a recorded order)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from events.base import NewEvent
from events.core import (
    AgentCallCompleted,
    AgentCallRequested,
    EffectCancelled,
    Note,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from events.domain import PipelineError, TaskDescription
from handlers.futures import Cancelled
from handlers.runtime import Runtime, run_sync
from handlers.workflow import Workflow
from tests.toy import strategy as toy

TASK = TaskDescription(competition_id="toy", task_type="regression", data_modality="tabular",
                       evaluation_metric="rmse", metric_direction="minimize", description="toy")


def started(seed: int = 7, **config: Any) -> RunStarted:
    return RunStarted(strategy="test", backend="test", seed=seed, config=config, task=TASK, task_dir="/t",
                      run_dir="/r")


def answer(req: AgentCallRequested, text: str | None = None) -> AgentCallCompleted:
    return AgentCallCompleted(effect_id=req.effect_id, text=text if text is not None else f"re:{req.prompt}")


def requests(out: list[NewEvent]) -> list[AgentCallRequested]:
    return [d.event for d in out if isinstance(d.event, AgentCallRequested)]


def drive(main, seed: int = 7, reply=answer, order=lambda pending: pending) -> list[NewEvent]:
    """Feed RunStarted, then answer pending requests (in ``order``) until the run ends."""
    rt = Runtime(main)
    out = rt.feed(started(seed))
    log = list(out)
    pending = requests(out)
    while pending and not rt.finished:
        pending = order(pending)
        nxt = pending.pop(0)
        out = rt.feed(reply(nxt))
        log += out
        pending += requests(out)
    return log


def dumped(out: list[NewEvent]) -> list[tuple[str, str, dict]]:
    return [(d.scope, d.event.type_name, d.event.payload()) for d in out]


def ask(wf: Workflow, name: str, prompt: str = "") -> AgentCallRequested:
    return AgentCallRequested(effect_id=wf.effect_id(name), agent_type="t", prompt=prompt or name)


# --- determinism -----------------------------------------------------------------------------


def test_same_inputs_same_decisions() -> None:
    first, second = drive(toy.main), drive(toy.main)
    assert dumped(first) == dumped(second)
    assert isinstance(first[-1].event, RunCompleted)
    # not a tautology: other answers or another seed lead to other decisions
    assert dumped(drive(toy.main, reply=lambda r: answer(r, "x"))) != dumped(first)


def branch_steps(out: list[NewEvent]) -> list[str]:
    """The toy's per-result decisions ("branch i step s" notes), in the order they were recorded."""
    return [d.event.message for d in out if isinstance(d.event, Note) and d.event.message.startswith("branch ")]


def test_decisions_depend_on_result_order_only_through_inputs() -> None:
    """Feeding the same results in another order is another input sequence: each result is acted
    on when it arrives, each run is reproducible for its own order, and since every answer is the
    same the run's outcome is too."""
    rev = lambda pending: list(reversed(pending))
    forward, backward = drive(toy.main), drive(toy.main, order=rev)
    # Worked out by hand from drive's queue: answered first-pending-first, the three branches take
    # turns; answered last-pending-first, branch 2 runs to its end, then branch 1, then branch 0.
    assert branch_steps(forward) == ["branch 0 step 0", "branch 1 step 0", "branch 2 step 0",
                                     "branch 0 step 1", "branch 1 step 1", "branch 2 step 1"]
    assert branch_steps(backward) == ["branch 2 step 0", "branch 2 step 1", "branch 1 step 0",
                                      "branch 1 step 1", "branch 0 step 0", "branch 0 step 1"]
    assert dumped(drive(toy.main, order=rev)) == dumped(backward)
    assert isinstance(forward[-1].event, RunCompleted) and isinstance(backward[-1].event, RunCompleted)
    assert backward[-1].event.payload() == forward[-1].event.payload()


def test_feed_is_pure_per_input() -> None:
    """Rebuilding the runtime from the recorded inputs (what resume does) yields the same state."""
    log = drive(toy.main)
    inputs = [started()] + [answer(r) for r in requests(log)]
    assert dumped(run_sync(toy.main, inputs)) == dumped(log)


def test_global_random_is_not_used() -> None:
    random.seed(1)
    a = dumped(drive(toy.main))
    random.seed(999)
    assert dumped(drive(toy.main)) == a


# --- gather, ids, rng --------------------------------------------------------------------------


async def _gather_main(wf: Workflow) -> None:
    async def one(name: str) -> str:
        return (await wf.agent(ask(wf, name))).text

    results = await wf.gather(one("a"), one("b"), one("c"))
    wf.record(Note(level="info", message="gathered", data={"results": results}))
    wf.complete(submission_path="", best_score=None, result={})


def test_gather_requests_in_order_and_results_in_argument_order() -> None:
    rt = Runtime(_gather_main)
    out = rt.feed(started())
    reqs = requests(out)
    assert [r.effect_id for r in reqs] == ["run/a", "run/b", "run/c"]  # all in flight at once
    assert rt.pending_effect_ids == ["run/a", "run/b", "run/c"]
    assert rt.feed(answer(reqs[2], "C")) == [] and rt.feed(answer(reqs[0], "A")) == []
    final = rt.feed(answer(reqs[1], "B"))
    assert final[0].event.data == {"results": ["A", "B", "C"]}


async def _ids_main(wf: Workflow) -> None:
    ids = [wf.effect_id("x"), wf.effect_id("x"), wf.effect_id("y"), wf.at("p1").effect_id("x"), wf.effect_id("x")]
    wf.record(Note(level="info", message="ids", data={"ids": ids}))
    wf.complete(submission_path="", best_score=None, result={})


def test_effect_ids_unique_with_suffix() -> None:
    out = Runtime(_ids_main).feed(started())
    assert out[0].event.data["ids"] == ["run/x", "run/x#2", "run/y", "p1/x", "run/x#3"]


def test_toy_effect_ids_unique_and_deterministic() -> None:
    ids = [r.effect_id for r in requests(drive(toy.main))]
    assert len(ids) == len(set(ids)) == 3 * 2 + 2  # 3 branches x 2 steps + 2 rounds (default)
    assert ids == [r.effect_id for r in requests(drive(toy.main))]


def _rng_main(keys: list[str], scope: str = "run"):
    async def main(wf: Workflow) -> None:
        w = wf.at(scope)
        values = {k: [w.rng(k).random() for _ in range(3)] for k in keys}
        wf.record(Note(level="info", message="rng", data=values))
        wf.complete(submission_path="", best_score=None, result={})

    return main


def _rng(seed: int, keys: list[str], scope: str = "run") -> dict:
    return Runtime(_rng_main(keys, scope)).feed(started(seed))[0].event.data


def test_rng_depends_on_seed_and_key_only() -> None:
    base = _rng(7, ["k"])["k"]
    assert _rng(7, ["other", "k"])["k"] == base  # not on what was drawn before
    random.seed(12345)
    assert _rng(7, ["k"])["k"] == base  # not on the global RNG
    assert _rng(8, ["k"])["k"] != base  # on the run seed
    assert _rng(7, ["k2"])["k2"] != base  # on the key
    assert _rng(7, ["k"], scope="phase2/path-0")["k"] != base  # the scope is part of the key


# --- cancel and first --------------------------------------------------------------------------


async def _cancel_main(wf: Workflow) -> None:
    async def worker(name: str) -> None:
        try:
            await wf.agent(ask(wf, name))
        except Cancelled:
            wf.record(Note(level="info", message=f"{name} cleaned up"))
            raise
        wf.record(Note(level="info", message=f"{name} finished"))

    async def group() -> None:
        await wf.gather(worker("g1"), worker("g2"))

    task = wf.spawn(group(), "group")
    await wf.agent(ask(wf, "fast"))
    wf.cancel(task, "deadline passed")
    wf.record(Note(level="info", message="after cancel"))
    wf.complete(submission_path="", best_score=None, result={})


def test_cancel_emits_effect_cancelled_for_pending_effects() -> None:
    rt = Runtime(_cancel_main)
    reqs = {r.effect_id: r for r in requests(rt.feed(started()))}
    assert sorted(reqs) == ["run/fast", "run/g1", "run/g2"]
    out = rt.feed(answer(reqs["run/fast"]))
    cancelled = [d.event for d in out if isinstance(d.event, EffectCancelled)]
    assert sorted(c.effect_id for c in cancelled) == ["run/g1", "run/g2"]
    assert all(c.reason == "deadline passed" for c in cancelled)
    messages = [d.event.message for d in out if isinstance(d.event, Note)]
    assert "after cancel" in messages and "g1 cleaned up" in messages and "g2 cleaned up" in messages
    assert "g1 finished" not in messages
    assert rt.finished and rt.pending_effect_ids == []
    assert rt.feed(answer(reqs["run/g1"])) == []  # a late result of a cancelled effect is ignored


async def _first_main(wf: Workflow) -> None:
    async def one(name: str) -> str:
        return (await wf.agent(ask(wf, name))).text

    a, b = wf.spawn(one("a")), wf.spawn(one("b"))
    winner = await wf.first(a, b)
    wf.record(Note(level="info", message="first", data={"winner": winner}))
    wf.cancel([a, b][1 - winner], "lost the race")
    again = await wf.first(a, b)  # already done: returns at once, lowest done index
    wf.record(Note(level="info", message="again", data={"winner": again}))
    wf.complete(submission_path="", best_score=None, result={})


@pytest.mark.parametrize("first_answered,expected", [("run/a", 0), ("run/b", 1)])
def test_first_returns_the_task_that_finished(first_answered: str, expected: int) -> None:
    rt = Runtime(_first_main)
    reqs = {r.effect_id: r for r in requests(rt.feed(started()))}
    out = rt.feed(answer(reqs[first_answered]))
    notes = [d.event for d in out if isinstance(d.event, Note)]
    assert [n.data["winner"] for n in notes] == [expected, expected]
    loser = "run/b" if expected == 0 else "run/a"
    assert [d.event.effect_id for d in out if isinstance(d.event, EffectCancelled)] == [loser]
    assert isinstance(out[-1].event, RunCompleted)


# --- failures ----------------------------------------------------------------------------------


async def _crashing_main(wf: Workflow) -> None:
    await wf.agent(ask(wf, "q"))
    raise ValueError("boom in the handler")


async def _pipeline_error_main(wf: Workflow) -> None:
    raise PipelineError("no valid solution", {"tried": 3})


async def _bad_await_main(wf: Workflow) -> None:
    import asyncio

    await asyncio.sleep(0)  # not a workflow effect: a handler bug


def test_handler_exception_ends_run_with_run_failed() -> None:
    out = drive(_crashing_main)
    assert isinstance(out[-1].event, RunFailed)
    assert out[-1].event.error == "ValueError: boom in the handler"
    assert out[-1].event.diagnostics == {"kind": "handler_error"}


def test_pipeline_error_ends_run_with_its_message() -> None:
    out = Runtime(_pipeline_error_main).feed(started())
    assert isinstance(out[-1].event, RunFailed) and "no valid solution" in out[-1].event.error


def test_awaiting_a_foreign_awaitable_fails_the_run() -> None:
    out = Runtime(_bad_await_main).feed(started())
    assert isinstance(out[-1].event, RunFailed) and "only Workflow effects can be awaited" in out[-1].event.error


def test_run_started_twice_refused() -> None:
    rt = Runtime(toy.main)
    rt.feed(started())
    with pytest.raises(ValueError):
        rt.feed(started())


def test_unknown_result_is_ignored() -> None:
    rt = Runtime(toy.main)
    rt.feed(started())
    assert rt.feed(AgentCallCompleted(effect_id="never/asked", text="?")) == []
    assert len(rt.pending_effect_ids) == 3
