"""Every benchmark in bench/ still runs: each at its tiny --smoke size, as a real process.

`make bench` is run by hand and rarely; a module the benches import can move and nothing notices
(bench_core's resume child once imported a module a layout move had renamed). A smoke run checks
that the bench runs to its end and prints its figures; it judges no timing (the benches exit 0
on a missed target under --smoke), so no verdict here depends on the machine's speed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPREAD_OVER_WORKERS = True  # independent processes: they share both xdist workers

# bench script -> what its output must say once it ran to its end
SMOKE_FIGURES = {
    "bench_core.py": ["durable single-event appends/s", "fold 2,000 events", "resume latency", "replay.verify of"],
    "bench_replay.py": ["replay (re-derive + compare every decision)", "ratio replay / fold"],
    "bench_sandbox.py": ["sandbox overhead, trivial script: unsandboxed"],
    "bench_cores.py": ["one core over two, median over 3 scripts", "same results at both counts: 3/3"],
    "bench_postgres.py": ["durable single-event appends/s: ours", "durable batched appends/s (50/batch): ours"],
    "bench_ui.py": ["first render of the run page", "cold open"],
    "bench_campaign.py": ["wall ratio sequential / campaign", "same best scores both ways: yes"],
    "bench_quality.py": ["| iris | log_loss"],
    "bench_claude_cost.py": ['"preset": "quick", "agent_calls"'],
}


def run_bench(script: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, str(REPO / "bench" / script), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_every_bench_has_a_smoke_run():
    """A new bench joins this file (and the Makefile's bench target) or it is not run by anyone."""
    benches = {p.name for p in (REPO / "bench").glob("bench_*.py")} - {"bench_strategy.py", "bench_automl.py"}
    assert benches == set(SMOKE_FIGURES)
    makefile = (REPO / "Makefile").read_text()
    missing = [name for name in ("bench_core.py", "bench_replay.py", "bench_sandbox.py", "bench_cores.py",
                                 "bench_postgres.py", "bench_campaign.py", "bench_ui.py") if name not in makefile]
    assert not missing, f"not run by `make bench`: {missing}"


@pytest.mark.parametrize("script", sorted(SMOKE_FIGURES))
def test_bench_runs_at_smoke_size(script: str):
    proc = run_bench(script, "--smoke")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{script} --smoke exited {proc.returncode}:\n{output[-3000:]}"
    for figure in SMOKE_FIGURES[script]:
        assert figure in output, f"{script} --smoke did not report {figure!r}:\n{output[-3000:]}"


def test_automl_bench_reports_from_kept_rows():
    """bench_automl fits for days, so its smoke run is its report: the tables from the kept rows."""
    kept = sorted(str(p) for p in (REPO / "bench" / "results").glob("heldout-*.json"))
    assert kept, "bench/results holds no held-out rows"
    proc = run_bench("bench_automl.py", "--report", *kept, "--code", "any")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "held-out" in proc.stdout.lower(), proc.stdout[-2000:]
