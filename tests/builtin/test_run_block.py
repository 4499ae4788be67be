"""tests/builtin/run_block.py, the way docs/builtin-agent.md says a block runs alone: the script
cut at a block's end is the agent's own script, and it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.agents.builtin.render import render_solution
from tests.builtin import run_block, script_snapshot

REPO = Path(__file__).resolve().parents[2]


def _run_block(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tests.builtin.run_block", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=900, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


# Every eighth spec of the snapshot set: each learner and metric, blends, features and encodings.
@pytest.mark.parametrize("name_spec", list(script_snapshot.specs(count=40, seed=5))[::8], ids=lambda ns: ns[0])
def test_the_marked_script_is_the_agents_script_once_its_markers_go(name_spec: tuple[str, dict[str, Any]]) -> None:
    spec = name_spec[1]
    marked = run_block.marked_script(spec)
    assert run_block._BEGIN in marked
    assert run_block._MARKER.sub("", marked) == render_solution(spec)


def test_a_block_runs_from_the_scripts_start_and_shows_what_it_defines() -> None:
    proc = _run_block("labels")
    assert proc.returncode == 0, proc.stderr[-2000:]
    shown = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    assert shown["CLASSES"] == "ndarray (3,)"            # iris's three species
    assert shown["y"].startswith("ndarray (") and shown["stratify"].startswith("ndarray (")
    assert "Final Validation Performance" not in proc.stdout   # cut before the cross-validation


def test_show_prints_the_script_up_to_the_block_without_markers() -> None:
    proc = _run_block("holdout_split", "--show")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.rstrip("\n").endswith("stratify=stratify)")
    assert run_block._BEGIN not in proc.stdout and run_block._END not in proc.stdout


def test_a_block_the_script_does_not_hold_is_refused_with_the_ones_it_does() -> None:
    proc = _run_block("blend_weighted")
    assert proc.returncode == 2
    assert "holds no block 'blend_weighted'" in proc.stderr and "'blend_mean'" in proc.stderr
    assert "Traceback" not in proc.stderr
