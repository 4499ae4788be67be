"""Phase 2 inner loop: K refinement attempts on one code block (Algorithm 2, lines 9-25; REQ-P2I).

    best_sol, best = s_t, h_best                                  # REQ-P2I-024
    for k in 0..K-1:                                              # exactly K records (P2I-048)
        p_k  = p_0 if k == 0 else PLANNER(c_t, plans, scores)     # no planner at k=0 (P2I-018)
        c_k  = CODER(c_t, p_k)                                    # always the ORIGINAL c_t (P2I-021)
        s_k  = s_t with c_t -> c_k                                # always the ORIGINAL s_t (P2I-022)
        h_k  = evaluate_with_retry(s_k)                           # leakage + debug first (P2I-030/031)
        if h_k is not None and h_k >= best: best_sol, best = s_k, h_k   # ties win (P2I-026)
        plans += p_k ; scores += h_k                               # failures as None (P2I-035)
    return InnerLoopResult(best_sol, best, attempts, improved = best > h_best strictly)

Event-sourced shape (spec README precedence 2): ``task`` and ``config`` of the spec signature
come from the workflow ``wf``; every attempt is a ``RefinementAttempted`` decision and every
candidate a recorded solution naming its parent (s_t) and carrying the plan in ``detail``.

Choices where the specs leave room (digest 06 §8):
* A planner failure is a recorded attempt (``"[planner failed]"``) but does NOT enter the
  planner's history: nothing was tried, so there is no plan/score pair to learn from. Coder,
  replace and evaluation failures DO enter it, with score ``N/A (evaluation failed)``.
* Once the path's deadline has passed, the remaining attempts are recorded as skipped
  (``"[skipped: deadline reached]"``, no agent call, no evaluation), so there are still K
  records while the path stops spending time.
* Time mode (``handlers.step_policy``): K is not a count but what fits: attempts start while
  the outer step's part of the path's window (``step_end_s``) holds one more as long as the
  path's attempts took (``attempt_timer``), at most ``INNER_CAP_FACTOR`` × ``inner_loop_steps``;
  the records are the attempts that ran.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from events.core import AgentCallCompleted
from events.enums import AgentType, SolutionPhase
from events.phase2 import RefinementAttempted
from events.results import InnerLoopResult, RefinementAttempt
from events.score import usable
from events.values import CodeBlock, SolutionScript
from handlers.evaluation import EvalPolicy, evaluate_with_retry, replaces_incumbent
from handlers.prompts import extract_code_block
from handlers.step_policy import INNER_CAP_FACTOR, StepTimer, room_for_another
from handlers.toolkit import ask, code_of, deadline_of, info, past, score_rule, warn
from handlers.workflow import Workflow

PLANNER_FAILED = "[planner failed]"
DEADLINE_SKIPPED = "[skipped: deadline reached]"


past_deadline = past  # the path's soft end has passed: no new step or attempt starts


def remaining_s(wf: Workflow, deadline_s: float | None) -> float:
    """Seconds left for this path: to its deadline, else to the run's time limit."""
    return deadline_of(wf, deadline_s).soft_left(wf.now)


def path_budget_s(wf: Workflow, deadline_s: float | None) -> float:
    """A path's time budget as seen when it starts: up to its deadline, else Phase 2's share of
    the time limit (REQ-OR-025)."""
    if deadline_s is not None:
        return deadline_s - wf.now
    cfg = wf.config
    pct = cfg.phase_time_budget.phase2_pct if cfg.phase_time_budget is not None else 65.0
    return cfg.time_limit_seconds * pct / 100.0


def refinement_timeout(wf: Workflow, deadline_s: float | None, budget_s: float) -> float:
    """Timeout of one candidate evaluation: at most one outer step's share of the path's budget
    (budget / K, so one script cannot eat the whole path) and at most an hour, never more than
    the path has left (spec README: never the full 24 h), never below 30 s, never past the hard
    end (``Deadline.timeout``).

    The share, fixed when the path starts, is the usual bound rather than the time left: the
    timeout is part of the recorded request, and a value following the clock would make a
    path's decisions depend on how the effects of concurrent paths interleave. Only close to
    the deadline does the time left take over."""
    return deadline_of(wf, deadline_s).timeout(wf.now, budget_s / wf.config.inner_loop_steps)


# --- finding c_t in s_t (REQ-P2O-017/018): the replace of every attempt relies on it ------


def validate_code_block(code_block: str, solution: SolutionScript) -> bool:
    """REQ-P2O-017: exact substring, whitespace included (an empty block is never valid)."""
    return bool(code_block.strip()) and code_block in solution.content


