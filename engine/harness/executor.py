"""The evaluation executor: turns an ``EvaluationRequested`` effect into ``EvaluationCompleted``.

Called by the engine's run loop. Every evaluation gets ``<run_dir>/evals/<safe effect id>/``
with ``input/`` (the task's public data, read-only), an empty ``final/`` and the script saved
as ``<solution_id>.py`` for the audit trail; the script's cwd is that directory. Effects are
at-least-once, so an existing directory (a re-run after a crash) is reset first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from engine.harness.environment import CORES_VAR, OPENMP_WAIT_SETTINGS, build_execution_env, withhold_secrets
from engine.harness.evaluate import evaluate_code
from engine.harness.held_back import HeldBack, cut_and_grade
from engine.harness.process import KILL_GRACE_SECONDS
from engine.harness.results import take_final_run_estimate
from engine.harness.submission import SUBMISSION_FILENAME, check_submission
from engine.harness.workdir import InputMode, prepare_evaluation_directory, remove_tree, safe_dir_name
from engine.sandbox import Sandbox, evaluation_policy, private_answers_of
from events.core import EvaluationCompleted, EvaluationRequested
from events.sandbox import SandboxLimits, SandboxMode, SandboxPolicy
from handlers.script_lines import score_groups, scored_rows

log = structlog.get_logger(__name__)

# stdout/stderr end up in the event log and in prompts; 2 MB per stream keeps a run's log
# bounded while leaving far more than any debugger prompt can use. The head and the tail are
# kept (score line and traceback come last).
EVENT_OUTPUT_LIMIT_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class EvalContext:
    """Where and how evaluations of one run happen.

    ``subsample_limit`` is carried for callers' use; the harness itself does not subsample
    (the instruction lives in the prompts, REQ-EX-017/018). ``gpu_info`` may hold
    ``gpu_indices`` (list of ints) to pin ``CUDA_VISIBLE_DEVICES``; otherwise it is inherited.
    The fields after ``gpu_info`` are additions with defaults.
    """

    run_dir: Path
    task_dir: Path
    sample_submission: Path | None
    subsample_limit: int
    memory_limit_mb: int | None = None
    gpu_info: dict[str, Any] = field(default_factory=dict)
    output_limit_bytes: int = EVENT_OUTPUT_LIMIT_BYTES
    kill_grace_seconds: float = KILL_GRACE_SECONDS
    input_mode: InputMode = "auto"
    # "bwrap": every script runs under ``evaluation_policy`` (see engine/sandbox); "none": a
    # plain host process. Resolve ``--sandbox auto`` with ``engine.sandbox.resolve_mode`` first.
    sandbox_mode: SandboxMode = "none"
    # Host paths no script may see besides the task's private answers (the engine database).
    protected: tuple[str, ...] = ()
    sandbox_limits: SandboxLimits | None = None  # None: ``default_limits`` from memory and timeout
    # Names of the engine's variables a script sees besides the allow-list (``eval_env_pass``).
    env_pass: tuple[str, ...] = ()
    # The task's metric: a final submission must also hold what it scores (harness/submission.py).
    metric: str | None = None
    # The slice of training rows the run holds back from its search (harness/held_back.py).
    held_back: HeldBack | None = None

    def held_back_for(self, request: EvaluationRequested) -> HeldBack | None:
        """The slice this evaluation's script reads the view of: every search step's, when the run
        holds rows back; never finalization's test script."""
        return self.held_back if self.held_back is not None and self.held_back.reads_view(request.purpose) else None

    def data_dir(self, request: EvaluationRequested) -> Path:
        """What this evaluation's script reads as ``./input``: the slice's view, or the task's own data."""
        view = self.held_back_for(request)
        return view.slice.view_dir if view is not None else self.task_dir


def eval_dir_for(run_dir: str | Path, effect_id: str) -> Path:
    """``<run_dir>/evals/<safe name of effect_id>`` (see ``safe_dir_name``)."""
    return Path(run_dir) / "evals" / safe_dir_name(effect_id)


def _gpu_indices(gpu_info: dict[str, Any]) -> list[int] | None:
    indices = gpu_info.get("gpu_indices")
    return [int(i) for i in indices] if indices is not None else None


