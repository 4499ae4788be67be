"""Writing runs and campaigns into a store from the tests, event by event, as a driver would:
the UI under test reads them back through its own read-only connection."""

from __future__ import annotations

from typing import Any

from engine.campaign.stream import stream_id
from events.base import Event, NewEvent
from events.campaign import CampaignCell, CampaignRunCreated, CampaignRunEnded, CampaignStarted
from events.core import (
    DriverStarted,
    EvaluationCompleted,
    EvaluationRequested,
    Note,
    PhaseStarted,
    RunCompleted,
    RunFailed,
    RunStarted,
    SolutionEvaluated,
    SolutionRecorded,
)
from events.domain import EvaluationResult, TaskDescription


class RunWriter:
    def __init__(self, store: Any, run_id: str, *, task: str = "toy", metric_direction: str = "maximize") -> None:
        self.store, self.run_id, self.head = store, run_id, 0
        store.create_run(run_id, strategy="mle-star", task=task)
        description = TaskDescription(competition_id=task, task_type="classification",
                                      data_modality="tabular", evaluation_metric="accuracy",
                                      metric_direction=metric_direction, description=f"the task {task}")
        self.add(RunStarted(strategy="mle-star", backend="builtin", seed=0, config={}, task=description,
                            task_dir="/nowhere/task", run_dir="/nowhere/run"), scope="run")
        self.add(DriverStarted(pid=1, host="test", resumed=False, elapsed_s=0.0), scope="driver")

    def add(self, event: Event, *, scope: str = "run") -> None:
        self.head += len(self.store.append(self.run_id, [NewEvent(event=event, scope=scope)], self.head))

    def notes(self, count: int, *, scope: str = "phase1") -> None:
        """``count`` notes in one append (one transaction), as a busy run writes them."""
        batch = [NewEvent(event=Note(level="info", message=f"note {i}"), scope=scope) for i in range(count)]
        self.head += len(self.store.append(self.run_id, batch, self.head))

    def phase(self, name: str) -> None:
        self.add(PhaseStarted(phase=name), scope=name)

    def solution(self, sid: str, content: str, *, parents: tuple[str, ...] = (), scope: str = "phase1",
                 phase: str = "init", origin: str = "init") -> None:
        self.add(SolutionRecorded(solution_id=sid, content=content, phase=phase, origin=origin, parents=list(parents)),
                 scope=scope)

    def evaluated(self, sid: str, score: float, *, scope: str = "phase1", stdout: str = "") -> None:
        effect = f"{scope}/{sid}/eval"
        self.add(EvaluationRequested(effect_id=effect, solution_id=sid, purpose="candidate", timeout_s=60.0), scope=scope)
        result = EvaluationResult(score=score, stdout=stdout or f"Final Validation Performance: {score}\n", stderr="",
                                  exit_code=0, duration_seconds=0.5, is_error=False)
        self.add(EvaluationCompleted(effect_id=effect, result=result, elapsed_s=float(self.head)), scope=scope)
        self.add(SolutionEvaluated(solution_id=sid, requested_solution_id=sid, score=score, is_executable=True,
                                   purpose="candidate"), scope=scope)

    def complete(self, best: float | None) -> None:
        self.add(RunCompleted(submission_path="", best_score=best, result={}))

    def fail(self, error: str) -> None:
        self.add(RunFailed(error=error))


class CampaignWriter:
    def __init__(self, store: Any, name: str, cells: list[CampaignCell]) -> None:
        self.store, self.stream, self.head = store, stream_id(name), 0
        store.create_run(self.stream, strategy="campaign", task=name)
        self.add(CampaignStarted(name=name, cells=cells))

    def add(self, event: Event) -> None:
        self.head += len(self.store.append(self.stream, [NewEvent(event=event, scope="campaign")], self.head))

    def created(self, cell: CampaignCell, run_id: str) -> None:
        self.add(CampaignRunCreated(cell=cell.key, run_id=run_id))

    def ended(self, cell: CampaignCell, run_id: str, status: str, reason: str = "") -> None:
        self.add(CampaignRunEnded(cell=cell.key, run_id=run_id, status=status, attempts=1, reason=reason))
