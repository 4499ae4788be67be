"""The MODEL gene: ``make_members()``, one (name, unfitted pipeline) per member of the solution.

The genes talk through a small fixed interface, so any MODEL can sit next to any LOSS or
REGULARIZATION from another parent: the members call ``loss_kwargs(family)`` and
``wrap_target(estimator)`` (LOSS) and ``reg_kwargs(name, family)`` (REGULARIZATION) when
TRAINING_TRICKS builds the models. Each member goes in at ``# insert members`` (``member.py``).
"""

# mypy: allow-untyped-defs
# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

# --- script ---
def make_members():
    """One (name, unfitted pipeline) per model; TRAINING_TRICKS fits and blends them."""
    members = []
    # insert members
    return members
