"""The validation score's cross-validation, and its folds fitted to the window (``script_blocks/cv.py``).

The score comes from out-of-fold predictions over all training rows when the data is small
enough (a single small hold-out is too noisy to choose between solutions). The folds are fit one
after another, every member on a fold before the next fold, so a script whose window cannot hold
them all can stop after a few and still score every member on the same rows.

*Folds fitted to the window* (train gene ``window_folds``, which Phase 3's ensembler sets): an
ensemble script runs every member's cross-validation again, and on a short limit its round did
not fit Phase 3's window (solar-module-technology and town-country at 120 s: the round was killed
whole at the deadline, and the run kept a single path's best). Such a script stops after
MIN_CV_FOLDS or more folds when the next one and the refit after it would not end before the
engine's deadline (ENGINE_EVAL_DEADLINE), and scores on the rows of the folds it fit. Each of those
rows is still predicted by a model that never saw it, trained on as many rows as before, so the
score estimates the same thing on fewer rows: noisier, not biased. A window that holds every fold
gets the same fits, score and submission as without the gene.
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.blocks import block, fill, insert, regions, set_constants
from engine.agents.builtin.render_bag import reads_deadline
from engine.agents.builtin.render_final import score_rows_code
from handlers.script_lines import SCORED_ROWS_LABEL

# At least this many folds are fit: one fold scores a fifth of the rows, too few to choose by.
MIN_CV_FOLDS = 2


def cross_validation_code(train: dict[str, Any], *, folds: int, report_members: bool,
                          multi_target: bool = False) -> str:
    """The code from the cross-validation's start (``CV_STARTED``) to every member's validation
    predictions (``val_preds``, scored against ``y_score``); ``folds`` is the number the data
    allows (``CV_FOLDS``, none past 20,000 rows); ``multi_target``: several targets, whose folds
    are drawn without stratifying."""
    window = bool(train.get("window_folds"))
    code = regions(block("cv"), deadline=window and not reads_deadline(train), window_folds=window,
                   report_members=report_members, multi_target=multi_target)
    if window:
        code = set_constants(code, MIN_CV_FOLDS=str(MIN_CV_FOLDS))
    code = insert(code, deadline=block("deadline"), score_rows=score_rows_code(train.get("score_rows")))
    return fill(code, FOLDS=str(folds), SCORED_ROWS_LABEL=SCORED_ROWS_LABEL)
