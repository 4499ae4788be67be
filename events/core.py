"""Events every strategy shares: the run's life, agent calls, evaluations, timers, solutions."""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from events.base import EffectRequest, EffectResult, Event, EventKind, register, upcaster
from events.domain import EvaluationResult, SolutionPhase, TaskDescription
from events.sandbox import SandboxPolicy

# --- the run ------------------------------------------------------------------------------


@register
class RunStarted(Event):
    """The run's only spontaneous input: what to do, with which settings and seed.

    v2 adds ``patches``: the named handler changes (``handlers/patches.py``) the code that created
    the run knew. A handler asks ``wf.patched(name)`` and takes the new path only where the run
    was created with that patch, so a run recorded by an earlier release keeps its old decisions.
    """

    type_name: ClassVar[str] = "RunStarted"
    version: ClassVar[int] = 2
    kind: ClassVar[EventKind] = "input"

    strategy: str
    backend: str
    seed: int
    config: dict[str, Any]
    task: TaskDescription
    task_dir: str
    run_dir: str
    deterministic_order: bool = True
    elapsed_s: float = 0.0
    params: dict[str, Any] = {}  # strategy-specific inputs (e.g. a Phase-2-only run's start solution)
    patches: list[str] = []


@upcaster("RunStarted", 1)
def _run_started_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """A v1 run was created before any named handler change: it keeps every old path."""
    return {**payload, "patches": []}


@register
class RunCompleted(Event):
    type_name: ClassVar[str] = "RunCompleted"

    submission_path: str
    best_score: float | None
    result: dict[str, Any]


@register
class RunFailed(Event):
    type_name: ClassVar[str] = "RunFailed"

    error: str
    diagnostics: dict[str, Any] = {}


@register
class DriverStarted(Event):
    type_name: ClassVar[str] = "DriverStarted"
    kind: ClassVar[EventKind] = "bookkeeping"

    pid: int
    host: str
    resumed: bool
    elapsed_s: float


@register
class DriverStopped(Event):
    type_name: ClassVar[str] = "DriverStopped"
    kind: ClassVar[EventKind] = "bookkeeping"

    reason: str
    elapsed_s: float
    cancelled_effects: list[str] = []


@register
class AgentSelected(Event):
    """Which agent backend the run uses and why (REQ-OR-046: ``--agent auto`` and the library's
    default choose by the credentials they find). Bookkeeping: a fact about where the run was
    started, neither fed to the handlers nor compared on replay."""

    type_name: ClassVar[str] = "AgentSelected"
    kind: ClassVar[EventKind] = "bookkeeping"

    requested: str   # what was asked for: auto, claude, openai, builtin, replay:<run>, module:Attr
    chosen: str      # the backend recorded in RunStarted (what a resume uses)
    reason: str      # the one line the user is shown


@register
class PhaseStarted(Event):
    type_name: ClassVar[str] = "PhaseStarted"

    phase: str
    budget_s: float | None = None


@register
class PhaseCompleted(Event):
    type_name: ClassVar[str] = "PhaseCompleted"

    phase: str
    result: dict[str, Any] = {}


@register
class Note(Event):
    """A warning or remark a handler wants in the audit trail (and the logs).

    v2 adds ``refs``: the spec requirement ids (``REQ-SF-038`` …) the note cites, so audit
    views can select notes by requirement without parsing prose. When a handler does not give
    them they are read from the message; v1 notes are upcast the same way (``_note_v1_to_v2``).
    """

    type_name: ClassVar[str] = "Note"
    version: ClassVar[int] = 2
    kind: ClassVar[EventKind] = "remark"  # recorded and shown, never compared on replay or resume

    level: str
    message: str
    data: dict[str, Any] = {}
    refs: list[str] = []

    @model_validator(mode="before")
    @classmethod
    def _refs_from_message(cls, values: Any) -> Any:
        if isinstance(values, dict) and "refs" not in values:
            values = {**values, "refs": requirement_refs(str(values.get("message", "")))}
        return values


_REQ_ID = re.compile(r"REQ-[A-Z0-9]+-\d+(?:\.\d+)?")


def requirement_refs(text: str) -> list[str]:
    """The requirement ids a text cites, in order of first mention."""
    return list(dict.fromkeys(_REQ_ID.findall(text)))


