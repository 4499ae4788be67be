"""Phase 3 of MLE-STAR: Algorithm 3 (ensembling) as decisions in scope ``phase3``.

    1   e_0     = A_ens_planner({s_l})                                  no history
    2   s_ens^0 = A_ensembler(e_0, {s_l})
    3   evaluate h(s_ens^0)
    4-8 for r = 1..R-1:
            e_r     = A_ens_planner({s_l}, {(e_j, h(s_ens^j))}_{j<r})   full history
            s_ens^r = A_ensembler(e_r, {s_l});  evaluate h(s_ens^r)
    9   s_ens* = s_ens^{r*},  r* = argbest_r h(s_ens^r)                 last round wins ties

Every ensemble script goes through the shared evaluation sub-flow (leakage check, run, debug
retries; REQ-P3-021/027/028) and names all L input solutions as its parents. A round that
fails in any way still yields one ``EnsembleAttempt`` with score None, so there are always
exactly R attempts, plans and scores (REQ-P3-024/032/033/034).

Decisions where the specs leave room (each is tested):

* L=1 (REQ-P3-018): a ``Phase3Result`` built from the single input is returned, with empty
  plans and scores and no agent call. Spec 09 (REQ-OR-015) has the *orchestrator* skip Phase 3
  and set ``FinalResult.phase3 = None``; that is the caller's choice, not this function's.
* ``Phase3Result.best_ensemble_score`` is a float (REQ-DM-024), so when the result would have
  to be built from inputs that carry no score (L=1 or all rounds failed), ``PipelineError`` is
  raised; REQ-OR-041 lets the orchestrator fall back to the best Phase 2 solution then.
* The all-failed fallback (REQ-P3-026) picks the best input with the same last-tie-wins rule.
* This phase returns its best *ensemble* (REQ-P3-025); whether that is submitted is the
  orchestrator's choice: the best on validation of it and the inputs (REQ-OR-043,
  ``handlers.mlestar.finalchoice``, docs/decisions/0001-final-choice.md).
* A NaN score counts as a failed round: it can never be compared.
* The deadline (the workflow's, ``wf.deadline``: the pipeline gives Phase 3 its window) is
  checked before every agent call and evaluation of a round; once it has passed no new work starts and every remaining round is
  recorded as a placeholder attempt (plan ``DEADLINE_PLAN``, reason given). Evaluation
  timeouts and debug retries are capped by it too.
* Time mode (``handlers.step_policy``): R is an upper bound; after the first round another
  starts only while the window holds one more as long as the rounds so far took, and not after
  two rounds running whose planner gave no plan; the attempts are the rounds that ran (fewer
  than R, no placeholders).
* REQ-P3-029's "error summary (first line of traceback)" is taken as the traceback's *last*
  non-empty line: the first line is always "Traceback (most recent call last):".
"""

from __future__ import annotations

from collections.abc import Sequence

from events.core import AgentCallCompleted, PhaseCompleted, PhaseStarted
from events.enums import AgentType, SolutionPhase
from events.errors import PipelineError
from events.phase3 import EnsemblePlanned, EnsembleRoundCompleted, EnsembleSelected, Phase3Outcome, RoundStatus
from events.results import EnsembleAttempt
from events.score import Score, Ties, usable
from events.values import SolutionScript
from handlers.deadline import DeadlineReached
from handlers.evaluation import EvalPolicy, Evaluated, evaluate_with_retry
from handlers.step_policy import StepTimer, agent_and_eval_prior, room_for_another, time_driven
from handlers.toolkit import (
    ask,
    code_of,
    info,
    pacing_deadline,
    past,
    score_rule,
    soft_budget_s,
    timeout_for,
    warn,
    with_score,
)
from handlers.workflow import Workflow

PLANNER_FAILED = "[ens_planner failed]"                 # REQ-P3-031
DEADLINE_PLAN = "[skipped: phase 3 deadline reached]"


