"""Script templates: the validation score's cross-validation, and its folds fitted to the window.

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

from engine.agents.builtin.render_bag import reads_deadline
from engine.agents.builtin.render_final import score_rows_code
from handlers.script_lines import SCORED_ROWS_LABEL

# At least this many folds are fit: one fold scores a fifth of the rows, too few to choose by.
MIN_CV_FOLDS = 2
# The next fold takes as long as the last one; the refit on every row as long as a fold scaled to
# its rows (each fold fits on (k-1)/k of them). This margin covers a fold slower than the last
# (a busier machine, a member whose stopping point varies).
_WINDOW_FOLDS = [
    f"MIN_CV_FOLDS = {MIN_CV_FOLDS}",
    "FOLD_MARGIN = 1.3",
    "CV_FINISH_S = 2.0  # the blend, the test predictions and the submission after the refit",
    "",
    "",
    "def room_for_another_fold(fold_s, fold_rows):",
    '    """Whether one more fold and the refit on every row after it end before the deadline."""',
    "    refit_s = fold_s * len(X) / max(fold_rows, 1)",
    "    return time.time() + FOLD_MARGIN * (fold_s + refit_s) + CV_FINISH_S < DEADLINE",
    "",
    "",
]

_FOLDS = [
    'if CV_FOLDS and TASK_KIND == "classification" and np.bincount(y_cv).min() >= CV_FOLDS:',
    "    cv_splits = list(StratifiedKFold(CV_FOLDS, shuffle=True, random_state=SEED).split(X_cv, y_cv))",
    "elif CV_FOLDS:",
    "    cv_splits = list(KFold(CV_FOLDS, shuffle=True, random_state=SEED).split(X_cv))",
    "else:",
    "    cv_splits = []",
    "y_score = y_cv if cv_splits else y_val",
    "val_preds = [None] * len(members)",
    "folds_fit = 0",
    "for fold_tr, fold_va in cv_splits:",
    "    fold_started = time.monotonic()",
    "    for i, (name, model) in enumerate(members):",
    "        fold_model = clone(model).fit(X_cv.iloc[fold_tr], y_cv[fold_tr])",
    "        part = predict_values(fold_model, X_cv.iloc[fold_va])",
    "        val_preds[i] = np.zeros((len(X_cv),) + part.shape[1:]) if val_preds[i] is None else val_preds[i]",
    "        val_preds[i][fold_va] = part",
    "    folds_fit += 1",
]

# The rows of the folds fit become the scored rows, and the folds are renumbered onto them: the
# learned blends (weights, stacking) and the calibration read `cv_splits`, `val_preds` and
# `y_score` only, so they cross-fit on those rows as they would on all.
_CUT = [
    "    if (folds_fit >= MIN_CV_FOLDS and folds_fit < len(cv_splits)",
    "            and not room_for_another_fold(time.monotonic() - fold_started, len(fold_tr))):",
    "        break",
    "if 0 < folds_fit < len(cv_splits):",
    "    scored = np.sort(np.concatenate([va for _, va in cv_splits[:folds_fit]]))",
    "    print(f\"Cross-validation cut to {folds_fit} of {len(cv_splits)} folds by the engine's deadline: \"",
    "          f\"the score is on their {len(scored)} of {len(X_cv)} rows\")",
    f"    print(f\"{SCORED_ROWS_LABEL} {{len(scored)}} of {{len(X_cv)}}\")",
    "    position = np.full(len(X_cv), -1)",
    "    position[scored] = np.arange(len(scored))",
    "    cv_splits = [(np.flatnonzero(~np.isin(np.arange(len(scored)), position[va])), position[va])",
    "                 for _, va in cv_splits[:folds_fit]]",
    "    val_preds = [p[scored] for p in val_preds]",
    "    y_score = y_score[scored]",
]

_AFTER = [
    "for i, (name, model) in enumerate(members):",
    '    if not cv_splits or FINAL_FIT != "full":',
    "        # Needed for the hold-out score or the hold-out submission; a full refit follows otherwise.",
    "        model.fit(X_tr, y_tr)",
    "    if not cv_splits:",
    "        val_preds[i] = predict_values(model, X_val)",
]


def cross_validation_code(train: dict[str, Any], *, folds: int, report_members: bool) -> list[str]:
    """The lines from the cross-validation's start (``CV_STARTED``) to every member's validation
    predictions (``val_preds``, scored against ``y_score``); ``folds`` is the number the data
    allows (``CV_FOLDS``, none past 20,000 rows)."""
    window = bool(train.get("window_folds"))
    deadline = [] if not window or reads_deadline(train) else [
        'DEADLINE = float(os.environ.get("ENGINE_EVAL_DEADLINE", "inf"))', "", ""]
    return [
        *deadline,
        *(_WINDOW_FOLDS if window else []),
        "# The validation score comes from out-of-fold predictions over all training rows when the",
        "# data is small enough: a single small hold-out is too noisy to choose between solutions.",
        "CV_STARTED = time.monotonic()",
        "X_cv = pd.concat([X_tr, X_val])",
        "y_cv = np.concatenate([y_tr, y_val])",
        *score_rows_code(train.get("score_rows")),
        f"CV_FOLDS = {folds} if len(X_cv) <= 20000 else 0",
        *_FOLDS,
        *(_CUT if window else []),
        *_AFTER,
        *(['    print(f"Member {name}: validation {METRIC} = {score_predictions(y_score, val_preds[i]):.6f}")']
          if report_members else []),
    ]
