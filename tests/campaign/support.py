"""Shared pieces of the campaign tests: the small grid they run, reading campaign state back,
and the effect-trace check ("no effect whose result was recorded ran twice")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.campaign.stream import CampaignState, fold_campaign, stream_id
from events.base import Envelope
from replay.state import RESULT_TYPES

if TYPE_CHECKING:  # the benches import this module too, where pytest need not be installed
    import pytest

    from tests.support.shared_runs import SharedRun

# Every phase runs, each as small as it gets: ~30 s a run on a quiet machine (with one retrieved
# model the final solution does not depend on the seed).
SMALL = ("num_parallel_solutions=1", "outer_loop_steps=1", "inner_loop_steps=1", "ensemble_rounds=1",
         "num_retrieved_models=1")
SMALL_ARGS = [a for s in SMALL for a in ("--set", s)]

# The uninterrupted local reference run that more than one test compares against.
REFERENCE_SEED = 0
REFERENCE_RUN_ID = "ref"
SMALL_IRIS_START = ("start", "--task", "iris", "--agent", "builtin", "--preset", "quick", *SMALL_ARGS,
                    "--seed", str(REFERENCE_SEED), "--run-id", REFERENCE_RUN_ID, "--json")


def small_iris_reference(factory: pytest.TempPathFactory) -> SharedRun:
    """`engine start` of iris at the SMALL settings, seed REFERENCE_SEED, on this machine without Ray:
    made once per test session and read by every test that needs an uninterrupted run to compare with."""
    from tests.support.shared_runs import shared_run

    return shared_run(factory, "shared-iris-small-reference", SMALL_IRIS_START, REFERENCE_RUN_ID)


def campaign_state(store: Any, name: str) -> CampaignState:
    return fold_campaign(store.read(stream_id(name)))


def status_json(stdout: str) -> dict[str, Any]:
    return json.loads(stdout[stdout.index("{"):])


def repeated_after_recorded(log: list[Envelope], traces: dict[int, list[str]]) -> list[str]:
    """Effects a driver process started although their result was already in the log when that
    process took the run over. ``traces``: driver pid → the effect ids it started, in order."""
    problems = []
    for started in (e for e in log if e.type == "DriverStarted"):
        recorded = {e.payload["effect_id"] for e in log if e.type in RESULT_TYPES and e.seq < started.seq}
        pid = started.payload["pid"]
        again = [eff for eff in traces.get(pid, []) if eff in recorded]
        if again:
            problems.append(f"driver pid {pid} (seq {started.seq}) re-ran recorded effects {again[:5]}")
    return problems


def read_traces(trace_dir: Path, run_id: str) -> dict[int, list[str]]:
    """The ``ENGINE_EFFECT_TRACE=<dir>/{run}-{pid}.trace`` files of one run."""
    out = {}
    for path in trace_dir.glob(f"{run_id}-*.trace"):
        out[int(path.stem.rsplit("-", 1)[1])] = path.read_text().split()
    return out