async def run_phase3(wf: Workflow, solutions: list[SolutionScript], *,
                     sink: list[EnsembleAttempt] | None = None) -> Phase3Outcome:
    """REQ-P3-017: Algorithm 3 over the L input solutions (each carrying its score). ``sink``
    (optional) receives every settled round, so a caller that cuts the phase keeps its best."""
    wf = wf.at("phase3")
    if not solutions:
        raise PipelineError("Phase 3 needs at least one input solution")
    if len(solutions) == 1:
        return skip_single_solution(wf, solutions[0])
    wf.record(PhaseStarted(phase="phase3", budget_s=soft_budget_s(wf)))
    R = wf.config.ensemble_rounds
    parents = input_ids(wf, solutions)

    plans: list[str] = []                   # e_0 .. e_{r-1}, placeholders included (REQ-P3-031)
    scores: list[float | None] = []         # h(s_ens^0) .. h(s_ens^{r-1}), None for failures
    attempts: list[EnsembleAttempt] = []
    # Time mode (handlers.step_policy): R is an upper bound; a round starts while the window holds one
    # and finalizing what it may produce still fits after it (a round as long as the last, when they
    # grow, whose ensemble re-fits for its test run as the last round's did).
    timed, window = time_driven(wf.config), pacing_deadline(wf)
    rounds = StepTimer(prior_s=agent_and_eval_prior(wf.measured, 2))    # planner, ensembler, a run
    for r in range(R):                      # r = 0 is lines 1-3, r >= 1 lines 4-8
        like = attempts[-1].solution.solution_id if attempts else None
        if timed and r and not room_for_another(window, wf.now, rounds.latest_s, wf.finalize_point(rounds.latest_s, like)):
            info(wf, "time mode: no time for another ensemble round in the window", rounds=r,
                 left_s=window.soft_left(wf.now), round_s=rounds.latest_s)
            break
        # R bounds nothing in the time mode; a planner that gave no plan twice running has none left.
        if timed and plans[-2:] == [PLANNER_FAILED, PLANNER_FAILED]:
            info(wf, "time mode: the planner gave no plan in two rounds running; no further round", rounds=r)
            break
        started = wf.now
        try:
            attempt = await ensemble_round(wf, r, solutions, parents, plans, scores)
        except DeadlineReached as exc:      # asked for work past the hard end: the round is cut
            attempt = settle(wf, r, DEADLINE_PLAN, None, "deadline", reason=str(exc))
        rounds.took(started, wf.now)
        attempts.append(attempt)
        if sink is not None:
            sink.append(attempt)
        plans.append(attempt.plan)
        scores.append(attempt.score)

    return select_best(wf, solutions, attempts)                                   # line 9


def skip_single_solution(wf: Workflow, solution: SolutionScript) -> Phase3Outcome:
    """REQ-P3-018: nothing to ensemble; the single solution is the result, unchanged."""
    if solution.score is None:
        raise PipelineError("Phase 3 skip (L=1): the single input solution carries no score",
                            {"solution_id": solution.solution_id})
    wf.record(PhaseStarted(phase="phase3"))
    info(wf, "Phase 3 skipped: a single input solution, nothing to ensemble (REQ-P3-018)")
    wf.record(PhaseCompleted(phase="phase3", result={"skipped": True, "best_solution_id": solution.solution_id,
                                                     "best_score": solution.score}))
    return Phase3Outcome(input_solutions=[solution], ensemble_plans=[], ensemble_scores=[],
                         best_ensemble=solution, best_ensemble_score=solution.score, skipped=True)


def input_ids(wf: Workflow, solutions: Sequence[SolutionScript]) -> list[str]:
    """The inputs' ids, each once, in order: every ensemble's lineage parents. Recording is a
    no-op for scripts an earlier phase recorded (content-addressed); it only fills the gap
    when a caller hands in scripts the log has not seen."""
    ids = [wf.record_solution(s.content, phase=s.phase, origin="phase3_input", parents=[],
                              source_model=s.source_model) for s in solutions]
    return list(dict.fromkeys(ids))   # REQ-OR-040 may pass the same script twice


async def ensemble_round(wf: Workflow, r: int, solutions: list[SolutionScript], parents: list[str],
                         plans: list[str], scores: list[float | None]) -> EnsembleAttempt:
    """One round: plan (with the history so far), implement, check and evaluate, settle."""
    if past(wf):
        return settle(wf, r, DEADLINE_PLAN, None, "deadline", reason="deadline reached before the round")

    plan = await invoke_ens_planner(wf, r, solutions, plans, scores)
    if plan is None:                                                              # REQ-P3-031
        warn(wf, f"Phase 3 round {r}: A_ens_planner returned an empty response", round=r)
        return settle(wf, r, PLANNER_FAILED, None, "planner_failed", reason="ens_planner gave no plan")
    wf.record(EnsemblePlanned(round=r, plan=plan))
    if past(wf):
        return settle(wf, r, plan, None, "deadline", reason="deadline reached after planning")

    code = await invoke_ensembler(wf, r, plan, solutions)
    if code is None:                                                              # REQ-P3-030
        warn(wf, f"Phase 3 round {r}: the ensembler response could not be parsed", round=r)
        return settle(wf, r, plan, None, "ensembler_failed", reason="ensembler gave no code")
    script = SolutionScript(content=code, phase=SolutionPhase.ensemble)
    if past(wf):
        sid = wf.record_solution(code, phase=SolutionPhase.ensemble, origin="ensemble", parents=parents,
                                 detail={"round": r})
        return settle(wf, r, plan, None, "deadline", script=script, solution_id=sid,
                      reason="deadline reached before evaluation")

    # Lines 3/7 with REQ-P3-021/027/028: leakage check, run, debug retries inside the sub-flow.
    # Rounds follow one another: a round's script has the run's every evaluation core.
    policy = EvalPolicy.scored("ensemble", timeout_for(wf)).alone(wf.config)
    ev = await evaluate_with_retry(wf, script, policy, name=f"round-{r}", origin="ensemble", parents=parents,
                                   detail={"round": r})
    score = usable_score(ev)
    if score is None:                                                             # REQ-P3-029
        warn(wf, f"Phase 3 ensemble round {r} failed", round=r, plan=plan[:200], error=error_summary(ev))
        return settle(wf, r, plan, None, "failed", script=ev.solution, solution_id=ev.solution_id,
                      reason=error_summary(ev))
    return settle(wf, r, plan, score, "evaluated", script=ev.solution, solution_id=ev.solution_id,
                  scored_rows=ev.scored_rows)


