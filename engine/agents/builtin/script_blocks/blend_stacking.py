"""Blend with a meta-model learned on out-of-fold predictions (never on rows a member trained on)."""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import (
    CLASSES,
    META_C,
    SEED,
    TASK_KIND,
    KFold,
    LogisticRegression,
    PerTarget,
    Ridge,
    StratifiedKFold,
    X_tr,
    clone,
    cross_val_predict,
    cv_splits,
    in_target_range,
    members,
    np,
    y_tr,
)


# --- script ---
def stack_features(preds):
    return np.hstack([np.asarray(p).reshape(len(p), -1) for p in preds])


def fit_blender(val_preds, y_true):
    """Meta-model on out-of-fold predictions: the cross-validated ones given (their rows never
    trained the member that predicted them), else, on a hold-out split, out-of-fold predictions
    of the training split (never on hold-out rows)."""
    meta = LogisticRegression(C=META_C, max_iter=2000) if TASK_KIND == "classification" else Ridge(alpha=1.0 / META_C)
    # when multi_target:
    # Several classification targets: a meta-model per target, on every member's columns.
    meta = PerTarget(meta) if TASK_KIND == "classification" else meta
    # end multi_target
    if cv_splits:
        return meta.fit(stack_features(val_preds), y_true)
    if TASK_KIND == "classification":
        folds = StratifiedKFold(n_splits=3, shuffle=True, random_state=SEED)
        oof = [cross_val_predict(clone(m), X_tr, y_tr, cv=folds, method="predict_proba") for _, m in members]
    else:
        folds = KFold(n_splits=3, shuffle=True, random_state=SEED)
        oof = [in_target_range(cross_val_predict(clone(m), X_tr, y_tr, cv=folds)) for _, m in members]
    return meta.fit(stack_features(oof), y_tr)


def blend(preds, meta):
    if TASK_KIND == "classification":
        full = np.zeros((len(preds[0]), len(CLASSES)))
        full[:, meta.classes_] = meta.predict_proba(stack_features(preds))
        return full
    return in_target_range(meta.predict(stack_features(preds)))
