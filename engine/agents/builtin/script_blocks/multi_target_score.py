"""Several targets (a task whose sample submission asks for more than one target column): the
task metric on one target, which ``score_predictions`` (``metrics.mean_over_targets``) averages
over the targets, as `engine grade` scores several columns.

``TARGET_COLUMNS`` holds, per target, where its predictions sit among a member's prediction
columns: its index (regression) or the slice of its class probabilities (classification). The
DATA gene fills it in (``multi_target_data.py``) in place, so a variant of an ablation study,
whose DATA code runs inside a function, fills this same list. The renderer writes the metric's
lines (``metrics.py``) at ``# insert score``.
"""

# mypy: allow-untyped-defs
# Scripts carry no annotations: the list is filled further down.
# mypy: disable-error-code="var-annotated"

# --- script ---
TARGET_COLUMNS = []


def score_target(y_true, pred):
    """The task metric on one target's codes or values; pred holds its probabilities or values."""
    # insert score
