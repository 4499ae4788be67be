"""The evaluation sub-flow every phase reuses (REQ-EX-021 with REQ-SF-006/008/020/022).

    leakage check and fix → evaluate → while error and attempts left:
        debugger on the latest failing version with its traceback → leakage check → evaluate
    → fall back to the last executable version if still failing
    → one SolutionEvaluated decision carrying the final solution and its score

Every version is recorded as a solution naming its parent, so a debugged or corrected
script's lineage is a query over the log. Debugged versions pass the leakage check again
before they run: "every evaluated script passed the leakage check first" holds without
exception (digest 03 §7.9 left that gap open).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from events.config import PipelineConfig
from events.core import TEST_SCRIPT_PURPOSE, EvaluationCompleted, SolutionEvaluated, SubmissionInfo
from events.score import Score, paired_noise
from events.values import EvaluationResult, SolutionScript
from handlers.deadline import Deadline
from handlers.debugloop import DebugRules, debug_loop
from handlers.safety import check_and_fix_leakage, debug_once
from handlers.toolkit import MIN_EVAL_TIMEOUT_S, info, warn, with_score
from handlers.workflow import Workflow

STDERR_TAIL = 2000
SUBMISSIONS_KEY = "evaluation/valid-submissions"  # solution id -> the valid submission its run left
SCORE_GROUPS_KEY = "evaluation/score-groups"     # solution id -> the group values its score came with
HIDDEN_SCORES_KEY = "evaluation/hidden-scores"   # solution id -> its grade on the run's held-back rows
# (scope, solution id, purpose) -> that script's clean evaluation in that scope. A script is run
# again only when it failed: an identical one gives the same result (the scripts are seeded), and
# a path whose planner has run out of new settings writes the same scripts again, each rerun time
# the path no longer has. Per scope, because concurrent paths' results interleave and a path's
# decisions must not depend on how.
RAN_KEY = "evaluation/clean-runs"


@dataclass(frozen=True)
class Evaluated:
    solution: SolutionScript          # the version kept, with score and is_executable set
    solution_id: str
    result: EvaluationResult          # the evaluation of the last version that ran
    submission: SubmissionInfo | None = None
    fell_back: bool = False
    debug_attempts: int = 0
    versions: list[str] = field(default_factory=list)
    scored_rows: int | None = None    # the validation rows the score is on, when fewer than all

    @property
    def score(self) -> float | None:
        return self.solution.score

    @property
    def ok(self) -> bool:
        return self.solution.is_executable and self.solution.score is not None


def bug_text(result: EvaluationResult, timeout_s: float) -> str:
    """What the debugger is shown: the traceback, or a synthetic text for timeouts and kills
    (which leave none; digest 03 §7.4)."""
    if result.error_traceback:
        return result.error_traceback
    tail = (result.stderr or "")[-STDERR_TAIL:]
    if result.exit_code in (-9, -15, 124, 137, 143) or "timed out" in tail.lower():
        return f"The script timed out after {timeout_s:.0f} s or was killed (exit code {result.exit_code}).\n{tail}"
    return f"The script failed with exit code {result.exit_code} and no Python traceback.\n{tail}"


def _record(wf: Workflow, solution: SolutionScript, *, origin: str, parents: Sequence[str],
            detail: dict[str, Any] | None = None) -> str:
    return wf.record_solution(solution.content, phase=solution.phase, origin=origin, parents=list(parents),
                              source_model=solution.source_model, detail=detail or {})


LeakageCheck = Literal["before_run", "done_by_caller", "never"]


def lone_cores(config: PipelineConfig) -> int:
    """The cores of a script that runs alone by design: Phase 3's rounds follow one another and
    finalization runs one test script, where the search phases run up to
    ``max_concurrent_evaluations`` scripts at once, one core each. Alone, a script of one core
    would leave the run's other cores idle for a large part of a short run, so it gets them all.
    A config recorded before ``lone_evaluations_use_all_cores`` existed keeps one."""
    return config.max_concurrent_evaluations if config.lone_evaluations_use_all_cores else 1


@dataclass(frozen=True)
class EvalPolicy:
    """How one script is evaluated: its purpose, its time, its checks and how much debugging.
    Build it with the named constructor for the case (``scored``, ``checked``, ``ablation``,
    ``submission``) rather than field by field: each names a rule of the specs."""

    purpose: str
    timeout_s: float                     # what the caller asks for; the deadline shrinks it
    leakage_check: LeakageCheck = "before_run"
    # The engine checks the ./final/submission.csv the run left (never a failure by itself here:
    # finalization, which must have one, debugs a missing one itself). A scored script's valid
    # submission is kept (``submission_of``): when the test script fails, the run still submits.
    expect_submission: bool = False
    max_debug_attempts: int | None = None  # None: the run's max_debug_attempts
    cores: int = 1                       # the CPU cores the script may use (``alone``)

    def alone(self, config: PipelineConfig) -> EvalPolicy:
        """The same policy for a script that runs alone by design: it gets ``lone_cores``."""
        return replace(self, cores=lone_cores(config))

    @classmethod
    def scored(cls, purpose: str, timeout_s: float) -> EvalPolicy:
        """A script whose score counts: leakage-checked before every run, debugged (REQ-SF-020/022)."""
        return cls(purpose, timeout_s, expect_submission=True)

    @classmethod
    def checked(cls, purpose: str, timeout_s: float) -> EvalPolicy:
        """As ``scored``, but the caller ran the leakage check on exactly this script (a debugged
        version is still checked again)."""
        return cls(purpose, timeout_s, leakage_check="done_by_caller", expect_submission=True)

    @classmethod
    def ablation(cls, timeout_s: float) -> EvalPolicy:
        """An ablation study: run and debugged, never leakage-checked, never scored (REQ-P2O-020)."""
        return cls("ablation", timeout_s, leakage_check="never")

    @classmethod
    def submission(cls, timeout_s: float, max_debug_attempts: int) -> EvalPolicy:
        """Finalization's test script: it must write the submission; debug rounds come from a
        budget the caller shares across its retries (REQ-FN-020..024)."""
        return cls(TEST_SCRIPT_PURPOSE, timeout_s, expect_submission=True, max_debug_attempts=max_debug_attempts)


async def evaluate_with_retry(wf: Workflow, solution: SolutionScript, policy: EvalPolicy, *, name: str, origin: str,
                              parents: Sequence[str] = (), detail: dict[str, Any] | None = None,
                              fallback: SolutionScript | None = None) -> Evaluated:
    """Evaluate ``solution`` under ``policy``; never raises for a failing script (a request past
    the hard end raises ``DeadlineReached``, which the unit of work that owns the deadline handles).
    ``origin``, ``parents`` and ``detail`` go into its lineage; ``fallback`` is kept when it still
    fails after debugging (REQ-SF-008).

    The deadline is the workflow's (``wf.deadline``: the unit of work's, e.g. a phase window's):
    every evaluation's timeout, the debug retries' included, follows ``Deadline.timeout`` (the time
    left to the soft end, floored, never past the hard end) and the debug loop
    (``handlers.debugloop``) starts no round once the soft end has passed; a fixed timeout alone
    would let the retries run past a phase's deadline.
    """
    # The workflow's own deadline, not its pacing_deadline: a unit without a soft end (a strategy
    # run without windows) debugs without one, as its recorded runs did; its callers size the
    # timeout they ask for to the time limit.
    deadline = wf.deadline
    tries = _Attempts(wf, policy, name, deadline)
    first = _Version(solution, tries.record(solution, origin=origin, parents=parents, detail=detail))
    requested_id = first.script_id
    if policy.leakage_check == "before_run":  # else the caller checked exactly this script, or none is due
        first = await tries.leakage_checked(first, name)
    first = await tries.evaluate(first, f"{name}/eval")
    attempts_allowed = wf.config.max_debug_attempts if policy.max_debug_attempts is None else policy.max_debug_attempts
    rules = DebugRules(attempts=attempts_allowed, deadline=deadline,
                       leakage_check=None if policy.leakage_check == "never" else tries.fix_checked)
    last, attempts = await debug_loop(wf, tries, first, rules)
    return _conclude(wf, tries, last, attempts, requested_id, fallback)


@dataclass(frozen=True)
class _Version:
    script: SolutionScript
    script_id: str
    done: EvaluationCompleted | None = None   # its run; None until it has run


class _Attempts:
    """The versions of one ``evaluate_with_retry`` call (its ``DebugSteps``): each recorded with
    its parent, run under the deadline's timeouts, fixed by the debugger."""

    def __init__(self, wf: Workflow, policy: EvalPolicy, name: str, deadline: Deadline) -> None:
        self.wf, self.policy, self.name, self.deadline = wf, policy, name, deadline
        self.versions: list[str] = []
        self.eval_ids: list[str] = []
        self.ran: dict[tuple[str, str, str], EvaluationCompleted] = wf.shared(RAN_KEY, dict)

    def record(self, script: SolutionScript, *, origin: str, parents: Sequence[str],
               detail: dict[str, Any] | None = None) -> str:
        script_id = _record(self.wf, script, origin=origin, parents=parents, detail=detail)
        self.versions.append(script_id)
        return script_id

    def time_left(self) -> float:
        # The deadline's rule (Deadline.timeout): the caller's timeout, shrinking as the soft end
        # nears but never below the usual floor (nor above what the caller asked), never past the
        # hard end.
        timeout_s = self.policy.timeout_s
        return self.deadline.timeout(self.wf.now, timeout_s, floor_s=min(timeout_s, MIN_EVAL_TIMEOUT_S),
                                     cap_s=timeout_s)

    async def leakage_checked(self, version: _Version, label: str) -> _Version:
        fixed = await check_and_fix_leakage(self.wf, version.script, name=label)
        if fixed.content == version.script.content:
            return version
        return _Version(fixed, self.record(fixed, origin="leakage_fix", parents=[version.script_id]))

    async def fix_checked(self, version: _Version, attempt: int) -> _Version:
        return await self.leakage_checked(version, f"{self.name}/debug-{attempt}")

    async def evaluate(self, version: _Version, eval_name: str) -> _Version:
        """Run a version, or reuse its clean run in this scope (``RAN_KEY``)."""
        wf, purpose, key = self.wf, self.policy.purpose, (self.wf.scope, version.script_id, self.policy.purpose)
        earlier = self.ran.get(key)
        if earlier is not None:
            info(wf, "this script was evaluated before in this scope; its result is reused",
                 solution_id=version.script_id, eval_id=earlier.effect_id)
            done = earlier
        else:
            done = await wf.evaluate(version.script_id, name=eval_name, purpose=purpose, timeout_s=self.time_left(),
                                     expect_submission=self.policy.expect_submission, cores=self.policy.cores)
            if not done.result.is_error:
                self.ran[key] = done
        self.eval_ids.append(done.effect_id)
        return replace(version, done=done)

    # --- DebugSteps ---------------------------------------------------------------------------

    def failed(self, version: _Version) -> bool:
        assert version.done is not None
        return version.done.result.is_error

    async def fix(self, version: _Version, attempt: int) -> _Version | None:
        assert version.done is not None
        fixed = await debug_once(self.wf, version.script, bug_text(version.done.result, self.policy.timeout_s),
                                 name=f"{self.name}/debug-{attempt}")
        if fixed is None:
            return None
        return _Version(fixed, self.record(fixed, origin="debug", parents=[version.script_id],
                                           detail={"attempt": attempt}))

    async def run(self, version: _Version, attempt: int, previous: _Version) -> _Version:
        ran = await self.evaluate(version, f"{self.name}/eval-{attempt}")
        info(self.wf, "debug attempt evaluated", attempt=attempt, ok=not self.failed(ran))
        return ran


