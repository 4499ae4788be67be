"""bench/bench_automl.py's arithmetic: relative difference, means over seeds, the table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from events.score import Score

_PATH = Path(__file__).resolve().parents[2] / "bench" / "bench_automl.py"
_SPEC = importlib.util.spec_from_file_location("bench_automl", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_relative_difference_is_positive_when_ours_is_better_in_either_direction():
    up, down = Score.of("maximize"), Score.of("minimize")
    assert bench.relative(0.95, 0.94, up) == pytest.approx(0.01 / 0.94)
    assert bench.relative(40.0, 42.0, down) == pytest.approx(2.0 / 42.0)
    assert bench.relative(1.40, 1.36, down) < 0
    assert bench.relative(None, 0.9, up) is None
    assert bench.relative(float("nan"), 0.9, up) is None
    assert str(bench.relative(0.9, 0.9, down)) == "0.0"   # never "-0.00%"


def _row(task, seed, ours, phase1, flaml, evolve=None):
    return {"task": task, "metric": "rmse", "maximize": False, "seed": seed,
            "mle-star": {"score": ours, "phase1": phase1, "wall_s": 130.0},
            "evolve": {"score": evolve, "wall_s": 125.0},
            "flaml": {"score": flaml, "wall_s": 121.0}}


def test_table_means_over_seeds_and_counts_final_not_worse_than_phase1():
    rows = [_row("bikes", 0, 40.0, 41.0, 42.0, 39.0), _row("bikes", 1, 44.0, 43.0, 42.0, 41.0)]
    text = bench.table(rows, ["mle-star", "evolve"])
    line = [ln for ln in text.splitlines() if ln.startswith("| bikes")][0]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:4] == ["bikes", "rmse (min)", "2", "42.0000"]
    assert cells[4:7] == ["42.0000", "+0.00%", "130"]
    assert cells[7:10] == ["40.0000", "+4.76%", "125"]
    assert cells[10:] == ["121", "1/2"]   # seed 1 ended worse than its best Phase 1 candidate


def test_a_failed_run_is_shown_as_failed_not_averaged_away():
    rows = [_row("bikes", 0, None, 41.0, 42.0), _row("bikes", 1, 44.0, 43.0, 42.0)]
    line = bench.table(rows, ["mle-star"]).splitlines()[-1]
    assert "| failed | failed |" in line and line.endswith("| 0/2 |")


def test_flaml_results_are_reused_per_task_and_seed_from_earlier_json(tmp_path):
    older, newer = tmp_path / "older.json", tmp_path / "newer.json"
    older.write_text('[{"task": "bikes", "seed": 0, "flaml": {"score": 30.0, "wall_s": 124.0}},'
                     ' {"task": "bikes", "seed": 1, "flaml": {"score": null, "wall_s": 3.0}}]')
    newer.write_text('[{"task": "bikes", "seed": 0, "flaml": {"score": 31.0, "wall_s": 125.0}}]')
    found = bench.earlier_flaml([older, newer])
    assert found == {("bikes", 0): {"score": 31.0, "wall_s": 125.0, "from": "newer.json"}}  # a failure is re-run


def test_flaml_from_a_file_that_is_not_bench_output_is_a_clear_error(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text("{not json")
    with pytest.raises(SystemExit, match="notes.json: not a JSON file written by this bench"):
        bench.earlier_flaml([bad])
    bad.write_text('[{"task": "bikes", "flaml": {"score": 30.0}}]')
    with pytest.raises(SystemExit, match="notes.json: a row without task, seed and flaml"):
        bench.earlier_flaml([bad])


def test_an_evolve_only_table_has_no_phase1_column_to_fill():
    rows = [{"task": "bikes", "metric": "rmse", "maximize": False, "seed": 0,
             "evolve": {"score": 30.4, "wall_s": 93.0, "phase1": None}, "flaml": {"score": 30.1, "wall_s": 126.0}}]
    assert bench.table(rows, ["evolve"]).splitlines()[-1].endswith("| 126 | n/a |")
