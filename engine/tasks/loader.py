"""``load_task``: turn a task directory into a ``LoadedTask``, inferring only what is safe.

Inference rules (anything else must be written in task.yaml, and a ``TaskError`` says so):

* competition_id: the directory's name (the competition dir's, for the MLE-bench layout);
* metric direction and task type: from a known metric name (rmse → minimize, regression);
* evaluation_metric: only from an "Evaluation" section of description.md that names exactly
  one known metric — never from prose elsewhere, where "accuracy" is often just a word;
* id and target columns: the sample submission's first column is the id (the Kaggle and
  MLE-bench convention), the rest are targets;
* data modality: images or audio files under public/ → image/audio, otherwise tabular.

Metadata that contradicts itself (e.g. ``rmse`` with ``maximize``) is an error, never guessed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import structlog

from engine.tasks import layout as lay
from engine.tasks.leaderboard import from_kaggle_leaderboard
from engine.tasks.metric_registry import canonical_metric, known_metrics, metric_info
from engine.tasks.model import Leaderboard, LoadedTask, TaskError, TaskMeta
from events.domain import DataModality, MetricDirection, TaskDescription, TaskType

log = structlog.get_logger(__name__)

# The more specific phrases come first: a match is blanked out of the section before the
# generic ones are tried, so "mean column-wise ROC AUC" is not also "ROC AUC".
_METRIC_PHRASES = {
    "mean_columnwise_roc_auc": r"\bmean[\s_-]*column[\s_-]*wise[\s_-]*(roc[\s_-]*)?auc\b",
    "quadratic_weighted_kappa": r"\bquadratic[\s_-]*weighted[\s_-]*kappa\b|\bqwk\b",
    "mcrmse": r"\bmcrmse\b|\bmean[\s_-]*column[\s_-]*wise[\s_-]*root[\s-]mean[\s-]squared?[\s-]error\b",
    "rmsle": r"\brmsle\b|\broot[\s-]mean[\s-]squared?[\s-]log(arithmic)?[\s-]error\b",
    "balanced_accuracy": r"\bbalanced[\s_-]accuracy\b",
    "f1_macro": r"\bmacro[\s_-]*(averaged[\s_-]*)?f1\b|\bf1[\s_-]*macro\b",
    "map@k": r"\bmap\s*@\s*\d+\b|\bmean average precision\s*@\s*\d+\b",
    "roc_auc": r"\broc[\s_-]*auc\b|\bauc\b|area under the (roc|receiver operating characteristic)",
    "logloss": r"\blog[\s_-]?loss\b|\bcross[\s-]?entropy\b",
    "rmse": r"\brmse\b|\broot[\s-]mean[\s-]squared?[\s-]error\b",
    "mae": r"\bmae\b|\bmean absolute error\b",
    "accuracy": r"\baccuracy\b",
    "f1": r"\bf1\b|\bf-score\b",
}
_CLASSIFICATION_TYPES = {
    TaskType.classification, TaskType.image_classification,
    TaskType.text_classification, TaskType.audio_classification,
}


def load_task(path: Path | str) -> LoadedTask:
    layout = lay.find_layout(Path(path).expanduser().resolve())
    meta = lay.read_meta(layout)
    hint = layout.yaml_hint
    public = layout.public_dir

    description_file = public / "description.md"
    if not description_file.is_file():
        raise TaskError(
            f"description.md is missing in {public}; add a Kaggle-style description of what "
            "to predict, the files and how submissions are scored"
        )
    try:
        description = description_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{description_file}: cannot be read as UTF-8 text: {exc}; re-save it as UTF-8") from exc

    sample = lay.find_sample_submission(public, meta.sample_submission)
    answers = lay.find_answers(layout, meta.answers)
    id_column, targets = resolve_columns(meta, sample, hint)
    metric, direction, task_type = resolve_metric(meta, description, hint)
    if meta.evaluation_metric is None:
        log.warning("task.metric_inferred", metric=metric, source="description.md")

    task = TaskDescription(
        competition_id=meta.competition_id or layout.default_id,
        task_type=task_type,
        data_modality=meta.data_modality or DataModality(lay.infer_modality(public)),
        evaluation_metric=metric,
        metric_direction=direction,
        description=description,
    )
    return LoadedTask(
        description=task,
        root=layout.root,
        public_dir=public,
        private_dir=layout.private_dir,
        sample_submission=sample,
        answers=answers,
        id_column=id_column,
        target_columns=targets,
        leaderboard=_leaderboard(meta, layout.root, direction),
        answer_column=meta.answer_column,
        positive_class=meta.positive_class,
        train_file=lay.optional_file(public, meta.train_file, "train.csv"),
        test_file=lay.optional_file(public, meta.test_file, "test.csv"),
        bundled=meta.bundled,
    )


def resolve_columns(meta: TaskMeta, sample: Path | None, hint: Path) -> tuple[str, tuple[str, ...]]:
    declared = meta.target_columns
    if meta.target_column is not None:
        if declared is not None and declared != [meta.target_column]:
            raise TaskError(
                f"{hint}: target_column {meta.target_column!r} contradicts target_columns "
                f"{declared}; keep only one of them"
            )
        declared = [meta.target_column]
    try:
        header = list(pd.read_csv(sample, nrows=0).columns) if sample else None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise TaskError(f"{sample}: cannot read the sample submission's header: {exc}") from exc
    sample_name = sample.name if sample else None  # the file the header (if any) was read from

    if meta.id_column is not None:
        id_column = meta.id_column
        if header is not None and id_column not in header:
            raise TaskError(
                f"{hint}: id_column {id_column!r} is not a column of {sample_name} {header}"
            )
    elif header:
        id_column = header[0]
    else:
        raise TaskError(
            f"no sample_submission.csv in {hint.parent}, so the id and target columns are unknown; "
            f"add the competition's sample submission, or {_add_to(hint)} `id_column:` and `target_columns:`"
        )

    if declared is not None:
        if header is not None:
            absent = [c for c in declared if c not in header]
            if absent:
                raise TaskError(
                    f"{hint}: target column(s) {absent} are not columns of {sample_name} {header}"
                )
        return id_column, tuple(declared)
    if header is None:
        raise TaskError(
            f"target_columns is missing and there is no sample submission to read them from; "
            f"{_add_to(hint)} `target_columns: [<column to predict>]`"
        )
    targets = tuple(c for c in header if c != id_column)
    if not targets:
        raise TaskError(f"{sample}: has no prediction column besides {id_column!r}")
    return id_column, targets


def _add_to(hint: Path) -> str:
    """Where a fix goes: the task.yaml that exists, or one to create (never a file that is not there
    named as if it were)."""
    if hint.is_file():
        return f"add to {hint}"
    return f"create {hint} (`engine tasks init {hint.parent}` writes one) with"


def resolve_metric(meta: TaskMeta, description: str, hint: Path) -> tuple[str, MetricDirection, TaskType]:
    name = meta.evaluation_metric
    if name is None:
        name = metric_from_description(description)
        if name is None:
            raise TaskError(
                f"evaluation_metric is missing: description.md has no Evaluation section naming "
                f"one known metric; {_add_to(hint)} `evaluation_metric: <name>` — the one your "
                f"competition is scored by (known metrics: {known_metrics()})"
            )
    canonical = canonical_metric(name)
    if canonical is None:
        # An unknown metric can still drive a run (scripts print their own validation score),
        # but nothing about it may be guessed.
        if meta.metric_direction is None:
            raise TaskError(
                f"{hint}: evaluation_metric {name!r} is not a known metric, so metric_direction "
                "is required; add `metric_direction: maximize` or `metric_direction: minimize`"
            )
        if meta.task_type is None:
            raise TaskError(
                f"{hint}: evaluation_metric {name!r} is not a known metric, so task_type is "
                "required; add e.g. `task_type: classification`"
            )
        return name, meta.metric_direction, meta.task_type

    info = metric_info(canonical)
    if meta.metric_direction is not None and meta.metric_direction != info.direction:
        better = "higher" if info.direction == MetricDirection.maximize else "lower"
        raise TaskError(
            f"{hint}: contradictory metadata: evaluation_metric {canonical} is {better}-is-better "
            f"({info.direction.value}) but metric_direction is {meta.metric_direction.value}; "
            "fix or remove metric_direction"
        )
    task_type = meta.task_type or info.task_type
    if (task_type == TaskType.regression and info.task_type == TaskType.classification) or (
        task_type in _CLASSIFICATION_TYPES and info.task_type == TaskType.regression
    ):
        raise TaskError(
            f"{hint}: contradictory metadata: task_type {task_type.value} does not fit "
            f"evaluation_metric {canonical} (a {info.task_type.value} metric); fix one of them"
        )
    return canonical, info.direction, task_type


def metric_from_description(description: str) -> str | None:
    """The one known metric named in the Evaluation section, or None if zero or several."""
    match = re.search(r"^(#+)\s*evaluation\b.*$", description, flags=re.IGNORECASE | re.MULTILINE)
    if match is None:
        return None
    level = len(match.group(1))
    rest = description[match.end():]
    end = re.search(rf"^#{{1,{level}}}\s", rest, flags=re.MULTILINE)
    section = (rest[: end.start()] if end else rest).lower()
    found = []
    for name, pattern in _METRIC_PHRASES.items():
        match = re.search(pattern, section)
        if match is None:
            continue
        found.append(canonical_metric(match.group(0)) if name == "map@k" else name)
        section = re.sub(pattern, " ", section)
    return found[0] if len(found) == 1 else None


def _leaderboard(meta: TaskMeta, root: Path, direction: MetricDirection) -> Leaderboard:
    if meta.leaderboard is not None:
        return meta.leaderboard
    board = root / "leaderboard.csv"
    if board.is_file():
        try:
            return from_kaggle_leaderboard(board, direction)
        except (KeyError, ValueError, OSError) as exc:
            raise TaskError(f"{board}: cannot derive medal thresholds: {exc}") from exc
    return Leaderboard()
