"""A side table keyed by a column of both train and test rows (DATA gene ``extra_join``: one each)."""

from engine.agents.builtin.script_blocks.names import pd, test_df, train_df

# --- script ---
# Side table keyed by __KEY__: joined onto both train and test rows.
side = pd.read_csv("./input/__FILE__")
train_df = train_df.merge(side, on="__KEY__", how="left")
test_df = test_df.merge(side, on="__KEY__", how="left")
