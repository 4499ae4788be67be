"""The held-back slice of a run's training rows and the final choice made on it (docs/final-choice-slice.md).

A search that picks among many candidates on the same validation folds overfits them: the best
validation score is the luckiest as much as the best model. So at the start of a run the engine
may hold back a slice of the training rows that no search step is scored on: the search's
scripts read a view of the data in which those rows have moved from the training file to the
test file (without their answers), every submission a script writes predicts them too, and the
harness grades that part (``EvaluationCompleted.hidden_score``) and cuts it out of the file. The
final solution is then chosen among the search's best candidates on that grade.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from events.base import Event, EventKind, register


@register
class HiddenSliceDrawn(Event):
    """What the engine held back when the run was created, or why it held back nothing
    (``rows`` 0 and ``reason``). Bookkeeping: a fact about the run's files, read by the
    evaluation executor (which data a script sees), neither fed to the handlers nor compared on
    replay. ``view_dir``: the data the search's scripts read as ``./input``; ``answers``: the
    held-back rows' answers, never visible to a script; ``ids_digest``: sha256 of the held-back
    ids, so an audit can tell two runs' slices apart without the ids."""

    type_name: ClassVar[str] = "HiddenSliceDrawn"
    kind: ClassVar[EventKind] = "bookkeeping"

    rows: int = Field(ge=0)
    of_rows: int = Field(default=0, ge=0)
    view_dir: str = ""
    answers: str = ""
    ids_digest: str = ""
    reason: str = ""


class Finalist(BaseModel):
    """One candidate for the final solution: its validation score (what the search chose it on)
    and its grade on the held-back rows (None: its submission did not cover them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    solution_id: str
    origin: str            # where in the search it stands, e.g. "phase1", "phase2/path-0", "phase3"
    score: float | None
    hidden_score: float | None


@register
class FinalChoiceMade(Event):
    """The final solution chosen among the search's best candidates on the held-back rows:
    the candidates with both grades, and the one taken. Recorded only when at least one
    candidate was graded on the slice; otherwise the validation rule stands alone and nothing
    is recorded, as in every run before the slice existed."""

    type_name: ClassVar[str] = "FinalChoiceMade"

    finalists: tuple[Finalist, ...]
    chosen: str            # the chosen finalist's solution_id
    validation_best: str   # the finalist the validation rule alone would have taken
    reason: str
