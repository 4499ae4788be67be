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
# Past this many, each boosted tree sees at most this many columns, each read in at most WIDE_BINS
# bins: a tree's time grows with the columns and bins it reads, and on a wide matrix of pixels or
# image features this reads as well as seven tenths of them in 255 bins, in a third of the time
# (docs/decisions/0031-wide-matrices-cheaper-trees.md).
COLUMNS_PER_TREE = 192
WIDE_BINS = 63


def reg_kwargs(name, family):
    """Regularisation strength of one model: by member name first, else by family."""
    kwargs = dict(REG_CFG.get(name, REG_CFG.get(family, {})))
    columns = X_tr.shape[1]
    if columns < FEW_COLUMNS:
        kwargs.pop("colsample_bytree", None)
    elif family == "lightgbm" and kwargs.get("colsample_bytree", 1.0) * columns > COLUMNS_PER_TREE:
        kwargs["colsample_bytree"] = round(COLUMNS_PER_TREE / columns, 4)
        kwargs["max_bin"] = WIDE_BINS
    return kwargs
