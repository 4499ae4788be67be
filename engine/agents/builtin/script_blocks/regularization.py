"""The REGULARIZATION gene: each member's regularisation keywords, by member name, else family.

``REG_CFG`` is the gene: {member name or family: {keyword: value}}.
"""

# mypy: allow-untyped-defs
# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

from engine.agents.builtin.script_blocks.names import X_tr

# --- script ---
REG_CFG = {}


# Below this many columns every boosted tree sees them all: a fraction of two columns is one,
# and trees that each split on a single column cannot learn how the columns interact.
FEW_COLUMNS = 8


def reg_kwargs(name, family):
    """Regularisation strength of one model: by member name first, else by family."""
    kwargs = dict(REG_CFG.get(name, REG_CFG.get(family, {})))
    if X_tr.shape[1] < FEW_COLUMNS:
        kwargs.pop("colsample_bytree", None)
    return kwargs
