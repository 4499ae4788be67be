"""A small strategy for testing the core: fan-out, sequential steps, a decision per result.

It has nothing of MLE-STAR; it exercises what the engine must get right for any strategy:
concurrent effects, decisions derived from results, seeded randomness, failures, completion.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from events.core import AgentCallCompleted, AgentCallRequested, Note, PhaseCompleted, PhaseStarted
from handlers.workflow import Workflow


async def ask(wf: Workflow, name: str, prompt: str) -> str:
    result = await wf.agent(AgentCallRequested(effect_id=wf.effect_id(name), agent_type="toy", prompt=prompt))
    return result.text if isinstance(result, AgentCallCompleted) else "FAILED"


async def branch(wf: Workflow, i: int) -> int:
    total = 0
    for step in range(2):
        text = await ask(wf, f"step-{step}", f"branch {i} step {step} total {total}")
        total += len(text)
        wf.record(Note(level="info", message=f"branch {i} step {step}", data={"total": total}))
    return total


async def main(wf: Workflow) -> None:
    rounds = int(wf.start.config.get("ensemble_rounds", 2))
    wf.record(PhaseStarted(phase="toy"))
    totals = await wf.gather(*(branch(wf.at(f"toy/branch-{i}"), i) for i in range(3)))
    pick = wf.rng("pick").randrange(len(totals))
    best = max(totals)
    for r in range(rounds):
        text = await ask(wf.at("toy/final"), f"round-{r}", f"round {r} best {best} pick {pick}")
        best += len(text) % 7
    wf.record(PhaseCompleted(phase="toy", result={"totals": totals, "best": best}))
    wf.complete(submission_path="", best_score=float(best), result={"totals": totals, "pick": pick})


class EchoBackend:
    """Answers deterministically from the prompt, after a short varying delay, and leaves a
    trace of every execution (TOY_TRACE_DIR) so tests can prove nothing recorded re-ran."""

    name = "echo"

    async def call(self, request: AgentCallRequested, ctx) -> AgentCallCompleted:
        trace = os.environ.get("TOY_TRACE_DIR")
        if trace:
            with open(Path(trace) / "executions.log", "a", encoding="utf-8") as fh:
                fh.write(request.effect_id + "\n")
        delay = (sum(map(ord, request.effect_id)) % 5) / 200
        await anyio.sleep(delay)
        return AgentCallCompleted(effect_id=request.effect_id, text=f"echo:{request.prompt[::-1]}",
                                  cost_usd=0.001, duration_s=delay)


async def fails_at_once(wf: Workflow) -> None:
    """A strategy whose run ends as it starts: it fails before asking for anything."""
    from events.domain import PipelineError

    raise PipelineError("Phase 1 failed at once (a toy strategy that always fails)", {})
