"""Domain values of spec 01 (REQ-DM-001..050): configuration, task, solutions, results.

Everything here is a plain pydantic v2 model; only pydantic, the standard library and the
agents' structured answers (``events.agent_outputs``, the same kind of module) are imported
(REQ-DM-050). All models are frozen except ``SolutionScript`` (REQ-DM-039), whose
``score`` is filled in after evaluation.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from events.agent_outputs import RetrievedModel


class TaskType(str, Enum):
    """REQ-DM-004."""

    classification = "classification"
    regression = "regression"
    image_classification = "image_classification"
    image_to_image = "image_to_image"
    text_classification = "text_classification"
    audio_classification = "audio_classification"
    sequence_to_sequence = "sequence_to_sequence"
    tabular = "tabular"


class DataModality(str, Enum):
    """REQ-DM-005."""

    tabular = "tabular"
    image = "image"
    text = "text"
    audio = "audio"
    mixed = "mixed"


class MetricDirection(str, Enum):
    """REQ-DM-006."""

    maximize = "maximize"
    minimize = "minimize"


class SolutionPhase(str, Enum):
    """REQ-DM-008."""

    init = "init"
    merged = "merged"
    refined = "refined"
    ensemble = "ensemble"
    final = "final"


class CodeBlockCategory(str, Enum):
    """REQ-DM-011."""

    preprocessing = "preprocessing"
    feature_engineering = "feature_engineering"
    model_selection = "model_selection"
    training = "training"
    hyperparameter_tuning = "hyperparameter_tuning"
    ensemble = "ensemble"
    postprocessing = "postprocessing"
    other = "other"


class AgentType(str, Enum):
    """REQ-DM-013: the fourteen MLE-STAR agent roles."""

    retriever = "retriever"
    init = "init"
    merger = "merger"
    ablation = "ablation"
    summarize = "summarize"
    extractor = "extractor"
    coder = "coder"
    planner = "planner"
    ens_planner = "ens_planner"
    ensembler = "ensembler"
    debugger = "debugger"
    leakage = "leakage"
    data = "data"
    test = "test"


_FROZEN = ConfigDict(frozen=True)


class PhaseTimeBudget(BaseModel):
    """REQ-OR-025: share of the time limit given to each phase (percentages summing to 100)."""

    model_config = _FROZEN

    phase1_pct: float = Field(default=10.0, gt=0, le=100)
    phase2_pct: float = Field(default=65.0, gt=0, le=100)
    phase3_pct: float = Field(default=15.0, gt=0, le=100)
    finalization_pct: float = Field(default=10.0, gt=0, le=100)

    @model_validator(mode="after")
    def _sums_to_100(self) -> PhaseTimeBudget:
        total = self.phase1_pct + self.phase2_pct + self.phase3_pct + self.finalization_pct
        if abs(total - 100.0) > 1e-6:
            raise ValueError(f"phase percentages must sum to 100, got {total}")
        return self


class ModelPrice(BaseModel):
    """What one model costs, in US dollars per million tokens (for backends whose API does not
    report a cost, e.g. OpenAI-compatible endpoints)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class PipelineConfig(BaseModel):
    """REQ-DM-001/002 plus the spec-09 extensions (REQ-OR-005/009/025/028/044/047).

    Every integer field is strictly positive (REQ-DM-002).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    num_retrieved_models: int = Field(default=4, ge=1)
    outer_loop_steps: int = Field(default=4, ge=1)
    inner_loop_steps: int = Field(default=4, ge=1)
    num_parallel_solutions: int = Field(default=2, ge=1)
    ensemble_rounds: int = Field(default=5, ge=1)
    time_limit_seconds: int = Field(default=86400, ge=1)
    subsample_limit: int = Field(default=30000, ge=1)
    max_debug_attempts: int = Field(default=3, ge=1)
    max_budget_usd: float | None = Field(default=None, gt=0)
    phase_time_budget: PhaseTimeBudget | None = None
    # How many steps the loops run (handlers.step_policy): "fixed" runs the counts above (the
    # paper's and quick presets; a config recorded before this field existed means "fixed"),
    # "time" treats them as upper bounds and lets the time plan decide (the ``time`` preset).
    step_policy: Literal["fixed", "time"] = "fixed"
    # How many standard errors of the validation noise a refinement or merge must win by to
    # replace the solution it refines (events.score.Score.clears_noise); 0: the paper's ">=" alone
    # (a config recorded before this field existed). The time preset sets 1: a long run takes
    # many steps, and a win by less than the noise flatters the winner, not the model.
    noise_margin_se: float = Field(default=0.0, ge=0.0)
    # dontAsk + the role's tools as the allow-list: runs unattended, also under root, where the
    # Claude CLI refuses bypassPermissions.
    permission_mode: str = "dontAsk"
    model: str = "sonnet"
    # Price table by model name; a model not listed has an unknown cost (usage still recorded).
    model_prices: dict[str, ModelPrice] = Field(default_factory=dict)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    log_file: str | None = None
    # Evolution strategy fields; defaults from evolution-decisions.md. Ignored by mle-star.
    max_steps: int = Field(default=100, ge=1)
    phase1_target_nodes: int = Field(default=8, ge=1)
    merge_ratio: float = Field(default=0.5, ge=0.0, le=1.0)
    workers: int = Field(default=2, ge=1)
    tournament_size: int = Field(default=3, ge=1)
    max_chained_debug: int = Field(default=2, ge=0)
    steps_per_epoch: int = Field(default=10, ge=1)
    agent_profiles: int = Field(default=4, ge=1)
    profile_evolution_every: int = Field(default=3, ge=1)
    # Engine fields.
    max_concurrent_agent_calls: int = Field(default=4, ge=1)
    max_concurrent_evaluations: int = Field(default=2, ge=1)
    # An evaluation that runs alone by design (Phase 3's rounds, finalization's test run) may use
    # the cores of every evaluation slot, max_concurrent_evaluations of them, where one of several
    # at once gets one (handlers.evaluation.lone_cores). Set by every preset; False, one core for
    # every script, in a config recorded before the field existed.
    lone_evaluations_use_all_cores: bool = False
    memory_limit_mb: int | None = Field(default=None, ge=1)
    contamination_check: bool = False
    # Isolation of evaluation scripts (engine/sandbox): bubblewrap when usable ("auto"),
    # required ("bwrap") or off ("none"). A new run records the mode it resolved to.
    sandbox: Literal["auto", "bwrap", "none"] = "auto"
    # Where script evaluations run: in this process's machine ("local") or as Ray tasks with
    # this request each ("ray": $RAY_ADDRESS, else the cluster a campaign runs on, else local Ray),
    # so one run's paths can use several GPUs or hosts (engine/run/ray_eval.py).
    evaluation_executor: Literal["local", "ray"] = "local"
    evaluation_cpus: float = Field(default=1.0, gt=0)
    evaluation_gpus: float = Field(default=0.0, ge=0)

    @field_validator("permission_mode")
    @classmethod
    def _known_permission_mode(cls, value: str) -> str:
        allowed = {"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"}  # the SDK's PermissionMode
        if value not in allowed:
            raise ValueError(f"permission_mode must be one of {sorted(allowed)}")
        return value

    @model_serializer(mode="wrap")
    def _omit_unresolved_sandbox(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Settings added after logs were recorded are left out at their defaults ("auto"
        # sandbox, no price table): a config dumps as it did before they existed, so those logs
        # still replay to the same decisions (RunCompleted.result embeds the config).
        data = handler(self)
        if isinstance(data, dict) and data.get("sandbox") == "auto":
            data.pop("sandbox")
        if isinstance(data, dict) and data.get("step_policy") == "fixed":
            data.pop("step_policy")
        if isinstance(data, dict) and data.get("noise_margin_se") == 0.0:
            data.pop("noise_margin_se")
        if isinstance(data, dict) and data.get("lone_evaluations_use_all_cores") is False:
            data.pop("lone_evaluations_use_all_cores")
        if isinstance(data, dict) and not data.get("model_prices"):
            data.pop("model_prices", None)
        if isinstance(data, dict) and data.get("evaluation_executor") == "local":
            for key in ("evaluation_executor", "evaluation_cpus", "evaluation_gpus"):
                data.pop(key, None)
        return data


class TaskDescription(BaseModel):
    """REQ-DM-007."""

    model_config = _FROZEN

    competition_id: str
    task_type: TaskType
    data_modality: DataModality
    evaluation_metric: str
    metric_direction: MetricDirection
    description: str
    data_dir: str = "./input"
    output_dir: str = "./final"


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class SolutionScript(BaseModel):
    """REQ-DM-009: a full Python program; mutable so the score can be set after evaluation.

    ``created_at`` is wall-clock metadata and is excluded from anything the engine compares
    or hashes: a solution's identity is its content (``solution_id``).
    """

    model_config = ConfigDict(frozen=False)

    content: str
    phase: SolutionPhase
    score: float | None = None
    is_executable: bool = True
    source_model: str | None = None
    # Wall-clock metadata, never serialised: payloads (and so replay) must not depend on when
    # a handler happened to build the object.
    created_at: datetime = Field(default_factory=_utcnow, exclude=True)

    @property
    def solution_id(self) -> str:
        return solution_id_of(self.content)

    def replace_block(self, old: str, new: str) -> SolutionScript:
        """REQ-DM-010: a NEW script with the first occurrence of ``old`` replaced by ``new``.

        The score is reset to None and is_executable to True: the content changed, so the old
        evaluation says nothing about it (digest §9.6); phase and source_model are kept.
        """
        if old not in self.content:
            raise ValueError("code block not found in solution content")
        return SolutionScript(
            content=self.content.replace(old, new, 1),
            phase=self.phase,
            score=None,
            is_executable=True,
            source_model=self.source_model,
        )


def solution_id_of(content: str) -> str:
    """Content address of a script: first 16 hex digits of its sha256."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


