"""The TRAINING_TRICKS gene's settings, and every member's predictions in one shape.

``COMBINE`` is the blend (``blend_<COMBINE>.py``), ``FINAL_FIT`` "full" (the submitted models refit
on every training row) or "holdout", ``BLEND_ROUNDS`` the greedy weighted blend's rounds and
``META_C`` the stacking meta-model's inverse regularisation.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import CLASSES, TASK_KIND, np

# --- script ---
COMBINE = "mean"
FINAL_FIT = "full"
BLEND_ROUNDS = 25
META_C = 1.0


def predict_values(model, data):
    """Probabilities over all CLASSES (or plain values), so members can be blended."""
    if TASK_KIND == "classification":
        full = np.zeros((len(data), len(CLASSES)))
        full[:, model.classes_] = model.predict_proba(data)
        return full
    return model.predict(data)
