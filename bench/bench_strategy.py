"""A strategy for the benchmarks: many sequential agent calls (two events each), so a run of
N events is N/2 round trips through the driver, the store and the handlers."""

from __future__ import annotations

import os
import signal

import anyio

from events.core import AgentCallCompleted, AgentCallRequested, Note
from handlers.workflow import Workflow


async def main(wf: Workflow) -> None:
    calls = int(wf.start.params.get("calls", 100))
    total = 0
    for i in range(calls):
        result = await wf.agent(AgentCallRequested(effect_id=wf.effect_id(f"call-{i}"), agent_type="bench",
                                                   prompt=f"step {i} total {total} " + "x" * 200))
        total += len(result.text) if isinstance(result, AgentCallCompleted) else 0
    wf.record(Note(level="info", message="done", data={"total": total}))
    wf.complete(submission_path="", best_score=float(total), result={"calls": calls})


class FastEcho:
    """Answers at once. After ``stop_after`` calls it stops its own driver with SIGINT and
    waits (the pending call is cancelled and re-issued on resume)."""

    name = "fast-echo"

    def __init__(self, stop_after: int | None = None) -> None:
        self.stop_after = stop_after
        self.calls = 0

    async def call(self, request: AgentCallRequested, ctx) -> AgentCallCompleted:
        self.calls += 1
        if self.stop_after is not None and self.calls > self.stop_after:
            os.kill(os.getpid(), signal.SIGINT)
            await anyio.sleep(3600)
        return AgentCallCompleted(effect_id=request.effect_id, text=f"echo:{request.prompt[:40]}", cost_usd=0.0)
