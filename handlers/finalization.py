"""Finalization (spec 08): from the best validation solution to ``./final/submission.csv``.

    1  remove subsampling   extract the block (Fig 26) → it must be verbatim in the script →
                            rewrite it for the full training set (Fig 27) → splice it in
    2  A_test (Fig 25)      turn the validation script into a test-submission script
    3-5 evaluate            leakage check, run with the remaining time as timeout, debug
                            retries; the run must leave a valid submission (the engine checks
                            ``final/submission.csv`` against the sample submission)
    6  fallback             no valid submission → the validation solution, ``submission_path=""``,
                            or the submission its own evaluation left, when the caller has one
    7  contamination        optional (``config.contamination_check``), Fig 28, per reference

All in scope ``final``; every choice is an event (``SubsamplingRemoved``, ``SubmissionProduced``,
``FinalizationFellBack``, ``ContaminationChecked``), every script a recorded solution naming
the script it came from.

Decisions where the specs leave room (each is tested):

* Success = the script exits cleanly AND the engine found a *valid* submission (exists, rows,
  the sample's columns and ids). A validation score is not required (Fig 25 does not ask for
  one). REQ-FN-022 would only warn about a malformed file; we debug it instead and fall back
  if it stays malformed, because graders reject such a file (the brief asks for a fallback
  whenever no valid submission could be produced).
* A clean exit without a valid submission is debugged like a crash (digest 08 §7.1): the
  debugger gets a synthetic error naming the problem. Crash retries and submission retries
  share one budget of ``config.max_debug_attempts``.
* A_test without code (REQ-FN-040) yields an empty script; the engine rejects it as an
  evaluation error, which goes to the debugger like any other (spec README, known decisions).
* Evaluation timeout = the time left until the soft end of the workflow's deadline (the
  finalization window's, or the run's time limit), not the phase's usual one-hour cap: the test
  script trains on the full data (REQ-FN-020), never past the hard end. No step starts once the
  soft end has passed; the outcome is then the fallback.
* Finalization ends by the time limit (REQ-OR-024): ``finalize_within`` races it against a timer
  at its window's end (``handlers.timebudget``: the time limit) and, when the timer wins, cancels
  it with its calls and runs in flight and falls back as above.
* ``fallback`` (optional) is the validation solution to fall back to; by default it is the
  input ``solution`` carrying ``score``.
* Contamination is checked on the final solution (test script, or the fallback); an
  unparseable verdict is None for that reference; any "Same" wins, all "Novel" gives Novel,
  anything else is inconclusive (None).
"""

from __future__ import annotations

from typing import Any, Literal

from events.agent_outputs import DataContaminationResult
from events.core import AgentCallCompleted, PhaseCompleted, PhaseStarted, SubmissionInfo
from events.enums import AgentType, SolutionPhase
from events.phase3 import (
    ContaminationChecked,
    FinalizationFellBack,
    FinalizationOutcome,
    SubmissionProduced,
    SubsamplingRemoved,
)
from events.values import SolutionScript
from handlers.deadline import DeadlineReached
from handlers.evaluation import EvalPolicy, Evaluated, bug_text, evaluate_with_retry
from handlers.prompts import fenced_blocks
from handlers.safety import debug_once
from handlers.timebudget import Window
from handlers.toolkit import (
    MIN_EVAL_TIMEOUT_S,
    AgentReply,
    ask,
    code_of,
    info,
    pacing_deadline,
    past,
    soft_budget_s,
    warn,
)
from handlers.workflow import Workflow

SUBMISSION = "./final/submission.csv"


async def run_finalization(wf: Workflow, solution: SolutionScript, score: float | None, *,
                           fallback: SolutionScript | None = None,
                           validation_submission: SubmissionInfo | None = None) -> FinalizationOutcome:
    """REQ-FN-034/035: the steps above, in order; never raises for an agent's or script's failure.

    ``validation_submission`` is the submission the validation solution's own evaluation wrote
    (the evolve strategy checks one for every node): when the test script fails, it is kept
    instead of ending the run without any (digest 08, open question 3). It runs under the
    workflow's deadline (``finalize_within`` and the pipeline give it the finalization window)."""
    wf = wf.at("final")
    wf.record(PhaseStarted(phase="final", budget_s=soft_budget_s(wf)))
    info(wf, "finalization started", phase=solution.phase.value, content_chars=len(solution.content),
         competition_id=wf.start.task.competition_id)
    validation = fallback if fallback is not None else solution.model_copy(update={"score": score})
    source_id = wf.record_solution(solution.content, phase=solution.phase, origin="final_input", parents=[],
                                   source_model=solution.source_model)

    if past(wf):
        outcome = fall_back(wf, validation, "the deadline passed before finalization could start", None)
    else:
        full, full_id = await remove_subsampling(wf, solution, source_id)                 # step 1
        outcome = await produce_submission(wf, full, full_id, validation)                 # steps 2-6
    if outcome.fallback_reason and validation_submission is not None and validation_submission.valid:
        outcome = keep_validation_submission(wf, outcome, validation_submission)

    contamination = None
    if wf.config.contamination_check:                                                    # step 7
        if past(wf):
            info(wf, "contamination check skipped: the deadline has passed")
        else:
            references = list(wf.start.params.get("reference_discussions", []) or [])
            contamination = await check_contamination(wf, outcome.final_solution, references)
    outcome = outcome.model_copy(update={"contamination": contamination})

    wf.record(PhaseCompleted(phase="final", result={
        "final_solution_id": outcome.final_solution_id, "submission_path": outcome.submission_path,
        "fallback_reason": outcome.fallback_reason,
        "contamination": None if contamination is None else contamination.verdict}))
    return outcome


