"""Evaluations on the cluster (issue 17, Build 3): with ``evaluation_executor=ray`` a run's script
evaluations are Ray tasks placed by their resource request — here on the only node with CPUs,
not the driver's — and the run decides exactly as with local evaluations (same seed, same
final score)."""

from __future__ import annotations

import json

from ray.cluster_utils import Cluster

from tests.campaign.support import REFERENCE_RUN_ID, SMALL_IRIS_START, small_iris_reference
from tests.core.helpers import engine_env, read_log, run_engine


def test_evaluations_run_as_ray_tasks_on_a_worker_node(tmp_path, tmp_path_factory):
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "object_store_memory": 100 * 1024 * 1024})
    cluster.add_node(num_cpus=2, object_store_memory=100 * 1024 * 1024)
    cluster.wait_for_nodes()
    traces = tmp_path / "traces"
    traces.mkdir()
    try:
        env = engine_env(RAY_ADDRESS=cluster.address, ENGINE_EFFECT_TRACE=str(traces / "{run}-{pid}.trace"))
        on_ray = run_engine(*SMALL_IRIS_START, "--set", "evaluation_executor=ray", "--db", str(tmp_path / "ray.db"),
                            env=env, timeout=600, cwd=tmp_path)
        assert on_ray.returncode == 0, on_ray.stdout[-1500:] + on_ray.stderr[-3000:]
    finally:
        cluster.shutdown()
    driver_pids = {e.payload["pid"] for e in read_log(tmp_path / "ray.db", REFERENCE_RUN_ID) if e.type == "DriverStarted"}
    traced = {int(p.stem.rsplit("-", 1)[1]): p.read_text().split() for p in traces.glob(f"{REFERENCE_RUN_ID}-*.trace")}
    # The head has no CPUs: a process other than the driver that evaluated scripts is a Ray
    # worker on the worker node (evaluate_on_worker writes the trace there).
    evaluated_elsewhere = sorted(e for pid, effs in traced.items() if pid not in driver_pids for e in effs)
    summary = json.loads(on_ray.stdout)
    assert summary["status"] == "completed", summary
    requested = sorted(e for pid in driver_pids for e in traced.get(pid, []) if e.endswith("/eval"))
    assert evaluated_elsewhere and evaluated_elsewhere == requested, traced
    assert len(requested) == summary["evaluations"]

    local = small_iris_reference(tmp_path_factory)  # the same run with local evaluations
    assert json.loads(local.summary)["best_score"] == summary["best_score"]
