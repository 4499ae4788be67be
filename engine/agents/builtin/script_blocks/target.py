"""The target found and the rows without it dropped: shared by ``data.py`` and ``image_data.py``.

The target is the one submission column train.csv also has; otherwise the sample submission asks
for one probability column per class and the target is the train column test.csv lacks.
"""

from engine.agents.builtin.script_blocks.names import ID_COL, sample_sub, test_df, train_df

# --- script ---
SUB_COLS = list(sample_sub.columns[1:])
# One submission column that train.csv also has is the target; otherwise the sample asks
# for one probability column per class and the target is the train column test lacks.
PER_CLASS_COLUMNS = not (len(SUB_COLS) == 1 and SUB_COLS[0] in train_df.columns)
if PER_CLASS_COLUMNS:
    TARGET = [c for c in train_df.columns if c not in test_df.columns and c != ID_COL][0]
else:
    TARGET = SUB_COLS[0]
train_df = train_df.dropna(subset=[TARGET]).reset_index(drop=True)
TRAIN_ROWS = len(train_df)  # every labelled row: what the test version fits on
