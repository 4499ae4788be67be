"""The kept results of bench/bench_automl.py: what a row was measured on, and which earlier rows a
bench may take instead of fitting again.

The comparison issue 28 asks for (both sets of tasks, 3 seeds, 120 and 600 s, three peers) is
days of CPU on this machine kind, and a session has hours. So the rows are kept (``--json`` into
``bench/results/``, committed) and a later bench adds to them with ``--reuse``: it fits only what
no kept row answers. A kept row answers only for what it was measured on:

* a peer's row: the same task, seed and limit, and the same version of the peer's package;
* our engine's row: the same task, seed, limit, strategy and preset, and the same code — the git
  trees of the packages the engine runs (``CODE``) at a commit whose work tree had no changes in
  them. A row measured on changed code is kept but never reused.

Every row also records the cores and a speed probe (seconds for a fixed numpy and Python workload
at the bench's start). Wall-clock limits make scores depend on the machine: rows measured on
machines whose probes differ by more than ``SPEED_TOLERANCE`` are still reused, but the printout
names the files and the ratio, so a reader sees the mix.

``--report`` prints the tables from kept rows alone, fitting nothing.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import mean, stdev
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from events.score import Score

ROOT = Path(__file__).resolve().parent.parent
CODE = ("engine", "handlers", "events", "replay", "store", "pyproject.toml")
PEER_DISTRIBUTIONS = {"flaml": "flaml", "ag-medium": "autogluon.tabular", "ag-best": "autogluon.tabular"}
SPEED_TOLERANCE = 0.2
# A gap under 1 % is a tie whatever the seeds say: issue 28's "within 1 %" of a peer.
NOISE_FLOOR = 0.01


def _out(*cmd: str) -> str:
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def code_fingerprint(root: Path = ROOT) -> str | None:
    """The git trees of ``CODE`` at HEAD, joined; None when the work tree changed any of them
    (or this is not a git checkout): such a run's rows are kept but never reused."""
    if _out("git", "-C", str(root), "status", "--porcelain", "--", *CODE):
        return None
    return code_at("HEAD", root)


def code_at(rev: str, root: Path = ROOT) -> str | None:
    """The git trees of ``CODE`` at commit ``rev``, joined; None when git does not know it."""
    trees = [_out("git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{rev}:{path}") for path in CODE]
    return ",".join(trees) if all(trees) else None


def speed_probe_s(repeats: int = 3) -> float:
    """Seconds for a fixed workload (matrix products and a Python loop), the least of
    ``repeats`` runs: the same on machines of the same speed, so rows from different machines
    can be told apart."""
    import numpy as np

    def once() -> float:
        a = np.random.default_rng(0).standard_normal((400, 400))
        start = time.perf_counter()
        for _ in range(20):
            a = np.tanh(a @ a.T / 400.0)
        total = 0
        for i in range(2_000_000):
            total += i % 7
        return time.perf_counter() - start

    return round(min(once() for _ in range(repeats)), 3)


def provenance(python: str, peers: list[str], root: Path = ROOT) -> dict:
    """What this bench's rows are measured on (see the module doc)."""
    versions = {dist: _out(python, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))")
                for dist in dict.fromkeys(PEER_DISTRIBUTIONS[p] for p in peers)}
    return {"commit": _out("git", "-C", str(root), "rev-parse", "HEAD"), "code": code_fingerprint(root),
            "peers": versions, "cores": os.cpu_count(), "probe_s": speed_probe_s()}


def _load_rows(path: Path) -> tuple[list[dict], str | None]:
    """The rows of a ``--json`` file, and what keeps it from being one (None when it is one)."""
    try:
        rows = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return [], f"not a JSON file written by bench_automl.py --json ({exc})"
    if not isinstance(rows, list):
        return [], "expected a list of rows, as bench_automl.py --json writes"
    for row in rows:
        if not (isinstance(row, dict) and {"task", "seed", "limit"} <= row.keys()):
            return [], f"a row without task, seed and limit ({str(row)[:80]})"
    return rows, None


def read_rows(path: Path) -> list[dict]:
    """The rows of a ``--json`` file, or a clear exit naming the file and what is wrong."""
    rows, fault = _load_rows(path)
    if fault is not None:
        sys.exit(f"{path}: {fault}")
    return rows


