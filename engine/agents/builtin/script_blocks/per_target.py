"""Several targets: the members the TRAINING_TRICKS gene built, each wrapped to predict every
target (``multi_target_model.py``)."""

from engine.agents.builtin.script_blocks.names import members, per_target_members

# --- script ---
members = per_target_members(members)
