"""The library API (engine.api) driving the real engine: subprocess evaluations of tiny scripts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import api
from engine.config.validate import InputError
from events.domain import (
    DataModality,
    FinalResult,
    MetricDirection,
    Phase1Result,
    PipelineConfig,
    PipelineError,
    TaskDescription,
    TaskType,
)
from store.sqlite import SQLiteEventStore

AGENT = "tests.pipeline.scripted_agent:ScriptedBackend"
FAILING = "tests.pipeline.test_api:FailingBackend"


class FailingBackend:
    name = "failing"

    async def call(self, request, ctx):
        from events.core import AgentCallFailed

        return AgentCallFailed(effect_id=request.effect_id, error="model unavailable", cost_usd=0.002)


class SlowBackend:
    name = "slow"

    async def call(self, request, ctx):
        import anyio

        await anyio.sleep(30)
        raise AssertionError("never answered: the run times out first")


def tiny(**kw) -> PipelineConfig:
    base = dict(num_retrieved_models=1, outer_loop_steps=1, inner_loop_steps=1, num_parallel_solutions=1,
                ensemble_rounds=1, time_limit_seconds=600, max_debug_attempts=1)
    base.update(kw)
    return PipelineConfig(**base)




def runs_in(db: Path) -> list[str]:
    if not db.exists():
        return []
    store = SQLiteEventStore(db, create=False)
    try:
        return [r.run_id for r in store.list_runs()]
    finally:
        store.close()


def test_REQ_OR_001_053_run_pipeline_sync_returns_a_final_result(task_dir, tmp_path):
    result = api.run_pipeline_sync(str(task_dir), tiny(), agent=AGENT, db=tmp_path / "e.db")
    assert isinstance(result, FinalResult)
    assert result.phase3 is None and len(result.phase2_results) == 1
    assert Path(result.submission_path).is_file()
    assert result.total_cost_usd and result.total_cost_usd > 0
    assert result.config.outer_loop_steps == 1  # REQ-OR-045: the override was used
    assert len(runs_in(tmp_path / "e.db")) == 1


def test_REQ_OR_001_run_pipeline_awaitable_inside_a_running_loop(task_dir, tmp_path):
    description = TaskDescription(competition_id="tiny", task_type=TaskType.classification,
                                  data_modality=DataModality.tabular, evaluation_metric="accuracy",
                                  metric_direction=MetricDirection.maximize, description="Predict y.",
                                  data_dir=str(task_dir))

    async def caller():
        return await api.run_pipeline(description, tiny(num_parallel_solutions=2), agent=AGENT,
                                      db=tmp_path / "e.db")

    result = asyncio.run(caller())
    assert len(result.phase2_results) == 2 and result.phase3 is not None
    assert result.task.competition_id == "tiny"
    assert Path(result.submission_path).is_file()


def test_REQ_OR_012_run_phase1_library_call(task_dir, tmp_path):
    result = asyncio.run(api.run_phase1(task_dir, tiny(num_retrieved_models=2), agent=AGENT, db=tmp_path / "e.db"))
    assert isinstance(result, Phase1Result)
    assert len(result.candidate_scores) == 2 and result.initial_score >= 0.5


def test_REQ_OR_013_run_phase2_outer_loop_library_call(task_dir, tmp_path):
    from tests.pipeline.scripted_agent import script

    results = asyncio.run(api.run_phase2_outer_loop(task_dir, tiny(num_parallel_solutions=2), script(0.5), 0.5,
                                                    agent=AGENT, db=tmp_path / "e.db"))
    assert len(results) == 2
    assert all(r.best_score >= 0.5 for r in results)


def test_REQ_OR_002_invalid_task_raises_value_error_before_any_run(tmp_path):
    missing = TaskDescription(competition_id="x", task_type=TaskType.classification,
                              data_modality=DataModality.tabular, evaluation_metric="accuracy",
                              metric_direction=MetricDirection.maximize, description="d",
                              data_dir=str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="does not exist"):
        api.run_pipeline_sync(missing, agent=AGENT, db=tmp_path / "e.db")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no data files"):
        api.run_pipeline_sync(missing.model_copy(update={"data_dir": str(empty)}), agent=AGENT, db=tmp_path / "e.db")
    with pytest.raises(InputError, match="competition_id is empty"):
        api.run_pipeline_sync(missing.model_copy(update={"competition_id": " ", "data_dir": str(empty)}),
                              agent=AGENT, db=tmp_path / "e.db")
    with pytest.raises(InputError, match="neither a bundled task"):
        api.run_pipeline_sync("no-such-task", agent=AGENT, db=tmp_path / "e.db")
    assert runs_in(tmp_path / "e.db") == []


def test_REQ_OR_002_invalid_config_raises_value_error(task_dir, tmp_path):
    bad = PipelineConfig.model_construct(**{**tiny().model_dump(), "outer_loop_steps": 0})
    with pytest.raises(ValueError, match="outer_loop_steps"):
        api.run_pipeline_sync(task_dir, bad, agent=AGENT, db=tmp_path / "e.db")
    assert runs_in(tmp_path / "e.db") == []


def test_REQ_OR_042_phase1_failure_raises_pipeline_error_with_diagnostics(task_dir, tmp_path):
    with pytest.raises(PipelineError) as info:
        api.run_pipeline_sync(task_dir, tiny(), agent=FAILING, db=tmp_path / "e.db")
    diag = info.value.diagnostics
    assert "Phase 1" in str(info.value)
    assert diag["run_id"] in runs_in(tmp_path / "e.db") and diag["run_status"] == "failed"
    assert diag["failed_phase"] == "phase1" and diag["cost_usd"] > 0
    assert diag["last_successful_operation"] == "run started"


def test_REQ_OR_046_env_fills_unset_fields_and_explicit_arguments_win(task_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MLE_STAR_TIME_LIMIT", "321")
    monkeypatch.setenv("MLE_STAR_MODEL", "opus")
    result = api.run_pipeline_sync(task_dir, tiny(model="haiku"), agent=AGENT, db=tmp_path / "e.db")
    # tiny() sets time_limit_seconds explicitly: it wins; model too. Nothing else was set by env.
    assert result.config.time_limit_seconds == 600 and result.config.model == "haiku"
    cfg = PipelineConfig(num_retrieved_models=1)
    from engine.config.env_settings import apply_env

    applied = apply_env(cfg)
    assert applied.time_limit_seconds == 321 and applied.model == "opus" and applied.num_retrieved_models == 1


def test_REQ_OR_046_unavailable_backend_is_an_environment_error(task_dir, tmp_path, monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(EnvironmentError):
        api.run_pipeline_sync(task_dir, tiny(), agent="no.such.module:Backend", db=tmp_path / "e.db")


def test_REQ_OR_030_phase1_out_of_time_raises_pipeline_timeout_error(task_dir, tmp_path):
    from events.domain import PipelineTimeoutError

    with pytest.raises(PipelineTimeoutError) as info:
        api.run_pipeline_sync(task_dir, tiny(time_limit_seconds=2), agent="tests.pipeline.test_api:SlowBackend",
                              db=tmp_path / "e.db")
    diag = info.value.diagnostics  # type: ignore[attr-defined]
    assert diag["status"] == "timed_out" and diag["failed_phase"] == "phase1"
    assert diag["elapsed_s"] < 5
