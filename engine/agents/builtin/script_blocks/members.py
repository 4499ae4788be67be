"""The members as the MODEL gene builds them, when the TRAINING_TRICKS gene bags none."""

from engine.agents.builtin.script_blocks.names import make_members

# --- script ---
members = make_members()