@upcaster("Note", 1)
def _note_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 notes cited requirements only in their prose: lift them into ``refs``."""
    return {**payload, "refs": requirement_refs(str(payload.get("message", "")))}


# --- solutions ------------------------------------------------------------------------------


@register
class SolutionRecorded(Event):
    """A script came into being. Content-addressed: recorded once per ``solution_id``."""

    type_name: ClassVar[str] = "SolutionRecorded"

    solution_id: str
    content: str
    phase: SolutionPhase
    origin: str
    parents: list[str] = []
    source_model: str | None = None
    detail: dict[str, Any] = {}


@register
class SolutionEvaluated(Event):
    """The evaluation sub-flow's verdict on a solution (after leakage check and debugging).

    v2 adds ``scored_rows``: the validation rows ``score`` is on when fewer than all (the kept
    version's ``EvaluationCompleted.scored_rows``); ``None``: every row, as in every v1 log. A
    score on fewer rows never replaces one on more as the run's best (``events.score``)."""

    type_name: ClassVar[str] = "SolutionEvaluated"
    version: ClassVar[int] = 2

    solution_id: str
    requested_solution_id: str
    score: float | None
    is_executable: bool
    purpose: str
    eval_ids: list[str] = []
    scored_rows: int | None = Field(default=None, gt=0)


@upcaster("SolutionEvaluated", 1)
def _solution_evaluated_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 scores were all on every validation row (no script could say otherwise)."""
    return {**payload, "scored_rows": None}


# --- agent calls ----------------------------------------------------------------------------


@register
class AgentCallRequested(EffectRequest):
    """Ask an agent. ``prompt`` is the exact rendered text; ``variables`` the values behind it.

    v2 adds ``deadline_s``: the run's driven time (seconds, as ``elapsed_s``) by which the call
    must be over, the hard end of the unit of work that asked (REQ-OR-024/034); the backend stops
    the call there. ``None``: no deadline (a library call without a limit, and every v1 log)."""

    type_name: ClassVar[str] = "AgentCallRequested"
    version: ClassVar[int] = 2

    agent_type: str
    variant: str | None = None
    prompt: str
    system_prompt: str | None = None
    variables: dict[str, Any] = {}
    output_schema: dict[str, Any] | None = None
    session_key: str | None = None
    deadline_s: float | None = None


@upcaster("AgentCallRequested", 1)
def _agent_call_requested_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 requests carried no deadline: the call was bounded only by its phase's guard timer."""
    return {**payload, "deadline_s": None}


@register
class AgentCallCompleted(EffectResult):
    """v2 adds ``sandbox``: the policy the agent's CLI and tools ran under (``None``: not
    recorded, as in every v1 log, or a backend that runs no tools)."""

    type_name: ClassVar[str] = "AgentCallCompleted"
    version: ClassVar[int] = 2

    text: str
    code: str | None = None
    structured: dict[str, Any] | None = None
    cost_usd: float | None = None
    usage: dict[str, Any] = {}
    duration_s: float = 0.0
    session_id: str | None = None
    sandbox: SandboxPolicy | None = None


@register
class AgentCallFailed(EffectResult):
    """v2 adds ``sandbox`` (as AgentCallCompleted). ``cost_usd`` None: the spend is unknown.

    v3 adds ``stop``: "budget" when the call did not fail but was stopped for want of money (the
    run's ledger refused it, or it was cut at its cap; ``engine.agents.ledger``). The workflow
    treats that as a budget stop of the search, never as an agent's or a script's failure.

    v4 adds ``usage`` (as AgentCallCompleted's, over all the call's tries): the tokens a failed
    call used and, through the API relay, what its meter saw (requests, refusals, what it charged
    at the most), so a failed call's cost can be audited like a completed one's."""

    type_name: ClassVar[str] = "AgentCallFailed"
    version: ClassVar[int] = 4

    error: str
    attempts: int = 1
    cost_usd: float | None = None
    sandbox: SandboxPolicy | None = None
    stop: Literal["", "budget"] = ""
    usage: dict[str, Any] = {}


@upcaster("AgentCallCompleted", 1)
def _agent_call_completed_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 results predate sandbox policies: what the agent could see is unknown."""
    return {**payload, "sandbox": None}


@upcaster("AgentCallFailed", 1)
def _agent_call_failed_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "sandbox": None}


@upcaster("AgentCallFailed", 2)
def _agent_call_failed_v2_to_v3(payload: dict[str, Any]) -> dict[str, Any]:
    """Before v3 a call cut for money was a failure like any other, and the log's decisions
    were made so: it stays one on replay."""
    return {**payload, "stop": ""}


@upcaster("AgentCallFailed", 3)
def _agent_call_failed_v3_to_v4(payload: dict[str, Any]) -> dict[str, Any]:
    """Before v4 a failed call's usage was not kept: its cost is all the log knows of it."""
    return {**payload, "usage": {}}


# --- evaluations ----------------------------------------------------------------------------


class SubmissionInfo(BaseModel):
    """What the evaluation's ``final/submission.csv`` looked like, checked against the sample."""

    model_config = ConfigDict(frozen=True)

    exists: bool
    path: str = ""
    rows: int | None = None
    columns: list[str] = []
    valid: bool = False
    reason: str = ""


@register
class EvaluationRequested(EffectRequest):
    """Run the script of ``solution_id`` (recorded earlier) in its own directory.

    v2 adds ``cores``: how many CPU cores the script may use, which the harness tells it
    (``ENGINE_EVAL_CORES``). An evaluation that runs alone by design (Phase 3's rounds,
    finalization's test run) may be given every evaluation slot's core
    (``handlers.evaluation.lone_cores``); one of several at once gets one (a Ray evaluation: the
    CPUs its task reserved, ``engine.run.ray_eval``). Every v1 log: 1.

    v3 adds ``fit_within_s``: the seconds the script is asked to fit its work into (the harness
    tells it as ``ENGINE_EVAL_FIT_BY``), when that is sooner than its timeout; it is still killed
    only at ``timeout_s``. Phase 1's drafts are given the most their phase waits for them
    (docs/decisions/0032). ``None`` (every v2 log): not asked."""

    type_name: ClassVar[str] = "EvaluationRequested"
    version: ClassVar[int] = 3

    solution_id: str
    purpose: str
    timeout_s: float
    expect_submission: bool = False
    cores: int = Field(default=1, ge=1)
    fit_within_s: float | None = Field(default=None, gt=0)


# The purpose of finalization's test script (handlers/finalization.py): the one evaluation that
# reads the task's own data when the run holds rows back from its search (docs/final-choice-slice.md).
TEST_SCRIPT_PURPOSE = "submission"


@upcaster("EvaluationRequested", 1)
def _evaluation_requested_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 scripts were told nothing; the builtin ones used one core."""
    return {**payload, "cores": 1}


@upcaster("EvaluationRequested", 2)
def _evaluation_requested_v2_to_v3(payload: dict[str, Any]) -> dict[str, Any]:
    """v2 scripts were told their timeout as their deadline."""
    return {**payload, "fit_within_s": None}


@register
class EvaluationCompleted(EffectResult):
    """v2 adds ``sandbox``: the policy the script ran under (``None``: not recorded, as in
    every v1 log, or no script ran). v3 adds ``final_run_estimate_s``: the script's own estimate
    of its test version's run (``handlers.script_lines``), a measurement of time like
    ``duration_seconds``, so the harness takes its line out of ``stdout``, which prompts quote
    and a run with the same seed must reproduce (``None``: not printed, as in every v2 log).
    v4 adds ``scored_rows``: how many validation rows the score is on when the script says they
    are fewer than all (``Validation Rows: <scored> of <total>``, ``handlers.script_lines``);
    ``None``: every row (every v3 log: no script said otherwise). v5 adds ``score_groups``: the
    metric on fixed groups of the validation rows when the script prints them
    (``Validation Score Groups:``, ``handlers.script_lines``), from which a refinement's gain is
    weighed against the noise of the validation estimate (``events.score.Score.clears_noise``);
    ``None``: not printed (every v4 log). v6 adds ``hidden_score``: the grade of the rows the
    run held back from the search (``events.hidden``), cut out of the submission the script
    wrote; ``None``: no slice, no submission covering it, or a v5 log."""

    type_name: ClassVar[str] = "EvaluationCompleted"
    version: ClassVar[int] = 6

    result: EvaluationResult
    peak_rss_mb: float | None = None
    cpu_s: float | None = None
    submission: SubmissionInfo | None = None
    sandbox: SandboxPolicy | None = None
    final_run_estimate_s: float | None = None
    scored_rows: int | None = Field(default=None, gt=0)
    score_groups: tuple[float | None, ...] | None = None
    hidden_score: float | None = None


@upcaster("EvaluationCompleted", 1)
def _evaluation_completed_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 results predate sandbox policies: what the script could see is unknown."""
    return {**payload, "sandbox": None}


@upcaster("EvaluationCompleted", 2)
def _evaluation_completed_v2_to_v3(payload: dict[str, Any]) -> dict[str, Any]:
    """v2 scripts printed no estimate of their test run (finalization keeps the two-run rule)."""
    return {**payload, "final_run_estimate_s": None}


@upcaster("EvaluationCompleted", 3)
def _evaluation_completed_v3_to_v4(payload: dict[str, Any]) -> dict[str, Any]:
    """No v3 script said its score was on part of its rows: every score is on every row."""
    return {**payload, "scored_rows": None}


@upcaster("EvaluationCompleted", 4)
def _evaluation_completed_v4_to_v5(payload: dict[str, Any]) -> dict[str, Any]:
    """No v4 script printed group scores: every comparison falls to the plain rule."""
    return {**payload, "score_groups": None}


@upcaster("EvaluationCompleted", 5)
def _evaluation_completed_v5_to_v6(payload: dict[str, Any]) -> dict[str, Any]:
    """No v5 run held rows back from its search: nothing was graded on them."""
    return {**payload, "hidden_score": None}


# --- time and cancellation -------------------------------------------------------------------


@register
class TimerRequested(EffectRequest):
    """Wake the handlers when the run's driven time reaches ``at_elapsed_s``."""

    type_name: ClassVar[str] = "TimerRequested"

    at_elapsed_s: float


@register
class TimerFired(EffectResult):
    type_name: ClassVar[str] = "TimerFired"


@register
class EffectCancelled(Event):
    """The handlers no longer want an effect's result (e.g. a deadline passed)."""

    type_name: ClassVar[str] = "EffectCancelled"

    effect_id: str
    reason: str


REQUEST_TYPES: tuple[type[EffectRequest], ...] = (AgentCallRequested, EvaluationRequested, TimerRequested)
RESULT_TYPES: tuple[type[EffectResult], ...] = (AgentCallCompleted, AgentCallFailed, EvaluationCompleted, TimerFired)
