"""The LOSS gene of a regression task: the target's transform, or a Poisson objective.

``TARGET_TRANSFORM`` is the gene's: "none", "standardize" (scale-sensitive learners fit better on
a standardised target), "log1p" (a long-tailed target, a log-error metric) or "poisson" (for the
families in ``POISSON_FAMILIES``, with the keyword that asks for it).
"""

# mypy: allow-untyped-defs
# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

from engine.agents.builtin.script_blocks.names import StandardScaler, TransformedTargetRegressor, np, y

# --- script ---
TARGET_TRANSFORM = 'none'
POISSON_FAMILIES = {}


def loss_kwargs(family):
    """A Poisson objective (log link) where asked for and the target is a non-negative
    amount: the boosters then fit the mean of a count or a skewed amount, not its square."""
    if TARGET_TRANSFORM == "poisson" and family in POISSON_FAMILIES and np.min(y) >= 0 and np.max(y) > 0:
        return dict(POISSON_FAMILIES[family])
    return {}


def wrap_target(estimator):
    """Fit the squared loss on a transformed target; predictions are mapped back."""
    if TARGET_TRANSFORM == "standardize":
        return TransformedTargetRegressor(regressor=estimator, transformer=StandardScaler())
    if TARGET_TRANSFORM == "log1p" and np.min(y) > -1:
        return TransformedTargetRegressor(regressor=estimator, func=np.log1p, inverse_func=np.expm1)
    return estimator