def _rstripped(text: str) -> tuple[str, list[int]]:
    """``text`` with every line right-stripped, and for each kept character its index in ``text``."""
    parts: list[str] = []
    index: list[int] = []
    pos = 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        kept = line.rstrip()
        parts.append(kept)
        index.extend(range(pos, pos + len(kept)))
        pos += len(line)
        if i < len(lines) - 1:
            parts.append("\n")
            index.append(pos)
            pos += 1
    return "".join(parts), index


def locate_block(code_block: str, content: str) -> tuple[str, Literal["exact", "normalised"]] | None:
    """The script's own text for ``code_block`` and how it was found ("exact" | "normalised").

    REQ-P2O-018 step 1: lines compared right-stripped, and the match mapped back to the exact
    characters of the script, so the inner loop's replace always finds it. A block wrapped in
    markdown fences (a common habit of models) is unwrapped first.
    """
    if not code_block.strip():
        return None
    if code_block in content:
        return code_block, "exact"
    tries = [code_block] + ([extract_code_block(code_block)] if "```" in code_block else [])
    norm_content, index = _rstripped(content)
    for block in tries:
        norm_block = _rstripped(block)[0].strip("\n")
        if not norm_block.strip():
            continue
        at = norm_content.find(norm_block)
        if at >= 0:
            return content[index[at]: index[at + len(norm_block) - 1] + 1], "normalised"
    return None


# --- the two agents of the loop ----------------------------------------------------------


async def invoke_planner(wf: Workflow, code_block: str, plans: list[str], scores: list[float | None], *,
                         name: str, session_key: str | None) -> str | None:
    """REQ-P2I-013: the next plan from the full history, or None when the answer is empty."""
    if not plans:
        raise ValueError("At least one previous plan is required for A_planner")
    if len(plans) != len(scores):
        raise ValueError(f"plans and scores differ in length ({len(plans)} vs {len(scores)})")
    reply = await ask(wf, AgentType.planner, {"code_block": code_block, "plans": list(plans),
                                              "scores": list(scores)}, name=name, session_key=session_key)
    plan = (reply.text or "").strip() if isinstance(reply, AgentCallCompleted) else ""
    return plan or None


async def invoke_coder(wf: Workflow, code_block: str, plan: str, *, name: str,
                       session_key: str | None) -> str | None:
    """REQ-P2I-005: the rewritten block (fences stripped), or None when there is none."""
    if not code_block.strip() or not plan.strip():
        raise ValueError("A_coder needs a non-empty code block and a non-empty plan")
    reply = await ask(wf, AgentType.coder, {"code_block": code_block, "plan": plan}, name=name,
                      session_key=session_key)
    return code_of(reply)


