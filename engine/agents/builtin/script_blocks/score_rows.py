"""A test version (every training row) scores and learns its blend on a seeded sample of the
search's size (TRAINING_TRICKS gene ``score_rows``).

The score is only reported and the blend weights need out-of-fold predictions, not all rows, so
finalization costs about one full fit per model instead of six.
"""

from engine.agents.builtin.script_blocks.names import SEED, X_cv, np, y_cv

# --- script ---
SCORE_ROWS = 0
if len(X_cv) > SCORE_ROWS:
    keep = np.sort(np.random.RandomState(SEED).permutation(len(X_cv))[:SCORE_ROWS])
    X_cv, y_cv = X_cv.iloc[keep], y_cv[keep]
