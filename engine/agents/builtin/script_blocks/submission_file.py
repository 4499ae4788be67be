"""The submission file: a row per test id (test.csv's ids, else the sample's), the columns the
target's block fills at ``# insert columns`` (``submission.py``, or ``submission_multi.py`` for
several targets), written to ./final/submission.csv.
"""

from engine.agents.builtin.script_blocks.names import FINAL_FIT, ID_COL, os, pd, sample_sub, test_df

# --- script ---
ids = test_df[ID_COL].to_numpy() if ID_COL in test_df.columns else sample_sub[ID_COL].to_numpy()
submission = pd.DataFrame({ID_COL: ids})
# insert columns
os.makedirs("./final", exist_ok=True)
submission.to_csv("./final/submission.csv", index=False)
print(f"Wrote ./final/submission.csv ({len(submission)} rows, final fit: {FINAL_FIT})")
