"""Every benchmark in bench/ still runs: each at its tiny --smoke size, as a real process.

`make bench` is run by hand and rarely; a module the benches import can move and nothing notices
(bench_core's resume child once imported a module a layout move had renamed). A smoke run checks
that the bench runs to its end and prints its figures; it judges no timing (the benches exit 0
on a missed target under --smoke), so no verdict here depends on the machine's speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPREAD_OVER_WORKERS = True  # independent processes: they share both xdist workers

# Every bench_*.py in bench/ is smoke-run, a new one too (it needs a --smoke size); bench_automl fits
# for days and has its own test below, bench_strategy is a strategy the benches drive.
NOT_SMOKED = {"bench_automl.py", "bench_strategy.py"}
BENCH_SCRIPTS = sorted(p.name for p in (REPO / "bench").glob("bench_*.py") if p.name not in NOT_SMOKED)

# bench script -> what its output must say once it ran to its end
SMOKE_FIGURES = {
    "bench_core.py": ["durable single-event appends/s", "fold 2,000 events", "resume latency", "replay.verify of"],
    "bench_replay.py": ["replay (re-derive + compare every decision)", "ratio replay / fold"],
    "bench_sandbox.py": ["sandbox overhead, trivial script: unsandboxed"],
    "bench_cores.py": ["one core over two, median over 1 scripts", "same results at both counts: 1/1"],
    "bench_omp_wait.py": ["3,600 rows, quiet", "ratio passive / engine", "target: the engine's setting"],
    "bench_postgres.py": ["durable single-event appends/s: ours", "durable batched appends/s (50/batch): ours"],
    "bench_ui.py": ["first render of the run page", "cold open"],
    "bench_campaign.py": ["wall ratio sequential / campaign", "same best scores both ways: yes"],
    "bench_quality.py": ["| iris | logloss (minimize) |"],
    "bench_claude_cost.py": ['"preset": "quick", "agent_calls"'],
    "bench_longrun.py": ["| sqlite | mle-star | 2 h |", "| postgresql | evolve | 2 h |", "Targets: resume < 100 ms"],
}

# Whole engine runs (a campaign on Ray and the same run alone, two graded runs, a run through the
# real Claude CLI): minutes on a loaded machine.
WHOLE_RUNS = ("bench_campaign.py", "bench_quality.py", "bench_claude_cost.py")


def run_bench(script: str, *args: str, timeout: float = 1400) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, str(REPO / "bench" / script), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_make_bench_runs_benches_that_exist():
    line = next(line for line in (REPO / "Makefile").read_text().splitlines() if line.startswith("BENCHES :="))
    in_make_bench = [f"{name}.py" for name in line.split(":=")[1].split()]
    assert in_make_bench, "the Makefile's bench target runs no bench"
    assert set(in_make_bench) <= set(BENCH_SCRIPTS), f"`make bench` names benches that are not in bench/: {in_make_bench}"
    assert set(SMOKE_FIGURES) <= set(BENCH_SCRIPTS), "SMOKE_FIGURES names a bench that is gone"


@pytest.mark.parametrize("script", [
    pytest.param(name, marks=[pytest.mark.slow, pytest.mark.timeout(1500)]) if name in WHOLE_RUNS
    else pytest.param(name, marks=pytest.mark.timeout(1500))
    for name in BENCH_SCRIPTS
])
def test_bench_runs_at_smoke_size(script: str):
    proc = run_bench(script, "--smoke")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{script} --smoke exited {proc.returncode}:\n{output[-3000:]}"
    for figure in SMOKE_FIGURES.get(script, []):
        assert figure in output, f"{script} --smoke did not report {figure!r}:\n{output[-3000:]}"


def test_automl_bench_reports_from_kept_rows():
    """bench_automl fits for days, so its smoke run is its report: the tables from the kept rows."""
    from bench.heldout_tables import sections

    kept = sorted((REPO / "bench" / "results").glob("heldout-*.json"))
    limit, commit, _, _ = sections(kept)[0]
    proc = run_bench("bench_automl.py", "--report", *map(str, kept), "--code", commit, "--set", "heldout",
                     "--preset", "time", "--time-limit", str(limit))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "## Held-out set (not tuned on)" in proc.stdout, proc.stdout[-2000:]
    assert "| task | metric | seeds |" in proc.stdout, proc.stdout[-2000:]


def test_rows_of_one_engine_code_at_two_commits_make_one_table(tmp_path):
    """A bench run at a later commit whose engine code is unchanged (only a document or the bench
    moved) adds to the table of that code, named by its earliest commit, not a table of its own."""
    from bench.heldout_tables import sections

    def row(task: str, commit: str) -> dict:
        return {"task": task, "set": "heldout", "metric": "rmse", "maximize": False, "seed": 0, "limit": 120,
                "preset": "time", "provenance": {"commit": commit, "code": "tree-x"},
                "mle-star": {"score": 1.0, "wall_s": 110.0}}

    # 3e23867 and 8a79d31: two commits of this repository, the second changing documents only.
    (tmp_path / "automl-a.json").write_text(json.dumps([row("census-occupation", "3e23867")]))
    (tmp_path / "automl-b.json").write_text(json.dumps([row("player-salary", "8a79d31")]))
    assert sections(sorted(tmp_path.glob("*.json"))) == [
        (120, "3e23867", "tree-x", ["census-occupation", "player-salary"])]


def test_the_heldout_results_page_is_what_the_kept_rows_give():
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "heldout_tables.py"), "--check"], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("case", ["review-sentiment", "shapes-32"])
def test_a_new_user_case_is_a_task_the_engine_loads_with_its_answers(tmp_path, case):
    """bench/newuser_cases.py runs for many minutes, so this checks what it writes: a task the
    engine loads as the case's kind, with a private answer for every row the sample asks for."""
    import pandas as pd

    from bench.newuser_cases import CASES
    from engine.agents.builtin.text_task import text_features
    from engine.tasks import load_task

    kind, write = CASES[case]
    task = load_task(write(tmp_path / case))
    if kind == "text":  # a table whose one feature is free text, by the rule the agent reads it by
        assert text_features(task.public_dir) == ("review",)
    else:
        assert task.description.data_modality.value == "image"
    assert task.answers is not None and task.sample_submission is not None
    answers, sample = pd.read_csv(task.answers), pd.read_csv(task.sample_submission)
    assert sorted(answers[task.id_column]) == sorted(sample[task.id_column]) and len(answers) >= 300
