"""The validation score: the members' out-of-fold predictions blended and scored.

A blend that learns (weights, a meta-model) scored on the predictions it learned from reports more
than it will deliver: greedy weights can never score below their best member there, and the run
keeps the best score it sees, so that bias would decide. On cross-validated predictions each
fold's rows are therefore blended by a blender learned on the other folds (``learned``), so the
score compares fairly with a single model's; the blender for the test predictions still learns
from all of them. A weighted blend prints its weights (``weighted``).
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import (
    METRIC,
    blend,
    cv_splits,
    fit_blender,
    members,
    np,
    score_predictions,
    val_preds,
    y_score,
)

# --- script ---
blender = fit_blender(val_preds, y_score) if len(members) > 1 else None
# when weighted:
if blender is not None:
    print("Blend weights:", {n: round(float(w), 3) for (n, _), w in zip(members, blender)})
# end weighted
val_blend = blend(val_preds, blender) if len(members) > 1 else val_preds[0]
# when learned:
if cv_splits and len(members) > 1:
    crossfit = np.zeros_like(np.asarray(val_blend, dtype=float))
    for fold_tr, fold_va in cv_splits:
        fold_blender = fit_blender([np.asarray(p)[fold_tr] for p in val_preds], y_score[fold_tr])
        crossfit[fold_va] = blend([np.asarray(p)[fold_va] for p in val_preds], fold_blender)
    print(f"Blend learned and scored on the same rows: {METRIC} = {score_predictions(y_score, val_blend):.6f}")
    val_blend = crossfit
# end learned
val_score = float(score_predictions(y_score, val_blend))