async def run_evaluation(request: EvaluationRequested, code: str, ctx: EvalContext) -> EvaluationCompleted:
    """Evaluate ``code`` (the script of ``request.solution_id``) and report the result.

    * timeout ``request.timeout_s``; ``ctx.memory_limit_mb`` kills the tree when exceeded;
    * the script's environment is an allow-list (see ``build_execution_env``) and tells it the
      cores it may use (``request.cores``, as ``ENGINE_EVAL_CORES``), its deadline (its timeout,
      ``ENGINE_EVAL_DEADLINE``) and, when ``request.fit_within_s`` is set, the time it is asked
      to fit its work to (``ENGINE_EVAL_FIT_BY``);
    * a rejected script (empty, exit call) is an error result with the rejection message;
    * with a held-back slice (``ctx.held_back``), a search step's script reads the slice's view
      and the held-back rows of the submission it wrote are cut out and graded first
      (``hidden_score``); finalization's test script reads the task's own data;
    * ``submission`` is filled when ``request.expect_submission``: ``final/submission.csv``
      checked against ``ctx.sample_submission``;
    * ``elapsed_s`` stays 0: the engine stamps it.
    Script failures never raise; a failure to prepare the directory (missing task data, disk
    full) does, because it is the engine's problem and no debugger could fix it.
    When task files were copied rather than linked (running as root), the copies are deleted
    after the run to bound disk use; scripts and ``final/`` stay.
    """
    eval_dir = eval_dir_for(ctx.run_dir, request.effect_id)
    policy = evaluation_sandbox_policy(request, ctx)
    sandbox = Sandbox(policy) if policy.mode == "bwrap" else None
    prepare_evaluation_directory(eval_dir, ctx.data_dir(request), "bind" if sandbox else ctx.input_mode)
    env = build_execution_env(_gpu_indices(ctx.gpu_info), passed=ctx.env_pass, cores=request.cores)
    log.info("harness.evaluation.start", effect_id=request.effect_id, solution_id=request.solution_id,
             dir=str(eval_dir), timeout=request.timeout_s, sandbox=policy.mode, cores=env.get(CORES_VAR),
             **{name.lower(): env[name] for name in OPENMP_WAIT_SETTINGS if name in env})
    try:
        evaluation = await evaluate_code(
            code, eval_dir, request.timeout_s,
            filename=f"{request.solution_id}.py",
            env=env,
            memory_limit_mb=policy.limits.memory_mb,
            output_limit_bytes=ctx.output_limit_bytes,
            kill_grace_seconds=ctx.kill_grace_seconds,
            sandbox=sandbox,
            disk_limit_mb=policy.limits.disk_mb,
            fit_within_s=request.fit_within_s,
        )
    finally:
        _drop_copied_inputs(eval_dir / "input")
    result, estimate = take_final_run_estimate(withhold_secrets(evaluation.result, env))
    written = eval_dir / "final" / SUBMISSION_FILENAME
    hidden_score = None
    if (view := ctx.held_back_for(request)) is not None:
        estimate = view.full_rows_estimate(estimate)
        if written.is_file():
            hidden_score = cut_and_grade(view, written).score  # before the file is checked or kept
    submission = None
    if request.expect_submission:
        submission = check_submission(written, ctx.sample_submission, ctx.metric)
    log.info("harness.evaluation.complete", effect_id=request.effect_id, score=result.score,
             is_error=result.is_error, exit_code=result.exit_code,
             submission_valid=submission.valid if submission else None)
    return EvaluationCompleted(
        effect_id=request.effect_id,
        result=result,
        peak_rss_mb=evaluation.peak_rss_mb,
        cpu_s=evaluation.cpu_s,
        submission=submission,
        sandbox=policy,
        final_run_estimate_s=estimate,
        scored_rows=scored_rows(result.stdout),
        score_groups=score_groups(result.stdout),
        hidden_score=hidden_score,
    )


def evaluation_sandbox_policy(request: EvaluationRequested, ctx: EvalContext) -> SandboxPolicy:
    """The policy this evaluation runs under, as recorded in its ``EvaluationCompleted``.

    Without a sandbox only the harness's own memory limit applies; the policy says so (mode
    ``none``: everything the engine's user can read was visible).
    """
    eval_dir = eval_dir_for(ctx.run_dir, request.effect_id)
    held_back = ctx.held_back.protected() if ctx.held_back is not None else ()
    protected = (*private_answers_of(ctx.task_dir), *held_back, *ctx.protected)
    if ctx.sandbox_mode == "none":
        return SandboxPolicy(mode="none", cwd=str(eval_dir.absolute()), private_tmp=False, pid_namespace=False,
                             limits=SandboxLimits(memory_mb=ctx.memory_limit_mb),
                             protected=tuple(str(Path(p).resolve()) for p in protected))
    return evaluation_policy(ctx.sandbox_mode, eval_dir=eval_dir, public_dir=ctx.data_dir(request),
                             key=f"{Path(ctx.run_dir).name}/{request.effect_id}",
                             memory_mb=ctx.memory_limit_mb, timeout_s=request.timeout_s, protected=protected,
                             limits=ctx.sandbox_limits)


def _drop_copied_inputs(input_dir: Path) -> None:
    if not input_dir.is_dir():
        return
    has_copies = any(p.is_file() and not p.is_symlink() for p in input_dir.rglob("*"))
    if has_copies:
        remove_tree(input_dir)
        input_dir.mkdir()
