"""Bounded shutdown (issue 61): SIGINT at many points of a real builtin-agent MLE-STAR run (the
quick preset on iris: every phase, Phase 3's ensemble rounds and finalization included), and a
resume after each stop. Every stopped process is gone within seconds (``tests.crash.sigint``: a
bound that grows with the time the same process took to start, on a starved machine) with
``DriverStopped`` recorded, a second SIGINT while it stops changes nothing, and the run resumed
after every stop ends as the uninterrupted run of the same arguments did: the session's shared
iris run (``tests.support.shared_runs``), its FinalResult and every decision, with an intact hash
chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.helpers import read_log
from tests.crash.sigint import compare_with_reference, sigint_chain
from tests.support.shared_runs import IRIS_QUICK_ARGS, IRIS_RUN_ID, shared_iris_quick_run

EVERY = 25  # about eight stops in the run's two hundred events


@pytest.mark.slow
def test_sigint_every_25_events_stops_within_the_bound_and_resuming_completes_the_same_run(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    shared = shared_iris_quick_run(tmp_path_factory)
    stopped = tmp_path / "stopped"
    chain = sigint_chain([a for a in IRIS_QUICK_ARGS if a != "--json"], IRIS_RUN_ID, EVERY, stopped)
    assert not chain.problems, "\n".join(chain.problems)
    assert all(stop.exit_s <= stop.bound_s for stop in chain.stops)
    log = read_log(stopped / "e.db", IRIS_RUN_ID)
    stops = [stop for stop in chain.stops if stop.last_event == "DriverStopped"]
    assert sum(e.type == "DriverStopped" for e in log) == len(stops) >= 6
    phase3 = next(e.seq for e in log if e.type == "PhaseStarted" and e.payload["phase"] == "phase3")
    signalled = [stop.signalled_at_seq for stop in stops]
    assert min(signalled) < phase3 <= max(signalled), (phase3, chain.stops)  # Phase 1 to the end
    problem = compare_with_reference(stopped, IRIS_RUN_ID, read_log(shared.db, IRIS_RUN_ID), shared.db.parent)
    assert problem is None, problem
