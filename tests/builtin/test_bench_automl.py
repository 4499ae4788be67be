"""bench/bench_automl.py's arithmetic (relative difference, means over seeds, the table: bench/automl_tables.py) and its kept
results (bench/automl_results.py: which kept row answers for a fit now)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from events.score import Score

_PATH = Path(__file__).resolve().parents[2] / "bench" / "bench_automl.py"
_SPEC = importlib.util.spec_from_file_location("bench_automl", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)
results = importlib.import_module("bench.automl_results")
tables = importlib.import_module("bench.automl_tables")


def test_relative_difference_is_positive_when_ours_is_better_in_either_direction():
    up, down = Score.of("maximize"), Score.of("minimize")
    assert results.relative(0.95, 0.94, up) == pytest.approx(0.01 / 0.94)
    assert results.relative(40.0, 42.0, down) == pytest.approx(2.0 / 42.0)
    assert results.relative(1.40, 1.36, down) < 0
    assert results.relative(None, 0.9, up) is None
    assert results.relative(float("nan"), 0.9, up) is None
    assert str(results.relative(0.9, 0.9, down)) == "0.0"   # never "-0.00%"


def _row(task, seed, ours, phase1, flaml, evolve=None, ag=None, task_set="dev"):
    return {"task": task, "set": task_set, "metric": "rmse", "maximize": False, "seed": seed, "limit": 120,
            "mle-star": {"score": ours, "phase1": phase1, "wall_s": 114.0},
            "evolve": {"score": evolve, "wall_s": 120.0},
            "flaml": {"score": flaml, "wall_s": 121.0},
            "ag-medium": {"score": ag, "wall_s": 60.0}}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip("|").split("|")]


def test_table_means_over_seeds_with_the_fraction_of_the_limit_used():
    rows = [_row("bikes", 0, 40.0, 41.0, 42.0, 39.0, 40.0), _row("bikes", 1, 44.0, 43.0, 42.0, 41.0, 44.0)]
    text = tables.table(rows, ["mle-star", "evolve"], ["flaml", "ag-medium"])
    assert _cells(text.splitlines()[0]) == [
        "task", "metric", "seeds", "FLAML", "AG medium", "mle-star", "evolve", "mle-star vs FLAML",
        "mle-star vs AG medium", "evolve vs FLAML", "evolve vs AG medium", "mle-star seed spread",
        "evolve seed spread", "final >= best Phase 1"]
    cells = _cells([ln for ln in text.splitlines() if ln.startswith("| bikes")][0])
    assert cells[:3] == ["bikes", "rmse (min)", "2"]
    assert cells[3:7] == ["42.0000 (101%)", "42.0000 (50%)", "42.0000 (95%)", "40.0000 (100%)"]
    assert cells[7:11] == ["+0.00%", "+0.00%", "+4.76%", "+4.76%"]
    assert cells[11:13] == ["9.52%", "5.00%"]  # (44 - 40) / 42 and (41 - 39) / 40
    assert cells[13] == "1/2"   # seed 1 ended worse than its best Phase 1 candidate


def test_a_failed_run_is_shown_as_failed_not_averaged_away():
    rows = [_row("bikes", 0, None, 41.0, 42.0), _row("bikes", 1, 44.0, 43.0, 42.0)]
    line = tables.table(rows, ["mle-star"], ["flaml"]).splitlines()[-1]
    assert "| failed (95%) | failed |" in line and line.endswith("| 0/2 |")


def test_the_report_keeps_the_development_and_held_out_sets_apart():
    rows = [_row("bikes", 0, 40.0, 41.0, 42.0, ag=39.0), _row("goals", 0, 1.70, 1.71, 1.69, ag=1.71, task_set="heldout"),
            _row("cars", 0, 10.0, 10.0, 10.05, ag=10.2, task_set="heldout")]
    text = tables.report(rows, ["mle-star"], ["flaml", "ag-medium"])
    dev, held = text.split("## Held-out set (not tuned on)")
    assert dev.startswith("## Development set (tuned on)") and "| bikes" in dev and "| goals" not in dev
    assert "| goals" in held and "| cars" in held and "| bikes" not in held
    # goals: 0.6 % behind FLAML, 0.6 % ahead of AG; cars: 0.5 % and 2 % ahead of both.
    assert "mle-star: vs FLAML: ahead on 1/2, within 1 % on 2/2; vs AG medium: ahead on 2/2, within 1 % on 2/2" \
        "; limit used 95%-95%, valid submissions 2/2, valid with 90%-100 % of the limit used 2/2" in held


def test_the_summary_counts_runs_that_used_at_least_90_percent_of_the_limit_and_ended_within_it():
    rows = [_row("bikes", 0, 40.0, 41.0, 42.0), _row("bikes", 1, 41.0, 41.0, 42.0), _row("bikes", 2, None, 41.0, 42.0),
            _row("bikes", 3, 40.0, 41.0, 42.0)]
    rows[1]["mle-star"]["wall_s"] = 100.0    # 83 %: too early
    rows[3]["mle-star"]["wall_s"] = 121.0    # past the limit
    (line,) = tables.summary(rows, ["mle-star"], ["flaml"])
    assert line.endswith("limit used 83%-101%, valid submissions 3/4, valid with 90%-100 % of the limit used 1/4"
                         "; final graded below the best Phase 1 candidate in 0/3 runs")


def test_the_summary_counts_final_submissions_graded_below_their_best_phase1_candidate():
    # rmse (lower is better): seed 0 ended worse than its Phase 1 best, seed 1 better, seed 2 equal;
    # seed 3 failed and seed 4 has no Phase 1 grade, so neither is counted.
    rows = [_row("bikes", 0, 42.5, 41.0, 42.0), _row("bikes", 1, 40.0, 41.0, 42.0), _row("bikes", 2, 41.0, 41.0, 42.0),
            _row("bikes", 3, None, 41.0, 42.0), _row("bikes", 4, 40.0, None, 42.0)]
    # AUC (higher is better) on another task: its final below Phase 1 counts too, by its own direction.
    rows += [{**_row("cars", 0, 0.80, 0.82, 0.81), "metric": "roc_auc", "maximize": True},
             {**_row("cars", 1, 0.83, 0.82, 0.81), "metric": "roc_auc", "maximize": True}]
    (line,) = tables.summary(rows, ["mle-star"], ["flaml"])
    assert line.endswith("; final graded below the best Phase 1 candidate in 2/5 runs")
    assert "final graded below" not in tables.summary(rows, ["evolve"], ["flaml"])[0]   # no Phase 1 to compare


def test_peer_results_are_reused_per_peer_task_seed_and_limit_from_earlier_json(tmp_path):
    older, newer = tmp_path / "older.json", tmp_path / "newer.json"
    older.write_text('[{"task": "bikes", "seed": 0, "limit": 120, "flaml": {"score": 30.0, "wall_s": 124.0},'
                     ' "ag-best": {"score": 29.0, "wall_s": 118.0}},'
                     ' {"task": "bikes", "seed": 1, "limit": 120, "flaml": {"score": null, "wall_s": 3.0}}]')
    newer.write_text('[{"task": "bikes", "seed": 0, "limit": 120, "flaml": {"score": 31.0, "wall_s": 125.0}}]')
    found = results.earlier_results([older, newer], ["flaml"])
    assert list(found) == [("flaml", "bikes", 0, 120)]
    assert (found["flaml", "bikes", 0, 120]["score"], found["flaml", "bikes", 0, 120]["from"]) == (31.0, "newer.json")
    assert ("ag-best", "bikes", 0, 120) in results.earlier_results([older], ["flaml", "ag-best"])


def test_reuse_of_a_file_that_is_not_bench_output_is_a_clear_error(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text("{not json")
    with pytest.raises(SystemExit, match="notes.json: not a JSON file written by bench_automl.py --json"):
        results.earlier_results([bad], ["flaml"])
    bad.write_text('[{"task": "bikes", "flaml": {"score": 30.0}}]')
    with pytest.raises(SystemExit, match="notes.json: a row without task, seed and limit"):
        results.earlier_results([bad], ["flaml"])


NOW = {"code": "tree-a", "peers": {"flaml": "2.7.0", "autogluon.tabular": "1.6.3"}, "probe_s": 1.0}


def _kept(path, rows):
    path.write_text(json.dumps(rows))
    return path


def _kept_row(seed=0, code="tree-a", preset="time", flaml="2.7.0", probe_s=1.0, ours=30.0, theirs=31.0):
    return {"task": "bikes", "set": "dev", "metric": "rmse", "maximize": False, "seed": seed, "limit": 120,
            "preset": preset, "provenance": {"code": code, "peers": {"flaml": flaml}, "probe_s": probe_s},
            "mle-star": {"score": ours, "wall_s": 115.0}, "flaml": {"score": theirs, "wall_s": 121.0}}


def test_our_kept_result_is_reused_only_for_the_same_code_and_preset(tmp_path):
    kept = _kept(tmp_path / "kept.json", [_kept_row(0), _kept_row(1, code="tree-b"), _kept_row(2, preset="quick"),
                                          _kept_row(3, code=None)])
    found = results.earlier_results([kept], ["mle-star"], NOW, "time")
    assert list(found) == [("mle-star", "bikes", 0, 120)]
    # A tree with uncommitted changes has no fingerprint: nothing of ours is reused, whatever the rows say.
    assert results.earlier_results([kept], ["mle-star"], {**NOW, "code": None}, "time") == {}


def test_a_peer_s_kept_result_is_reused_only_for_the_same_version(tmp_path):
    kept = _kept(tmp_path / "kept.json", [_kept_row(0), _kept_row(1, flaml="2.6.0")])
    assert list(results.earlier_results([kept], ["flaml"], NOW, "time")) == [("flaml", "bikes", 0, 120)]


def test_rows_from_a_machine_of_another_speed_are_named(tmp_path):
    kept = _kept(tmp_path / "slow.json", [_kept_row(0, probe_s=1.5)])
    taken = list(results.earlier_results([kept], ["flaml"], NOW, "time").values())
    assert results.speed_notes(taken, 1.0) == ["slow.json: measured on a machine 1.50x as slow as this one"]
    assert results.speed_notes(taken, 1.4) == []   # within the tolerance


def test_the_report_of_kept_rows_merges_files_contender_by_contender(tmp_path):
    ours = _kept(tmp_path / "ours.json", [{**_kept_row(0), "flaml": {"score": None}}])
    peers = _kept(tmp_path / "peers.json", [{k: v for k, v in _kept_row(0, theirs=32.0).items() if k != "mle-star"}])
    other = _kept(tmp_path / "other.json", [_kept_row(0, preset="quick", ours=99.0)])
    changed = _kept(tmp_path / "changed.json", [_kept_row(0, code="tree-b", ours=98.0)])
    rows = results.kept_rows([other, ours, peers, changed], "time", "tree-a")   # a later file wins
    assert len(rows) == 1 and rows[0]["mle-star"]["score"] == 30.0 and rows[0]["flaml"]["score"] == 31.0
    # Ours from one version of the engine only, whatever the order of the files.
    assert results.kept_rows([changed, ours], "time", "tree-b")[0]["mle-star"]["score"] == 98.0
    rows = results.kept_rows([other, ours, peers], "time", "tree-a")
    assert rows[0]["flaml"]["score"] == 32.0
    text = tables.kept_report(rows, ["bikes"], [0, 1, 2], 120, "time")
    line = [ln for ln in text.splitlines() if ln.startswith("| bikes")][0]
    assert _cells(line)[3:6] == ["32.0000 (101%)", "30.0000 (96%)", "+6.25%"]
    assert "kept rows from ours.json, peers.json" in text.splitlines()[0]
    assert tables.kept_report(rows, ["bikes"], [0], 600, "time").startswith("no kept row")


def test_the_code_fingerprint_changes_with_the_engine_s_code_and_is_none_for_a_changed_tree(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "bench@example.invalid")
    git("config", "user.name", "bench")
    for path in results.CODE:
        target = tmp_path / path
        if path.endswith(".toml"):
            target.write_text("[project]\n")
        else:
            target.mkdir()
            (target / "__init__.py").write_text("")
    (tmp_path / "README.md").write_text("a\n")
    git("add", "-A")
    git("commit", "-qm", "a")
    first = results.code_fingerprint(tmp_path)
    assert first is not None
    (tmp_path / "README.md").write_text("b\n")          # not the engine's code: the same fingerprint
    git("commit", "-qam", "docs")
    assert results.code_fingerprint(tmp_path) == first
    (tmp_path / "handlers" / "__init__.py").write_text("X = 1\n")
    assert results.code_fingerprint(tmp_path) is None   # changed and not committed
    git("commit", "-qam", "code")
    assert results.code_fingerprint(tmp_path) not in (None, first)


def test_an_evolve_only_table_has_no_phase1_column_to_fill():
    rows = [{"task": "bikes", "set": "dev", "metric": "rmse", "maximize": False, "seed": 0, "limit": 120,
             "evolve": {"score": 30.4, "wall_s": 93.0, "phase1": None}, "flaml": {"score": 30.1, "wall_s": 126.0}}]
    assert tables.table(rows, ["evolve"], ["flaml"]).splitlines()[-1].endswith("| n/a |")


def _peers():
    spec = importlib.util.spec_from_file_location("automl_peers", _PATH.parent / "automl_peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_peer_predictions_take_the_task_submission_layout():
    import numpy as np
    import pandas as pd

    peers = _peers()
    ids = pd.Series([7, 8])
    job = {"id_column": "id", "target_columns": ["a", "b", "c"], "kind": "classification",
           "metric_kind": "probability", "positive_class": None}
    proba = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    out = peers._submission(job, ids, ["c", "a", "b"], proba, None)  # the peer's class order
    assert out.to_dict("list") == {"id": [7, 8], "a": [0.5, 0.1], "b": [0.3, 0.3], "c": [0.2, 0.6]}
    binary = {**job, "target_columns": ["damaged"], "positive_class": "1"}
    out = peers._submission(binary, ids, [1, 0], np.array([[0.9, 0.1], [0.2, 0.8]]), None)
    assert out["damaged"].tolist() == [0.9, 0.2]
    labels = {**job, "target_columns": ["state"], "metric_kind": "label"}
    assert peers._submission(labels, ids, [], None, np.array(["WA", "OR"]))["state"].tolist() == ["WA", "OR"]


def test_a_peer_job_without_a_known_peer_is_a_clear_error(tmp_path):
    import subprocess
    import sys

    job = tmp_path / "job.json"
    job.write_text('{"peer": "h2o"}')
    proc = subprocess.run([sys.executable, str(_PATH.parent / "automl_peers.py"), str(job)],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "peer must be one of flaml, ag-medium, ag-best, not 'h2o'" in proc.stderr


def test_a_difference_that_rounds_to_zero_is_never_shown_negative():
    assert [tables._pct(-0.00004), tables._pct(-0.0051), tables._pct(None)] == ["+0.00%", "-0.51%", "failed"]


def test_report_prints_the_tables_of_kept_rows_without_fitting_anything(tmp_path):
    # Kept while bike-sharing was held out: reported in the set the protocol puts it in now.
    head = results.code_at("HEAD")
    rows = [{**row, "task": "bike-sharing", "set": "heldout"}
            for row in (_kept_row(0, code=head), _kept_row(1, code=head, ours=32.0), _kept_row(2, ours=1.0))]
    kept = _kept(tmp_path / "kept.json", rows)
    proc = subprocess.run([sys.executable, str(_PATH), "--report", str(kept), "--tasks", "bike-sharing",
                           "--time-limit", "120", "--preset", "time"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "## Development set (tuned on)" in proc.stdout and "Held-out" not in proc.stdout
    assert _cells([ln for ln in proc.stdout.splitlines() if ln.startswith("| bike-sharing")][0])[2:5] == [
        "2", "31.0000 (101%)", "31.0000 (96%)"]
    bad = subprocess.run([sys.executable, str(_PATH), "--report", str(tmp_path / "missing.json")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 1 and "missing.json: not a JSON file written by bench_automl.py --json" in bad.stderr
    bad = subprocess.run([sys.executable, str(_PATH), "--report", str(kept), "--code", "no-such-commit"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 1 and "--code no-such-commit: not a commit" in bad.stderr


def test_a_contender_with_slice_is_the_strategy_with_a_held_back_slice():
    """``<strategy>+slice`` (docs/final-choice-slice.md): the same strategy, the slice turned on,
    so one bench run sets the two side by side on the same peers."""
    assert bench.engine_args("mle-star") == ("--strategy", "mle-star")
    assert bench.engine_args("mle-star+slice") == ("--strategy", "mle-star", "--set", "hidden_slice=true")
    assert bench.engine_args("evolve+slice")[:2] == ("--strategy", "evolve")


def test_refit_names_only_contenders_of_the_bench(monkeypatch):
    """``--refit`` fits a contender anew beside kept rows (an A/B of two of ours on one machine);
    a name that is not one of the bench's contenders is refused before anything is fitted."""
    monkeypatch.setattr(sys, "argv", ["bench_automl.py", "--tasks", "iris", "--strategies", "mle-star",
                                      "--peers", "flaml", "--refit", "mle-star+slice"])
    with pytest.raises(SystemExit, match=r"--refit mle-star\+slice: not a contender of this bench "
                                         r"\(contenders: mle-star, flaml\)"):
        bench.main()


def test_a_folder_given_to_reuse_or_report_stands_for_its_bench_row_files(tmp_path):
    """``make bench-automl`` passes ``--reuse bench/results``: the bench's row files there are read,
    other benches' results beside them (the long-run bench's, a study's own JSON) passed over; a file
    named on its own must be a row file."""
    _kept(tmp_path / "kept.json", [_kept_row(0)])
    (tmp_path / "longrun.json").write_text('[{"backend": "sqlite", "hours": 1.0}]')
    (tmp_path / "study.json").write_text('{"what": "a study", "rows": []}')
    found = results.earlier_results([tmp_path], ["mle-star", "flaml"], NOW, "time")
    assert {key[0] for key in found} == {"mle-star", "flaml"}
    assert {result["from"] for result in found.values()} == {"kept.json"}
    with pytest.raises(SystemExit, match="study.json: expected a list of rows"):
        results.earlier_results([tmp_path / "study.json"], ["flaml"])
    (row,) = results.kept_rows([tmp_path], "time", "tree-a")       # --report takes a folder alike
    assert row["mle-star"]["from"] == "kept.json"
    kept = [path for path, _ in results.rows_by_file([_PATH.parent / "results"])]
    assert len(kept) > 100 and all(path.parent.name == "results" for path in kept)