class CodeBlock(BaseModel):
    """REQ-DM-012."""

    model_config = _FROZEN

    content: str
    category: CodeBlockCategory | None = None
    outer_step: int | None = None


# --- evaluation and results (REQ-DM-021..025, 042, 043; REQ-P2I-036) ---------------------


class EvaluationResult(BaseModel):
    model_config = _FROZEN

    score: float | None = None
    stdout: str
    stderr: str
    exit_code: int
    duration_seconds: float
    is_error: bool
    error_traceback: str | None = None


class ExecutionRawResult(BaseModel):
    """REQ-EX-008."""

    model_config = _FROZEN

    stdout: str
    stderr: str
    exit_code: int
    duration_seconds: float
    timed_out: bool


class RefinementAttempt(BaseModel):
    model_config = _FROZEN

    plan: str
    score: float | None
    code_block: str
    was_improvement: bool


class EnsembleAttempt(BaseModel):
    model_config = _FROZEN

    plan: str
    score: float | None
    solution: SolutionScript
    scored_rows: int | None = None  # the validation rows ``score`` is on when fewer than all


class InnerLoopResult(BaseModel):
    model_config = _FROZEN

    best_solution: SolutionScript
    best_score: float
    attempts: list[RefinementAttempt]
    improved: bool


class Phase1Result(BaseModel):
    model_config = _FROZEN

    retrieved_models: list[RetrievedModel]
    candidate_solutions: list[SolutionScript]
    candidate_scores: list[float | None]
    initial_solution: SolutionScript
    initial_score: float
    # The scored candidates no merge reached because Phase 1's time ran out, best first: Phase 2's
    # other paths start from them, so Phase 3 still blends different models. Left out of the
    # run's result: the candidates are there already, and the Notes of Phase 2 say which started.
    unmerged: list[SolutionScript] = Field(default_factory=list, exclude=True)


class Phase2Result(BaseModel):
    model_config = _FROZEN

    ablation_summaries: list[str]
    refined_blocks: list[CodeBlock]
    best_solution: SolutionScript
    best_score: float
    step_history: list[dict[str, Any]]


class Phase3Result(BaseModel):
    model_config = _FROZEN

    input_solutions: list[SolutionScript]
    ensemble_plans: list[str]
    ensemble_scores: list[float | None]
    best_ensemble: SolutionScript
    best_ensemble_score: float


class FinalResult(BaseModel):
    model_config = _FROZEN

    task: TaskDescription
    config: PipelineConfig
    phase1: Phase1Result
    phase2_results: list[Phase2Result]
    phase3: Phase3Result | None
    final_solution: SolutionScript
    submission_path: str
    total_duration_seconds: float
    total_cost_usd: float | None


class PipelineError(Exception):
    """REQ-OR-042: the pipeline could not produce anything usable; ``diagnostics`` says why."""

    def __init__(self, message: str, diagnostics: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics or {}


class PipelineTimeoutError(Exception):
    """REQ-OR-030: Phase 1 did not finish in time; ``diagnostics`` says how far the run got."""

    def __init__(self, message: str, diagnostics: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics or {}