async def finalize_within(wf: Workflow, window: Window, solution: SolutionScript, score: float | None, *,
                          validation_submission: SubmissionInfo | None = None) -> FinalizationOutcome:
    """Finalization inside ``window``: cut at its end with whatever is in flight, then the
    fallback (the validation solution, and its own submission when it left a valid one)."""
    fwf = wf.within(window.deadline)
    task = wf.spawn(run_finalization(fwf, solution, score, validation_submission=validation_submission),
                    name="finalization")
    guard = wf.guard(window.end_s, "finalization")
    if await guard.first(task) == 0:
        guard.stand_down("finalization finished before its deadline")
        try:
            return await task
        except DeadlineReached as exc:
            why = f"finalization reached its hard end: {exc}"
    else:
        why = f"the time limit ({window.end_s:.0f} s) was reached during finalization"
        await wf.cut([task], why)
    fwf = wf.at("final")
    validation = solution.model_copy(update={"score": score})
    outcome = fall_back(fwf, validation, why, None)
    if validation_submission is not None and validation_submission.valid:
        outcome = keep_validation_submission(fwf, outcome, validation_submission)
    fwf.record(PhaseCompleted(phase="final", result={
        "final_solution_id": outcome.final_solution_id, "submission_path": outcome.submission_path,
        "fallback_reason": outcome.fallback_reason, "status": "timed_out"}))
    return outcome


# --- step 1: subsampling removal (REQ-FN-001..009, 039) ------------------------------------------


async def remove_subsampling(wf: Workflow, solution: SolutionScript, solution_id: str) -> tuple[SolutionScript, str]:
    """REQ-FN-009: the script without its training-data subsampling, or the script unchanged
    when none is found (or anything goes wrong: a kept subsample is only slower, never wrong)."""
    info(wf, "subsampling extraction started", content_chars=len(solution.content))
    reply = await ask(wf, AgentType.test, {"final solution": solution.content}, variant="subsampling_extract",
                      name="subsampling/extract")
    block = block_of(reply)
    if block is None or not block.strip():
        info(wf, "no subsampling found; solution kept (REQ-FN-008)")
        return solution, solution_id
    if block not in solution.content:
        warn(wf, "extracted subsampling block is not in the solution; assuming none (REQ-FN-039)",
             raw=raw_text(reply)[:200])
        return solution, solution_id
    info(wf, "subsampling block found", block_chars=len(block))
    if past(wf):
        return solution, solution_id

    reply = await ask(wf, AgentType.test, {"code block with subsampling": block}, variant="subsampling_remove",
                      name="subsampling/remove")
    replacement = block_of(reply)   # "" is a valid answer: the block only subsampled
    if replacement is None:
        warn(wf, "subsampling removal gave no code; solution kept", raw=raw_text(reply)[:200])
        return solution, solution_id
    if replacement == block:
        info(wf, "subsampling removal left the block unchanged; solution kept")
        return solution, solution_id
    full = solution.replace_block(block, replacement)   # cannot fail: block is in the content
    full_id = wf.record_solution(full.content, phase=full.phase, origin="subsampling_removed",
                                 parents=[solution_id], source_model=full.source_model)
    wf.record(SubsamplingRemoved(source_solution_id=solution_id, solution_id=full_id, block=block,
                                 replacement=replacement))
    info(wf, "subsampling removed", old_block_chars=len(block), new_block_chars=len(replacement),
         content_delta=len(full.content) - len(solution.content))
    return full, full_id


