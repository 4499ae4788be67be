"""Side by side at the same wall clock: our engine (builtin agent) against FLAML and AutoGluon.

For each bundled task and seed, one engine run per strategy (``--agent builtin --preset P
--time-limit T``) and one fit per AutoML peer given the same T seconds — FLAML
(``time_budget``), AutoGluon-Tabular ``medium_quality`` (its default) and ``best_quality``
(``time_limit``) — each in its own subprocess, one after the other (the order flips with the seed,
so no contender always meets a warmer or busier machine). Every submission is graded on the
private answers (``engine.grading.grader``); every row records the wall time and the fraction
of the limit it used. For every MLE-STAR run the best Phase 1 candidate (by validation score)
is graded too, to show whether refinement and ensembling earned their keep.

Tasks come in the two sets of the held-out protocol (``engine.tasks.protocol``,
docs/heldout-protocol.md): the development set, on which the agent may be tuned, and the
held-out set, run once a change is settled. The tables and the summary report them apart.

    python bench/bench_automl.py --time-limit 120 --seeds 0 1 2 [--set dev|heldout|all]
        [--tasks bike-sharing ...] [--strategies mle-star evolve] [--peers flaml ag-medium ag-best]
        [--automl-python .venv-automl/bin/python] [--json out.json] [--reuse earlier.json ...]
    python bench/bench_automl.py --report bench/results --time-limit 600 --preset time [--set ...]

The peers run bench/automl_peers.py under ``--automl-python`` (default: ``.venv-automl`` when it
exists, which ``make bench-automl`` builds, else this interpreter): AutoGluon pins an older pandas
than the engine's, so it lives in a venv of its own.

A full comparison takes days of CPU here, so rows are kept (``--json`` into ``bench/results/``) and
added to: ``--reuse`` takes any contender's result for a task, seed and limit from kept rows that
answer for a fit now (the same peer version; for our engine the same code and preset), and
``--report`` prints the tables from kept rows alone (bench/automl_results.py says when a row
answers, and how rows from a machine of another speed are flagged).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The text and image tasks' peers (issue 62), run with --media.
from bench.automl_media_peers import media_main  # noqa: E402
from bench.automl_results import (  # noqa: E402
    PEER_DISTRIBUTIONS,
    code_at,
    earlier_results,
    keep_row,
    kept_rows,
    provenance,
    speed_notes,
)
from bench.automl_tables import PEERS, kept_report, report  # noqa: E402

if TYPE_CHECKING:
    from engine.tasks.model import LoadedTask
    from events.score import Score

AUTOML_VENV_PYTHON = ROOT / ".venv-automl" / "bin" / "python"


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def _engine(*args: str, db: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args, "--db", str(db)], cwd=db.parent,
                          env=_env(), capture_output=True, text=True)


def _grade(task_dir: Path, submission: Path) -> float | None:
    from engine.grading.grader import grade_submission
    from engine.tasks import load_task

    if not submission.is_file():
        return None
    report = grade_submission(load_task(task_dir), submission)
    return report.score if report.valid_submission else None


def _phase1_best_test(run_id: str, db: Path, task_dir: Path, rule: Score) -> float | None:
    """Test score of the Phase 1 candidate with the best validation score in this run (the
    first of equals)."""
    from engine.harness.workdir import safe_dir_name
    from events.score import Ties

    log = _engine("log", run_id, "--json", "--type", "EvaluationCompleted", db=db)
    candidates: list[tuple[str, float | None]] = []
    for line in log.stdout.splitlines():
        payload = json.loads(line)["payload"]
        effect, score = payload.get("effect_id", ""), payload.get("result", {}).get("score")
        if effect.startswith("phase1/candidate-"):
            candidates.append((effect, score))
    best = rule.best(candidates, lambda c: c[1], Ties.FIRST_WINS)
    if best is None:
        return None
    return _grade(task_dir, db.parent / run_id / "evals" / safe_dir_name(best[0]) / "final" / "submission.csv")


# A contender "<strategy>+slice" is the strategy with a held-back slice for its final choice
# (docs/final-choice-slice.md), so one bench run sets it beside the strategy without it.
WITH_SLICE = "+slice"


def engine_args(strategy: str) -> tuple[str, ...]:
    """``engine start``'s strategy and settings for a contender named ``strategy``."""
    if strategy.endswith(WITH_SLICE):
        return ("--strategy", strategy.removesuffix(WITH_SLICE), "--set", "hidden_slice=true")
    return ("--strategy", strategy)


