"""Side by side: our engine (builtin agent) against FLAML AutoML at the same wall-clock budget.

For each bundled task and seed, one engine run (``--agent builtin --preset P --time-limit T``,
one or more strategies) and one FLAML ``AutoML.fit(time_budget=T)`` run, both in their own
subprocess, one after the other (the order alternates with the seed so neither always meets
a warmer or busier machine). Both submissions are graded on the private answers
(``engine.grading.grader``). For every engine run the best Phase 1 candidate (by validation score) is
graded too, to show whether refinement and ensembling earned their keep.

    python bench/bench_automl.py --time-limit 120 --seeds 0 1 2 [--tasks bike-sharing ...]
                                 [--strategies mle-star evolve] [--json out.json]
                                 [--flaml-from earlier.json ...]

``--flaml-from`` takes FLAML's score and wall time for a task and seed from the ``--json`` rows
of an earlier run of this bench instead of running FLAML again (FLAML is the slower half of
each pair); the printout names the files. Only fair on the same machine and FLAML version.

Needs FLAML (``pip install -e '.[bench]'``, done by ``make bench``). Prints one line per run
as it finishes, then the table: per task the means over seeds of both scores, the relative
difference (positive = ours better, whatever the metric's direction) and both wall times.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine's packages are imported once ROOT is on sys.path (main)
    from events.score import Score

ROOT = Path(__file__).resolve().parent.parent
FLAML_METRIC = {"roc_auc": "roc_auc", "logloss": "log_loss", "accuracy": "accuracy", "rmse": "rmse",
                "mse": "mse", "mae": "mae", "r2": "r2", "f1": "f1", "f1_macro": "macro_f1"}


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


def run_engine(task: str, task_dir: Path, strategy: str, preset: str, seed: int, limit: int, db: Path,
               rule: Score) -> dict:
    run_id = f"{task}-{strategy}-{seed}"
    start = time.monotonic()
    proc = _engine("start", "--task", str(task_dir), "--strategy", strategy, "--agent", "builtin",
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


def run_flaml(task_dir: Path, seed: int, limit: int, work: Path) -> dict:
    out = work / f"flaml-{task_dir.name}-{seed}.csv"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--flaml-worker", str(task_dir),
                           str(seed), str(limit), str(out)], env=_env(), capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        return {"score": None, "wall_s": wall, "error": proc.stderr.strip()[-300:]}
    return {"score": _grade(task_dir, out), "wall_s": wall}


def flaml_worker(task_dir: str, seed: str, limit: str, out: str) -> None:
    """Fit FLAML on train.csv within ``limit`` seconds and write a submission for test.csv."""
    import numpy as np
    import pandas as pd
    from flaml import AutoML

    from engine.tasks import load_task

    task = load_task(Path(task_dir))
    public = Path(task_dir) / "prepared" / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    target = task.answer_column or task.target_columns[0]
    features = [c for c in train.columns if c not in (task.id_column, target)]
    X, y, X_test = train[features], train[target], test[features]
    for column in features:  # text columns as categories, which FLAML's learners use natively
        if not pd.api.types.is_numeric_dtype(X[column]):
            kinds = sorted(set(X[column].dropna().astype(str)) | set(X_test[column].dropna().astype(str)))
            X = X.assign(**{column: pd.Categorical(X[column].astype("string"), categories=kinds)})
            X_test = X_test.assign(**{column: pd.Categorical(X_test[column].astype("string"), categories=kinds)})
    kind = task.description.task_type.value
    automl = AutoML()
    automl.fit(X, y.astype(str) if kind == "classification" else y, task=kind, time_budget=int(limit),
               metric=FLAML_METRIC[task.metric], seed=int(seed), verbose=0)
    submission = pd.DataFrame({task.id_column: test[task.id_column]})
    if kind == "regression":
        submission[task.target_columns[0]] = automl.predict(X_test)
    elif task.metric in ("roc_auc", "logloss") or len(task.target_columns) > 1:
        proba = automl.predict_proba(X_test)
        classes = [str(c) for c in automl.classes_]
        if len(task.target_columns) > 1:
            for column in task.target_columns:
                submission[column] = proba[:, classes.index(str(column))]
        else:
            positive = task.positive_class or classes[-1]
            submission[task.target_columns[0]] = proba[:, classes.index(str(positive))]
    else:
        labels = automl.predict(X_test)
        train_labels = {str(v): v for v in y.unique()}
        submission[task.target_columns[0]] = np.array([train_labels.get(str(v), v) for v in labels])
    submission.to_csv(out, index=False)


def relative(ours: float | None, theirs: float | None, rule: Score) -> float | None:
    """Positive when ours is better, as a fraction of FLAML's score: the difference of the two
    scores as "higher is better" (``Score.fitness``)."""
    mine, flaml = rule.fitness(ours), rule.fitness(theirs)
    if mine is None or flaml is None or flaml == 0:
        return None
    return (mine - flaml) / abs(flaml) + 0.0  # + 0.0: no "-0.00%"


def rule_of(row: dict) -> Score:
    """How a row's task compares scores (a row keeps the direction as its ``maximize`` flag)."""
    from events.domain import MetricDirection
    from events.score import Score

    return Score(MetricDirection.maximize if row["maximize"] else MetricDirection.minimize)


