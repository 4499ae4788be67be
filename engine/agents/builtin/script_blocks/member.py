"""One member of ``make_members()`` (``model.py``): its preprocessor and its estimator.

``__NAME__`` is the member's name, ``__FAMILY__`` its family (catalog.py), ``__PREP__`` the
preprocessing it is built with (``**PREP``, the DATA gene's, or its own), ``__ESTIMATOR__`` the
estimator class and ``__ARGS__`` its keyword arguments: the gene's hyper-parameters, the family's
fixed ones, then the LOSS, REGULARIZATION and category keywords. A booster the TRAINING_TRICKS
gene may size by early stopping is wrapped in ``sized()`` (``sized_member``).
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import (
    __ARGS__,
    __ESTIMATOR__,
    __PREP__,
    Pipeline,
    make_preprocessor,
    sized,
    wrap_target,
)


# --- script ---
def member(members):
    members.append(("__NAME__", Pipeline([
        ("prep", make_preprocessor(__PREP__, family="__FAMILY__")),
        ("model", wrap_target(__ESTIMATOR__(
            __ARGS__))),
    ])))


def sized_member(members):
    members.append(("__NAME__", Pipeline([
        ("prep", make_preprocessor(__PREP__, family="__FAMILY__")),
        ("model", wrap_target(sized(__ESTIMATOR__(
            __ARGS__)))),
    ])))