def run_engine(task: str, task_dir: Path, strategy: str, preset: str, seed: int, limit: int, db: Path,
               rule: Score) -> dict:
    run_id = f"{task}-{strategy.replace('+', '-')}-{seed}"
    start = time.monotonic()
    proc = _engine("start", "--task", str(task_dir), *engine_args(strategy), "--agent", "builtin",
                   "--preset", preset, "--seed", str(seed), "--time-limit", str(limit), "--run-id", run_id,
                   "--json", db=db)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        return {"score": None, "wall_s": wall, "error": (proc.stderr or proc.stdout).strip()[-300:]}
    from engine.run.lifecycle import locate_run_submission

    # Graded against this task directory's private answers: the run's own copy of the task
    # holds only the public files, as it should.
    try:
        _, submission = locate_run_submission(run_id, db)
    except Exception as exc:  # a run that ended without a submission is a failed row, not a crash
        return {"score": None, "wall_s": wall, "error": str(exc)[-300:],
                "phase1": _phase1_best_test(run_id, db, task_dir, rule)}
    return {"score": _grade(task_dir, submission), "wall_s": wall,
            "phase1": _phase1_best_test(run_id, db, task_dir, rule)}


def peer_job(peer: str, task: LoadedTask, seed: int, limit: int, out: Path) -> dict:
    """What automl_peers.py needs to fit one peer on a task: plain paths and column names."""
    from engine.tasks.metrics import metric_info

    return {"peer": peer, "train": str(task.train_file), "test": str(task.test_file), "out": str(out),
            "id_column": task.id_column, "target": task.answer_column or task.target_columns[0],
            "target_columns": list(task.target_columns), "positive_class": task.positive_class,
            "kind": task.description.task_type.value, "metric": task.metric,
            "metric_kind": metric_info(task.metric).kind, "seed": seed, "limit": limit}


