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
* Once the path's deadline (the workflow's) has passed, the remaining attempts are recorded as skipped
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
from handlers.toolkit import ask, code_of, info, pacing_deadline, past, score_rule, warn
from handlers.workflow import Workflow

PLANNER_FAILED = "[planner failed]"
DEADLINE_SKIPPED = "[skipped: deadline reached]"


def path_budget_s(wf: Workflow) -> float:
    """A path's time budget as seen when it starts: up to the soft end of its deadline (the
    workflow's), else Phase 2's share of the time limit (REQ-OR-025)."""
    soft_s = wf.deadline.soft_s
    if soft_s is not None:
        return soft_s - wf.now
    cfg = wf.config
    pct = cfg.phase_time_budget.phase2_pct if cfg.phase_time_budget is not None else 65.0
    return cfg.time_limit_seconds * pct / 100.0


def refinement_timeout(wf: Workflow, budget_s: float) -> float:
    """Timeout of one candidate evaluation: at most one outer step's share of the path's budget
    (budget / K, so one script cannot eat the whole path) and at most an hour, never more than
    the path has left (spec README: never the full 24 h), never below 30 s, never past the hard
    end (``Deadline.timeout``).

    The share, fixed when the path starts, is the usual bound rather than the time left: the
    timeout is part of the recorded request, and a value following the clock would make a
    path's decisions depend on how the effects of concurrent paths interleave. Only close to
    the deadline does the time left take over."""
    return pacing_deadline(wf).timeout(wf.now, budget_s / wf.config.inner_loop_steps)


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
    session_key: str | None = None,
    budget_s: float | None = None,  # the path's budget at its start (default: as seen now)
    on_best: Callable[[SolutionScript, float, str], None] | None = None,  # told of every new best
    step_end_s: float | None = None,        # time mode: this outer step's part of the path's window
    attempt_timer: StepTimer | None = None,  # time mode: how long attempts take (the path's, shared)
) -> InnerLoopResult:
    """Lines 9-25 under the workflow's deadline (the path's): no attempt starts past its soft end."""
    loop = _InnerLoop(wf, solution, code_block, best_score, session_key=session_key, budget_s=budget_s,
                      on_best=on_best, step_end_s=step_end_s, attempt_timer=attempt_timer)
    info(wf, "inner loop start", outer_step=loop.t, block_chars=len(loop.c_t), plan=initial_plan[:200],
         h_best=best_score, K=loop.K)
    for k in range(loop.K):
        if not loop.time_for_attempt(k):
            break
        if past(wf):
            loop.record(k, DEADLINE_SKIPPED, None, "", False, failure="deadline", history=False)
            continue
        plan = initial_plan if k == 0 else await loop.next_plan(k)
        if plan is not None:
            await loop.attempt(k, plan)
    return loop.finish()


