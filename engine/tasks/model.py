"""The shapes of a task: its metadata file (task.json / task.yaml) and the loaded task.

``TaskMeta`` is what a human writes in ``task.yaml`` or what ``prepare_bundled`` writes in
``task.json``; every field is optional because the loader infers what it safely can and
fails with a ``TaskError`` naming the field otherwise. ``LoadedTask`` is the resolved result
the rest of the engine works with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from events.domain import DataModality, MetricDirection, TaskDescription, TaskType


class TaskError(Exception):
    """A task cannot be found, prepared, loaded or graded because of its own files or metadata.

    The message is meant for a human at a terminal: it names the file and field at fault and,
    where possible, how to fix it.
    """


class Leaderboard(BaseModel):
    """Medal thresholds in metric units; ``method`` says how they were derived."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gold: float | None = None
    silver: float | None = None
    bronze: float | None = None
    median: float | None = None
    method: str | None = None
    naive_baseline: float | None = None
    reference_score: float | None = None


def _label_str(value: object) -> str:
    """Class labels travel as strings so ``1``, ``1.0`` and ``"1"`` name the same class."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else text


class TaskMeta(BaseModel):
    """task.yaml / task.json. Unknown keys are rejected so typos do not silently vanish."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    competition_id: str | None = None
    task_type: TaskType | None = None
    data_modality: DataModality | None = None
    evaluation_metric: str | None = None
    metric_direction: MetricDirection | None = None
    id_column: str | None = None
    target_column: str | None = None
    target_columns: list[str] | None = None
    # Column of the answers file holding the truth when it differs from the submission's
    # columns (e.g. one probability column per class, one label column in the answers).
    answer_column: str | None = None
    positive_class: str | None = None
    sample_submission: str | None = None  # file name inside public/
    answers: str | None = None  # file name inside private/ (or a path relative to the task)
    train_file: str | None = None
    test_file: str | None = None
    leaderboard: Leaderboard | None = None
    bundled: str | None = None  # name of the bundled task this was prepared from
    files: dict[str, str] = Field(default_factory=dict)  # relative path -> sha256

    @field_validator("positive_class", mode="before")
    @classmethod
    def _label_as_str(cls, value: object) -> object:
        return None if value is None else _label_str(value)

    def overlay(self, other: TaskMeta) -> TaskMeta:
        """``other``'s explicitly set fields win; used to let task.yaml override task.json."""
        merged = {**self.model_dump(exclude_unset=True), **other.model_dump(exclude_unset=True)}
        return TaskMeta.model_validate(merged)  # re-validated, so nested models stay models


@dataclass(frozen=True)
class ScoringSpec:
    """Everything needed to score predictions against answers, independent of files."""

    metric: str
    id_column: str
    target_columns: tuple[str, ...]
    answer_column: str | None = None
    positive_class: str | None = None


@dataclass(frozen=True)
class LoadedTask:
    """A resolved task. ``public_dir`` is what scripts see as ./input; ``private_dir`` holds
    answers and must never be shown to agents or scripts."""

    description: TaskDescription
    root: Path
    public_dir: Path
    private_dir: Path | None
    sample_submission: Path | None
    answers: Path | None
    id_column: str
    target_columns: tuple[str, ...]
    leaderboard: Leaderboard
    answer_column: str | None = None
    positive_class: str | None = None
    train_file: Path | None = None
    test_file: Path | None = None
    bundled: str | None = None

    @property
    def competition_id(self) -> str:
        return self.description.competition_id

    @property
    def metric(self) -> str:
        return self.description.evaluation_metric

    @property
    def direction(self) -> MetricDirection:
        return self.description.metric_direction

    @property
    def scoring(self) -> ScoringSpec:
        return ScoringSpec(
            metric=self.metric,
            id_column=self.id_column,
            target_columns=self.target_columns,
            answer_column=self.answer_column,
            positive_class=self.positive_class,
        )


label_str = _label_str
