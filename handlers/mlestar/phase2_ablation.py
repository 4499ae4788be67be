"""Phase 2, lines 5-7 of Algorithm 2 (REQ-P2O): the ablation study of s_t, its run and its summary.

A failed ablation (no code, or still crashing after debugging) gives the summary ``""``
(REQ-P2O-021) and skips the summarizer; the extractor is then told in words that the study
failed (``ABLATION_FAILED_NOTE``), since an empty summary would be a hole in its prompt.
"""

from __future__ import annotations

from events.core import AgentCallCompleted
from events.enums import AgentType, SolutionPhase
from events.phase2 import AblationSummarized
from events.values import SolutionScript
from handlers.evaluation import EvalPolicy, evaluate_with_retry
from handlers.step_policy import time_driven
from handlers.toolkit import ask, code_of, pacing_deadline, warn
from handlers.workflow import Workflow

AUTO_SUMMARY_PREFIX = "[Auto-summary from raw output] "
RAW_TAIL_CHARS = 2000
ABLATION_FAILED_NOTE = ("The ablation study could not be run at this step, so there are no new findings. "
                        "Rely on the earlier studies and on the solution itself.")


# --- §1-2: ablation study -----------------------------------------------------------------


def ablation_timeout(wf: Workflow) -> float:
    """REQ-P2O-035: min(time_limit / (2T), 600) s, and never past the path's deadline (the
    workflow's). In the time mode T is only an upper bound, so half the path's time left takes the
    place of time_limit / T."""
    cfg, deadline = wf.config, pacing_deadline(wf)
    share = deadline.soft_left(wf.now) / 2 if time_driven(cfg) else cfg.time_limit_seconds / (2 * cfg.outer_loop_steps)
    return deadline.timeout(wf.now, min(share, 600.0), floor_s=1.0)


async def write_ablation(wf: Workflow, t: int, s_t: SolutionScript, summaries: list[str],
                         session_key: str | None) -> str | None:
    """A_abl (REQ-P2O-002): an ablation script for s_t, told what earlier studies found."""
    reply = await ask(wf, AgentType.ablation, {"solution_script": s_t.content,
                                               "previous_ablations": [s for s in summaries if s]},
                      name=f"t{t}/ablation", session_key=session_key)
    return code_of(reply)


async def run_ablation(wf: Workflow, t: int, script: str, parent_id: str) -> tuple[str, str, bool, str]:
    """REQ-P2O-020/021: run it through the debug flow; never scored, never leakage-checked.
    Returns (the version that ran last, its stdout + stderr, ran cleanly, its solution id)."""
    ev = await evaluate_with_retry(
        wf, SolutionScript(content=script, phase=SolutionPhase.refined),
        EvalPolicy.ablation(ablation_timeout(wf)), name=f"t{t}/ablation-run",
        origin="ablation", parents=[parent_id], detail={"outer_step": t})
    res = ev.result
    raw = res.stdout + (("\n" + res.stderr) if res.stderr.strip() else "")
    if res.is_error:
        first = (res.error_traceback or res.stderr or "").strip().splitlines()[-1:] or [""]
        warn(wf, "ablation still failing after debugging; its summary is empty (REQ-P2O-021)",
             outer_step=t, exit_code=res.exit_code, error=first[0][:200])
    return ev.solution.content, raw, not res.is_error, ev.solution_id


async def summarize(wf: Workflow, t: int, script: str, raw: str,
                    session_key: str | None) -> tuple[str, bool]:
    """A_summarize (REQ-P2O-011/036): the whole reply, or the raw-output fallback. (text, fell back)"""
    reply = await ask(wf, AgentType.summarize, {"ablation_code": script, "raw_result": raw},
                      name=f"t{t}/summarize", session_key=session_key)
    text = (reply.text or "").strip() if isinstance(reply, AgentCallCompleted) else ""
    if text:
        return text, False
    warn(wf, "summarizer gave no usable answer; using the raw output (REQ-P2O-036)", outer_step=t,
         raw=str(getattr(reply, "text", None) or getattr(reply, "error", ""))[:500])
    return AUTO_SUMMARY_PREFIX + raw[-RAW_TAIL_CHARS:], True


async def ablation_summary(wf: Workflow, t: int, s_t: SolutionScript, summaries: list[str], best_id: str,
                           session_key: str | None) -> str:
    """Lines 5-7: the ablation study of s_t, its run and its summary, recorded ("" when there is
    none: no code, or a run that failed)."""
    a_t = await write_ablation(wf, t, s_t, summaries, session_key)
    raw, ran_ok, abl_id = "", False, None
    if a_t is not None:
        a_t, raw, ran_ok, abl_id = await run_ablation(wf, t, a_t, best_id)
    else:
        warn(wf, "ablation agent gave no code; its summary is empty", outer_step=t)
    summary, fell_back = (await summarize(wf, t, a_t, raw, session_key)) if ran_ok and a_t else ("", False)
    wf.record(AblationSummarized(outer_step=t, summary=summary, ablation_solution_id=abl_id,
                                 ablation_ok=ran_ok, fallback=fell_back))
    return summary
