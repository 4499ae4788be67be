"""One evaluation end to end (REQ-EX-015/016/046) and ranking (REQ-EX-023/027)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import structlog

from engine.harness.environment import build_execution_env, with_deadline
from engine.harness.output import DEFAULT_OUTPUT_LIMIT_BYTES
from engine.harness.process import KILL_GRACE_SECONDS, ProcessOutcome, run_process
from engine.harness.results import build_evaluation_result, rejected_result
from engine.harness.script import ScriptRejected, write_code
from engine.harness.workdir import clean_output_directory, prepare_evaluation_directory, setup_working_directory
from engine.sandbox import Sandbox
from engine.sandbox.modes import resolve_mode
from engine.sandbox.policy import evaluation_policy, private_answers_of
from events.domain import (
    EvaluationResult,
    MetricDirection,
    PipelineConfig,
    SolutionScript,
    TaskDescription,
)
from events.score import Score, usable

log = structlog.get_logger(__name__)


class ExecutorStrategy(str, Enum):
    """REQ-EX-034. Only ``subprocess`` is implemented: ``sdk_bash`` falls back to it, which is
    what REQ-EX-047 prescribes anyway for any timeout above 600 s (digest §12 trap 3)."""

    subprocess = "subprocess"
    sdk_bash = "sdk_bash"


@dataclass(frozen=True)
class CodeEvaluation:
    """An ``EvaluationResult`` and the resource figures of the run (None when nothing ran)."""

    result: EvaluationResult
    outcome: ProcessOutcome | None
    script_path: str | None

    @property
    def peak_rss_mb(self) -> float | None:
        return self.outcome.peak_rss_mb if self.outcome else None

    @property
    def cpu_s(self) -> float | None:
        return self.outcome.cpu_s if self.outcome else None


async def evaluate_code(
    code: str,
    working_dir: str | os.PathLike[str],
    timeout_seconds: float,
    *,
    filename: str = "solution.py",
    env: dict[str, str] | None = None,
    memory_limit_mb: float | None = None,
    output_limit_bytes: int = DEFAULT_OUTPUT_LIMIT_BYTES,
    kill_grace_seconds: float = KILL_GRACE_SECONDS,
    sandbox: Sandbox | None = None,
    disk_limit_mb: float | None = None,
    fit_within_s: float | None = None,
) -> CodeEvaluation:
    """The REQ-EX-015 pipeline on a prepared directory: setup → clean ``final/`` → write →
    env → execute → result. A write_script rejection becomes an error result carrying the
    rejection message (digest §12 trap 4), never an exception. ``sandbox``: see ``run_process``.
    ``fit_within_s``: the seconds it is asked to fit its work into (``FIT_BY_VAR``), when sooner
    than ``timeout_seconds``."""
    base = setup_working_directory(working_dir)
    clean_output_directory(base)
    try:
        script_path = write_code(code, base, filename)
    except ScriptRejected as exc:
        log.warning("harness.script_rejected", reason=str(exc))
        return CodeEvaluation(result=rejected_result(str(exc)), outcome=None, script_path=None)
    outcome = await run_process(
        script_path, base, timeout_seconds, with_deadline(env if env is not None else build_execution_env(),
                                                          timeout_seconds, fit_within_s),
        memory_limit_mb=memory_limit_mb, output_limit_bytes=output_limit_bytes,
        kill_grace_seconds=kill_grace_seconds, sandbox=sandbox, disk_limit_mb=disk_limit_mb,
    )
    result = build_evaluation_result(outcome.raw)
    log.info("harness.evaluation.scored", path=script_path, exit_code=result.exit_code,
             duration=round(result.duration_seconds, 3), score=result.score, is_error=result.is_error)
    return CodeEvaluation(result=result, outcome=outcome, script_path=script_path)


async def evaluate_solution(
    solution: SolutionScript,
    task: TaskDescription,
    config: PipelineConfig,
    timeout_override: float | None = None,
    *,
    strategy: ExecutorStrategy | str = ExecutorStrategy.subprocess,
    work_root: str | os.PathLike[str] | None = None,
    sandbox: str = "auto",
) -> EvaluationResult:
    """REQ-EX-015: evaluate ``solution`` and return its ``EvaluationResult``.

    * The timeout is ``timeout_override`` if given, else ``config.time_limit_seconds``
      (REQ-EX-046: no default of the harness's own).
    * The script runs in a new directory of its own, created under ``work_root`` (default:
      the system temp directory) and kept for inspection — never in the data directory
      (digest §12 trap 1) nor in a directory shared with another evaluation (trap 9). Its
      ``input/`` gets read-only entries for ``task.data_dir``; the script is saved there as
      ``<solution_id>.py``.
    * ``config.memory_limit_mb`` applies when set.
    * ``sandbox`` as the CLI's ``--sandbox``: ``auto`` (default) runs the script under bubblewrap
      when it works here — the task data read-only, no network, the private answers out of
      reach, the same limits as in a run — ``bwrap`` insists (``SandboxUnavailable`` otherwise),
      ``none`` runs it as the caller.
    * REQ-EX-016: ``solution`` is only read; the caller sets its score from the result.
    """
    if ExecutorStrategy(strategy) is ExecutorStrategy.sdk_bash:
        log.info("harness.strategy_fallback", requested="sdk_bash", used="subprocess")
    timeout = float(timeout_override) if timeout_override is not None else float(config.time_limit_seconds)
    if work_root is not None:
        os.makedirs(work_root, exist_ok=True)
    mode = resolve_mode(sandbox)
    base = tempfile.mkdtemp(prefix=f"eval-{solution.solution_id}-", dir=work_root)
    if mode == "none":
        prepare_evaluation_directory(base, task.data_dir)
        evaluation = await evaluate_code(solution.content, base, timeout, filename=f"{solution.solution_id}.py",
                                         memory_limit_mb=config.memory_limit_mb)
        return evaluation.result
    policy = evaluation_policy(mode, eval_dir=base, public_dir=task.data_dir, key=f"library/{os.path.basename(base)}",
                               memory_mb=config.memory_limit_mb, timeout_s=timeout,
                               protected=private_answers_of(task.data_dir))
    prepare_evaluation_directory(base, task.data_dir, "bind")
    evaluation = await evaluate_code(solution.content, base, timeout, filename=f"{solution.solution_id}.py",
                                     memory_limit_mb=policy.limits.memory_mb, sandbox=Sandbox(policy),
                                     disk_limit_mb=policy.limits.disk_mb)
    return evaluation.result


def is_better_solution(new_result: EvaluationResult, old_score: float, direction: MetricDirection) -> bool:
    """REQ-EX-023: strictly better (``Score.improves``, REQ-EX-022); False for an error or a
    missing score."""
    return not new_result.is_error and Score(direction).improves(new_result.score, old_score)


def rank_solutions(
    solutions: Sequence[SolutionScript],
    results: Sequence[EvaluationResult],
    direction: MetricDirection,
) -> list[tuple[SolutionScript, EvaluationResult]]:
    """REQ-EX-027: best first by score; then successful runs without a score; errors last.

    Decisions: an error run goes last even when it printed a score (digest §12 trap 10: a
    crashed script's score is not trusted); a NaN score counts as no score; ties and the
    members of each group keep their input order (stable; ``Score.ranked``). Pure: inputs are
    not modified.
    """
    if len(solutions) != len(results):
        raise ValueError(f"{len(solutions)} solutions but {len(results)} results")
    pairs = list(zip(solutions, results))
    ok = [p for p in pairs if not p[1].is_error]
    ranked = [ok[i] for i in Score(direction).ranked([p[1].score for p in ok])]
    unscored = [p for p in ok if not usable(p[1].score)]
    errors = [p for p in pairs if p[1].is_error]
    return ranked + unscored + errors
