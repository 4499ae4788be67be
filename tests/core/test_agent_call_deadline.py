"""Agent calls carry their deadline to the backend (issue 27, REQ-OR-024/034).

``AgentCallRequested`` v2 has ``deadline_s``: the hard end (driven seconds) of the unit of work
that asked, filled by the runtime in one place (``Workflow.agent``). The executor turns it into
the call's wall-clock time limit on the driver's clock. A v1 log (no deadline) still loads and
replays.
"""

from __future__ import annotations

from pathlib import Path

from events.base import Envelope, NewEvent, load_event
from events.core import AgentCallCompleted, AgentCallRequested, RunStarted
from events.domain import TaskDescription
from handlers.deadline import Deadline
from handlers.runtime import Runtime
from handlers.workflow import Workflow
from replay.verify import verify
from tests.core.helpers import TOY_TASK

TASK = TaskDescription(competition_id="toy", task_type="regression", data_modality="tabular",
                       evaluation_metric="rmse", metric_direction="minimize", description="toy")
HARD_END_S = 5000.0


def _started() -> RunStarted:
    return RunStarted(strategy="test", backend="test", seed=1, config={}, task=TASK, task_dir="/t", run_dir="/r")


def _ask(wf: Workflow, name: str, deadline_s: float | None = None) -> AgentCallRequested:
    return AgentCallRequested(effect_id=wf.effect_id(name), agent_type="toy", prompt=name, deadline_s=deadline_s)


async def deadline_main(wf: Workflow) -> None:
    """Three calls: unbounded, inside a unit with a hard end, and one asking for an earlier end."""
    await wf.agent(_ask(wf, "free"))
    bounded = wf.within(Deadline(soft_s=HARD_END_S / 2, hard_s=HARD_END_S))
    limits = [(await bounded.agent(_ask(bounded, "bounded"))).text,
              (await bounded.agent(_ask(bounded, "tighter", deadline_s=HARD_END_S - 1000))).text]
    wf.complete(submission_path="", best_score=None, result={"limits": limits})


def _requests(out: list[NewEvent]) -> list[AgentCallRequested]:
    return [d.event for d in out if isinstance(d.event, AgentCallRequested)]


def test_the_runtime_fills_each_request_with_its_units_hard_end():
    rt = Runtime(deadline_main)
    seen: list[AgentCallRequested] = []
    pending = _requests(rt.feed(_started()))
    while pending:
        req = pending.pop(0)
        seen.append(req)
        pending += _requests(rt.feed(AgentCallCompleted(effect_id=req.effect_id, text="ok", elapsed_s=10.0)))
    assert [(r.effect_id, r.deadline_s) for r in seen] == [
        ("run/free", None), ("run/bounded", HARD_END_S), ("run/tighter", HARD_END_S - 1000)]


def test_a_v1_request_loads_without_a_deadline_and_its_log_still_replays():
    payload = {"effect_id": "run/free", "agent_type": "toy", "variant": None, "prompt": "free",
               "system_prompt": None, "variables": {}, "output_schema": None, "session_key": None}
    event = load_event("AgentCallRequested", 1, payload)
    assert isinstance(event, AgentCallRequested) and event.deadline_s is None

    async def unbounded(wf: Workflow) -> None:
        await wf.agent(_ask(wf, "free"))
        wf.complete(submission_path="", best_score=None, result={})

    def env(seq: int, type_name: str, version: int, body: dict, causation: int | None = None) -> Envelope:
        return Envelope(run_id="r", seq=seq, type=type_name, version=version, scope="run", causation_seq=causation,
                        recorded_at="", payload=body, prev_hash="0", hash="0")

    log = [env(1, "RunStarted", 1, _started().payload()),
           env(2, "AgentCallRequested", 1, payload, 1),
           env(3, "AgentCallCompleted", 2, AgentCallCompleted(effect_id="run/free", text="ok").payload()),
           env(4, "RunCompleted", 1, {"submission_path": "", "best_score": None, "result": {}}, 3)]
    divergence, _ = verify(log, lambda: Runtime(unbounded))
    assert divergence is None, divergence.describe()


class LimitEcho:
    """Answers each call with the time limit the engine gave it."""

    name = "limit-echo"

    async def call(self, request: AgentCallRequested, ctx) -> AgentCallCompleted:
        return AgentCallCompleted(effect_id=request.effect_id, text=repr(ctx.time_limit_s))


def test_the_engine_gives_each_call_the_time_left_to_its_deadline(tmp_path: Path):
    """Through the real driver: the unbounded call gets no limit; the others get what is left
    of their deadline on the driver's clock (a run this small is far from 1000 s in)."""
    import anyio

    from engine.api import run_strategy

    result = anyio.run(lambda: run_strategy("tests.core.test_agent_call_deadline:deadline_main", TOY_TASK,
                                            agent="tests.core.test_agent_call_deadline:LimitEcho",
                                            db=tmp_path / "engine.db"))
    bounded, tighter = (float(text) for text in result["limits"])
    assert HARD_END_S - 1000 < bounded <= HARD_END_S
    assert HARD_END_S - 2000 < tighter <= HARD_END_S - 1000
