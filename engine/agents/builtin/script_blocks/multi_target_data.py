"""The DATA gene, several targets: ``y`` holds one column per target (``TARGETS``, the task's
target columns), each classification target coded on its own (``TARGET_CLASSES``), and the split
is drawn again on it.

A classification member predicts every target's class probabilities side by side, so members,
blends and the validation keep one prediction shape: ``CLASSES`` lists every target's classes in
that order and ``TARGET_COLUMNS`` (``multi_target_score.py``) where each target's columns are.
Rows missing any target are left out of training.
"""

# mypy: allow-untyped-defs
# Scripts carry no annotations: TARGETS is written by the renderer, a regression target has no classes.
# mypy: disable-error-code="var-annotated, list-item"

from engine.agents.builtin.script_blocks.names import (
    SEED,
    TARGET_COLUMNS,
    TASK_KIND,
    VAL_SIZE,
    add_features,
    np,
    pd,
    train_df,
    train_test_split,
)

# --- script ---
TARGETS = []
train_df = train_df.dropna(subset=TARGETS).reset_index(drop=True)
X = add_features(train_df)
if TASK_KIND == "classification":
    coded = [pd.factorize(train_df[target], sort=True) for target in TARGETS]
    y = np.column_stack([codes for codes, _ in coded])
    TARGET_CLASSES = [np.asarray(classes) for _, classes in coded]
    CLASSES = np.concatenate(TARGET_CLASSES)
    bounds = np.cumsum([0] + [len(classes) for classes in TARGET_CLASSES])
    TARGET_COLUMNS[:] = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
else:
    y = train_df[TARGETS].to_numpy(dtype=float)
    TARGET_CLASSES = [None] * len(TARGETS)
    TARGET_COLUMNS[:] = list(range(len(TARGETS)))
X_tr, X_val, y_tr, y_val = train_test_split(X, y, test_size=VAL_SIZE, random_state=SEED)
