"""The run's projection (``replay.state``) reads every event through the upcasters: an old
version is folded in its type's current shape, as loading it would give it, never as stored."""

from __future__ import annotations

from typing import Any

import pytest

import events.base as base
from events.base import Envelope
from events.core import RunStarted
from events.enums import MetricDirection, TaskType
from events.values import TaskDescription
from replay.state import fold


def _env(seq: int, type_name: str, version: int, payload: dict[str, Any]) -> Envelope:
    return Envelope(run_id="r", seq=seq, type=type_name, version=version, scope="run", causation_seq=None,
                    recorded_at="", payload=payload, prev_hash="0", hash="0")


def _started() -> Envelope:
    task = TaskDescription(competition_id="t", task_type=TaskType.tabular, data_modality="tabular",
                           evaluation_metric="accuracy", metric_direction=MetricDirection.maximize,
                           description="d")
    started = RunStarted(strategy="s", backend="b", seed=0, config={}, task=task, task_dir="", run_dir="")
    return _env(1, "RunStarted", RunStarted.version, started.payload())


def _spend(version: int, cost: float, **extra: Any) -> dict[str, Any]:
    return {"reason": "cancelled", "effect_id": "run/x", "backend": "b", "cost_usd": cost, "usage": {},
            "detail": "", **extra}


def test_v1_spend_is_shown_but_kept_out_of_the_budget_because_its_upcaster_says_so() -> None:
    state = fold([_started(), _env(2, "AgentSpendRecorded", 1, _spend(1, 0.25)),
                  _env(3, "AgentSpendRecorded", 2, _spend(2, 0.5))])
    assert state.accumulated_cost_usd == pytest.approx(0.75)
    assert state.budget_cost_usd == pytest.approx(0.5)


def test_the_fold_reads_what_the_upcaster_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Swap SolutionEvaluated's v1 upcaster for one that changes the score: the fold follows it,
    for a v1 payload only."""
    def halve(payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "score": payload["score"] / 2, "scored_rows": None}

    monkeypatch.setitem(base._UPCASTERS, ("SolutionEvaluated", 1), halve)
    evaluated = {"solution_id": "a", "requested_solution_id": "a", "score": 0.8, "is_executable": True,
                 "purpose": "candidate", "eval_ids": []}
    old = fold([_started(), _env(2, "SolutionEvaluated", 1, evaluated)])
    new = fold([_started(), _env(2, "SolutionEvaluated", 2, {**evaluated, "scored_rows": None})])
    assert old.best_score_so_far == pytest.approx(0.4)
    assert new.best_score_so_far == pytest.approx(0.8)


def test_current_payload_upcasts_old_versions_and_leaves_the_rest_as_stored() -> None:
    current = _env(2, "AgentSpendRecorded", 3, _spend(3, 0.1, in_budget=True))
    assert current.current_payload() is current.payload
    assert _env(2, "AgentSpendRecorded", 1, _spend(1, 0.1)).current_payload()["in_budget"] is False
    unknown = _env(2, "NoSuchEvent", 1, {"x": 1})
    assert unknown.current_payload() is unknown.payload
