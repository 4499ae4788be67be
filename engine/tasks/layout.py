"""Where a task's pieces live on disk: public/private directories, metadata files, data files.

Three layouts are accepted, checked in this order:

1. an MLE-bench competition directory: ``<dir>/prepared/public`` and ``<dir>/prepared/private``;
2. a directory holding ``public/`` (and usually ``private/``) directly — this also covers being
   pointed at the ``prepared`` directory itself;
3. a plain directory: description.md and data files, no private part.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from engine.tasks.model import TaskError, TaskMeta

META_JSON = "task.json"
META_YAML = ("task.yaml", "task.yml")
_IMAGE_EXT = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp"}
_AUDIO_EXT = {".wav", ".mp3", ".flac", ".ogg", ".aif", ".aiff"}


@dataclass(frozen=True)
class Layout:
    root: Path  # the directory the user named, or the competition dir above ``prepared``
    public_dir: Path
    private_dir: Path | None
    meta_dirs: tuple[Path, ...]  # where task.json / task.yaml may live, lowest priority first
    default_id: str

    @property
    def yaml_hint(self) -> Path:
        """Where a user should put task.yaml to fix a metadata problem."""
        return self.meta_dirs[-1] / META_YAML[0]


def find_layout(path: Path) -> Layout:
    if not path.exists():
        raise TaskError(f"task directory {path} does not exist")
    if not path.is_dir():
        raise TaskError(f"task path {path} is not a directory")
    prepared = path / "prepared"
    if (prepared / "public").is_dir():
        return _split_layout(path, prepared, (prepared, path), path.name)
    if (path / "public").is_dir():
        is_prepared = path.name == "prepared"
        meta_dirs = (path.parent, path) if is_prepared else (path,)
        return _split_layout(path, path, meta_dirs, path.parent.name if is_prepared else path.name)
    return Layout(root=path, public_dir=path, private_dir=None, meta_dirs=(path,),
                  default_id=path.name)


def _split_layout(root: Path, base: Path, meta_dirs: tuple[Path, ...], default_id: str) -> Layout:
    private = base / "private"
    return Layout(
        root=root,
        public_dir=base / "public",
        private_dir=private if private.is_dir() else None,
        meta_dirs=meta_dirs,
        default_id=default_id,
    )


def _parse_meta(path: Path) -> TaskMeta:
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:  # JSONDecodeError is a ValueError
        raise TaskError(f"{path}: cannot be read as metadata: {exc}") from exc
    if raw is None:
        return TaskMeta()
    if not isinstance(raw, dict):
        raise TaskError(f"{path}: must be a mapping of field: value")
    try:
        return TaskMeta.model_validate(raw)
    except ValidationError as exc:
        raise TaskError(_explain(path, exc)) from exc


def _explain(path: Path, exc: ValidationError) -> str:
    """Turn pydantic's report into one line per bad field, naming the allowed fields."""
    problems = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or "(file)"
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown field `{field}`")
        else:
            problems.append(f"`{field}`: {error['msg']}")
    known = ", ".join(f for f in TaskMeta.model_fields if f not in ("files", "schema_version"))
    return f"{path}: " + "; ".join(problems) + f" (known fields: {known})"


def read_meta(layout: Layout) -> TaskMeta:
    """task.json files first, then task.yaml files, so a human's yaml overrides generated json."""
    meta = TaskMeta()
    candidates = [d / META_JSON for d in layout.meta_dirs]
    candidates += [d / name for d in layout.meta_dirs for name in META_YAML]
    for candidate in candidates:
        if candidate.is_file():
            meta = meta.overlay(_parse_meta(candidate))
    return meta


def find_sample_submission(public: Path, named: str | None) -> Path | None:
    if named:
        path = public / named
        if not path.is_file():
            raise TaskError(f"sample_submission {named!r} not found in {public}")
        return path
    found = sorted(
        p for p in public.glob("*.csv")
        if "sample" in p.name.lower() and "submission" in p.name.lower()
    )
    if len(found) > 1:
        exact = [p for p in found if p.name == "sample_submission.csv"]
        if exact:
            return exact[0]
        names = ", ".join(p.name for p in found)
        raise TaskError(
            f"several sample submissions in {public} ({names}); "
            "add `sample_submission: <file name>` to task.yaml"
        )
    return found[0] if found else None


def find_answers(layout: Layout, named: str | None) -> Path | None:
    if named:
        bases = [layout.private_dir] if layout.private_dir else []
        bases.append(layout.root)
        for base in bases:
            if (base / named).is_file():
                return _not_public((base / named).resolve(), layout)
        raise TaskError(f"answers file {named!r} not found under {[str(b) for b in bases]}")
    if layout.private_dir is None:
        return None
    if (layout.private_dir / "answers.csv").is_file():
        return layout.private_dir / "answers.csv"
    csvs = sorted(layout.private_dir.glob("*.csv"))
    return csvs[0] if len(csvs) == 1 else None


def _not_public(path: Path, layout: Layout) -> Path:
    # Everything under public/ is copied to ./input for scripts: answers there would leak.
    if not path.is_relative_to(layout.public_dir.resolve()):
        return path
    if layout.public_dir == layout.root:
        raise TaskError(plain_folder_answers_message(layout.root, path))
    raise TaskError(
        f"answers file {path} lies inside the public data directory {layout.public_dir}, "
        f"which agents and scripts can read; move it to {layout.root / 'private'}"
    )


def holds_data_files(public: Path) -> bool:
    """Whether the folder holds anything a script could learn from: a file besides the
    description and the metadata (``check`` refuses a folder without; ``init`` has nothing to infer)."""
    not_data = {"description.md", META_JSON, *META_YAML}
    return any(p.is_file() and p.name not in not_data for p in public.rglob("*"))


def plain_folder_answers_message(root: Path, answers: Path) -> str:
    """A plain task folder (no public/) is the scripts' ./input as a whole: answers anywhere in it
    leak, private/ included. The fix is the split layout."""
    return (
        f"the answers at {answers} are inside the plain task folder {root}, and every file of a plain "
        f"task folder is copied to the scripts' ./input; move the data files (description.md, "
        f"train.csv, test.csv, sample_submission.csv, images) into {root / 'public'} and keep the "
        f"answers in {root / 'private'}"
    )


def optional_file(public: Path, named: str | None, default: str) -> Path | None:
    if named:
        if not (public / named).is_file():
            raise TaskError(f"{named!r} not found in {public}")
        return public / named
    return public / default if (public / default).is_file() else None


def infer_modality(public: Path) -> str:
    """Images or audio anywhere under public/ decide the modality; otherwise tabular."""
    suffixes = {p.suffix.lower() for p in public.rglob("*") if p.is_file()}
    if suffixes & _IMAGE_EXT:
        return "image"
    if suffixes & _AUDIO_EXT:
        return "audio"
    return "tabular"


def sample_submission_for(public: Path) -> Path | None:
    """The sample submission of the task whose public data is ``public`` (as task.yaml names it,
    else found by name): what a run's final submission is checked against. None when there is none
    or it cannot be told; the task check at ``engine start`` refuses such a task beforehand."""
    public = public.resolve()
    for base in (public, public.parent, public.parent.parent):
        try:
            layout = find_layout(base)
            if layout.public_dir.resolve() == public:
                return find_sample_submission(public, read_meta(layout).sample_submission)
        except TaskError:
            continue
    return None