def _conclude(wf: Workflow, tries: _Attempts, last: _Version, attempts: int, requested_id: str,
              fallback: SolutionScript | None) -> Evaluated:
    """The version kept (the last that ran, or ``fallback`` when that still fails) and the one
    SolutionEvaluated decision naming it."""
    assert last.done is not None
    done, result = last.done, last.done.result
    if result.is_error and fallback is not None and fallback.is_executable and fallback.score is not None:
        warn(wf, "still failing after debugging; falling back to the last executable version (REQ-SF-008)",
             attempts=attempts)
        kept_id = _record(wf, fallback, origin="fallback", parents=[])
        kept, fell_back = fallback, True
    else:
        kept_id, fell_back = last.script_id, False
        kept = with_score(last.script, None if result.is_error else result.score, executable=not result.is_error)
    # A fallback (Phase 1's s_0, finalization's validation solution) keeps the score of an earlier
    # evaluation, whose rows a SolutionScript does not carry: taken as every row. Only a Phase 3
    # round cuts its rows, and one is finalized only when nothing scored on every row beat it.
    rows = None if fell_back or kept.score is None else done.scored_rows
    groups = None if fell_back or kept.score is None else done.score_groups
    wf.record(SolutionEvaluated(solution_id=kept_id, requested_solution_id=requested_id, score=kept.score,
                                is_executable=kept.is_executable, purpose=tries.policy.purpose,
                                eval_ids=tries.eval_ids, scored_rows=rows))
    if not fell_back and not result.is_error and done.submission is not None and done.submission.valid:
        _valid_submissions(wf)[kept_id] = done.submission
    if groups is not None:   # read by id where a step weighs its gain (replaces_incumbent)
        _score_groups(wf)[kept_id] = groups
    if not fell_back and kept.score is not None:
        note_hidden_score(wf, kept_id, done.hidden_score)
    return Evaluated(solution=kept, solution_id=kept_id, result=result, submission=done.submission,
                     fell_back=fell_back, debug_attempts=attempts, versions=tries.versions, scored_rows=rows)


