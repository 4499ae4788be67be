"""The validation score's cross-validation: every member's out-of-fold predictions.

The score comes from out-of-fold predictions over all training rows when the data is small enough
(``__FOLDS__`` folds up to 20,000 rows; a single small hold-out is too noisy to choose between
solutions); above that, from the hold-out split. The folds are fit one after another, every member
on a fold before the next fold, so a script whose window cannot hold them all can stop after a
few and still score every member on the same rows.

*Folds fitted to the window* (TRAINING_TRICKS gene ``window_folds``, which Phase 3's ensembler
sets): such a script stops after MIN_CV_FOLDS or more folds when the next one and the refit after
it would not end before the engine's deadline, and scores on the rows of the folds it fit. Each of
those rows is still predicted by a model that never saw it, trained on as many rows as before, so
the score estimates the same thing on fewer rows: noisier, not biased. The next fold takes as long
as the last one, the refit on every row as long as a fold scaled to its rows; FOLD_MARGIN covers a
fold slower than the last. The rows of the folds fit become the scored rows, renumbered, so the
learned blends and the calibration cross-fit on them as they would on all.
"""

# The loops unpack each member's (name, model) as the scripts have always written them:
# ruff: noqa: B007
# mypy: allow-untyped-defs
# The members' predictions start as None and become arrays fold by fold:
# mypy: disable-error-code="assignment, index"

from engine.agents.builtin.script_blocks.names import (
    __FOLDS__,
    DEADLINE,
    FINAL_FIT,
    METRIC,
    SEED,
    TASK_KIND,
    KFold,
    StratifiedKFold,
    X,
    X_tr,
    X_val,
    clone,
    members,
    np,
    pd,
    predict_values,
    score_predictions,
    time,
    y_tr,
    y_val,
)

# --- script ---
# when deadline:
# insert deadline


# end deadline
# when window_folds:
MIN_CV_FOLDS = 2
FOLD_MARGIN = 1.3
CV_FINISH_S = 2.0  # the blend, the test predictions and the submission after the refit


def room_for_another_fold(fold_s, fold_rows):
    """Whether one more fold and the refit on every row after it end before the deadline."""
    refit_s = fold_s * len(X) / max(fold_rows, 1)
    return time.time() + FOLD_MARGIN * (fold_s + refit_s) + CV_FINISH_S < DEADLINE


# end window_folds
# The validation score comes from out-of-fold predictions over all training rows when the
# data is small enough: a single small hold-out is too noisy to choose between solutions.
CV_STARTED = time.monotonic()
X_cv = pd.concat([X_tr, X_val])
y_cv = np.concatenate([y_tr, y_val])
# insert score_rows
CV_FOLDS = __FOLDS__ if len(X_cv) <= 20000 else 0
# when not multi_target:
if CV_FOLDS and TASK_KIND == "classification" and np.bincount(y_cv).min() >= CV_FOLDS:
    cv_splits = list(StratifiedKFold(CV_FOLDS, shuffle=True, random_state=SEED).split(X_cv, y_cv))
elif CV_FOLDS:
    cv_splits = list(KFold(CV_FOLDS, shuffle=True, random_state=SEED).split(X_cv))
else:
    cv_splits = []
# end multi_target
# when multi_target:
# Several targets: the folds are stratified on none of them.
cv_splits = list(KFold(CV_FOLDS, shuffle=True, random_state=SEED).split(X_cv)) if CV_FOLDS else []
# end multi_target
y_score = y_cv if cv_splits else y_val
val_preds = [None] * len(members)
folds_fit = 0
for fold_tr, fold_va in cv_splits:
    fold_started = time.monotonic()
    for i, (name, model) in enumerate(members):
        fold_model = clone(model).fit(X_cv.iloc[fold_tr], y_cv[fold_tr])
        part = predict_values(fold_model, X_cv.iloc[fold_va])
        val_preds[i] = np.zeros((len(X_cv),) + part.shape[1:]) if val_preds[i] is None else val_preds[i]
        val_preds[i][fold_va] = part
    folds_fit += 1
    # when window_folds:
    if (folds_fit >= MIN_CV_FOLDS and folds_fit < len(cv_splits)
            and not room_for_another_fold(time.monotonic() - fold_started, len(fold_tr))):
        break
    # end window_folds
# when window_folds:
if 0 < folds_fit < len(cv_splits):
    scored = np.sort(np.concatenate([va for _, va in cv_splits[:folds_fit]]))
    print(f"Cross-validation cut to {folds_fit} of {len(cv_splits)} folds by the engine's deadline: "
          f"the score is on their {len(scored)} of {len(X_cv)} rows")
    print(f"__SCORED_ROWS_LABEL__ {len(scored)} of {len(X_cv)}")
    position = np.full(len(X_cv), -1)
    position[scored] = np.arange(len(scored))
    cv_splits = [(np.flatnonzero(~np.isin(np.arange(len(scored)), position[va])), position[va])
                 for _, va in cv_splits[:folds_fit]]
    val_preds = [p[scored] for p in val_preds]
    y_score = y_score[scored]
# end window_folds
for i, (name, model) in enumerate(members):
    if not cv_splits or FINAL_FIT != "full":
        # Needed for the hold-out score or the hold-out submission; a full refit follows otherwise.
        model.fit(X_tr, y_tr)
    if not cv_splits:
        val_preds[i] = predict_values(model, X_val)
    # when report_members:
    print(f"Member {name}: validation {METRIC} = {score_predictions(y_score, val_preds[i]):.6f}")
    # end report_members
