"""The TRAINING_TRICKS gene's settings, and every member's predictions in one shape.

``COMBINE`` is the blend (``blend_<COMBINE>.py``), ``FINAL_FIT`` "full" (the submitted models refit
on every training row) or "holdout", ``BLEND_ROUNDS`` the greedy weighted blend's rounds and
``META_C`` the stacking meta-model's inverse regularisation.

A regression member's predictions are kept within the training target's observed range
(``in_target_range``): a linear member extrapolating on one odd row (-47,647 s for a bike trip of
2,073 s) cost a whole run a third of its RMSE, while validation, whose folds held no such row, could
not see it. Clipping into an interval never moves a prediction away from a truth inside it, so
only a row whose truth lies beyond every training row can lose.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import CLASSES, TASK_KIND, np, y

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
    return in_target_range(model.predict(data))


def in_target_range(values):
    """A single regression target's predictions clipped to the training rows' lowest and highest
    target (like CLASSES, known from every training row before any split); others unchanged."""
    if TASK_KIND != "regression" or np.ndim(y) != 1 or len(y) == 0:
        return values
    return np.clip(values, np.nanmin(y), np.nanmax(y))
