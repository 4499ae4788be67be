"""Boosted members keep the size their MODEL gene gives (TRAINING_TRICKS gene without ``early_stop``)."""

# mypy: allow-untyped-defs

# --- script ---
def sized(estimator):
    return estimator
