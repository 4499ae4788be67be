"""The end of a builtin script: every model refit on all rows, the test predictions, the
submission, and the estimate of what the script's test version will take (``script_blocks/``:
``full_fit.py``, ``submission_file.py`` with ``submission.py`` or ``submission_multi.py``,
``final_run_estimate.py``).

A solution's test version (``finalization.test``, its gene from ``test_gene``) fits every model on
all training rows, where the search's runs fitted on a sample. The search's run times its own
parts and prints ``Final Run Estimate: <seconds>`` (``handlers.script_lines``), from which the
time plan sizes finalization's reserve (``handlers.timebudget``): the same start-up and test
predictions, the cross-validation again only when the test version scores again, and the fit on
this run's rows scaled to every row.
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.blocks import block, fill, insert, regions
from engine.agents.builtin.render_bag import bagged, grows
from handlers.script_lines import FINAL_RUN_LABEL

LEARNED_BLENDS = ("weighted", "stacking")
# The most fits a time-driven test version's bag grows to (``test_gene``): past a dozen or so,
# averaging more seeds no longer moves the predictions, whatever time is left.
GROWN_BAG = 16


def test_gene(train: dict[str, Any], metric: str, score_rows: int, *, grow_seeds: int = 0) -> dict[str, Any]:
    """The TRAINING_TRICKS gene of a solution's test version: every model refit on all rows.

    ``grow_seeds`` (a time-driven run, ``GROWN_BAG``): each seed-varying member's bag goes on
    adding fits on all rows, up to that many, while the time the engine gave the test run allows
    (a booster the seed does not change: fits on nine tenths of the rows beside its fit on every
    row, ``render_bag.GROWN_ROW_BAG``).
    The time plan sizes finalization from the script's estimate, which scales the search's refit
    linearly to every row and so overstates a booster, whose cost per tree is mostly fixed
    (annual-precipitation at 120 s: estimated 28.8 s, took 10.2 s; population-by-age: 107 s
    and 29 s): the time the estimate held back would otherwise be left idle. More fits of a
    model that varies with its seed lower the variance part of its error, and learn nothing the
    validation rows could overfit.

    The score and blend weights come from out-of-fold predictions on a sample of the search's
    size (``score_rows_code``); log-loss probabilities are calibrated on them. A fixed combination
    (or one model) learns nothing from out-of-fold predictions and the run has measured the
    solution's score, so such a test version does not score again (``rescore``: False): scoring
    only spends finalization's time (zip-state at 120 s: 11.5 s of a final run that needed 24.5 s,
    with 21.8 s given, so it was cut)."""
    gene = {**train, "final_fit": "full", "score_rows": int(score_rows)}
    if grow_seeds > 1:
        gene["grow_seeds"] = int(grow_seeds)
    if metric == "logloss":
        gene["calibrate"] = True
    if not (gene.get("combine", "mean") in LEARNED_BLENDS or bool(gene.get("calibrate"))):
        gene["rescore"] = False
    return gene


def rescores(gene: dict[str, Any]) -> bool:
    """Whether the script with this gene scores on out-of-fold predictions (``test_gene``)."""
    return gene.get("rescore") is not False


def score_rows_code(score_rows: Any) -> str:
    """The test script (all training rows) scores and learns its blend on a seeded sample of the
    search's size (``script_blocks/score_rows.py``); none in a search run."""
    return block("score_rows", SCORE_ROWS=str(int(score_rows))) if score_rows else ""


def full_fit_and_predict(train: dict[str, Any], *, calibrated: bool = False) -> str:
    """Every model refit on all rows (bags within the deadline), then the test predictions (grown
    bags' again), calibrated as the validation predictions were when ``calibrated``."""
    return regions(block("full_fit"), bags=bagged(train) or grows(train), growth=grows(train), calibrated=calibrated)


def submission_code(spec: dict[str, Any]) -> str:
    """The submission file (``submission_file.py``) in the sample's shape: several targets'
    columns (``submission_multi.py``), or one target's values, probabilities, label or (MAP@k)
    ranked labels (``submission.py``)."""
    if spec.get("targets"):
        columns = block("submission_multi")
    else:
        columns = regions(block("submission"), ranking=str(spec["metric"]).startswith("map@"))
    return insert(block("submission_file"), columns=columns)


def final_run_estimate_code(train: dict[str, Any], metric: str) -> str:
    """The search run's estimate of its test version's run (``script_blocks/final_run_estimate.py``)."""
    score_again = rescores(test_gene(train, metric, 0))
    code = regions(block("final_run_estimate"), early_stop=bool(train.get("early_stop")))
    return fill(code, SCORES_AGAIN=str(score_again), FINAL_RUN_LABEL=FINAL_RUN_LABEL)
