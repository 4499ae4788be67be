"""Benchmark: replaying a 5,000-event MLE-STAR log through the real handlers (issue "Replay-based
regression suite and deterministic re-runs", item 8: under 1 s, with the ratio to a plain fold).

    python bench/bench_replay.py [--repeat N] [--smoke]

(--smoke: one timing, to check the bench runs; its timings judge nothing, so it exits 0 on a missed target)

The log is a complete run of the real ``mle-star`` handlers (5 parallel paths, 10 outer x 7 inner
steps, 15 ensemble rounds) answered in memory by the canned model of the replay fixtures
(``tests/replays/canned.py``) and a scorer that reads each script's hyper-parameters, appended
to a SQLite store input by input (one transaction per input with the decisions it caused, as the
driver does) and read back: the same envelopes ``engine replay`` reads. Then, over those
envelopes, the best of N timings of
* replay: ``engine.run.replayer.replay_log`` (re-derive and compare every decision), and
* fold:   ``replay.state.fold`` (the projection every CLI verb uses).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engine.run.replayer import replay_log  # noqa: E402
from events.base import NewEvent  # noqa: E402
from events.core import EvaluationCompleted, SubmissionInfo  # noqa: E402
from events.domain import PipelineConfig  # noqa: E402
from handlers.mlestar.pipeline import main as mle_star  # noqa: E402
from replay.state import fold  # noqa: E402
from store.sqlite import SQLiteEventStore  # noqa: E402
from tests.replays import canned  # noqa: E402
from tests.support.sim import make_task, ok_result, simulate  # noqa: E402

TARGET_EVENTS = 5_000
TARGET_S = 1.0
CONFIG = PipelineConfig(num_retrieved_models=3, num_parallel_solutions=5, outer_loop_steps=10, inner_loop_steps=7,
                        ensemble_rounds=15)


def agent(request):
    text, structured = canned.answer(request.agent_type, request.variant, request.variables,
                                     effect_id=request.effect_id, scenario=canned.SCENARIOS["fast"])
    from events.core import AgentCallCompleted

    return AgentCallCompleted(effect_id=request.effect_id, text=text, structured=structured, cost_usd=0.001)


def evaluate(request, code: str):
    if canned.BUG_LINE in code or canned.ABLATION_TYPO in code:
        from tests.support.sim import error_result

        return error_result("Traceback (most recent call last):\nNameError: name 'rwos' is not defined")
    if canned.SCORE_PHRASE not in code:
        return ok_result(None, stdout="full solution: 0.8300\n")
    p = canned.params_of(code)
    score = round(p["BASE"] + min(p["N_ESTIMATORS"], 1000) / 20000 + (0.1 - abs(p["LEARNING_RATE"] - 0.05)) / 10, 4)
    sub = SubmissionInfo(exists=True, path="/bench/final/submission.csv", rows=3, columns=["id", "target"],
                         valid=True) if request.expect_submission else None
    return EvaluationCompleted(effect_id=request.effect_id, result=ok_result(score), submission=sub)


def build_log(db: Path):
    from events.core import RunStarted

    start = RunStarted(strategy="mle-star", backend="canned", seed=0, config=CONFIG.model_dump(mode="json"),
                       task=make_task(), task_dir="/bench/task", run_dir="/bench/run")
    run = simulate(mle_star, agent=agent, evaluate=evaluate, start=start, timers_last=True)
    assert run.completed is not None, run.failed
    store = SQLiteEventStore(db)
    store.create_run("bench", strategy="mle-star", task="sim-task")
    batches: list[list[tuple[str, object]]] = []
    for scope, event in run.events:
        if event.kind == "input":
            batches.append([("run", event)])
        else:
            batches[-1].append((scope, event))
    seq = 0
    for batch in batches:  # the input, then the decisions it caused (causation = the input's seq)
        cause = seq + 1
        store.append("bench", [NewEvent(event=ev, scope=sc, causation_seq=None if i == 0 else cause)
                               for i, (sc, ev) in enumerate(batch)], expected_seq=seq)
        seq += len(batch)
    log = list(store.read("bench"))
    store.close()
    return log


def fastest_of(n: int, fn: Callable[[], object]) -> tuple[float, float]:
    """The shortest wall time of ``n`` timed calls of ``fn`` (the least disturbed by the machine),
    and the shortest CPU time of this process over them (what the call costs, however busy the
    machine is)."""
    times, cpu = [], []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(times), min(cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one timing; exit 0 whatever it is")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeat = 1
    with tempfile.TemporaryDirectory() as tmp:
        log = build_log(Path(tmp) / "bench.db")
    n = len(log)
    kinds = {k: sum(1 for e in log if e.kind == k) for k in ("input", "decision")}
    divergence, _ = replay_log(log)
    assert divergence is None, divergence.describe()
    replay_s, replay_cpu = fastest_of(args.repeat, lambda: replay_log(log))
    fold_s, fold_cpu = fastest_of(args.repeat, lambda: fold(log))
    per_5000 = replay_s * TARGET_EVENTS / n
    verdict = "OK" if per_5000 < TARGET_S else "TOO SLOW"
    types = len({e.type for e in log})
    print(f"replay benchmark: a complete mle-star log of {n} events ({kinds['input']} inputs, "
          f"{kinds['decision']} decisions, {types} event types)")
    print(f"  replay (re-derive + compare every decision): {replay_s * 1000:8.1f} ms   "
          f"= {per_5000 * 1000:.1f} ms per {TARGET_EVENTS} events  (target < {TARGET_S:.0f} s: {verdict}; "
          f"CPU {replay_cpu * 1000:.1f} ms)")
    print(f"  plain fold of the same log:                 {fold_s * 1000:8.1f} ms   (CPU {fold_cpu * 1000:.1f} ms)")
    print(f"  ratio replay / fold:                        {replay_s / fold_s:8.1f} x")
    if n < TARGET_EVENTS:
        print(f"  note: the log is shorter than {TARGET_EVENTS} events; the per-{TARGET_EVENTS} figure is scaled")
    return 0 if verdict == "OK" or args.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