def run_peer(peer: str, task_dir: Path, seed: int, limit: int, work: Path, python: str) -> dict:
    from engine.tasks import load_task

    stem = work / f"{peer}-{task_dir.name}-{seed}"
    job = stem.with_suffix(".json")
    job.write_text(json.dumps(peer_job(peer, load_task(task_dir), seed, limit, stem.with_suffix(".csv"))))
    start = time.monotonic()
    proc = subprocess.run([python, str(ROOT / "bench" / "automl_peers.py"), str(job)],
                          capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        return {"score": None, "wall_s": wall, "error": proc.stderr.strip()[-300:]}
    return {"score": _grade(task_dir, stem.with_suffix(".csv")), "wall_s": wall}


def _automl_python(choice: str | None) -> str:
    if choice:
        return choice
    return str(AUTOML_VENV_PYTHON) if AUTOML_VENV_PYTHON.is_file() else sys.executable


def _check_peers(python: str, peers: list[str]) -> None:
    for module in dict.fromkeys(PEER_DISTRIBUTIONS[p] for p in peers):
        probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True, text=True)
        if probe.returncode != 0:
            sys.exit(f"{module} cannot be imported by {python}: run `make bench-automl`, which builds "
                     ".venv-automl with FLAML and AutoGluon, or pass --automl-python")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", dest="task_set", choices=["dev", "heldout", "all"], default="all",
                        help="which tasks of the held-out protocol (default: both sets, reported apart)")
    parser.add_argument("--tasks", nargs="*", default=None, help="bundled task names (overrides --set)")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--time-limit", type=int, default=120, help="seconds, for every contender")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--strategies", nargs="*", default=["mle-star"])
    parser.add_argument("--peers", nargs="*", choices=list(PEERS), default=list(PEERS))
    parser.add_argument("--automl-python", default=None, help="interpreter holding FLAML and AutoGluon")
    parser.add_argument("--tasks-dir", type=Path, default=ROOT / "engine-runs" / "bench-tasks",
                        help="where the bundled tasks are prepared and kept between runs (a 50k-row task "
                             "takes minutes to prepare)")
    parser.add_argument("--json", dest="json_out", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep every run's event store and files in this new directory (default: deleted)")
    parser.add_argument("--reuse", nargs="*", type=Path, default=[],
                        help="take each contender's result for a task, seed and limit from these --json files (a "
                             "folder: its files of this bench's shape) where one answers for a fit now "
                             "(bench/automl_results.py): fit only the rest")
    parser.add_argument("--refit", nargs="*", default=[], metavar="CONTENDER",
                        help="with --reuse: fit these contenders anew even where a kept row answers (an A/B of "
                             "two of ours on this machine when the kept rows were measured on one of another speed)")
    parser.add_argument("--report", nargs="+", type=Path, default=None, metavar="JSON",
                        help="fit nothing: print the tables from these --json files or folders (rows of the chosen set, "
                             "tasks, seeds, limit and preset; ours measured on the code of --code)")
    parser.add_argument("--code", default="HEAD", metavar="REV",
                        help="with --report: our results measured on this commit's engine code (default HEAD)")
    parser.add_argument("--media", action="store_true",
                        help="the text and image tasks against their own peers (bench/automl_media_peers.py)")
    args = parser.parse_args()
    if args.media:
        media_main(args, _automl_python(args.automl_python))
        return
    from engine.tasks.bundled_data import SPECS
    from engine.tasks.protocol import EVER_HELD_OUT, MEDIA_KINDS, SETS

    # --set heldout is every task ever registered held out, burned ones too (rule 8).
    chosen = EVER_HELD_OUT if args.task_set == "heldout" else SETS.get(args.task_set, ())
    tasks = args.tasks or [n for n in SPECS if (args.task_set == "all" and n not in MEDIA_KINDS) or n in chosen]
    if args.report is not None:
        code = code_at(args.code)
        if code is None:
            sys.exit(f"--code {args.code}: not a commit of this repository that has the engine's code")
        print(f"our results measured on the engine code of {args.code}")
        print(kept_report(kept_rows(args.report, args.preset, code), tasks, args.seeds, args.time_limit, args.preset))
        return
    contenders = [*args.strategies, *args.peers]
    unknown = [c for c in args.refit if c not in contenders]
    if unknown:
        sys.exit(f"--refit {' '.join(unknown)}: not a contender of this bench (contenders: {', '.join(contenders)})")
    python = _automl_python(args.automl_python)
    _check_peers(python, args.peers)
    measured_on = provenance(python, args.peers)
    reused = earlier_results(args.reuse, [c for c in contenders if c not in args.refit], measured_on, args.preset)
    rows = run_bench(args, tasks, python, measured_on, reused)
    print(f"\npreset {args.preset}, --time-limit {args.time_limit} s for every contender, seeds {args.seeds}; "
          "scores are means over seeds of the private-answer grades, (n %) the mean fraction of the limit used")
    taken = [r[w] for r in rows for w in (*args.strategies, *args.peers) if "from" in r[w]]
    if taken:
        print(f"results reused from earlier runs of this bench: {', '.join(sorted({t['from'] for t in taken}))}")
    for line in speed_notes(taken, measured_on["probe_s"]):
        print(line)
    print(report(rows, args.strategies, args.peers))


def run_bench(args: argparse.Namespace, tasks: list[str], python: str, measured_on: dict,
              reused: dict[tuple[str, str, int, int], dict]) -> list[dict]:
    """Every contender on every task and seed, one at a time; a row is printed (and written to
    ``--json``) as soon as it is complete."""
    from engine.tasks import load_task, prepare_bundled
    from engine.tasks.protocol import set_of
    from events.score import Score

    rows: list[dict] = []
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        raise SystemExit(f"--keep {args.keep}: the directory is not empty; name a new or empty one")
    with contextlib.ExitStack() as stack:
        if args.keep is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-automl-")))
        else:
            work = args.keep
            work.mkdir(parents=True, exist_ok=True)
        for name in tasks:
            task_dir = prepare_bundled(name, args.tasks_dir / name)
            rule = Score(load_task(task_dir).direction)
            for seed in args.seeds:
                row = {"task": name, "set": set_of(name), "metric": load_task(task_dir).metric,
                       "maximize": rule.maximize, "seed": seed, "limit": args.time_limit,
                       "preset": args.preset, "provenance": measured_on}
                contenders = [*args.strategies, *args.peers]
                for who in contenders[::-1] if seed % 2 else contenders:
                    earlier = reused.get((who, name, seed, args.time_limit))
                    if earlier is not None:
                        row[who] = earlier
                    elif who in PEERS:
                        row[who] = run_peer(who, task_dir, seed, args.time_limit, work, python)
                    else:
                        row[who] = run_engine_in(work, name, task_dir, who, args.preset, seed, args.time_limit, rule)
                keep_row(rows, row, args.json_out)
    return rows


def run_engine_in(work: Path, name: str, task_dir: Path, strategy: str, preset: str, seed: int, limit: int,
                  rule: Score) -> dict:
    """Our engine's run of one task and seed, in a folder of its own under ``work``."""
    db = work / f"{name}-{strategy}-{seed}" / "bench.db"
    db.parent.mkdir(parents=True)
    return run_engine(name, task_dir, strategy, preset, seed, limit, db, rule)



if __name__ == "__main__":
    main()
