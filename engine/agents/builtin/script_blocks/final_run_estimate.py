"""The search run's estimate of what its test version (every row, finalization) will take.

This run's start-up and test predictions, its cross-validation again when the test version scores
again (``__SCORES_AGAIN__``: ``render_final.rescores``), its refit scaled from its rows to every
training row, and the boosters' readings (``early_stop``): an early-stopped booster reads its
stopping point on the test version's rows when it has not read one in that run (no
cross-validation before the refit) or when the rows are RESIZE_ROWS times those it read on, and
then refits with the rounds found there, which grow with the rows; each such reading is counted,
scaled to the rows, twice when the rows grew that much (the reading, and a refit as long). Only a
run that refit on its rows can scale that fit; a hold-out run says nothing. The engine reads the
printed line by its label (``handlers.script_lines``, ``__FINAL_RUN_LABEL__``).
"""

from engine.agents.builtin.script_blocks.names import (
    __SCORES_AGAIN__,
    CV_STARTED,
    FINAL_FIT,
    FIT_ENDED,
    FIT_STARTED,
    RESIZE_ROWS,
    SCRIPT_STARTED,
    STOPPING_ROUNDS,
    TRAIN_ROWS,
    X,
    time,
)

# --- script ---
# What this script's test version (every row, finalization) should take: this run's
# start-up and test predictions, its cross-validation again when the test version scores
# again, its refit scaled from its rows to every training row, and the boosters' readings.
if FINAL_FIT == "full":
    refit_s = (FIT_ENDED - FIT_STARTED) * max(1.0, TRAIN_ROWS / max(len(X), 1))
    cv_s = FIT_STARTED - CV_STARTED if __SCORES_AGAIN__ else 0.0
    reading_s = 0.0
    # when early_stop:
    for _, read_on, took in STOPPING_ROUNDS.values():
        grown = TRAIN_ROWS >= RESIZE_ROWS * read_on
        if grown or not __SCORES_AGAIN__:
            reading_s += took * TRAIN_ROWS / read_on * (2 if grown else 1)
    # end early_stop
    test_run_s = (CV_STARTED - SCRIPT_STARTED) + cv_s + refit_s + reading_s + (time.monotonic() - FIT_ENDED)
    print(f"__FINAL_RUN_LABEL__ {test_run_s:.2f}")
