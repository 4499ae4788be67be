"""Bundled tasks: prepared on demand, in MLE-bench's layout, from datasets inside packages.

``prepare_bundled(name, dest)`` writes::

    dest/prepared/public/{train.csv,test.csv,sample_submission.csv,description.md}
                            (an image task: train/<id>.png and test/<id>.png, no test.csv)
    dest/prepared/private/answers.csv
    dest/prepared/task.json        (metric, columns, leaderboard, sha256 of every file)

The split is deterministic: rows are shuffled with a seeded PCG64 generator (stable across
numpy versions) before ids are assigned — several datasets are sorted by class, and ids in
the original order would leak the label — then a random 30 % of each class (of all rows,
for regression) goes to the test set. Preparing twice gives the same bytes; preparing into a
directory that already holds the same files does nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import structlog

from engine.tasks.baseline import naive_predictions
from engine.tasks.bundled_data import SPECS, BundledSpec
from engine.tasks.bundled_image_files import image_split
from engine.tasks.description import render_description
from engine.tasks.leaderboard import from_gap
from engine.tasks.loader import load_task
from engine.tasks.meta_io import TASK_JSON, dump_meta, write_atomic
from engine.tasks.metrics import metric_info, score_predictions
from engine.tasks.model import LoadedTask, ScoringSpec, TaskError, TaskMeta
from engine.tasks.reference import reference_score
from engine.tasks.reference_media import pixel_reference_score

log = structlog.get_logger(__name__)

TEST_FRACTION = 0.3
ID_COLUMN = "id"


@dataclass(frozen=True)
class BundledTaskInfo:
    name: str
    task_type: str
    metric: str
    rows: int
    description: str


def bundled_names() -> list[str]:
    """The bundled tasks' names, without loading their data (``list_bundled`` counts every row)."""
    return list(SPECS)


def list_bundled() -> list[BundledTaskInfo]:
    return [
        BundledTaskInfo(
            name=spec.name,
            task_type=spec.task_type.value,
            metric=spec.metric,
            rows=len(spec.load()),
            description=spec.one_liner,
        )
        for spec in SPECS.values()
    ]


def _spec(name: str) -> BundledSpec:
    if name not in SPECS:
        raise TaskError(f"unknown bundled task {name!r}; known: {', '.join(SPECS)}")
    return SPECS[name]