async def invoke_ens_planner(wf: Workflow, r: int, solutions: list[SolutionScript], plans: list[str],
                             scores: list[float | None]) -> str | None:
    """REQ-P3-019/022/023: e_r from the L solutions and every earlier (plan, score) pair;
    round 0 gets empty lists, so the prompt has no history section. None when empty."""
    reply = await ask(wf, AgentType.ens_planner,
                      {"solutions": [s.content for s in solutions], "plans": list(plans), "scores": list(scores)},
                      name=f"round-{r}/ens-planner")
    if not isinstance(reply, AgentCallCompleted):
        return None
    plan = (reply.text or "").strip()
    return plan or None


async def invoke_ensembler(wf: Workflow, r: int, plan: str, solutions: list[SolutionScript]) -> str | None:
    """REQ-P3-020/022: s_ens^r's code, or None when the reply holds no code."""
    reply = await ask(wf, AgentType.ensembler, {"solutions": [s.content for s in solutions], "plan": plan},
                      name=f"round-{r}/ensembler")
    return code_of(reply)


def settle(wf: Workflow, r: int, plan: str, score: float | None, status: RoundStatus, *,
           script: SolutionScript | None = None, solution_id: str | None = None,
           reason: str = "", scored_rows: int | None = None) -> EnsembleAttempt:
    """REQ-P3-032: the round's EnsembleAttempt (an empty-content script when none came into
    being), recorded as an ``EnsembleRoundCompleted`` decision; ``scored_rows``: the validation
    rows the score is on when fewer than all."""
    if script is None:
        script = SolutionScript(content="", phase=SolutionPhase.ensemble, is_executable=False)
    script = with_score(script, score, executable=score is not None or (script.is_executable and bool(script.content)))
    wf.record(EnsembleRoundCompleted(round=r, plan=plan, score=score, solution_id=solution_id, status=status,
                                     reason=reason, scored_rows=scored_rows))
    return EnsembleAttempt(plan=plan, score=score, solution=script, scored_rows=scored_rows)


def best_index(scores: Sequence[float | None], rule: Score, rows: Sequence[int | None] | None = None) -> int | None:
    """REQ-P3-025: argbest over the usable scores, the LAST of equal bests winning (the
    pipeline's >= semantics); a score on fewer ``rows`` never beats one on more
    (``events.score``). None when no score is usable."""
    return rule.best_index(scores, Ties.LATER_WINS, rows)


def select_best(wf: Workflow, solutions: list[SolutionScript], attempts: list[EnsembleAttempt]) -> Phase3Outcome:
    """Line 9, or REQ-P3-026's fallback to the best input when every round failed; the
    returned score is always the chosen solution's own score (REQ-P3-035)."""
    rule = score_rule(wf)
    R = len(attempts)
    r_star = best_index([a.score for a in attempts], rule, [a.scored_rows for a in attempts])
    if r_star is not None:
        best, score = attempts[r_star].solution, attempts[r_star].score
        fallback = False
    else:
        i = best_index([s.score for s in solutions], rule)
        if i is None:
            raise PipelineError(f"Phase 3: all {R} ensemble attempts failed and no input solution has a score")
        warn(wf, f"Phase 3 ensemble: all {R} attempts failed; falling back to best input solution",
             input_index=i)
        best, score = solutions[i], solutions[i].score
        fallback = True
    assert score is not None
    best_id = best.solution_id
    wf.record(EnsembleSelected(round=r_star, score=score, solution_id=best_id, fallback=fallback,
                               reason="all rounds failed" if fallback else ""))
    scores = [a.score for a in attempts]
    wf.record(PhaseCompleted(phase="phase3", result={"best_round": r_star, "best_solution_id": best_id,
                                                     "best_score": score, "ensemble_scores": scores,
                                                     "fallback": fallback}))
    return Phase3Outcome(input_solutions=list(solutions), ensemble_plans=[a.plan for a in attempts],
                         ensemble_scores=scores, best_ensemble=with_score(best, score, executable=True),
                         best_ensemble_score=score, attempts=attempts, best_round=r_star)


def usable_score(ev: Evaluated) -> float | None:
    """The round's h(s_ens^r): None unless the script ran and printed a comparable score."""
    if not ev.ok or not usable(ev.score):
        return None
    return ev.score


def error_summary(ev: Evaluated) -> str:
    """The line that says what went wrong: the exception line of the traceback, else the
    stderr tail, else that no score was printed."""
    text = ev.result.error_traceback or (ev.result.stderr if ev.result.is_error else "")
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if lines:
        return lines[-1][:300]
    return "the script printed no validation score" if not ev.result.is_error else f"exit code {ev.result.exit_code}"
