"""The validation split: a seeded ``VAL_SIZE`` of the rows held out, stratified where the labels
allow (``labels.py``). Shared by ``data.py`` and ``image_data.py``.
"""

from engine.agents.builtin.script_blocks.names import SEED, X, stratify, train_test_split, y

# --- script ---
VAL_SIZE = 0.2
X_tr, X_val, y_tr, y_val = train_test_split(X, y, test_size=VAL_SIZE, random_state=SEED,
                                            stratify=stratify)