class _InnerLoop:
    """One inner loop's state: s_t and c_t, the best so far, the planner's history and the K
    records, with time mode's attempt timer."""

    def __init__(self, wf: Workflow, solution: SolutionScript, code_block: CodeBlock, best_score: float, *,
                 session_key: str | None, budget_s: float | None,
                 on_best: Callable[[SolutionScript, float, str], None] | None, step_end_s: float | None,
                 attempt_timer: StepTimer | None) -> None:
        self.wf, self.solution, self.best_score = wf, solution, best_score
        self.session_key, self.on_best, self.timer = session_key, on_best, attempt_timer
        self.t = code_block.outer_step or 0
        # Time mode (handlers.step_policy): K is how many attempts fit, up to INNER_CAP_FACTOR × K.
        self.K = wf.config.inner_loop_steps * (INNER_CAP_FACTOR if attempt_timer is not None else 1)
        self.path_window = pacing_deadline(wf)
        self.step_window = self.path_window.narrowed(soft_s=step_end_s)
        self.started: float | None = None
        self.rule = score_rule(wf)
        self.c_t, self.parent_id = code_block.content, solution.solution_id
        self.budget = path_budget_s(wf) if budget_s is None else budget_s
        self.best_sol, self.best, self.best_id = solution, best_score, self.parent_id   # REQ-P2I-024
        self.plans: list[str] = []                                                      # planner history
        self.scores: list[float | None] = []
        self.attempts: list[RefinementAttempt] = []

    def record(self, k: int, plan: str, score: float | None, block: str, improved: bool,
               failure: str | None = None, solution_id: str | None = None, history: bool = True) -> None:
        self.attempts.append(RefinementAttempt(plan=plan, score=score, code_block=block, was_improvement=improved))
        self.wf.record(RefinementAttempted(outer_step=self.t, k=k, plan=plan, score=score, code_block=block,
                                           solution_id=solution_id, was_improvement=improved, failure=failure))
        if history:                                                      # REQ-P2I-035
            self.plans.append(plan)
            self.scores.append(score)

    def time_for_attempt(self, k: int) -> bool:
        """Time mode: the last attempt's duration measured, and whether the window holds one
        more; the first attempt may use the path's window (the outer step made room for it)."""
        timer, wf = self.timer, self.wf
        if timer is None:
            return True
        if self.started is not None:
            timer.took(self.started, wf.now)
        if not room_for_another(self.step_window if k else self.path_window, wf.now, timer.estimate_s,
                                wf.finalize_point(timer.estimate_s)):
            info(wf, "time mode: no time for another attempt in the step's part of the window", outer_step=self.t,
                 attempts=k, left_s=self.step_window.soft_left(wf.now), attempt_s=timer.estimate_s)
            self.started = None
            return False
        self.started = wf.now
        return True

    async def next_plan(self, k: int) -> str | None:
        """The planner's plan from every earlier plan and score, failures included (REQ-P2I-020);
        None (recorded, and not in the history) when it gives none (REQ-P2I-034)."""
        planned = await invoke_planner(self.wf, self.c_t, self.plans, self.scores, name=f"t{self.t}/k{k}/planner",
                                       session_key=self.session_key)
        if planned is None:
            warn(self.wf, "planner gave no plan; attempt skipped", outer_step=self.t, k=k)
            self.record(k, PLANNER_FAILED, None, "", False, failure="planner", history=False)
        return planned

    async def attempt(self, k: int, plan: str) -> None:
        """Code, candidate and score of attempt ``k`` (lines 13-22), recorded."""
        wf, t, name = self.wf, self.t, f"t{self.t}/k{k}"
        # Code: the coder rewrites the ORIGINAL block every time (REQ-P2I-021/050).
        c_k = await invoke_coder(wf, self.c_t, plan, name=f"{name}/coder", session_key=self.session_key)
        if c_k is None:                                                  # REQ-P2I-032
            warn(wf, "coder answer had no code; attempt skipped", outer_step=t, k=k)
            self.record(k, plan, None, "", False, failure="coder")
            return
        # Candidate: the ORIGINAL s_t with its first c_t replaced (REQ-P2I-022/023/049).
        try:
            candidate = self.solution.replace_block(self.c_t, c_k).model_copy(update={"phase": SolutionPhase.refined})
        except ValueError as exc:                                        # REQ-P2I-033
            warn(wf, "code block not found in the solution; attempt skipped", outer_step=t, k=k, error=str(exc))
            self.record(k, plan, None, c_k, False, failure="replace")
            return
        # Score: leakage check, evaluation and debugging before the score counts (REQ-P2I-030/031).
        # No fallback: a candidate that keeps failing has no score (REQ-P2I-027).
        policy = EvalPolicy.scored("refinement", refinement_timeout(wf, self.budget))
        ev = await evaluate_with_retry(wf, candidate, policy, name=name, origin="refinement", parents=[self.parent_id],
                                       detail={"outer_step": t, "k": k, "plan": plan, "code_block": self.c_t})
        h_k = ev.score if ev.ok and usable(ev.score) else None           # NaN is no score either
        improved = h_k is not None and replaces_incumbent(wf, self.rule, h_k, ev.solution_id, self.best,
                                                          self.best_id)  # P2I-025/026
        if improved and h_k is not None:
            info(wf, "inner best updated", outer_step=t, k=k, old=self.best, new=h_k)
            self.best_sol, self.best, self.best_id = ev.solution, h_k, ev.solution_id
            if self.on_best is not None:                                 # survives a cut of the path
                self.on_best(self.best_sol, self.best, self.best_id)
        self.record(k, plan, h_k, c_k, improved, failure=None if h_k is not None else "evaluation",
                    solution_id=ev.solution_id)

    def finish(self) -> InnerLoopResult:
        if self.timer is not None and self.started is not None:
            self.timer.took(self.started, self.wf.now)
        result = InnerLoopResult(best_solution=self.best_sol, best_score=self.best, attempts=self.attempts,
                                 improved=self.rule.improves(self.best, self.best_score))    # strict (P2I-036)
        info(self.wf, "inner loop complete", outer_step=self.t, attempts=len(self.attempts),
             evaluated=sum(a.score is not None for a in self.attempts), best_score=self.best,
             best_solution_id=self.best_id, improved=result.improved)
        return result


__all__ = [
    "DEADLINE_SKIPPED",
    "PLANNER_FAILED",
    "invoke_coder",
    "invoke_planner",
    "locate_block",
    "path_budget_s",
    "refinement_timeout",
    "run_phase2_inner_loop",
    "validate_code_block",
]
