"""A run's configuration (spec 01 with the spec-09 extensions): ``PipelineConfig``, the phases'
shares of the time limit and the models' prices. Frozen: a run's config is recorded in its
``RunStarted`` and read back as recorded."""

from __future__ import annotations

import re
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

_FROZEN = ConfigDict(frozen=True)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    # Whether a new run holds back a slice of its training rows from the search, to choose the
    # final solution on (events.hidden, docs/final-choice-slice.md). Read once, when the run is
    # created: what a run held back is its HiddenSliceDrawn event, not this setting. Off until its
    # effect is measured on the held-out set (docs/decisions/0033-final-choice-on-held-back-rows.md).
    hidden_slice: bool = False
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
    # The names of variables of the engine's environment an evaluation script sees besides the
    # allow-list (engine/harness/environment.py: locale, home, temporary folder, GPU and thread
    # settings): e.g. ["HF_HOME", "WANDB_MODE"]. Names only; the values are read where it runs.
    eval_env_pass: tuple[str, ...] = ()

    @field_validator("eval_env_pass", mode="before")
    @classmethod
    def _names_to_pass(cls, value: Any) -> Any:
        if isinstance(value, str):  # MLE_STAR_EVAL_ENV_PASS=HF_HOME,WANDB_MODE or --set eval_env_pass=HF_HOME
            value = [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, (list, tuple)):
            bad = [v for v in value if not isinstance(v, str) or not _ENV_NAME.fullmatch(v)]
            if bad:
                raise ValueError(f"eval_env_pass takes names of environment variables (letters, digits, _), "
                                 f"not {bad[0]!r}")
        return value

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
        if isinstance(data, dict) and data.get("hidden_slice") is False:
            data.pop("hidden_slice")
        if isinstance(data, dict) and data.get("lone_evaluations_use_all_cores") is False:
            data.pop("lone_evaluations_use_all_cores")
        if isinstance(data, dict) and not data.get("model_prices"):
            data.pop("model_prices", None)
        if isinstance(data, dict) and not data.get("eval_env_pass"):
            data.pop("eval_env_pass", None)
        if isinstance(data, dict) and data.get("evaluation_executor") == "local":
            for key in ("evaluation_executor", "evaluation_cpus", "evaluation_gpus"):
                data.pop(key, None)
        return data


__all__ = ["ModelPrice", "PhaseTimeBudget", "PipelineConfig"]
