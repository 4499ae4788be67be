"""Benchmark: a campaign on Ray vs the same runs one after another (issue 17, Must show).

    python bench/bench_campaign.py [--tasks iris,wine] [--seeds 0,1] [--cpus 2] [--smoke]

(--smoke: one run (iris, seed 0) each way, to check the bench runs)

A 4-run campaign (2 tasks × 2 seeds, builtin agent, the small settings the campaign tests use)
on a local Ray cluster of ``--cpus`` CPUs (``ray.cluster_utils.Cluster``), against the same four
runs started with ``engine start`` one after another, both on a fresh SQLite database. Reported:
both wall times and their ratio (sequential / campaign: > 1 means the campaign is faster), and
whether every run's best score is the same both ways (it must be: same seed, same decisions; the
bench exits 1 when it is not).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.campaign.support import SMALL_ARGS  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
       "COLUMNS": "200"}


def engine(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True, env=ENV,
                          cwd=cwd, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise SystemExit(f"engine {' '.join(args[:3])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc


def best_scores(db: Path, cwd: Path) -> dict[str, float]:
    rows = json.loads(engine("runs", "--db", str(db), "--json", cwd=cwd).stdout)
    return {f"{r['task']}/{r['run_id'].split('-s')[-1][:1]}": r["best_score"] for r in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="iris,wine")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="one run (iris, seed 0) each way")
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.seeds = "iris", "0"
    from ray.cluster_utils import Cluster

    tasks, seeds = args.tasks.split(","), args.seeds.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        work = Path(tmp)
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": args.cpus,
                                                                "object_store_memory": 100 * 1024 * 1024})
        try:
            started = time.perf_counter()
            engine("campaign", "start", "bench", "--tasks", args.tasks, "--seeds", args.seeds, *SMALL_ARGS,
                   "--ray-address", cluster.address, "--db", str(work / "campaign.db"), cwd=work)
            campaign_s = time.perf_counter() - started
        finally:
            cluster.shutdown()
        started = time.perf_counter()
        for task in tasks:
            for seed in seeds:
                engine("start", "--task", task, "--agent", "builtin", "--preset", "quick", *SMALL_ARGS, "--seed", seed,
                       "--run-id", f"seq-{task}-s{seed}", "--db", str(work / "sequential.db"), cwd=work)
        sequential_s = time.perf_counter() - started
        same = best_scores(work / "campaign.db", work) == best_scores(work / "sequential.db", work)
    runs = len(tasks) * len(seeds)
    print(f"{runs} runs ({args.tasks} × seeds {args.seeds}), builtin agent, small quick settings")
    print(f"  campaign on a {args.cpus}-CPU local Ray cluster: {campaign_s:7.1f} s")
    print(f"  the same runs one after another:          {sequential_s:7.1f} s")
    print(f"  wall ratio sequential / campaign:          {sequential_s / campaign_s:7.2f}")
    print(f"  same best scores both ways: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
