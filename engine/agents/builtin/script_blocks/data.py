"""The DATA gene, part 1: the task's files read, the target found, the features and the split.

At ``# insert tables`` go the extra labelled rows and side tables the gene names
(``extra_train.py``, ``side_table.py``), at ``# insert target`` the target found (``target.py``),
at ``# insert subsample`` the search's row cap (``subsample.py``), at ``# insert features`` the
gene's features (``features.py``), at ``# insert labels`` the labels (``labels.py``), at
``# insert free_text`` the free-text columns' stacked predictions when the gene reads them
(``text_features.py``), at ``# insert split`` the validation split (``holdout_split.py``).
``image_data.py`` shares the target, labels and split blocks.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import TARGET, TASK_KIND, pd

# --- script ---
train_df = pd.read_csv("./input/train.csv")
test_df = pd.read_csv("./input/test.csv")
sample_sub = pd.read_csv("./input/sample_submission.csv")
# insert tables
ID_COL = sample_sub.columns[0]
# insert target
# insert subsample
FEATURES = [c for c in train_df.columns if c not in (ID_COL, TARGET) and c in test_df.columns]
BASE_NUM = [c for c in FEATURES if pd.api.types.is_numeric_dtype(train_df[c])
            and not pd.api.types.is_bool_dtype(train_df[c])]
DATE_PATTERN = r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?"


def text_columns(looks_right):
    """The text columns whose training values (their first 500 that are not missing) look right."""
    found = []
    for col in [c for c in FEATURES if c not in BASE_NUM]:
        seen = train_df[col].dropna().astype(str).head(500)
        if len(seen) and looks_right(seen):
            found.append(col)
    return found


DATE_COLS = text_columns(lambda seen: seen.str.fullmatch(DATE_PATTERN).mean() >= 0.9)
# Names: text that is not a date, eight in ten of whose values differ. A word's target means
# take a column per class: past MANY_CLASSES they cost more than they tell (airport-state's 43
# classes: its forest's draft 18.9 s -> over 31 s, cut in Phase 1; test accuracy 0.83 -> 0.64).
# There the names themselves reach the models as their alphabetical rank (NAME_RANK_COLS, in
# the preprocessor), not as target means: a level seen once has the prior for its out-of-fold
# means, so each name gave a column per class of noise, which a forest samples as often as the
# columns that matter (airport-state's forest, cross-validated accuracy: 0.79 on the means,
# 0.94 on the ranks; town-country's 41 countries: 0.89, 0.95).
MANY_CLASSES = 10
NAME_COLS = [c for c in text_columns(lambda seen: seen.nunique() >= 0.8 * len(seen)) if c not in DATE_COLS]
NAME_RANK_COLS = []
if TASK_KIND == "classification" and train_df[TARGET].nunique() > MANY_CLASSES:
    NAME_COLS, NAME_RANK_COLS = [], NAME_COLS


def add_features(df):
    """Row-wise features only: nothing is computed across rows, so nothing leaks."""
    out = df[FEATURES].copy()
    # insert features
    for col in out.columns:
        if col not in BASE_NUM and not str(col).startswith("fe_"):
            # Categorical: strings throughout, missing values kept for the imputer.
            out[col] = out[col].where(out[col].isna(), out[col].astype(str)).astype(object)
    return out


X = add_features(train_df)
X_test = add_features(test_df)
NUM_COLS = [c for c in X.columns if c in BASE_NUM or str(c).startswith("fe_")]
CAT_COLS = [c for c in X.columns if c not in NUM_COLS]
# insert labels
# insert free_text
# insert split
