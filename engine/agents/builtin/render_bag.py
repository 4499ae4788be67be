"""Seed bagging, the members part of the TRAINING_TRICKS gene (``seeds``): which block builds
``members`` (``script_blocks/members.py``, or ``seed_bag.py`` with its settings).

Each member whose fits vary with the seed is fit once per seed and its predictions averaged; a
booster the seed does not change (scikit-learn's HistGB, its GBM without a row sample:
``bags_rows``) is fit on a seeded nine tenths of the rows per seed instead, so a Phase 3 of such
models has bags to try too. It lowers the variance part of the error, costs a fit per seed, and
needs no choice the validation rows could overfit; Phase 3 tries it once the blends are known.
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.blocks import block, fill, insert, regions
from engine.agents.builtin.catalog import ROW_BAGGED_CLASSES, SEED_VARYING_CLASSES

# The bag of a booster the seed does not change (``SeedBagged``'s arguments after the model): a
# seeded nine tenths of the rows per fit. A time-driven test version of such a booster had nothing
# to grow and left the time the script's estimate held back idle; in a test version that grows its
# bags (``GROWN_ROW_BAG``) its first fit learns from every row (the model the run validated) and
# the fits grown after it from nine tenths (measured on development test rows of HistGB Phase 1
# drafts, 12 s given: better on three tasks of four, level on the fourth).
ROW_BAG = "BAG_SEEDS, rows=BAG_ROWS"
GROWN_ROW_BAG = "1, rows=BAG_ROWS, whole_first=True"


def _more_than_one(value: Any) -> bool:
    """A gene's count of fits that asks for more than one: a whole number above 1 (a plan's odd
    value, a flag, means one)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 1


def bagged(train: dict[str, Any]) -> bool:
    """Whether the TRAINING_TRICKS gene asks for seed bags (``seeds``)."""
    return _more_than_one(train.get("seeds", 1))


def grows(train: dict[str, Any]) -> bool:
    """Whether the gene's bags grow into the time the engine gave the script (``grow_seeds``: a
    time-driven run's test version, ``render_final.test_gene``)."""
    return _more_than_one(train.get("grow_seeds"))


def reads_deadline(train: dict[str, Any]) -> bool:
    """Whether the script's early-stopping or seed-bag code defines ``DEADLINE`` (the engine's
    deadline) already, so later code reads it rather than defining it again."""
    return bool(train.get("early_stop")) or bagged(train) or grows(train)


def members_code(train: dict[str, Any]) -> str:
    """The code that builds ``members``: the MODEL gene's, each seed-varying one (or booster the seed
    does not change) bagged when asked. A test version that grows its bags wraps each member of an
    unbagged gene that can vary in a bag of one fit on every row, which then grows: a seed-varying
    one by seeds, a booster the seed does not change by fits on a tenth fewer rows
    (``GROWN_ROW_BAG``)."""
    if not (bagged(train) or grows(train)):
        return block("members")
    code = block("seed_bag", SEED_VARYING=repr(SEED_VARYING_CLASSES), ROW_BAGGED=repr(ROW_BAGGED_CLASSES),
                 BAG_SEEDS=str(train["seeds"] if bagged(train) else 1),
                 GROW_SEEDS=str(int(train["grow_seeds"]) if grows(train) else 0))
    # The early-stopping code (written above it) imports BaseEstimator and time and reads the
    # engine's deadline already.
    code = insert(regions(code, early_stop=bool(train.get("early_stop"))), deadline=block("deadline"))
    return fill(code, ROW_BAG=ROW_BAG if bagged(train) else GROWN_ROW_BAG)