def rows_by_file(paths: list[Path]) -> list[tuple[Path, list[dict]]]:
    """Each ``--json`` file named with its rows, a folder standing for its ``*.json`` files of this
    bench's shape (other benches keep their results beside them: those are passed over)."""
    found: list[tuple[Path, list[dict]]] = []
    for path in paths:
        if not path.is_dir():
            found.append((path, read_rows(path)))
            continue
        for file in sorted(path.glob("*.json")):
            rows, fault = _load_rows(file)
            if fault is None:
                found.append((file, rows))
    return found


def results_of(row: dict) -> dict[str, dict]:
    """A row's contenders' results, each carrying the row's provenance and preset (so results of
    one task, seed and limit from different files can sit in one row)."""
    return {who: {**result, "provenance": result.get("provenance", row.get("provenance")),
                  "preset": result.get("preset", row.get("preset"))}
            for who, result in row.items() if isinstance(result, dict) and who != "provenance"}


def answers(result: dict, who: str, now: dict, preset: str) -> bool:
    """Whether a kept ``result`` of contender ``who`` stands for a fit on what we have now."""
    then = result.get("provenance")
    if result.get("score") is None:
        return False
    if who in PEER_DISTRIBUTIONS:
        # Rows from before provenance was kept name no version: taken, as they always were.
        dist = PEER_DISTRIBUTIONS[who]
        return then is None or then.get("peers", {}).get(dist) in (None, now.get("peers", {}).get(dist))
    return (then is not None and now.get("code") is not None and then.get("code") == now["code"]
            and result.get("preset") == preset)


def earlier_results(paths: list[Path], contenders: list[str], now: dict | None = None,
                    preset: str = "") -> dict[tuple[str, str, int, int], dict]:
    """A contender's result per (contender, task, seed, limit) from earlier ``--json`` files, where
    it answers for a fit now (``answers``); a later file wins."""
    now = now or {}
    found: dict[tuple[str, str, int, int], dict] = {}
    for path, rows in rows_by_file(paths):
        for row in rows:
            for who, result in results_of(row).items():
                if who in contenders and answers(result, who, now, preset):
                    found[(who, row["task"], int(row["seed"]), int(row["limit"]))] = {**result, "from": path.name}
    return found


def speed_notes(reused: list[dict], probe_s: float | None) -> list[str]:
    """One line per reused file measured on a machine whose probe differs from this one's by more
    than ``SPEED_TOLERANCE``."""
    notes = {}
    for result in reused:
        then = (result.get("provenance") or {}).get("probe_s")
        if then and probe_s and abs(then / probe_s - 1) > SPEED_TOLERANCE:
            notes[result["from"]] = f"{result['from']}: measured on a machine {then / probe_s:.2f}x as slow as this one"
    return list(notes.values())


def kept_rows(paths: list[Path], preset: str, code: str | None) -> list[dict]:
    """One row per (task, seed, limit) from every file: the peers' results and our strategies'
    results under ``preset`` measured on ``code`` (``code_at``: one version of the engine per
    report, never a mix), a later file's result for a contender replacing an earlier one's."""
    merged: dict[tuple[str, int, int], dict] = {}
    for path, rows in rows_by_file(paths):
        for row in rows:
            key = (row["task"], int(row["seed"]), int(row["limit"]))
            kept = merged.setdefault(key, {k: v for k, v in row.items() if not isinstance(v, dict)})
            for who, result in results_of(row).items():
                ours = result.get("preset") == preset and (result.get("provenance") or {}).get("code") == code
                if who in PEER_DISTRIBUTIONS or ours:
                    kept[who] = {**result, "from": path.name}
    return list(merged.values())


def relative(ours: float | None, theirs: float | None, rule: Score) -> float | None:
    """Positive when ours is better, as a fraction of FLAML's score: the difference of the two
    scores as "higher is better" (``Score.fitness``)."""
    mine, flaml = rule.fitness(ours), rule.fitness(theirs)
    if mine is None or flaml is None or flaml == 0:
        return None
    return (mine - flaml) / abs(flaml) + 0.0  # + 0.0: no "-0.00%"


def not_worse(run: dict, rule: Score) -> bool:
    """Whether a run's final submission graded at least as well as its best Phase 1 candidate."""
    final, phase1 = run.get("score"), run.get("phase1")
    if final is None or phase1 is None:
        return False
    # Equal up to float noise counts as kept.
    return rule.at_least(final, phase1) or math.isclose(final, phase1, rel_tol=0.0, abs_tol=1e-12)


def rule_of(row: dict) -> Score:
    """How a row's task compares scores (a row keeps the direction as its ``maximize`` flag)."""
    from events.domain import MetricDirection
    from events.score import Score

    return Score(MetricDirection.maximize if row["maximize"] else MetricDirection.minimize)


