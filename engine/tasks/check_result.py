"""What ``engine tasks check`` found: the understood task and its problems (``check.py`` fills it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.tasks.columns import Column, Target


@dataclass(frozen=True)
class Problem:
    file: str  # the file at fault (or the folder)
    field: str  # the task.yaml field or the column at fault; "" when the whole file is
    what: str
    fix: str
    blocking: bool = True  # False: a warning; the run can still produce a valid submission

    def line(self) -> str:
        where = f"{self.file} [{self.field}]" if self.field else self.file
        return f"{where}: {self.what} — fix: {self.fix}"


@dataclass
class TaskCheck:
    """What was understood (filled as far as the folder allows) and the problems found."""

    root: Path
    competition_id: str = ""
    id_column: str | None = None
    targets: list[Target] = field(default_factory=list)
    target_columns: tuple[str, ...] = ()
    columns: list[Column] = field(default_factory=list)
    metric: str | None = None
    direction: str | None = None
    metric_form: str = ""
    submission: str = ""
    answers: str = ("none (optional: without them runs are scored on validation only; `engine grade` needs them "
                    "in private/answers.csv beside a public/ folder of the data, docs/tasks.md)")
    problems: list[Problem] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return any(p.blocking for p in self.problems)

    def add(self, file: Path | str, field_: str, what: str, fix: str, *, blocking: bool = True) -> None:
        self.problems.append(Problem(str(file), field_, what, fix, blocking))