def _m(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return mean(kept) if kept and len(kept) == len(values) else None


def _f(value: float | None, spec: str = ".4f") -> str:
    return "failed" if value is None else format(value, spec)


def table(rows: list[dict], strategies: list[str]) -> str:
    head = ["task", "metric", "seeds", "FLAML"]
    for s in strategies:
        head += [f"{s}", f"{s} vs FLAML", f"{s} wall s"]
    head += ["FLAML wall s", "final >= best Phase 1"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task in dict.fromkeys(r["task"] for r in rows):
        mine = [r for r in rows if r["task"] == task]
        rule = rule_of(mine[0])
        cells = [task, f"{mine[0]['metric']} ({'max' if rule.maximize else 'min'})", str(len(mine)),
                 _f(_m([r["flaml"]["score"] for r in mine]))]
        for s in strategies:
            ours = _m([r[s]["score"] for r in mine])
            cells += [_f(ours), _f(relative(ours, _m([r["flaml"]["score"] for r in mine]), rule), "+.2%"),
                      _f(_m([r[s]["wall_s"] for r in mine]), ".0f")]
        cells.append(_f(_m([r["flaml"]["wall_s"] for r in mine]), ".0f"))
        # Only MLE-STAR has Phase 1 candidates; an evolve-only table has nothing to compare.
        staged = [r["mle-star"] for r in mine if "mle-star" in r and r["mle-star"].get("phase1") is not None]
        kept = sum(1 for run in staged if _not_worse(run, rule))
        cells.append(f"{kept}/{len(mine)}" if staged else "n/a")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _not_worse(run: dict, rule: Score) -> bool:
    final, phase1 = run.get("score"), run.get("phase1")
    if final is None or phase1 is None:
        return False
    # Equal up to float noise counts as kept.
    return rule.at_least(final, phase1) or math.isclose(final, phase1, rel_tol=0.0, abs_tol=1e-12)


def earlier_flaml(paths: list[Path]) -> dict[tuple[str, int], dict]:
    """FLAML's result per (task, seed) from earlier ``--json`` files; a later file wins."""
    found: dict[tuple[str, int], dict] = {}
    for path in paths:
        try:
            rows = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            sys.exit(f"--flaml-from {path}: not a JSON file written by this bench's --json ({exc})")
        if not isinstance(rows, list):
            sys.exit(f"--flaml-from {path}: expected a list of rows, as this bench's --json writes")
        for row in rows:
            if not (isinstance(row, dict) and {"task", "seed"} <= row.keys() and isinstance(row.get("flaml"), dict)):
                sys.exit(f"--flaml-from {path}: a row without task, seed and flaml ({str(row)[:80]})")
            if row["flaml"].get("score") is not None:
                found[(row["task"], int(row["seed"]))] = {**row["flaml"], "from": path.name}
    return found


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--flaml-worker":
        flaml_worker(*sys.argv[2:6])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="*", default=None, help="bundled task names (default: all)")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--time-limit", type=int, default=120, help="seconds, for both tools")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--strategies", nargs="*", default=["mle-star"])
    parser.add_argument("--json", dest="json_out", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--flaml-from", nargs="*", type=Path, default=[],
                        help="reuse FLAML's results for the same task and seed from these --json files")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    try:
        import flaml  # noqa: F401
    except ImportError:
        sys.exit("FLAML is not installed: pip install -e '.[bench]' (or run `make bench`)")
    from engine.tasks import list_bundled, load_task, prepare_bundled
    from events.score import Score

    tasks = args.tasks or [t.name for t in list_bundled()]
    reused = earlier_flaml(args.flaml_from)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-automl-") as tmp:
        work = Path(tmp)
        for name in tasks:
            task_dir = prepare_bundled(name, work / "tasks" / name)
            task = load_task(task_dir)
            rule = Score(task.direction)
            for seed in args.seeds:
                row = {"task": name, "metric": task.metric, "maximize": rule.maximize, "seed": seed}
                order = ["flaml", *args.strategies] if seed % 2 else [*args.strategies, "flaml"]
                for who in order:
                    if who == "flaml":
                        row["flaml"] = reused.get((name, seed)) or run_flaml(task_dir, seed, args.time_limit, work)
                    else:
                        db = work / f"{name}-{who}-{seed}" / "bench.db"
                        db.parent.mkdir(parents=True)
                        row[who] = run_engine(name, task_dir, who, args.preset, seed, args.time_limit, db, rule)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.json_out:
                    args.json_out.write_text(json.dumps(rows, indent=1))
    print(f"\npreset {args.preset}, --time-limit {args.time_limit}, FLAML time_budget {args.time_limit}, "
          f"seeds {args.seeds}; scores are means over seeds of the private-answer grades")
    sources = sorted({r["flaml"]["from"] for r in rows if "from" in r["flaml"]})
    if sources:
        print(f"FLAML's results reused from earlier runs of this bench: {', '.join(sources)}")
    print(table(rows, args.strategies))


if __name__ == "__main__":
    main()