def task_verdict(gaps: list[float]) -> str:
    """"win", "tie" or "loss" of one task against one peer, from its per-seed relative gaps
    (positive = ours better): a tie when the mean gap is within the noise, the larger of
    ``NOISE_FLOOR`` and two standard errors of the mean over the seeds."""
    centre = mean(gaps)
    noise = max(NOISE_FLOOR, 2 * stdev(gaps) / math.sqrt(len(gaps))) if len(gaps) > 1 else NOISE_FLOOR
    return "win" if centre > noise else "loss" if centre < -noise else "tie"


def seed_gaps(rows: list[dict], task: str, strategy: str, peer: str) -> list[float] | None:
    """The relative gap of each seed's run of ``task`` (None when it has no row or a run failed)."""
    mine = [r for r in rows if r["task"] == task and strategy in r and peer in r]
    gaps = [relative(r[strategy].get("score"), r[peer].get("score"), rule_of(r)) for r in mine]
    return None if not gaps or None in gaps else [g for g in gaps if g is not None]


def ran_and_failed(rows: list[dict], task: str, strategy: str, peer: str) -> bool:
    """Whether a run of ours on ``task`` ended without a graded submission where the peer has one."""
    return any(r["task"] == task and strategy in r and peer in r and r[strategy].get("score") is None
               and r[peer].get("score") is not None for r in rows)


def heldout_ledger(rows: list[dict], strategies: list[str], peers: list[str]) -> list[str]:
    """Per strategy and peer, over every task ever registered held out (rule 8 of
    docs/heldout-protocol.md), burned ones marked ``*``, and again over the tasks still blind
    alone (the pre-registered set, which no run was read for): wins, ties within noise, losses,
    the mean relative gap over the tasks with a result, and the tasks without one, named, so a
    task never leaves the figures unseen."""
    from engine.tasks.protocol import EVER_HELD_OUT, HELD_OUT, is_burned

    lines = ["## Every task ever registered held out (burned: *)", ""]
    if not peers:
        return [*lines, f"no peer row to compare with, over the {len(EVER_HELD_OUT)} tasks"]
    blind = tuple(t for t in HELD_OUT if not is_burned(t))
    for scope, tasks in (("", EVER_HELD_OUT), ("still blind, ", blind)):
        lines += [verdict_line(rows, strategy, peer, tasks, scope) for strategy in strategies for peer in peers]
    return lines


def verdict_line(rows: list[dict], strategy: str, peer: str, tasks: tuple[str, ...], scope: str) -> str:
    """One strategy against one peer over ``tasks``: wins, ties within noise, losses (a failed run
    among them), the mean relative gap over the tasks with a gap, and each task named under its
    verdict."""
    from engine.tasks.protocol import is_burned

    verdicts: dict[str, list[str]] = {"win": [], "tie": [], "loss": []}
    missing, gaps_by_task = [], []
    for task in tasks:
        label = f"{task}*" if is_burned(task) else task
        gaps = seed_gaps(rows, task, strategy, peer)
        if gaps is None:
            # A run of ours that failed where the peer graded is a loss (with no gap for the mean),
            # never "no result": a held-out set does not lose its failures.
            if ran_and_failed(rows, task, strategy, peer):
                verdicts["loss"].append(f"{label} (failed)")
            else:
                missing.append(label)
            continue
        verdicts[task_verdict(gaps)].append(label)
        gaps_by_task.append(mean(gaps))
    gap = f"{mean(gaps_by_task) + 0.0:+.2%}" if gaps_by_task else "n/a"
    return (f"- {strategy} vs {peer}, {scope}{len(tasks)} tasks: {len(verdicts['win'])} wins, "
            f"{len(verdicts['tie'])} ties within noise, {len(verdicts['loss'])} losses, mean relative "
            f"gap {gap} over {len(gaps_by_task)}; "
            + "; ".join(f"{name}: {', '.join(names) or 'none'}" for name, names in
                        (("wins", verdicts["win"]), ("ties", verdicts["tie"]),
                         ("losses", verdicts["loss"]), ("no result", missing))))


def keep_row(rows: list[dict], row: dict, json_out: Path | None) -> None:
    """A finished row: printed, and every row so far written out, so a bench cut short keeps them."""
    rows.append(row)
    print(json.dumps(row), flush=True)
    if json_out:
        json_out.write_text(json.dumps(rows, indent=1))
