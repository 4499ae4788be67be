"""Blend by the plain average of the members' predictions."""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import np


# --- script ---
def fit_blender(val_preds, y_true):
    return None


def blend(preds, state):
    """Plain average of the models' predictions."""
    return np.mean(np.asarray(preds), axis=0)
