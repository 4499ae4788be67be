"""Script evaluations as Ray tasks (``--set evaluation_executor=ray``): each evaluation asks Ray
for ``evaluation_cpus``/``evaluation_gpus`` and runs on whichever node has them, so one run's L
paths can use several GPUs or hosts. The evaluation itself is the harness's, unchanged (same
sandbox, limits and result); only where it runs differs. The run's directory must be on a
filesystem every node mounts (README, campaigns): the evaluation writes there.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from events.core import EvaluationCompleted, EvaluationRequested

# A worker or node that dies takes the evaluation with it; Ray runs it again elsewhere (the
# evaluation directory is per effect and prepared afresh) rather than record an infrastructure
# failure as the script's error.
SYSTEM_RETRIES = 2

# Environment a run's driver reads (engine settings, model endpoints and keys). Ray workers do
# not inherit the campaign command's environment, so these are passed by name with each task.
FORWARDED_ENV_PREFIXES = ("ENGINE_", "MLE_STAR_", "ANTHROPIC_", "CLAUDE_", "OPENAI_")


def forwarded_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if k.startswith(FORWARDED_ENV_PREFIXES)}


def evaluate_on_worker(payload: dict[str, Any], code: str, ctx: Any) -> EvaluationCompleted:
    """Runs in a Ray worker: the harness's evaluation, with this node's GPUs (Ray sets
    CUDA_VISIBLE_DEVICES for the GPUs it granted the task)."""
    import anyio

    from engine.harness.executor import run_evaluation
    from engine.run.effect_files import effect_trace_path

    request = EvaluationRequested.model_validate(payload)
    path = effect_trace_path(os.path.basename(str(ctx.run_dir)))
    if path:  # tests: which process evaluated what
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{request.effect_id}\n")
    return anyio.run(run_evaluation, request, code, replace(ctx, gpu_info={}))


def ray_address(explicit: str | None = None) -> str:
    """Where Ray is: the address given, else $RAY_ADDRESS, else "local" (a Ray of our own on this
    machine). Never Ray's own discovery, which attaches to any cluster already running here
    (another user's, or in the tests another xdist worker's, taking our runs down when it stops)."""
    return explicit or os.environ.get("RAY_ADDRESS") or "local"


def connect() -> Any:
    """Ray, connected: the cluster this process already belongs to (a campaign's worker), else
    $RAY_ADDRESS, else a Ray instance started on this machine."""
    try:
        import ray
    except ImportError:
        from engine.run.errors import EngineError

        raise EngineError("evaluation_executor=ray needs Ray: pip install 'mle-engine[cluster]'") from None
    if not ray.is_initialized():
        import logging

        ray.init(address=ray_address(), include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
    return ray


async def evaluate_on_ray(request: EvaluationRequested, code: str, ctx: Any, *, cpus: float,
                          gpus: float) -> EvaluationCompleted:
    """A Ray task reserves ``cpus`` on whichever node has them, and its script is told that many
    cores (at least one), whatever ``request.cores`` granted: the run's other evaluation slots are
    not on that node, and reserving them there could wait forever on a cluster of smaller nodes."""
    ray = connect()
    request = request.model_copy(update={"cores": max(1, int(cpus))})
    ref = ray.remote(evaluate_on_worker).options(
        num_cpus=cpus, num_gpus=gpus, max_retries=SYSTEM_RETRIES, retry_exceptions=False,
        runtime_env={"env_vars": forwarded_env()}, name=f"evaluation {request.effect_id}",
    ).remote(request.model_dump(mode="json"), code, ctx)
    try:
        return await ref
    except BaseException:
        ray.cancel(ref, force=True)  # cut by the run (or it died): the script must not run on
        raise
