"""The submission's columns for several targets (the file around them: ``submission_file.py``):
per target its values
(regression), its positive class's probability (a two-class target under a probability metric:
ROC AUC, log loss, column-wise ROC AUC) or its predicted class; columns in the sample's order.
"""

from engine.agents.builtin.script_blocks.names import (
    ID_COL,
    METRIC,
    SUB_COLS,
    TARGET_CLASSES,
    TARGET_COLUMNS,
    TARGETS,
    TASK_KIND,
    np,
    submission,
    test_blend,
)

# --- script ---
predicted = np.asarray(test_blend, dtype=float)
for target, classes, cols in zip(TARGETS, TARGET_CLASSES, TARGET_COLUMNS):
    part = predicted[:, cols]
    if TASK_KIND == "regression":
        submission[target] = part
    elif METRIC in ("roc_auc", "logloss", "mean_columnwise_roc_auc") and len(classes) == 2:
        submission[target] = part[:, 1] / part.sum(axis=1)
    else:
        submission[target] = classes[part.argmax(axis=1)]
submission = submission[[ID_COL] + SUB_COLS]
