"""The run's held-back slice on the engine's side: drawn when the run is created, read back by the
evaluation executor (events/hidden.py, docs/final-choice-slice.md)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from engine.harness.held_back import HeldBack
from events.base import load_event
from events.config import PipelineConfig
from events.hidden import HiddenSliceDrawn
from store.base import early_event

if TYPE_CHECKING:
    from engine.tasks.model import LoadedTask

log = structlog.get_logger(__name__)

SLICE_DIR = "hidden-slice"


def draw_for_run(config: PipelineConfig, task: LoadedTask | None, run_dir: Path, seed: int) -> HiddenSliceDrawn:
    """Hold back the run's slice under ``<run_dir>/hidden-slice`` (``engine.grading.hidden_slice``),
    or say why none is held back: the setting is off, or the task's data does not allow one.
    ``task`` is needed only when the setting is on."""
    if not config.hidden_slice or task is None:
        return HiddenSliceDrawn(rows=0, reason="hidden_slice is off for this run (`--set hidden_slice=true` turns "
                                               "it on): the final solution is chosen on validation alone")
    from engine.grading.hidden_slice import NoSlice, draw_hidden_slice

    dest = run_dir / SLICE_DIR
    if dest.exists():  # left by a start that died before its first append (create_run claimed the id)
        shutil.rmtree(dest)
    drawn = draw_hidden_slice(task, seed, dest)
    if isinstance(drawn, NoSlice):
        log.info("run.hidden_slice.none", reason=drawn.reason)
        return HiddenSliceDrawn(rows=0, reason=drawn.reason)
    log.info("run.hidden_slice.drawn", rows=drawn.rows, of_rows=drawn.of_rows)
    return HiddenSliceDrawn(rows=drawn.rows, of_rows=drawn.of_rows, view_dir=str(drawn.view_dir.resolve()),
                            answers=str(drawn.answers.resolve()), ids_digest=drawn.ids_digest)


def recorded_slice(store: Any, run_id: str) -> HiddenSliceDrawn | None:
    """The run's ``HiddenSliceDrawn`` (None: a run created before slices existed)."""
    env = early_event(store, run_id, HiddenSliceDrawn.type_name)
    if env is None:
        return None
    event = load_event(env.type, env.version, env.payload)
    assert isinstance(event, HiddenSliceDrawn)
    return event


def held_back_for(store: Any, run_id: str, task: Callable[[], LoadedTask]) -> HeldBack | None:
    """What the evaluation executor needs of the slice the run held back at its start, with the
    task its answers are graded by (``task``, loaded only when a slice was held back); None when
    nothing was."""
    drawn = recorded_slice(store, run_id)
    if drawn is None or drawn.rows == 0:
        return None
    from engine.grading.hidden_slice import HiddenSlice

    return HeldBack(slice=HiddenSlice(view_dir=Path(drawn.view_dir), answers=Path(drawn.answers), rows=drawn.rows,
                                      of_rows=drawn.of_rows, ids_digest=drawn.ids_digest), task=task())


__all__ = ["SLICE_DIR", "draw_for_run", "held_back_for", "recorded_slice"]
