"""The submission's columns: the test predictions in the sample submission's shape (the file
around them, its ids and where it is written: ``submission_file.py``).

A regression writes its values; a sample asking for one column per class gets each class's
probability (matched by name, else by position); a two-class AUC or log-loss task the positive
class's probability; MAP@k (``ranking``) the k likeliest classes, best first, separated by spaces;
any other classification the predicted class.
"""

from engine.agents.builtin.script_blocks.names import (
    CLASSES,
    METRIC,
    PER_CLASS_COLUMNS,
    SUB_COLS,
    TASK_KIND,
    np,
    submission,
    test_blend,
)

# --- script ---
if TASK_KIND == "regression":
    submission[SUB_COLS[0]] = test_blend
elif PER_CLASS_COLUMNS:
    proba = test_blend / test_blend.sum(axis=1, keepdims=True)
    names = [str(c) for c in CLASSES]
    for j, col in enumerate(SUB_COLS):
        submission[col] = proba[:, names.index(str(col))] if str(col) in names else proba[:, j]
elif METRIC in ("roc_auc", "logloss") and len(CLASSES) == 2:
    submission[SUB_COLS[0]] = test_blend[:, 1] / test_blend.sum(axis=1)
# when ranking:
elif METRIC.startswith("map@"):
    ranked = np.argsort(-test_blend, axis=1, kind="stable")[:, :int(METRIC.split("@")[1])]
    submission[SUB_COLS[0]] = [" ".join(str(c) for c in CLASSES[row]) for row in ranked]
# end ranking
else:
    submission[SUB_COLS[0]] = CLASSES[test_blend.argmax(axis=1)]
