"""The search's cap on the training rows, between the markers finalization finds it by.

Finalization removes the whole block, markers included (``spec.SUBSAMPLE_BEGIN``, ``SUBSAMPLE_END``).
"""

from engine.agents.builtin.script_blocks.names import SEED, train_df

# --- script ---
# --- subsampling: begin ---
# Cap the training rows so every search run stays fast; finalization removes this block.
SUBSAMPLE_LIMIT = 30000
if len(train_df) > SUBSAMPLE_LIMIT:
    train_df = train_df.sample(n=SUBSAMPLE_LIMIT, random_state=SEED).reset_index(drop=True)
# --- subsampling: end ---
