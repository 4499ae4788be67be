"""Benchmark: what a script that runs alone gains from every evaluation core (``ENGINE_EVAL_CORES``).

    python bench/bench_cores.py [--tasks solar-module-technology] [--repeat 2] [--smoke]

(--smoke: one small task (iris), its first script only, one run per count, to check the bench runs)

Phase 3's rounds and finalization's test run are the run's only script while they run; they are
given ``max_concurrent_evaluations`` cores (2 here) where the search's scripts, run side by side,
get one each (``handlers.evaluation.lone_cores``). For each bundled task given (``--tasks``), the builtin
agent's scripts of its first two model families (LightGBM, HistGB) and their mean blend (a
Phase 3 round) run through ``engine.harness.executor.run_evaluation`` with ``cores=1`` and
``cores=2``, interleaved, in one process. Reported per script: the median wall time of each, their
ratio (one core over two: above 1, the second core pays), and whether score and submission are the
same at both counts (they should be: more threads change no result). A machine of one core
reports its count and stops; a script whose score or submission differs between the counts makes
the bench exit 1.

Size (`make bench`): one task, solar-module-technology (9,000 rows), three scripts, two runs per
count: twelve script runs, about 11 min on a quiet 2-core machine (by the medians kept in
bench/results/cores-2026-11-27-solar-module-technology.txt). The figure is the second core's gain for
one lone builtin script on a mid-sized table, which one table measures. town-country (73,000 rows)
was a second default task: with it the bench took an hour or more on a busy machine, too long for
`make bench`, for the same kind of figure (``--tasks town-country`` still measures it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import anyio  # noqa: E402

from engine.agents.base import AgentContext  # noqa: E402
from engine.agents.builtin import BuiltinBackend  # noqa: E402
from engine.harness.executor import EvalContext, eval_dir_for, run_evaluation  # noqa: E402
from engine.run.lifecycle import prepare_task  # noqa: E402
from events.core import AgentCallCompleted, AgentCallRequested, EvaluationRequested  # noqa: E402
from events.domain import PipelineConfig  # noqa: E402

FAMILIES = ("lightgbm", "hist gradient boosting")


def scripts_for(task_name: str, root: Path) -> tuple[Path, dict[str, str]]:
    """The task's public directory and the builtin agent's scripts: one per family and their blend."""
    task = prepare_task(task_name, root / "task")
    backend = BuiltinBackend()
    ctx = AgentContext(run_id="bench", run_dir=root, work_dir=root, task=task.description,
                       task_dir=task.public_dir, config=PipelineConfig(), seed=0)

    def ask(agent_type: str, **variables: object) -> str:
        reply = backend.answer(AgentCallRequested(effect_id=f"bench/{agent_type}", agent_type=agent_type,
                                                  prompt="(bench)", variables=variables), ctx)
        if not isinstance(reply, AgentCallCompleted) or not reply.code:
            raise SystemExit(f"the builtin agent wrote no {agent_type} script for {task_name}: {reply}")
        return reply.code

    singles = {family: ask("init", task_description="", model_name=family, example_code="") for family in FAMILIES}
    blend = ask("ensembler", solutions=list(singles.values()), plan='x [builtin-ensemble: {"combine": "mean"}]')
    return task.public_dir, {**singles, "mean blend (a Phase 3 round)": blend}


def run_once(ctx: EvalContext, code: str, cores: int, effect_id: str) -> tuple[float, float | None, bytes]:
    request = EvaluationRequested(effect_id=effect_id, solution_id="bench", purpose="bench", timeout_s=900,
                                  cores=cores)
    started = time.perf_counter()
    done = anyio.run(run_evaluation, request, code, ctx)
    elapsed = time.perf_counter() - started
    if done.result.is_error:
        raise SystemExit(f"script failed with {cores} core(s): {done.result.stderr[-800:]}")
    submission = (eval_dir_for(ctx.run_dir, effect_id) / "final" / "submission.csv").read_bytes()
    return elapsed, done.result.score, submission


def measure(task_name: str, repeat: int, root: Path, scripts_wanted: int | None = None) -> list[dict[str, object]]:
    public_dir, scripts = scripts_for(task_name, root)
    scripts = dict(list(scripts.items())[:scripts_wanted])
    ctx = EvalContext(run_dir=root / "runs", task_dir=public_dir, sample_submission=None, subsample_limit=30000,
                      sandbox_mode="none")
    rows: list[dict[str, object]] = []
    for label, code in scripts.items():
        times: dict[int, list[float]] = {1: [], 2: []}
        outputs: dict[int, set[tuple[float | None, bytes]]] = {1: set(), 2: set()}
        for i in range(repeat):
            for cores in (1, 2) if i % 2 == 0 else (2, 1):   # interleaved, each order as often
                elapsed, score, submission = run_once(ctx, code, cores, f"bench/{len(rows)}/{i}/{cores}")
                times[cores].append(elapsed)
                outputs[cores].add((score, submission))
        one, two = statistics.median(times[1]), statistics.median(times[2])
        rows.append({"task": task_name, "script": label, "one_core_s": round(one, 2), "two_cores_s": round(two, 2),
                     "ratio": round(one / two, 2), "same_results": outputs[1] == outputs[2] and len(outputs[1]) == 1})
        print(f"{task_name:28s} {label:30s} 1 core {one:6.2f} s   2 cores {two:6.2f} s   "
              f"ratio {one / two:4.2f}   same results: {rows[-1]['same_results']}", flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="*", default=["solar-module-technology"])
    parser.add_argument("--repeat", type=int, default=2, help="runs per script and core count (default 2)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--smoke", action="store_true", help="iris, its first script, one run per core count")
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.repeat = ["iris"], 1
    cpus = os.cpu_count() or 1
    if cpus < 2:
        raise SystemExit(f"this machine has {cpus} core: nothing to compare")
    print(f"cores on this machine: {cpus}; median of {args.repeat} runs each, interleaved")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-cores-") as tmp:
        for name in args.tasks:
            rows += measure(name, args.repeat, Path(tmp) / name, 1 if args.smoke else None)
    ratios = [float(r["ratio"]) for r in rows]  # type: ignore[arg-type]
    print(f"one core over two, median over {len(rows)} scripts: {statistics.median(ratios):.2f} "
          f"(range {min(ratios):.2f}-{max(ratios):.2f}); same results at both counts: "
          f"{sum(bool(r['same_results']) for r in rows)}/{len(rows)}")
    if args.json:
        args.json.write_text(json.dumps({"cpus": cpus, "rows": rows}, indent=1) + "\n")
    return 0 if all(r["same_results"] for r in rows) else 1  # more threads must change no result


if __name__ == "__main__":
    sys.exit(main())