async def run_phase2_inner_loop(
    wf: Workflow,
    solution: SolutionScript,      # s_t (never mutated, the base of every attempt)
    code_block: CodeBlock,         # c_t (never modified, the input of every coder call)
    initial_plan: str,             # p_0 from the extractor
    best_score: float,             # h_best of the outer loop
    *,
    deadline_s: float | None = None,
    session_key: str | None = None,
    budget_s: float | None = None,  # the path's budget at its start (default: as seen now)
    on_best: Callable[[SolutionScript, float, str], None] | None = None,  # told of every new best
    step_end_s: float | None = None,        # time mode: this outer step's part of the path's window
    attempt_timer: StepTimer | None = None,  # time mode: how long attempts take (the path's, shared)
) -> InnerLoopResult:
    t = code_block.outer_step or 0
    # Time mode (handlers.step_policy): K is how many attempts fit, up to INNER_CAP_FACTOR × K.
    timed = attempt_timer is not None
    K = wf.config.inner_loop_steps * (INNER_CAP_FACTOR if timed else 1)
    path_window = deadline_of(wf, deadline_s)
    step_window = path_window.narrowed(soft_s=step_end_s)
    started: float | None = None
    rule = score_rule(wf)
    c_t, parent_id = code_block.content, solution.solution_id
    budget = path_budget_s(wf, deadline_s) if budget_s is None else budget_s

    best_sol, best, best_id = solution, best_score, parent_id            # REQ-P2I-024
    plans: list[str] = []                                                # planner history
    scores: list[float | None] = []
    attempts: list[RefinementAttempt] = []

    def record(k: int, plan: str, score: float | None, block: str, improved: bool,
               failure: str | None = None, solution_id: str | None = None, history: bool = True) -> None:
        attempts.append(RefinementAttempt(plan=plan, score=score, code_block=block, was_improvement=improved))
        wf.record(RefinementAttempted(outer_step=t, k=k, plan=plan, score=score, code_block=block,
                                      solution_id=solution_id, was_improvement=improved, failure=failure))
        if history:                                                      # REQ-P2I-035
            plans.append(plan)
            scores.append(score)

    info(wf, "inner loop start", outer_step=t, block_chars=len(c_t), plan=initial_plan[:200],
         h_best=best_score, K=K)
    for k in range(K):
        name = f"t{t}/k{k}"
        if attempt_timer is not None:
            if started is not None:
                attempt_timer.took(started, wf.now)
            # the first attempt may use the path's window (the outer step made room for it)
            if not room_for_another(step_window if k else path_window, wf.now, attempt_timer.estimate_s,
                                    wf.finalize_point(attempt_timer.estimate_s)):
                info(wf, "time mode: no time for another attempt in the step's part of the window",
                     outer_step=t, attempts=k, left_s=step_window.soft_left(wf.now), attempt_s=attempt_timer.estimate_s)
                started = None
                break
            started = wf.now
        if past_deadline(wf, deadline_s):
            record(k, DEADLINE_SKIPPED, None, "", False, failure="deadline", history=False)
            continue

        # Plan: p_0 verbatim at k=0 (REQ-P2I-018); later from the planner with every earlier
        # plan and score, failures included (REQ-P2I-020).
        if k == 0:
            plan = initial_plan
        else:
            planned = await invoke_planner(wf, c_t, plans, scores, name=f"{name}/planner", session_key=session_key)
            if planned is None:                                          # REQ-P2I-034
                warn(wf, "planner gave no plan; attempt skipped", outer_step=t, k=k)
                record(k, PLANNER_FAILED, None, "", False, failure="planner", history=False)
                continue
            plan = planned

        # Code: the coder rewrites the ORIGINAL block every time (REQ-P2I-021/050).
        c_k = await invoke_coder(wf, c_t, plan, name=f"{name}/coder", session_key=session_key)
        if c_k is None:                                                  # REQ-P2I-032
            warn(wf, "coder answer had no code; attempt skipped", outer_step=t, k=k)
            record(k, plan, None, "", False, failure="coder")
            continue

        # Candidate: the ORIGINAL s_t with its first c_t replaced (REQ-P2I-022/023/049).
        try:
            candidate = solution.replace_block(c_t, c_k).model_copy(update={"phase": SolutionPhase.refined})
        except ValueError as exc:                                        # REQ-P2I-033
            warn(wf, "code block not found in the solution; attempt skipped", outer_step=t, k=k, error=str(exc))
            record(k, plan, None, c_k, False, failure="replace")
            continue

        # Score: leakage check, evaluation and debugging before the score counts (REQ-P2I-030/031).
        # No fallback: a candidate that keeps failing has no score (REQ-P2I-027).
        ev = await evaluate_with_retry(
            wf, candidate, EvalPolicy.scored("refinement", refinement_timeout(wf, deadline_s, budget), deadline_s),
            name=name, origin="refinement", parents=[parent_id],
            detail={"outer_step": t, "k": k, "plan": plan, "code_block": c_t},
        )
        h_k = ev.score if ev.ok and usable(ev.score) else None           # NaN is no score either
        improved = h_k is not None and replaces_incumbent(wf, rule, h_k, ev.solution_id, best, best_id)  # P2I-025/026
        if improved and h_k is not None:
            info(wf, "inner best updated", outer_step=t, k=k, old=best, new=h_k)
            best_sol, best, best_id = ev.solution, h_k, ev.solution_id
            if on_best is not None:                                      # survives a cut of the path
                on_best(best_sol, best, best_id)
        record(k, plan, h_k, c_k, improved, failure=None if h_k is not None else "evaluation",
               solution_id=ev.solution_id)

    if attempt_timer is not None and started is not None:
        attempt_timer.took(started, wf.now)
    result = InnerLoopResult(best_solution=best_sol, best_score=best, attempts=attempts,
                             improved=rule.improves(best, best_score))    # strict (P2I-036)
    info(wf, "inner loop complete", outer_step=t, attempts=len(attempts),
         evaluated=sum(a.score is not None for a in attempts), best_score=best, best_solution_id=best_id,
         improved=result.improved)
    return result


__all__ = [
    "DEADLINE_SKIPPED",
    "PLANNER_FAILED",
    "invoke_coder",
    "invoke_planner",
    "locate_block",
    "past_deadline",
    "path_budget_s",
    "refinement_timeout",
    "remaining_s",
    "run_phase2_inner_loop",
    "validate_code_block",
]
