"""One variant of an ablation study: the solution's own code for that variant, in a function.

The study measures exactly what the solution does: each variant's sections, rendered from its
spec, go in at ``# insert sections`` (each after a ``# [LOCUS]`` line), and the function returns
the variant's validation score. ``__INDEX__`` numbers the variants (0 is the unchanged baseline),
``__COMPONENT__`` and ``__DESCRIPTION__`` say what the variant changes.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import val_score


# --- script ---
def run_variant___INDEX__():
    """__COMPONENT__: __DESCRIPTION__"""
    # insert sections
    return val_score
