"""The LOSS gene of a classification task: class weights where the estimator takes them.

``CLASS_WEIGHT`` is the gene's (None or "balanced"), ``CLASS_WEIGHT_FAMILIES`` the families whose
estimator takes a ``class_weight`` (catalog.py). Targets are class codes: ``wrap_target`` leaves
the estimator as it is.
"""

# mypy: allow-untyped-defs
# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

# --- script ---
CLASS_WEIGHT = None
CLASS_WEIGHT_FAMILIES = []


def loss_kwargs(family):
    """Re-weight the log-loss per class where the estimator supports it."""
    if CLASS_WEIGHT is not None and family in CLASS_WEIGHT_FAMILIES:
        return {"class_weight": CLASS_WEIGHT}
    return {}


def wrap_target(estimator):
    return estimator