def block_of(reply: AgentReply) -> str | None:
    """The code block of a reply, keeping an *empty* fenced block as "" (unlike ``code_of``):
    for extraction it means "no subsampling", for removal "delete the block". None when the
    call failed or the reply is empty."""
    if not isinstance(reply, AgentCallCompleted):
        return None
    if reply.code and reply.code.strip():
        return reply.code.strip("\n")
    blocks = fenced_blocks(reply.text or "")
    if blocks:
        return max(blocks, key=len)
    return (reply.text or "").strip() or None


def raw_text(reply: AgentReply) -> str:
    return reply.text if isinstance(reply, AgentCallCompleted) else f"[agent call failed: {reply.error}]"


# --- steps 2-6: test script, evaluation, verification, fallback ----------------------------------


async def generate_test_submission(wf: Workflow, solution: SolutionScript) -> SolutionScript:
    """REQ-FN-019: A_test's test-submission script (phase ``final``); empty when it gave no code."""
    info(wf, "A_test started", competition_id=wf.start.task.competition_id, content_chars=len(solution.content))
    reply = await ask(wf, AgentType.test, {"task description": wf.start.task.description,
                                            "final solution": solution.content}, name="test-script")
    code = code_of(reply)
    if code is None:
        warn(wf, "A_test gave no code; treated as an execution error (REQ-FN-040)", raw=raw_text(reply)[:200])
        code = ""
    info(wf, "A_test finished", script_chars=len(code))
    return SolutionScript(content=code, phase=SolutionPhase.final, source_model=solution.source_model)


async def produce_submission(wf: Workflow, solution: SolutionScript, solution_id: str,
                             validation: SolutionScript) -> FinalizationOutcome:
    """Steps 2-6: A_test, then evaluate → verify → debug until a valid submission or the
    shared budget of ``max_debug_attempts`` (or the deadline) is spent; else fall back."""
    if past(wf):
        return fall_back(wf, validation, "the deadline passed before the test script was written", None)
    script = await generate_test_submission(wf, solution)
    origin, parents = "test_script", [solution_id]
    detail: dict[str, Any] = {}
    attempts_left = wf.config.max_debug_attempts
    last: Evaluated | None = None
    n = 0
    while not past(wf):
        info(wf, "test script evaluation started", script_chars=len(script.content), timeout_s=remaining(wf))
        # The run's only script now: it has every evaluation core.
        policy = EvalPolicy.submission(remaining(wf), attempts_left).alone(wf.config)
        last = await evaluate_with_retry(wf, script, policy, name="test" if n == 0 else f"test-{n}", origin=origin,
                                         parents=parents, detail=detail)
        attempts_left -= last.debug_attempts
        problem = submission_problem(last)
        sub = last.submission
        info(wf, "submission checked", exit_code=last.result.exit_code, exists=bool(sub and sub.exists),
             rows=sub.rows if sub else None, valid=problem is None)
        if problem is None:
            return succeed(wf, last)
        if last.result.is_error or attempts_left <= 0 or past(wf):
            break
        # A clean exit without a valid submission: the sub-flow does not retry it, so we do,
        # showing the debugger what is wrong with the file (digest 08 §7.1).
        attempts_left -= 1
        n += 1
        warn(wf, "test script ran but left no valid submission; debugging", attempt=n, problem=problem)
        fixed = await debug_once(wf, last.solution, problem, name=f"test-{n}/debug")
        if fixed is None:
            break
        script, origin, parents, detail = fixed, "debug", [last.solution_id], {"attempt": n, "cause": "submission"}

    if last is None:
        reason = "the deadline passed before the test script could run"
    elif last.result.is_error:
        reason = f"the test script still fails after debugging: {last_line(submission_problem(last) or '')}"
    else:
        reason = f"no valid submission after debugging: {last_line(submission_problem(last) or '')}"
    return fall_back(wf, validation, reason, last.submission if last else None)


def submission_problem(ev: Evaluated) -> str | None:
    """What is wrong, phrased for the debugger; None when the run left a valid submission."""
    if ev.result.is_error:
        return bug_text(ev.result, ev.result.duration_seconds)
    sub = ev.submission
    if sub is None or not sub.exists:
        return (f"The script finished without an error but did not create {SUBMISSION}. It must predict "
                f"every test sample and save the predictions to {SUBMISSION}.")
    if not sub.valid:
        return (f"The script wrote {SUBMISSION}, but it does not match the sample submission: "
                f"{sub.reason or 'invalid file'}. It must have the sample submission's columns and one row "
                f"per test sample.")
    return None


