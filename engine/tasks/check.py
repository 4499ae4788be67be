"""``check_task``: what the engine understands of a task folder, and every problem with it at once.

``engine tasks check DIR`` prints the result; ``engine start`` runs the same check first and
refuses a task whose problems are blocking (it cannot produce a valid submission), before the
database, the run or any agent call exists. Each problem names its file, the field or column at
fault, and the fix. The column rules are ``engine/tasks/columns.py``'s, shared with ``tasks init``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from engine.tasks import layout as lay
from engine.tasks.check_data import DataChecks
from engine.tasks.check_files import Unreadable, read_csv
from engine.tasks.check_result import TaskCheck
from engine.tasks.loader import resolve_columns, resolve_metric
from engine.tasks.metric_registry import canonical_metric, known_metrics, metric_info
from engine.tasks.model import TaskError, TaskMeta

# Rows read to infer column kinds; a file's encoding is still checked to its last byte.
MAX_ROWS = 200_000


def check_task(path: Path | str) -> TaskCheck:
    root = Path(path).expanduser()
    result = TaskCheck(root=root)
    try:
        layout = lay.find_layout(root.resolve())
    except TaskError as exc:
        result.add(root, "", str(exc), "give the folder that holds description.md and the data files")
        return result
    meta = _meta(layout, result)
    result.competition_id = meta.competition_id or layout.default_id
    frames = _read_data(layout.public_dir, meta, result)
    description = _description(layout.public_dir, result)
    sample = _sample(layout, meta, result)
    _columns_and_metric(layout, meta, sample, description, result)
    _answers(layout, meta, result)
    DataChecks(layout.public_dir, meta, frames, sample, result).run()
    return result


def _meta(layout: lay.Layout, result: TaskCheck) -> TaskMeta:
    try:
        return lay.read_meta(layout)
    except TaskError as exc:
        file, _, what = str(exc).partition(": ")  # the loader's message starts with the file
        result.add(file, "", what, "correct the field named above; docs/tasks.md lists every field")
        return TaskMeta()


def _description(public: Path, result: TaskCheck) -> str | None:
    path = public / "description.md"
    if not path.is_file():
        result.add(path, "", "is missing", "add a Kaggle-style description: what to predict, the files, "
                   "the Evaluation section naming the metric, the submission format")
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        result.add(path, "", f"cannot be read as UTF-8 text ({exc})", "re-save it as UTF-8")
        return None


def _read_data(public: Path, meta: TaskMeta, result: TaskCheck) -> dict[str, pd.DataFrame]:
    """Every CSV a script may read, read as a script would; train and test must exist."""
    frames: dict[str, pd.DataFrame] = {}
    for csv in sorted(public.glob("*.csv")):
        try:
            frames[csv.name] = read_csv(csv, nrows=MAX_ROWS)
        except Unreadable as exc:
            result.add(csv, "", exc.what, exc.fix)
    if not lay.holds_data_files(public):
        result.add(public, "", "holds no data files: no train.csv, test.csv or sample_submission.csv, no train/ "
                   "or test/ folder", f"put the competition's data files in {public} (docs/tasks.md lists them)")
        return frames
    for role, named in (("train", meta.train_file), ("test", meta.test_file)):
        name = named or f"{role}.csv"
        if (public / name).is_file():
            continue
        if named is not None:
            result.add(public / name, f"{role}_file", "is named in task.yaml but does not exist",
                       f"put {name} in {public} or correct `{role}_file`")
        elif not _has_other(public, role):
            result.add(public / name, "", f"no {role} data: neither {name} nor a {role}/ folder nor "
                       f"another {role}*.csv", f"add the competition's {role} data to {public}")
    return frames


def _has_other(public: Path, role: str) -> bool:
    """Another layout of the same data: a folder (images) or a differently named CSV."""
    return any(p.is_dir() or p.suffix.lower() == ".csv" for p in public.glob(f"{role}*"))


def _sample(layout: lay.Layout, meta: TaskMeta, result: TaskCheck) -> Path | None:
    try:
        return lay.find_sample_submission(layout.public_dir, meta.sample_submission)
    except TaskError as exc:
        result.add(layout.public_dir, "sample_submission", str(exc), "name the right file in task.yaml")
        return None


def _columns_and_metric(layout: lay.Layout, meta: TaskMeta, sample: Path | None, description: str | None,
                        result: TaskCheck) -> None:
    hint = layout.yaml_hint
    try:
        result.id_column, result.target_columns = resolve_columns(meta, sample, hint)
    except TaskError as exc:
        field_ = "id_column" if "id" in str(exc).split(";")[0] else "target_columns"
        result.add(sample or layout.public_dir / "sample_submission.csv", field_, str(exc),
                   "add the competition's sample_submission.csv, or name the columns in task.yaml")
    if description is None and meta.evaluation_metric is None:
        return
    try:
        metric, direction, _ = resolve_metric(meta, description or "", hint)
    except TaskError as exc:
        # The message already names the known metrics; the fix says where they are explained.
        result.add(hint, "evaluation_metric", str(exc), "docs/tasks.md's metric table gives each one's "
                   "Kaggle spellings and the submission it needs")
        return
    if canonical_metric(metric) is None:
        result.add(hint, "evaluation_metric", f"{metric!r} is not a metric the engine knows, so no script "
                   "score and no grade could be computed for it",
                   f"use the nearest known metric ({known_metrics()}); aliases as Kaggle spells them work too")
    else:
        info = metric_info(metric)
        result.metric_form = info.form
    result.metric, result.direction = metric, direction.value


def _answers(layout: lay.Layout, meta: TaskMeta, result: TaskCheck) -> None:
    if layout.public_dir == layout.root:
        leaking = layout.root / "private"
        if leaking.is_dir() and any(leaking.iterdir()):
            result.add(leaking, "answers", lay.plain_folder_answers_message(layout.root, leaking),
                       f"mkdir {layout.root / 'public'} and move the data files there")
            return
    try:
        found = lay.find_answers(layout, meta.answers)
    except TaskError as exc:
        result.add(layout.private_dir or layout.root, "answers", str(exc),
                   "answers are optional: remove the `answers:` line, or put the file where it is named")
        return
    if found is not None:
        result.answers = str(found)


def start_refusal(spec: str) -> str | None:
    """Why ``engine start --task SPEC`` must refuse (every blocking problem), or None.

    A bundled task name is prepared by the engine itself and needs no check; a folder is checked
    exactly as ``engine tasks check`` checks it.
    """
    path = Path(spec).expanduser()
    if not spec.strip() or not path.is_dir():
        return None
    result = check_task(path)
    if not result.refused:
        return None
    lines = [p.line() for p in result.problems if p.blocking]
    return (f"the task {spec} cannot produce a valid submission, so no run was started:\n  - "
            + "\n  - ".join(lines) + f"\n(`engine tasks check {spec}` shows what the engine understood of it)")
