"""Extra labelled rows shipped with the task (DATA gene ``extra_train``: one file each)."""

from engine.agents.builtin.script_blocks.names import pd, train_df

# --- script ---
# Extra labelled rows shipped with the task: same columns as train.csv.
train_df = pd.concat([train_df, pd.read_csv("./input/__FILE__")], ignore_index=True)