def succeed(wf: Workflow, ev: Evaluated) -> FinalizationOutcome:
    sub = ev.submission
    assert sub is not None
    wf.record(SubmissionProduced(solution_id=ev.solution_id, path=sub.path, rows=sub.rows,
                                 columns=list(sub.columns), valid=sub.valid, reason=sub.reason))
    info(wf, "test submission produced", path=sub.path, rows=sub.rows)
    final = ev.solution.model_copy(update={"phase": SolutionPhase.final, "is_executable": True})
    return FinalizationOutcome(final_solution=final, final_solution_id=ev.solution_id, submission_path=sub.path,
                               submission=sub)


def fall_back(wf: Workflow, validation: SolutionScript, reason: str,
              submission: SubmissionInfo | None) -> FinalizationOutcome:
    """REQ-FN-025: keep the validation solution; the run ends without a submission file."""
    vid = wf.record_solution(validation.content, phase=validation.phase, origin="final_input", parents=[],
                             source_model=validation.source_model)
    warn(wf, "test submission failed, using validation solution", reason=reason,
         fallback_phase=validation.phase.value, score=validation.score)
    wf.record(FinalizationFellBack(reason=reason, solution_id=vid, score=validation.score))
    return FinalizationOutcome(final_solution=validation, final_solution_id=vid, submission_path="",
                               submission=submission, fallback_reason=reason)


def keep_validation_submission(wf: Workflow, outcome: FinalizationOutcome,
                               sub: SubmissionInfo) -> FinalizationOutcome:
    """The fallback solution's own submission: fit on the search's rows, but a valid answer."""
    record_own_submission(wf, outcome.final_solution_id, sub)
    return outcome.model_copy(update={"submission_path": sub.path, "submission": sub})


def record_own_submission(wf: Workflow, solution_id: str, sub: SubmissionInfo) -> None:
    """The run submits what the validation solution's own evaluation wrote."""
    wf.record(SubmissionProduced(solution_id=solution_id, path=sub.path, rows=sub.rows,
                                 columns=list(sub.columns), valid=sub.valid,
                                 reason="fallback: the validation solution's own submission"))
    warn(wf, "keeping the validation solution's own submission", path=sub.path, rows=sub.rows)


# --- step 7: contamination (REQ-FN-026..033, 041) ------------------------------------------------


async def check_contamination(wf: Workflow, solution: SolutionScript,
                              references: list[str]) -> DataContaminationResult | None:
    """REQ-FN-033: one Fig 28 check per reference discussion; any "Same" makes the verdict
    "Same", all "Novel" makes it "Novel"; None when skipped or inconclusive."""
    refs = [r for r in references if isinstance(r, str) and r.strip()]
    if not refs:
        info(wf, "contamination check skipped: no reference discussions")
        return None
    info(wf, "contamination check started", references=len(refs))
    replies = await wf.gather(*(ask(wf, AgentType.test, {"reference discussion": ref,
                                                          "final solution": solution.content},
                                    variant="contamination", name=f"contamination-{i}")
                                for i, ref in enumerate(refs)))
    verdicts: list[str | None] = []
    for i, reply in enumerate(replies):
        verdict = parse_verdict(reply)
        if verdict is None:
            warn(wf, "contamination verdict could not be parsed (REQ-FN-041)", reference=i,
                 raw=raw_text(reply)[:200])
        verdicts.append(verdict)
    overall: Literal["Novel", "Same"] | None = "Same" if "Same" in verdicts else "Novel" if all(v == "Novel" for v in verdicts) else None
    wf.record(ContaminationChecked(verdicts=verdicts, verdict=overall))
    info(wf, "contamination check finished", references=len(refs), verdicts=verdicts, verdict=overall)
    return None if overall is None else DataContaminationResult(verdict=overall)


def parse_verdict(reply: AgentReply) -> str | None:
    """The structured output, else a JSON object in the text, else the bare word Fig 28 asks for."""
    if not isinstance(reply, AgentCallCompleted):
        return None
    if reply.structured is not None:
        try:
            return DataContaminationResult.model_validate(reply.structured).verdict
        except ValueError:
            pass
    text = (reply.text or "").strip()
    try:
        return DataContaminationResult.model_validate_json(text).verdict
    except ValueError:
        pass
    word = text.strip("`'\". \n")
    return word if word in ("Novel", "Same") else None


# --- time -------------------------------------------------------------------------------------


def remaining(wf: Workflow) -> float:
    """The time left for the test run: to the soft end of its ``pacing_deadline`` (no one-hour
    cap: the test script trains on the full data, REQ-FN-020), never past the hard end."""
    d = pacing_deadline(wf)
    return d.cap(wf.now, max(MIN_EVAL_TIMEOUT_S, d.soft_left(wf.now)))


def last_line(text: str) -> str:
    """The line that names the problem (a traceback's exception line)."""
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")[:300]
