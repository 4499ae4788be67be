"""The end of a builtin script: every model refit on all rows, the test predictions, the
submission, and the estimate of what the script's test version will take.

A solution's test version (``finalization.test``, its gene from ``test_gene``) fits every model on
all training rows, where the search's runs fitted on a sample. The search's run times its own
parts and prints ``Final Run Estimate: <seconds>`` (``handlers.script_lines``), from which the
time plan sizes finalization's reserve (``handlers.timebudget``): the same start-up and test
predictions, the cross-validation again only when the test version scores again, and the fit on
this run's rows scaled to every row.
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.render_bag import bagged, grows
from handlers.script_lines import FINAL_RUN_LABEL

LEARNED_BLENDS = ("weighted", "stacking")
# The most fits a time-driven test version's bag grows to (``test_gene``): past a dozen or so,
# averaging more seeds no longer moves the predictions, whatever time is left.
GROWN_BAG = 16

_FULL_FIT = [
    "if FINAL_FIT == \"full\":",
    "    # The validation score above is settled; now every model learns from all training rows.",
    "    for name, model in members:",
    "        model.fit(X, y)",
]
# A bag's fits on all rows may outlast the time the engine gave the script, which then kills it
# and keeps the search's own submission (flight-delay at 120 s: bags of five seeds of two boosters
# on 35,000 rows outran finalization's 12 s, and a model fit on 3,600 rows went out). Each bag
# gets an even part of the time left before the deadline, less FINISH_S, and fits the seeds it
# holds: a smaller bag on every row rather than none.
_FULL_FIT_BAGGED = [
    "if FINAL_FIT == \"full\":",
    "    # The validation score above is settled; now every model learns from all training rows.",
    "    # Single models first: a bag's part of the time is what they left.",
    "    fit_order = sorted(range(len(members)), key=lambda j: isinstance(members[j][1], SeedBagged))",
    "    for n, j in enumerate(fit_order):",
    "        model = members[j][1]",
    "        if isinstance(model, SeedBagged):",
    "            model.fit(X, y, fit_by=time.time() + (DEADLINE - FINISH_S - time.time()) / (len(members) - n))",
    "        else:",
    "            model.fit(X, y)",
]

_TEST_PREDICTIONS = [
    "test_preds = [predict_values(model, X_test) for _, model in members]",
    "test_blend = blend(test_preds, blender) if len(members) > 1 else test_preds[0]",
]

# A time-driven run's test version (``test_gene``'s ``grow_seeds``): once every member has its
# fits and the test rows their predictions, the bags take turns adding one more fit while the time
# left holds it (GROW_MARGIN times the bag's last fit) and the test predictions of every fit, at
# the rate the first predictions took. Growing one bag into its share first left the members
# after it no time for their own fits (annual-precipitation at 120 s: one bag grew to 8 fits, the
# next member's fit was cut at the deadline, and the search's submission went out).
_GROWTH = [
    "if FINAL_FIT == \"full\" and GROW_SEEDS:",
    "    bags = [model for _, model in members if isinstance(model, SeedBagged)]",
    "    fits = sum(len(model.estimators_) if isinstance(model, SeedBagged) else 1 for _, model in members)",
    "    predict_s_per_fit = (time.monotonic() - FIT_ENDED) / fits",
    "    grown, added = 0, True",
    "    while added:",
    "        added = False",
    "        for bag in bags:",
    "            if bag.grow(X, y, DEADLINE - FINISH_S - predict_s_per_fit * (fits + grown + 1)):",
    "                grown, added = grown + 1, True",
    "    if grown:",
    '        print(f"Seed bags grown by {grown} fits to {[len(bag.estimators_) for bag in bags]} in the time the engine gave")',
    *("    " + line for line in _TEST_PREDICTIONS),
]

_SUBMISSION = [
    "ids = test_df[ID_COL].to_numpy() if ID_COL in test_df.columns else sample_sub[ID_COL].to_numpy()",
    "submission = pd.DataFrame({ID_COL: ids})",
    "if TASK_KIND == \"regression\":",
    "    submission[SUB_COLS[0]] = test_blend",
    "elif PER_CLASS_COLUMNS:",
    "    proba = test_blend / test_blend.sum(axis=1, keepdims=True)",
    "    names = [str(c) for c in CLASSES]",
    "    for j, col in enumerate(SUB_COLS):",
    "        submission[col] = proba[:, names.index(str(col))] if str(col) in names else proba[:, j]",
    "elif METRIC in (\"roc_auc\", \"logloss\") and len(CLASSES) == 2:",
    "    submission[SUB_COLS[0]] = test_blend[:, 1] / test_blend.sum(axis=1)",
    "else:",
    "    submission[SUB_COLS[0]] = CLASSES[test_blend.argmax(axis=1)]",
    "os.makedirs(\"./final\", exist_ok=True)",
    "submission.to_csv(\"./final/submission.csv\", index=False)",
    "print(f\"Wrote ./final/submission.csv ({len(submission)} rows, final fit: {FINAL_FIT})\")",
]


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


def score_rows_code(score_rows: Any) -> list[str]:
    """The test script (all training rows) scores and learns its blend on a seeded sample of the
    search's size: the score is only reported and the blend weights need out-of-fold
    predictions, not all rows, so finalization costs about one full fit per model instead of
    six (on a busy machine the full cross-validation overran finalization's time)."""
    if not score_rows:
        return []
    return [
        f"SCORE_ROWS = {int(score_rows)}",
        "if len(X_cv) > SCORE_ROWS:",
        "    keep = np.sort(np.random.RandomState(SEED).permutation(len(X_cv))[:SCORE_ROWS])",
        "    X_cv, y_cv = X_cv.iloc[keep], y_cv[keep]",
    ]


def full_fit_and_predict(train: dict[str, Any]) -> list[str]:
    """Every model refit on all rows (bags within the deadline), then the test predictions; the
    refit is timed (``FIT_STARTED``, ``FIT_ENDED``) for the estimate."""
    return ["FIT_STARTED = time.monotonic()", *(_FULL_FIT_BAGGED if bagged(train) or grows(train) else _FULL_FIT),
            "FIT_ENDED = time.monotonic()", *_TEST_PREDICTIONS, *(_GROWTH if grows(train) else [])]


def submission_code() -> list[str]:
    return list(_SUBMISSION)


def final_run_estimate_code(train: dict[str, Any], metric: str) -> list[str]:
    """The search run's estimate of its test version's run (module doc). Only a run that refit on
    its rows can scale that fit; a hold-out run says nothing and the time plan falls back to its
    rule for scripts that do not estimate.

    An early-stopped booster reads its stopping point on the test version's rows when it has not
    read one in that run (no cross-validation before the refit) or when the rows are
    RESIZE_ROWS times those it read on, and then refits with the rounds found there, which grow
    with the rows: flight-delay's two boosters read on 3,240 rows and refit on 35,000 took 9.8 s
    where their refit with the old rounds, scaled, said 2 s. Each such reading is counted, scaled
    to the rows, twice when the rows grew that much (the reading, and a refit as long)."""
    score_again = rescores(test_gene(train, metric, 0))
    lines = [
        "# What this script's test version (every row, finalization) should take: this run's",
        "# start-up and test predictions, its cross-validation again when the test version scores",
        "# again, its refit scaled from its rows to every training row, and the boosters' readings.",
        "if FINAL_FIT == \"full\":",
        "    refit_s = (FIT_ENDED - FIT_STARTED) * max(1.0, TRAIN_ROWS / max(len(X), 1))",
        f"    cv_s = FIT_STARTED - CV_STARTED if {score_again} else 0.0",
        "    reading_s = 0.0",
    ]
    if train.get("early_stop"):
        lines += [
            "    for _, read_on, took in STOPPING_ROUNDS.values():",
            "        grown = TRAIN_ROWS >= RESIZE_ROWS * read_on",
            f"        if grown or not {score_again}:",
            "            reading_s += took * TRAIN_ROWS / read_on * (2 if grown else 1)",
        ]
    return lines + [
        "    test_run_s = (CV_STARTED - SCRIPT_STARTED) + cv_s + refit_s + reading_s + (time.monotonic() - FIT_ENDED)",
        f'    print(f"{FINAL_RUN_LABEL} {{test_run_s:.2f}}")',
    ]