def _valid_submissions(wf: Workflow) -> dict[str, SubmissionInfo]:
    return wf.shared(SUBMISSIONS_KEY, dict)


def score_groups_of(wf: Workflow, solution_id: str) -> tuple[float | None, ...] | None:
    """The group values (``handlers.script_lines``) of the last clean evaluation that scored
    ``solution_id``, None when it printed none (or was never scored)."""
    return _score_groups(wf).get(solution_id)


def _score_groups(wf: Workflow) -> dict[str, tuple[float | None, ...]]:
    return wf.shared(SCORE_GROUPS_KEY, dict)


def replaces_incumbent(wf: Workflow, rule: Score, new: float | None, new_id: str, old: float | None,
                       old_id: str) -> bool:
    """Whether the solution ``new_id`` (score ``new``) replaces the incumbent ``old_id`` (``old``)
    in a refinement or merge step: ``rule``'s ``>=`` (REQ-DM-029), and with the run's
    ``noise_margin_se`` a win by more than that many standard errors of the paired validation noise
    when both scripts printed their group values (``events.score.Score.clears_noise``)."""
    if not rule.at_least(new, old):
        return False
    new_groups, old_groups = score_groups_of(wf, new_id), score_groups_of(wf, old_id)
    if rule.clears_noise(new, old, margin=wf.config.noise_margin_se, new_groups=new_groups, old_groups=old_groups):
        return True
    info(wf, "better by less than the validation noise: the incumbent stays", new=new, old=old,
         noise=paired_noise(rule, new_groups, old_groups), margin_se=wf.config.noise_margin_se,
         solution_id=new_id, incumbent_id=old_id)
    return False


def note_hidden_score(wf: Workflow, solution_id: str, hidden_score: float | None) -> None:
    """Keep the grade on the held-back rows of a clean, scored evaluation of ``solution_id``
    (``handlers.hidden_choice`` reads it); a run without a slice never has one."""
    if hidden_score is not None:
        _hidden_scores(wf)[solution_id] = hidden_score


def hidden_score_of(wf: Workflow, solution_id: str) -> float | None:
    """The held-back grade of the last clean, scored evaluation of ``solution_id``, if any."""
    return _hidden_scores(wf).get(solution_id)


def _hidden_scores(wf: Workflow) -> dict[str, float]:
    return wf.shared(HIDDEN_SCORES_KEY, dict)


def submission_of(wf: Workflow, solution_id: str) -> SubmissionInfo | None:
    """The valid submission the last clean evaluation of ``solution_id`` left, if any: what the
    run submits when the test script fails (a model fit on the search's rows, but an answer)."""
    return _valid_submissions(wf).get(solution_id)
