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
    python bench/bench_automl.py --report bench/results/*.json --time-limit 600 --preset time [--set ...]

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
from statistics import mean
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The text and image tasks' peers (issue 62), run with --media.
from bench.automl_media_peers import MEDIA_PEER_TITLES, media_main  # noqa: E402
from bench.automl_results import (  # noqa: E402
    PEER_DISTRIBUTIONS,
    code_at,
    earlier_results,
    heldout_ledger,
    keep_row,
    kept_rows,
    not_worse,
    provenance,
    relative,
    results_of,
    rule_of,
    speed_notes,
)

if TYPE_CHECKING:
    from engine.tasks.model import LoadedTask
    from events.score import Score

PEERS = tuple(PEER_DISTRIBUTIONS)
PEER_TITLES = {"flaml": "FLAML", "ag-medium": "AG medium", "ag-best": "AG best", **MEDIA_PEER_TITLES}
AUTOML_VENV_PYTHON = ROOT / ".venv-automl" / "bin" / "python"
SET_TITLES = {"dev": "Development set (tuned on)", "heldout": "Held-out set (not tuned on)",
              "burned": "Burned held-out tasks (read to debug or to decide a change; still reported)",
              None: "Tasks outside the protocol"}
WITHIN = 0.01  # "within 1 %" of a peer, as issue 28 asks
FULL_USE = 0.9  # "runs use at least 90 % of their time limit ... and end within it" (issue 28)


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


def _m(values: list) -> float | None:
    kept = [v for v in values if v is not None]
    return mean(kept) if kept and len(kept) == len(values) else None


def _f(value: float | None, spec: str = ".4f") -> str:
    return "failed" if value is None else format(value, spec)


def _pct(value: float | None) -> str:
    """A signed percentage; a difference that rounds to zero is shown as +0.00%, never -0.00%."""
    return _f(None if value is None else (0.0 if abs(value) < 5e-5 else value), "+.2%")


def _cell(runs: list[dict], limit: float) -> str:
    """Mean score over seeds and the mean fraction of the limit used, e.g. ``30.1200 (97 %)``."""
    score, wall = _m([r.get("score") for r in runs]), _m([r.get("wall_s") for r in runs])
    return f"{_f(score)} ({_f(None if wall is None else wall / limit, '.0%')})"


def table(rows: list[dict], strategies: list[str], peers: list[str]) -> str:
    """One line per task: each contender's mean score (fraction of the limit used), then each
    strategy against each peer (positive = ours better), then how often the final solution was
    no worse than the best Phase 1 candidate."""
    head = ["task", "metric", "seeds", *(PEER_TITLES[p] for p in peers), *strategies,
            *(f"{s} vs {PEER_TITLES[p]}" for s in strategies for p in peers), "final >= best Phase 1"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task in dict.fromkeys(r["task"] for r in rows):
        mine = [r for r in rows if r["task"] == task]
        rule, limit = rule_of(mine[0]), float(mine[0]["limit"])
        cells = [task, f"{mine[0]['metric']} ({'max' if rule.maximize else 'min'})", str(len(mine))]
        cells += [_cell([r[w] for r in mine], limit) for w in (*peers, *strategies)]
        for s in strategies:
            ours = _m([r[s]["score"] for r in mine])
            cells += [_pct(relative(ours, _m([r[p]["score"] for r in mine]), rule)) for p in peers]
        # Only MLE-STAR has Phase 1 candidates; an evolve-only table has nothing to compare.
        staged = [r["mle-star"] for r in mine if "mle-star" in r and r["mle-star"].get("phase1") is not None]
        kept = sum(1 for run in staged if not_worse(run, rule))
        cells.append(f"{kept}/{len(mine)}" if staged else "n/a")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(rows: list[dict], strategies: list[str], peers: list[str]) -> list[str]:
    """Per strategy and peer, over the tasks of ``rows``: ahead on how many, within 1 % on how
    many; the least fraction of the limit any of our runs used; and how many final submissions
    graded below their run's best Phase 1 candidate."""
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    out = []
    for s in strategies:
        parts = []
        for p in peers:
            diffs = []
            for task in tasks:
                mine = [r for r in rows if r["task"] == task]
                diffs.append(relative(_m([r[s]["score"] for r in mine]), _m([r[p]["score"] for r in mine]),
                                      rule_of(mine[0])))
            ahead = sum(1 for d in diffs if d is not None and d > 0)
            close = sum(1 for d in diffs if d is not None and d >= -WITHIN)
            parts.append(f"vs {PEER_TITLES[p]}: ahead on {ahead}/{len(tasks)}, within 1 % on {close}/{len(tasks)}")
        used = [r[s]["wall_s"] / float(r["limit"]) for r in rows if r[s].get("wall_s") is not None]
        valid = sum(1 for r in rows if r[s].get("score") is not None)
        # The bar for a run: a valid submission, at least 90 % of the limit used, none past it.
        full = sum(1 for r in rows if r[s].get("score") is not None and r[s].get("wall_s") is not None
                   and FULL_USE <= r[s]["wall_s"] / float(r["limit"]) <= 1.0)
        parts.append(f"limit used {_f(min(used) if used else None, '.0%')}-{_f(max(used) if used else None, '.0%')}"
                     f", valid submissions {valid}/{len(rows)}"
                     f", valid with {FULL_USE:.0%}-100 % of the limit used {full}/{len(rows)}")
        # Issue 64: how often the final choice graded below the best Phase 1 candidate.
        staged = [r for r in rows if r[s].get("phase1") is not None and r[s].get("score") is not None]
        below = sum(1 for r in staged if not not_worse(r[s], rule_of(r)))
        parts += [f"final graded below the best Phase 1 candidate in {below}/{len(staged)} runs"] if staged else []
        out.append(f"{s}: " + "; ".join(parts))
    return out


def report(rows: list[dict], strategies: list[str], peers: list[str]) -> str:
    """The development and held-out sets apart, every time: a table and a summary each. A report
    with held-out rows also has the burned held-out tasks apart and the verdict over every task
    ever registered held out (docs/heldout-protocol.md, rules 6 and 8)."""
    from engine.tasks.protocol import is_burned

    heldout = any(r.get("set") == "heldout" for r in rows)
    if heldout:
        rows = [{**r, "set": "burned"} if is_burned(r["task"]) else r for r in rows]
    blocks = []
    for key in ("dev", "heldout", "burned", None):
        part = [r for r in rows if r.get("set") == key]
        if part:
            blocks.append("\n".join([f"## {SET_TITLES[key]}", "", table(part, strategies, peers), "",
                                      *summary(part, strategies, peers)]))
        elif heldout and key == "heldout":  # every blind task burned or not run yet: say so
            blocks.append(f"## {SET_TITLES[key]}\n\nno kept row of a task that is still blind")
    if heldout:
        blocks.append("\n".join(heldout_ledger(rows, strategies, peers)))
    return "\n\n".join(blocks)


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
                        help="take each contender's result for a task, seed and limit from these --json files where "
                             "one answers for a fit now (bench/automl_results.py): fit only the rest")
    parser.add_argument("--report", nargs="+", type=Path, default=None, metavar="JSON",
                        help="fit nothing: print the tables from these --json files (rows of the chosen set, "
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
    python = _automl_python(args.automl_python)
    _check_peers(python, args.peers)
    measured_on = provenance(python, args.peers)
    reused = earlier_results(args.reuse, [*args.strategies, *args.peers], measured_on, args.preset)
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



def kept_report(rows: list[dict], tasks: list[str], seeds: list[int], limit: int, preset: str) -> str:
    """The report of kept rows: those of ``tasks``, ``seeds`` and ``limit`` that hold a result of
    every strategy kept (run under ``preset`` on the chosen code), with the peers every such row
    has. A task is reported in the set the protocol puts it in now: a held-out task whose runs
    were read has become a development task since its rows were kept."""
    from engine.tasks.protocol import set_of

    chosen = [{**r, "set": set_of(r["task"])} for r in rows
              if r["task"] in tasks and int(r["seed"]) in seeds and int(r["limit"]) == limit]
    strategies = list(dict.fromkeys(w for r in chosen for w in results_of(r) if w not in PEERS))
    chosen = [r for r in chosen if all(s in r for s in strategies)]
    if not chosen:
        return f"no kept row for these tasks, seeds {seeds} and --time-limit {limit}"
    peers = [p for p in PEERS if all(p in r for r in chosen)]
    files = sorted({r[w]["from"] for r in chosen for w in (*strategies, *peers)})
    head = (f"preset {preset}, --time-limit {limit} s, seeds {sorted({int(r['seed']) for r in chosen})}; "
            f"kept rows from {', '.join(files)}")
    return head + "\n\n" + report(chosen, strategies, peers)


if __name__ == "__main__":
    main()
