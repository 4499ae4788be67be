"""The data half of ``check_task``: columns, targets, the submission's ids and columns, images.

It works on the frames ``check_task`` read and fills the same ``TaskCheck``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from engine.tasks.check_files import image_problem
from engine.tasks.check_result import TaskCheck
from engine.tasks.columns import Column, Target, ids_name_images, image_folders, modality, target_kind
from engine.tasks.metric_registry import canonical_metric, metric_info
from engine.tasks.model import TaskMeta, label_str

_EXAMPLES = 3
_IMAGES_OPENED = 2000  # images whose header is read; every named image is checked to exist


def _show(values: list[str]) -> str:
    more = f" and {len(values) - _EXAMPLES} more" if len(values) > _EXAMPLES else ""
    return ", ".join(repr(v) for v in values[:_EXAMPLES]) + more


class DataChecks:
    def __init__(self, public: Path, meta: TaskMeta, frames: dict[str, pd.DataFrame], sample: Path | None,
                 result: TaskCheck) -> None:
        self.public, self.result = public, result
        self.train = frames.get(meta.train_file or "train.csv")
        self.test = frames.get(meta.test_file or "test.csv")
        self.sample_path = sample
        self.sample = frames.get(sample.name) if sample is not None and sample.parent == public else None
        self.test_name = meta.test_file or "test.csv"
        self.folders = image_folders(public)
        # A column's modality reads every value (a text column of 113k rows: about a second under
        # load); the column list and the image check both ask, so each is worked out once.
        self._modalities: dict[tuple[int, str], str] = {}

    def run(self) -> None:
        self._columns()
        self._targets()
        self._sample_ids()
        self._metric_fits()
        self._images()

    # --- what is understood ---------------------------------------------------------------

    def _columns(self) -> None:
        r = self.result
        if self.sample is not None:
            r.submission = (f"{self.sample_path.name if self.sample_path else ''}: {len(self.sample)} rows; "
                            f"columns {list(map(str, self.sample.columns))}")
        seen: list[str] = []
        for frame in (self.train, self.test):
            if frame is None:
                continue
            for name in map(str, frame.columns):
                if name in seen:
                    continue
                seen.append(name)
                r.columns.append(Column(name, self._modality(frame, name), self._role(name)))

    def _role(self, name: str) -> str:
        if name == self.result.id_column:
            return "id"
        return "target" if name in self.result.target_columns else "feature"

    def _modality(self, frame: pd.DataFrame, name: str) -> str:
        if name == self.result.id_column:
            folder = ids_name_images(frame[name], self.folders)
            return f"id (names the images in {folder.relative_to(self.public)}/)" if folder else "id"
        return self._modality_of(frame, name)

    def _modality_of(self, frame: pd.DataFrame, column: str) -> str:
        key = (id(frame), str(column))
        if key not in self._modalities:
            self._modalities[key] = modality(frame[column])
        return self._modalities[key]

    def _targets(self) -> None:
        r = self.result
        if self.train is None or not r.target_columns:
            return
        missing = [t for t in r.target_columns if t not in self.train.columns]
        r.targets = [target_kind(self.train[t]) for t in r.target_columns if t in self.train.columns]
        if not missing:
            return
        owner = self._class_column(missing)
        if owner is not None:
            r.targets += [Target(t, f"probability of class {t!r} of train column {owner!r}") for t in missing]
            return
        file = self.sample_path or self.public
        r.add(file, ", ".join(missing),
              f"submission column(s) {_show(missing)} are neither columns of the train data (targets) "
              "nor classes of a train column (per-class probabilities)",
              "use the sample submission of the competition, or rename the columns as the train "
              "data names its target(s)")

    def _class_column(self, columns: list[str]) -> str | None:
        """The train column whose values include every one of ``columns`` as a class."""
        assert self.train is not None
        wanted = {label_str(c) for c in columns}
        for name in self.train.columns:
            if name == self.result.id_column:
                continue
            values = self.train[name].dropna()
            if values.nunique() <= 1000 and wanted <= {label_str(v) for v in values.unique()}:
                return str(name)
        return None

    # --- the submission's ids -------------------------------------------------------------

    def _sample_ids(self) -> None:
        r, id_col = self.result, self.result.id_column
        if self.sample is None or id_col is None or id_col not in self.sample.columns:
            return
        sample_ids = [label_str(v) for v in self.sample[id_col]]
        test_ids = self._test_ids(id_col)
        if test_ids is None:
            return
        # The sets are built once: built inside the comprehensions they made this check quadratic
        # in the test rows (25k ids took minutes under load before a run's first step).
        sample_set, test_set = set(sample_ids), set(test_ids)
        absent = [i for i in test_ids if i not in sample_set]
        unknown = [i for i in sample_ids if i not in test_set]
        if absent or unknown:
            r.add(self.sample_path or self.public, id_col,
                  f"the sample submission's ids are not the test ids: {len(unknown)} id(s) not in the "
                  f"test data (e.g. {_show(unknown)}), {len(absent)} test id(s) missing (e.g. {_show(absent)})",
                  "use the competition's sample_submission.csv: one row per test id")

    def _test_ids(self, id_col: str) -> list[str] | None:
        if self.test is not None:
            # Kaggle's files differ in case at times (`Id` in the sample, `id` in test.csv).
            same = [c for c in self.test.columns if str(c).lower() == id_col.lower()]
            if same:
                return [label_str(v) for v in self.test[same[0]]]
        if self.test is not None:
            self.result.add(self.public / self.test_name, id_col,
                            f"has no id column {id_col!r} (the sample submission's first column)",
                            "set `id_column:` in task.yaml to the column both files share")
            return None
        folder = self.public / "test"
        if folder.is_dir() and self.sample is not None:
            stems = sorted({f.stem for f in folder.iterdir() if f.is_file()})
            return stems or None
        return None

    # --- the metric against the targets -----------------------------------------------------

    def _metric_fits(self) -> None:
        r = self.result
        if r.metric is None or canonical_metric(r.metric) is None or not r.targets:
            return
        info = metric_info(r.metric)
        text_labels = [t for t in r.targets if t.kind == "class label" and not _numeric(t.classes)]
        if info.kind == "value" and text_labels:
            t = text_labels[0]
            r.add(r.root / "task.yaml", "evaluation_metric",
                  f"{info.name} needs numbers, but target {t.name!r} holds class labels ({_show(list(t.classes))})",
                  "name the competition's classification metric, e.g. `evaluation_metric: accuracy`, "
                  "`f1_macro` or `logloss`")
        numbers = [t for t in r.targets if t.kind == "number"]
        if info.kind in ("label", "ranking") and numbers:
            r.add(r.root / "task.yaml", "evaluation_metric",
                  f"{info.name} compares class labels, but target {numbers[0].name!r} holds continuous numbers",
                  "name the competition's regression metric, e.g. `evaluation_metric: rmse`", blocking=False)

    # --- images -------------------------------------------------------------------------------

    def _images(self) -> None:
        for frame, name in ((self.train, "train"), (self.test, "test")):
            if frame is None:
                continue
            for column in frame.columns:
                if self._modality_of(frame, column) == "image":
                    self._named_images(frame[column], name)
            if self.result.id_column in frame.columns:
                self._images_by_id(frame[self.result.id_column], name)

    def _images_by_id(self, ids: pd.Series, role: str) -> None:
        """Ids that name images (``train/<id>.png``): every id of the split needs its file."""
        folders = [f for f in self.folders if f.name == role] or self.folders
        folder = ids_name_images(ids, folders)
        if folder is None:
            return
        stems = {f.stem for f in folder.iterdir() if f.is_file()}
        missing = [str(i) for i in ids.dropna() if str(i) not in stems]
        if missing:
            self.result.add(folder, str(ids.name), f"{len(missing)} {role} id(s) have no image in "
                            f"{folder.relative_to(self.public)}/ (e.g. {_show(missing)})",
                            "add the images named by these ids, or remove their rows")

    def _named_images(self, series: pd.Series, role: str) -> None:
        names = [str(v) for v in series.dropna()]
        bases = [self.public, self.public / role, *self.folders]
        missing, unreadable = [], []
        for index, name in enumerate(names):
            path = next((b / name for b in bases if (b / name).is_file()), None)
            if path is None:
                missing.append(name)
            elif index < _IMAGES_OPENED and (why := image_problem(path)):
                unreadable.append(f"{path.relative_to(self.public)} {why}")
        column = str(series.name)
        if missing:
            self.result.add(self.public, column, f"{len(missing)} image(s) named in {role} column {column!r} "
                            f"do not exist (e.g. {_show(missing)})",
                            f"put them under {self.public} (paths are relative to it), or remove their rows")
        if unreadable:
            self.result.add(self.public, column, f"{len(unreadable)} image(s) cannot be read: {_show(unreadable)}",
                            "replace them with the competition's files")


def _numeric(labels: tuple[str, ...]) -> bool:
    try:
        [float(v) for v in labels]
    except ValueError:
        return False
    return True