def _split(spec: BundledSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    data = spec.load()
    rng = np.random.default_rng(spec.seed)
    data = data.iloc[rng.permutation(len(data))].reset_index(drop=True)
    # concat, not insert: a wide table's columns (yeast-gene-function's 104) would warn of fragmentation.
    data = pd.concat([pd.Series(np.arange(len(data)), name=ID_COLUMN), data], axis=1)
    if spec.task_type.value == "regression":
        groups = [data.index.to_numpy()]
    else:
        groups = [data.index[data[spec.target] == c].to_numpy()
                  for c in sorted(data[spec.target].unique(), key=str)]
    # A second draw picks the test rows, so test ids are spread over the whole id range.
    test_rows = np.concatenate([rng.permutation(g)[: round(len(g) * TEST_FRACTION)] for g in groups])
    is_test = data.index.isin(test_rows)
    return data[~is_test].reset_index(drop=True), data[is_test].reset_index(drop=True)


def _scoring(spec: BundledSpec, train: pd.DataFrame) -> ScoringSpec:
    if spec.per_class_probabilities:
        classes = sorted(train[spec.target].unique(), key=str)
        return ScoringSpec(spec.metric, ID_COLUMN, tuple(str(c) for c in classes),
                           answer_column=spec.target)
    return ScoringSpec(spec.metric, ID_COLUMN, (spec.target,), positive_class=spec.positive_class)


def _sample_submission(spec: BundledSpec, scoring: ScoringSpec, ids: pd.Series, train: pd.DataFrame) -> pd.DataFrame:
    """A trivially valid submission: 0.5 / uniform probabilities, the first class, or 0."""
    frame = pd.DataFrame({ID_COLUMN: np.asarray(ids)})
    kind = metric_info(spec.metric).kind
    for column in scoring.target_columns:
        if kind == "probability":
            frame[column] = round(1 / max(2, len(scoring.target_columns)), 6)
        elif kind == "label":
            frame[column] = sorted(train[spec.target].unique(), key=str)[0]
        else:
            frame[column] = 0.0
    return frame


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


def _render(spec: BundledSpec) -> tuple[dict[str, bytes], TaskMeta]:
    """Every file of the prepared task, in memory, plus its metadata (without file hashes)."""
    train, test = _split(spec)
    images = image_split(spec, train, test, ID_COLUMN) if spec.images is not None else None
    if images is not None:
        train, test = images.train, images.test
    scoring = _scoring(spec, train)
    answers = test[[ID_COLUMN, spec.target]]
    features = test.drop(columns=[spec.target])
    sample = _sample_submission(spec, scoring, test[ID_COLUMN], train)

    baseline = score_predictions(scoring, answers, naive_predictions(scoring, train, test[ID_COLUMN]))
    if images is not None:
        reference = pixel_reference_score(scoring, train, images.train_pixels, test[ID_COLUMN],
                                          images.test_pixels, answers)
    else:
        reference = (spec.reference or reference_score)(scoring, train, features, answers)
    files = {
        "public/train.csv": _csv(train),
        # An image task's test rows are its test/ folder, as in an image competition's download.
        **({} if images is not None else {"public/test.csv": _csv(features)}),
        "public/sample_submission.csv": _csv(sample),
        "public/description.md": render_description(spec, scoring, train, features, sample),
        "private/answers.csv": _csv(answers),
        **(images.files if images is not None else {}),
    }
    info = metric_info(spec.metric)
    meta = TaskMeta(
        competition_id=spec.name,
        task_type=spec.task_type,
        data_modality=spec.modality,
        evaluation_metric=info.name,
        metric_direction=info.direction,
        id_column=ID_COLUMN,
        target_columns=list(scoring.target_columns),
        answer_column=scoring.answer_column,
        positive_class=scoring.positive_class,
        sample_submission="sample_submission.csv",
        answers="answers.csv",
        train_file="train.csv",
        test_file=None if images is not None else "test.csv",
        leaderboard=from_gap(baseline, reference),
        bundled=spec.name,
    )
    return files, meta


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_prepared(prepared: Path, name: str) -> bool:
    meta_file = prepared / TASK_JSON
    if not meta_file.is_file():
        return False
    try:
        meta = TaskMeta.model_validate_json(meta_file.read_text(encoding="utf-8"))
    except ValueError:
        return False
    if meta.bundled != name:
        if meta.bundled is not None:
            raise TaskError(f"{prepared.parent} already holds bundled task {meta.bundled!r}, "
                            f"not {name!r}; choose another directory")
        return False
    return bool(meta.files) and all(
        (prepared / rel).is_file() and _sha((prepared / rel).read_bytes()) == digest
        for rel, digest in meta.files.items()
    )


def prepare_bundled(name: str, dest: Path) -> Path:
    """Prepare bundled task ``name`` into ``dest`` (the competition dir); returns ``dest``."""
    spec = _spec(name)
    dest = Path(dest).expanduser().resolve()
    prepared = dest / "prepared"
    if _is_prepared(prepared, name):
        return dest
    files, meta = _render(spec)
    for rel, data in files.items():
        write_atomic(prepared / rel, data)
    # task.json last: its file hashes are what marks the preparation complete.
    meta = meta.model_copy(update={"files": {rel: _sha(d) for rel, d in sorted(files.items())}})
    write_atomic(prepared / TASK_JSON, dump_meta(meta))
    log.info("task.prepared", task=name, dest=str(dest))
    return dest


def resolve_task(spec: str, dest_dir: Path) -> LoadedTask:
    """A bundled task name (prepared into ``dest_dir/<name>``) or a path to a task directory."""
    path = Path(spec).expanduser()
    if spec in SPECS and not path.exists():
        return load_task(prepare_bundled(spec, Path(dest_dir) / spec))
    if path.exists():
        return load_task(path)
    raise TaskError(
        f"{spec!r} is neither a bundled task ({', '.join(SPECS)}) nor an existing directory"
    )
