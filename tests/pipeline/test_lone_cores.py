"""Which evaluations get the run's every evaluation core (``handlers.evaluation.lone_cores``):
the ones that run alone by design, Phase 3's rounds and finalization's test run; the search's
scripts, run side by side, get one each. The request records it (``EvaluationRequested`` v2), so a
replay decides the same, and a log recorded before it still loads and replays (v1: one core)."""

from __future__ import annotations

import pytest

from engine.config.presets import PRESETS, build_config
from events.base import load_event
from events.core import EvaluationRequested
from events.domain import PipelineConfig
from tests.pipeline.test_end_to_end_sim import run_sim, small


def _cores_by_phase(run) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for req in run.of(EvaluationRequested):
        out.setdefault(req.effect_id.split("/")[0], set()).add(req.cores)
    return out


def test_phase3_rounds_and_the_final_test_run_get_every_evaluation_core():
    run = run_sim(small(lone_evaluations_use_all_cores=True, max_concurrent_evaluations=3))
    assert run.failed is None
    cores = _cores_by_phase(run)
    assert cores == {"phase1": {1}, "phase2": {1}, "phase3": {3}, "final": {3}}, cores


def test_a_config_without_the_setting_gives_every_script_one_core():
    """A config recorded before the setting existed (its field absent: False) decides as it did:
    one core for every script, Phase 3's and finalization's included."""
    run = run_sim(small(max_concurrent_evaluations=3))
    assert run.failed is None
    assert set().union(*_cores_by_phase(run).values()) == {1}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_lets_a_lone_evaluation_use_every_core(preset):
    assert build_config(preset=preset, environ={}).lone_evaluations_use_all_cores is True


def test_a_config_without_the_setting_dumps_as_before_it_existed():
    """A recorded RunStarted's config, loaded and dumped again, has no new key: replays of logs
    from before the setting compare equal."""
    assert "lone_evaluations_use_all_cores" not in PipelineConfig().model_dump()
    assert PipelineConfig(lone_evaluations_use_all_cores=True).model_dump()["lone_evaluations_use_all_cores"] is True


def test_a_v1_evaluation_request_loads_with_one_core():
    """The upcaster; the recorded fixtures (tests/replays, all v1 requests) replay with it."""
    payload = {"effect_id": "phase3/round-0/eval", "solution_id": "abc", "purpose": "ensemble", "timeout_s": 30.0,
               "expect_submission": True}
    event = load_event("EvaluationRequested", 1, payload)
    assert isinstance(event, EvaluationRequested) and event.cores == 1 and event.fit_within_s is None


def test_a_request_for_no_core_is_refused():
    with pytest.raises(ValueError):
        EvaluationRequested(effect_id="final/test/eval", solution_id="abc", purpose="submission", timeout_s=1.0,
                            cores=0)


def test_evolve_final_test_run_gets_every_core_and_its_search_one_each():
    """The evolutionary search runs ``workers`` scripts at once (one core each); its finalization,
    shared with MLE-STAR, runs one (every evaluation core)."""
    from tests.evolution.helpers import run_world

    run, _ = run_world(max_steps=6, phase1_target_nodes=3, steps_per_epoch=3, workers=2,
                       lone_evaluations_use_all_cores=True, max_concurrent_evaluations=2)
    cores = _cores_by_phase(run)
    assert cores.pop("final") == {2} and cores, cores
    assert set().union(*cores.values()) == {1}, cores
