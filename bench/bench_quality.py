"""Quality benchmark: per bundled task, the naive baseline, the best single Phase 1 candidate
(strategy ``best-candidate``) and the full pipeline (``mle-star``, or another strategy), all
graded on the private answers, with each run's wall time. Same seed and preset for all.

    python bench/bench_quality.py [--preset quick] [--tasks iris wine ...] [--strategy mle-star] [--smoke]

(--smoke: iris alone, every phase as small as it gets, to check the bench runs.) Exit 1 when a run failed.
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

ROOT = Path(__file__).resolve().parent.parent

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.campaign.support import SMALL  # noqa: E402  (every phase once, as small as it gets)


def engine(*args: str, db: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "engine.cli", *args, "--db", str(db)], cwd=ROOT, env=env,
                          capture_output=True, text=True)


def run_and_grade(task: str, strategy: str, preset: str, seed: int, db: Path, extra: list[str]) -> dict:
    run_id = f"{task}-{strategy}-{seed}"
    start = time.monotonic()
    proc = engine("start", "--task", task, "--strategy", strategy, "--agent", "builtin", "--preset", preset,
                  "--seed", str(seed), "--run-id", run_id, "--json", *extra, db=db)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:], "wall_s": wall}
    grade = engine("grade", run_id, "--json", db=db)
    if not grade.stdout.strip().startswith("{"):
        return {"error": ["grade: " + ((grade.stderr or grade.stdout).strip().splitlines() or ["no output"])[-1]],
                "wall_s": wall}
    report = json.loads(grade.stdout)
    return {"test_score": report.get("score"), "valid": report.get("valid_submission"), "wall_s": wall}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strategy", default="mle-star")
    parser.add_argument("--tasks", nargs="*", default=None)
    parser.add_argument("--set", dest="sets", action="append", default=[])
    parser.add_argument("--smoke", action="store_true", help="iris, every phase as small as it gets")
    args = parser.parse_args()
    if args.smoke:
        args.tasks = ["iris"]
        args.sets += SMALL
    from engine.tasks import bundled_names, load_task, naive_baseline_score, prepare_bundled

    tasks = args.tasks or bundled_names()
    extra = [x for s in args.sets for x in ("--set", s)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        for name in tasks:
            task = load_task(prepare_bundled(name, Path(tmp) / "tasks" / name))
            naive = naive_baseline_score(task)
            base = run_and_grade(name, "best-candidate", args.preset, args.seed, db, extra)
            full = run_and_grade(name, args.strategy, args.preset, args.seed, db, extra)
            rows.append((name, task.metric, task.direction, naive, base, full))
            print(f"{name}: naive {naive:.4f}  best candidate {base}  {args.strategy} {full}", flush=True)
    print(f"\n| task | metric | naive baseline | best Phase 1 candidate (test) | {args.strategy} final (test) "
          f"| {args.strategy} wall time |")
    print("|---|---|---|---|---|---|")
    for name, metric, direction, naive, base, full in rows:
        fmt = lambda r: f"{r['test_score']:.4f}" if r.get("test_score") is not None else f"failed {r.get('error')}"
        print(f"| {name} | {metric} ({getattr(direction, 'value', direction)}) | {naive:.4f} | {fmt(base)} | {fmt(full)} | {full['wall_s']:.0f} s |")
    return 1 if any("error" in r for row in rows for r in row[4:]) else 0


if __name__ == "__main__":
    sys.exit(main())
