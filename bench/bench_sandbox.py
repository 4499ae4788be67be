"""Benchmark: the sandbox's cost per evaluation (issue 15, item 4).

    python bench/bench_sandbox.py [--repeat N] [--smoke]

(--smoke: the trivial script once each way, to check the bench runs)

The same small scikit-learn script (load a bundled dataset, fit a logistic regression, print a
score) is evaluated N times through ``engine.harness.executor.run_evaluation`` with
``sandbox_mode="none"`` and N times with ``"bwrap"``, interleaved, in one process. Reported:
the median wall time of each and their ratio, plus the same for a trivial script (``pass``),
which isolates the fixed cost of setting the sandbox up (bwrap, mounts, launcher).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import anyio  # noqa: E402

from engine.harness.executor import EvalContext, run_evaluation  # noqa: E402
from engine.sandbox import bwrap_problem  # noqa: E402
from events.core import EvaluationRequested  # noqa: E402

SKLEARN_SCRIPT = """
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
X, y = load_iris(return_X_y=True)
print("Final Validation Performance:", cross_val_score(LogisticRegression(max_iter=500), X, y, cv=3).mean())
"""
TRIVIAL_SCRIPT = "print('Final Validation Performance: 1')\n"


def time_one(ctx: EvalContext, code: str, effect_id: str) -> float:
    request = EvaluationRequested(effect_id=effect_id, solution_id="bench", purpose="bench", timeout_s=120)
    started = time.perf_counter()
    done = anyio.run(run_evaluation, request, code, ctx)
    elapsed = time.perf_counter() - started
    if done.result.is_error:
        raise SystemExit(f"benchmark script failed under {ctx.sandbox_mode}: {done.result.stderr[-500:]}")
    return elapsed


def measure(root: Path, task: Path, code: str, repeat: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"none": [], "bwrap": []}
    for i in range(repeat + 1):
        for mode in ("none", "bwrap"):
            ctx = EvalContext(run_dir=root / mode, task_dir=task, sample_submission=None, subsample_limit=100,
                              sandbox_mode=mode)  # type: ignore[arg-type]
            elapsed = time_one(ctx, code, f"bench/{i}")
            if i:  # the first round warms file caches for both
                times[mode].append(elapsed)
    return {mode: statistics.median(values) for mode, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="the trivial script only, once each way")
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 1
    problem = bwrap_problem()
    if problem:
        print(f"bench_sandbox: cannot measure: {problem}")
        return 1
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        root = Path(tmp)
        task = root / "task" / "public"
        task.mkdir(parents=True)
        (task / "train.csv").write_text("id,x\n0,1\n")
        scripts = (("scikit-learn script", SKLEARN_SCRIPT), ("trivial script", TRIVIAL_SCRIPT))
        for label, code in scripts[1:] if args.smoke else scripts:
            m = measure(root / label.split()[0], task, code, args.repeat)
            print(f"sandbox overhead, {label}: unsandboxed {m['none'] * 1000:.0f} ms, "
                  f"bwrap {m['bwrap'] * 1000:.0f} ms per evaluation (median of {args.repeat}), "
                  f"ratio {m['bwrap'] / m['none']:.2f}x, +{(m['bwrap'] - m['none']) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
