"""A campaign on a multi-node Ray cluster with the PostgreSQL store, one worker node removed
mid-run (issue 17, Must show): the campaign still completes, every run verifies and replays, no
effect whose result was recorded ran twice, and each interrupted run's graded score equals an
uninterrupted run's with the same seed. Then the same command again starts nothing new.

The grid is one task × two seeds on two one-CPU worker nodes: one run per node, so the removed node
always held a run, and that run can only finish by being retried on the other node. The node removed is
the one driving seed REFERENCE_SEED's run, so its uninterrupted twin is the session's shared reference."""

from __future__ import annotations

import json
import time

import psutil
import pytest
from ray.cluster_utils import Cluster

from engine.run import lifecycle as runs_mod
from engine.run.replayer import replay_log
from store.base import RunNotFound
from tests.campaign.support import (
    REFERENCE_RUN_ID,
    REFERENCE_SEED,
    SMALL_ARGS,
    campaign_state,
    read_traces,
    repeated_after_recorded,
    small_iris_reference,
    status_json,
)
from tests.core.helpers import engine_env, popen_engine, run_engine
from tests.store_pg.server import database_name, fresh_database, pg_url  # noqa: F401 - fixture

NAME = "twonode"
GRID = ["--tasks", "iris", "--seeds", "0,1"]
NODE_MEMORY = 100 * 1024 * 1024  # object store per node: the campaign passes only run ids


@pytest.fixture()
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": NODE_MEMORY})
    workers = [c.add_node(num_cpus=1, object_store_memory=NODE_MEMORY) for _ in range(2)]
    c.wait_for_nodes()
    try:
        yield c, workers
    finally:
        c.shutdown()


def _node_of(pid: int, workers) -> object | None:
    """The cluster node whose raylet started process ``pid`` (Ray workers are its children)."""
    try:
        ancestors = {p.pid for p in psutil.Process(pid).parents()}
    except psutil.NoSuchProcess:
        return None
    for node in workers:
        raylets = node.all_processes.get("raylet", [])
        if raylets and raylets[0].process.pid in ancestors:
            return node
    return None


def _seeds_of_runs(store) -> dict[str, int]:
    """run id → seed of the campaign's runs so far (none before the command has recorded its plan)."""
    try:
        return {c.run_id: c.cell.seed for c in campaign_state(store, NAME).cells.values()}
    except RunNotFound:
        return {}


def _remove_a_busy_node(store, workers, cluster, deadline: float) -> str:
    """Wait until seed REFERENCE_SEED's run is half-way (≥ 40 events, not finished) and remove the node
    driving it."""
    while time.monotonic() < deadline:
        seeds = _seeds_of_runs(store)
        for info in store.list_runs():
            if info.strategy == "campaign" or seeds.get(info.run_id) != REFERENCE_SEED:
                continue
            log = list(store.read(info.run_id))
            if len(log) < 40 or any(e.type in ("RunCompleted", "RunFailed") for e in log):
                continue
            driver = [e for e in log if e.type == "DriverStarted"][-1]
            node = _node_of(driver.payload["pid"], workers)
            if node is not None:
                cluster.remove_node(node)
                return info.run_id
        time.sleep(0.3)
    raise AssertionError("no run reached 40 events in time to remove its node")


def test_campaign_survives_a_node_removed_mid_run(cluster, pg_url, tmp_path, tmp_path_factory):  # noqa: F811
    """REQ-OR-040 (resume exactly) across machines: a run continues on another node from the shared log."""
    c, workers = cluster
    url = fresh_database(pg_url, database_name(tmp_path))
    traces = tmp_path / "traces"
    traces.mkdir()
    env = engine_env(ENGINE_RUNS_DIR=str(tmp_path / "runs"), ENGINE_EFFECT_TRACE=str(traces / "{run}-{pid}.trace"))
    proc = popen_engine("campaign", "start", NAME, *GRID, *SMALL_ARGS,
                        "--ray-address", c.address, "--db", url, "--json", env=env)
    store = runs_mod.open_store(runs_mod.db_path(url), create=True)
    try:
        interrupted = _remove_a_busy_node(store, workers, c, time.monotonic() + 300)
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stdout[-2000:] + stderr[-3000:]
    rows = {r["run_id"]: r for r in status_json(stdout)["runs"]}
    assert len(rows) == 2 and all(r["status"] == "completed" for r in rows.values()), rows
    state = campaign_state(store, NAME)
    retried = [c_ for c_ in state.cells.values() if c_.failures]
    assert interrupted in {c_.run_id for c_ in retried}, (interrupted, [(c_.run_id, c_.failures) for c_ in retried])
    assert all("died" in f for c_ in retried for f in c_.failures), [c_.failures for c_ in retried]

    for run_id in rows:
        assert store.verify_chain(run_id) is None
        log = list(store.read(run_id))
        divergence, _ = replay_log(log)  # what `engine replay` does once the chain verifies
        assert divergence is None, divergence.describe()
        assert repeated_after_recorded(log, read_traces(traces, run_id)) == []
    sessions = [e for e in store.read(interrupted) if e.type == "DriverStarted"]
    assert len(sessions) >= 2, "the interrupted run was driven once only"

    # Each interrupted run's graded test score equals an uninterrupted run's with the same seed.
    for cell in retried:
        ref_db = _uninterrupted_run(cell.cell, tmp_path, tmp_path_factory)
        graded = [json.loads(run_engine("grade", run, "--db", db, "--json", env=env, timeout=120).stdout)
                  for run, db in ((cell.run_id, url), (REFERENCE_RUN_ID, str(ref_db)))]
        assert graded[0]["valid_submission"] and graded[0]["score"] == graded[1]["score"], graded

    again = run_engine("campaign", "start", NAME, *GRID, *SMALL_ARGS,
                       "--ray-address", c.address, "--db", url, env=env, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "nothing to start" in again.stderr
    assert campaign_state(store, NAME).last_seq == state.last_seq, "a finished campaign recorded more"
    store.close()


def _uninterrupted_run(cell, tmp_path, tmp_path_factory):
    """The database of an uninterrupted local run of ``cell``'s task and seed, run id REFERENCE_RUN_ID."""
    if (cell.task, cell.seed) == ("iris", REFERENCE_SEED):
        return small_iris_reference(tmp_path_factory).db
    ref_db = tmp_path / f"ref-{cell.seed}-{cell.task}.db"
    ref = run_engine("start", "--task", cell.task, "--agent", "builtin", "--preset", "quick", *SMALL_ARGS,
                     "--seed", str(cell.seed), "--run-id", REFERENCE_RUN_ID, "--db", ref_db, env=engine_env(),
                     timeout=600, cwd=tmp_path)
    assert ref.returncode == 0, ref.stderr[-2000:]
    return ref_db
