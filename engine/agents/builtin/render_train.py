"""Script templates, part 3: the TRAINING_TRICKS gene (fit, blend, score, final fit, submission).

Only the blending code of the chosen method is written, so a script reads like something a
person wrote for that one method. Weights and meta-models are learned on the hold-out split
(weighted) or on out-of-fold predictions of the training split (stacking).
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.render_bag import members_code
from engine.agents.builtin.render_cv import cross_validation_code
from engine.agents.builtin.render_final import (
    LEARNED_BLENDS,
    final_run_estimate_code,
    full_fit_and_predict,
    submission_code,
)
from engine.agents.builtin.spec import dumps
from handlers.script_lines import SCORE_GROUPS, SCORE_GROUPS_LABEL

COMBINE_METHODS = ("mean", "weighted", "stacking", "rank", "median")

_BLEND_CODE = {
    "mean": [
        "def fit_blender(val_preds, y_true):",
        "    return None",
        "",
        "",
        "def blend(preds, state):",
        '    """Plain average of the models\' predictions."""',
        "    return np.mean(np.asarray(preds), axis=0)",
    ],
    "median": [
        "def fit_blender(val_preds, y_true):",
        "    return None",
        "",
        "",
        "def blend(preds, state):",
        '    """Median of the models\' predictions: one badly calibrated model cannot drag it."""',
        "    return np.median(np.asarray(preds), axis=0)",
    ],
    "rank": [
        "def fit_blender(val_preds, y_true):",
        "    return None",
        "",
        "",
        "def blend(preds, state):",
        '    """Average of per-model ranks scaled to [0, 1]: calibration differences cancel out."""',
        "    from scipy.stats import rankdata  # here, not at the top: scipy.stats takes seconds to import",
        "",
        "    ranks = np.mean([rankdata(np.asarray(p), axis=0) / len(p) for p in preds], axis=0)",
        '    if TASK_KIND == "regression":',
        "        # Put the averaged order back onto the mean prediction's value distribution.",
        "        return np.sort(np.mean(np.asarray(preds), axis=0))[np.argsort(np.argsort(ranks))]",
        "    return ranks",
    ],
    "weighted": [
        "def fit_blender(val_preds, y_true):",
        '    """Greedy forward selection with replacement on the hold-out split -> blend weights."""',
        "    sign = 1.0 if GREATER_IS_BETTER else -1.0",
        "    stacked = np.asarray(val_preds)",
        "    counts = np.zeros(len(val_preds))",
        "    for _ in range(BLEND_ROUNDS):",
        "        best_j, best_s = 0, None",
        "        for j in range(len(val_preds)):",
        "            trial = counts.copy()",
        "            trial[j] += 1",
        "            s = sign * score_predictions(y_true, np.tensordot(trial / trial.sum(), stacked, axes=1))",
        "            if best_s is None or s > best_s:",
        "                best_j, best_s = j, s",
        "        counts[best_j] += 1",
        "    return counts / counts.sum()",
        "",
        "",
        "def blend(preds, weights):",
        "    return np.tensordot(weights, np.asarray(preds), axes=1)",
    ],
    "stacking": [
        "def stack_features(preds):",
        "    return np.hstack([np.asarray(p).reshape(len(p), -1) for p in preds])",
        "",
        "",
        "def fit_blender(val_preds, y_true):",
        '    """Meta-model on out-of-fold predictions: the cross-validated ones given (their rows never',
        '    trained the member that predicted them), else, on a hold-out split, out-of-fold predictions',
        '    of the training split (never on hold-out rows)."""',
        '    meta = LogisticRegression(C=META_C, max_iter=2000) if TASK_KIND == "classification" else Ridge(alpha=1.0 / META_C)',
        "    if cv_splits:",
        "        return meta.fit(stack_features(val_preds), y_true)",
        '    if TASK_KIND == "classification":',
        "        folds = StratifiedKFold(n_splits=3, shuffle=True, random_state=SEED)",
        "        oof = [cross_val_predict(clone(m), X_tr, y_tr, cv=folds, method=\"predict_proba\") for _, m in members]",
        "    else:",
        "        folds = KFold(n_splits=3, shuffle=True, random_state=SEED)",
        "        oof = [cross_val_predict(clone(m), X_tr, y_tr, cv=folds) for _, m in members]",
        "    return meta.fit(stack_features(oof), y_tr)",
        "",
        "",
        "def blend(preds, meta):",
        '    if TASK_KIND == "classification":',
        "        full = np.zeros((len(preds[0]), len(CLASSES)))",
        "        full[:, meta.classes_] = meta.predict_proba(stack_features(preds))",
        "        return full",
        "    return meta.predict(stack_features(preds))",
    ],
}

# A blend that learns (weights, a meta-model) scored on the predictions it learned from reports
# more than it will deliver: greedy weights can never score below their best member there. Phase 3
# compares such a score with single solutions' and the run keeps the best, so the bias decides.
# On cross-validated predictions each fold's rows are blended with a blender learned on the other
# folds, so the score compares fairly with a single model's; the blender for the test predictions
# still learns from all of them.
_CROSS_FITTED_BLEND = [
    "if cv_splits and len(members) > 1:",
    "    crossfit = np.zeros_like(np.asarray(val_blend, dtype=float))",
    "    for fold_tr, fold_va in cv_splits:",
    "        fold_blender = fit_blender([np.asarray(p)[fold_tr] for p in val_preds], y_score[fold_tr])",
    "        crossfit[fold_va] = blend([np.asarray(p)[fold_va] for p in val_preds], fold_blender)",
    "    print(f\"Blend learned and scored on the same rows: {METRIC} = {score_predictions(y_score, val_blend):.6f}\")",
    "    val_blend = crossfit",
]

# Log-loss punishes a confident mistake without bound: boosted trees fit on a few hundred rows
# give 1e-9 to classes they have seen rarely, and one such test row can cost more than the
# rest together. A temperature (flatten or sharpen) and a floor (mix with the uniform
# distribution) are chosen on out-of-fold predictions; the reported score is cross-fitted, each
# fold's rows calibrated with settings chosen on the other folds, so it stays honest.
_CALIBRATION = [
    "CAL_TEMPERATURES = (0.8, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)",
    "CAL_FLOORS = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1)",
    "",
    "",
    "def calibrate(pred, setting):",
    "    temperature, floor = setting",
    "    proba = np.clip(np.asarray(pred, dtype=float), 1e-15, None) ** (1.0 / temperature)",
    "    proba = proba / proba.sum(axis=1, keepdims=True)",
    "    return (1.0 - floor) * proba + floor / proba.shape[1]",
    "",
    "",
    "def fit_calibration(pred, y_true):",
    "    grid = [(t, f) for t in CAL_TEMPERATURES for f in CAL_FLOORS]",
    "    return min(grid, key=lambda setting: score_predictions(y_true, calibrate(pred, setting)))",
    "",
    "",
    "calibration = fit_calibration(val_blend, y_score)",
    "crossfit = np.zeros_like(np.asarray(val_blend, dtype=float))",
    "for rest, part in KFold(5, shuffle=True, random_state=SEED).split(val_blend):",
    "    crossfit[part] = calibrate(val_blend[part], fit_calibration(val_blend[rest], y_score[rest]))",
    "print(f\"Calibration (temperature, floor): {calibration}; uncalibrated {METRIC} = {val_score:.6f}\")",
    "val_score = float(score_predictions(y_score, crossfit))",
]

# Boosted members (LightGBM, scikit-learn's two GBMs) sized on an inner split (train gene
# ``early_stop``): the rounds a table needs differ by orders of magnitude (a Poisson loss or a low
# learning rate needs many more), so a fixed count under- or over-fits most tables. The MODEL
# gene's size (n_estimators, or max_iter) becomes the expected size, and boosting may go on to
# ROUNDS_HEADROOM times that while the held-out tenth improves.
# Below 1,000 rows the given size stays. Sizing from 400 rows (a quarter held out) was tried and
# measured worse: industry-unemployment at 120 s scored 62.4 on its test rows where the given size
# scored 57.7 (its first model's CV went 129 -> 85, but the sized booster made the ablation's
# capacity moves flat and the search never reached native categories), life-expectancy 3.86 for 3.81.
_EARLY_STOP = [
    "import time",
    "",
    "from sklearn.base import BaseEstimator",
    "",
    "",
    "ROUNDS_HEADROOM = 4",
    "# A boosting round on K > 2 classes grows K trees: past TEN_CLASSES the headroom shrinks in",
    "# proportion (never below the size given), so a fit on fifty classes costs what one on ten does.",
    "TEN_CLASSES = 10",
    "MIN_STOPPING_ROWS = 100  # a stopping point read off fewer held-out rows is noise",
    "# The stopping point of each member, found once per script (on the first training rows it is",
    "# fit on) and reused by its later fits (the other folds, the final fit): probing every fold",
    "# again costs as much as the fits themselves, on many classes more than the run can give.",
    "# key -> (rounds, the rows they were read on, the seconds reading them took)",
    "STOPPING_ROUNDS = {}",
    "# A fit on RESIZE_ROWS times those rows or more (the submitted model, fit on every row after the",
    "# search scored a sample) reads its own: more rows carry more rounds before the held-out part",
    "# stops improving (flight-delay at 120 s: 3,600 rows sized a model fit on 35,000). It does so",
    "# when the time the engine gave the script (ENGINE_EVAL_DEADLINE) holds RESIZE_COST times the",
    "# first reading scaled to its rows: the reading and the longer refits after it.",
    "RESIZE_ROWS = 2",
    "RESIZE_COST = 3",
    "# There the size of each tree is read too: leaves sized on the search's sample under-fit every",
    "# row (population-by-age, 119,000 rows: 15 leaves read on 3,600 scored an RMSE of 580,000 on its",
    "# test rows, 63 leaves 349,000, 255 leaves 272,000). The leaves grow CAPACITY_STEP-fold while the",
    "# held-out tenth's loss improves and the time left holds RESIZE_COST times the last reading,",
    "# CAPACITY_COST times as long (bigger trees, and the refit after).",
    'CAPACITY_PARAMS = ("num_leaves", "max_leaf_nodes")',
    "CAPACITY_STEP = 4",
    "CAPACITY_COST = 2",
    "MAX_LEAVES = 1024",
    "CAPACITY = {}  # key -> the tree size read on the most rows, when bigger trees did better there",
    "READING_S = [0.0]  # the seconds every reading took so far (a fit's own time is the rest)",
    'DEADLINE = float(os.environ.get("ENGINE_EVAL_DEADLINE", "inf"))',
    "",
    "",
    "class EarlyStopped(BaseEstimator):",
    '    """Boost on nine tenths of the rows until PATIENCE rounds bring no gain on the last tenth',
    '    (at most ROUNDS_HEADROOM times the size given), then refit on all rows with the best number',
    '    of rounds. With fewer than MIN_STOPPING_ROWS in that tenth, the given size stays."""',
    "",
    "    def __init__(self, estimator, patience=50):",
    "        self.estimator = estimator",
    "        self.patience = patience",
    "",
    "    def fit(self, X, y):",
    '        size_param = "max_iter" if "max_iter" in self.estimator.get_params() else "n_estimators"',
    "        size = int(self.estimator.get_params()[size_param])",
    "        classify = hasattr(self.estimator, \"predict_proba\")",
    "        # The seed is not part of the key: the fits of a seed bag share one stopping point.",
    "        key = repr(sorted(kv for kv in self.estimator.get_params().items() if kv[0] != \"random_state\"))",
    "        found = STOPPING_ROUNDS.get(key)",
    "        if len(X) < 10 * MIN_STOPPING_ROWS:",
    "            self.n_rounds_ = size",
    "        else:",
    "            if found is None or _worth_reading_again(found, len(X)):",
    "                # past its first reading, or (a test version) past the search's sample",
    "                resized = found is not None or 0 < SEARCH_ROWS * RESIZE_ROWS <= len(X)",
    "                classes = len(np.unique(y)) if classify else 1",
    "                cap = max(size, ROUNDS_HEADROOM * size * min(classes, TEN_CLASSES) // max(classes, 1))",
    "                started = time.monotonic()",
    "                rounds, loss = self._stopping_round(X, y, size_param, cap, classify, {})",
    "                took = time.monotonic() - started",
    "                if resized and loss is not None:",
    "                    CAPACITY[key], rounds = self._read_capacity(X, y, size_param, cap, classify, rounds, loss, took)",
    "                found = STOPPING_ROUNDS[key] = (rounds, len(X), took)",
    "                READING_S[0] += time.monotonic() - started",
    "            self.n_rounds_ = found[0]",
    "        sized_as = {size_param: self.n_rounds_, **CAPACITY.get(key, {})}",
    "        self.estimator_ = clone(self.estimator).set_params(**sized_as).fit(X, y)",
    '        if hasattr(self.estimator_, "classes_"):',
    "            self.classes_ = self.estimator_.classes_",
    "        return self",
    "",
    "    def _stopping_round(self, X, y, size_param, cap, classify, params):",
    '        """The best number of rounds (`params` set) and the held-out loss there (None when the',
    '        booster does not report one)."""',
    "        # A class of one row cannot be split into a stratified held-out tenth (scikit-learn's",
    "        # boosters always stratify theirs): the reading leaves it out, the fit after keeps it.",
    "        keep = np.bincount(y)[y] >= 2 if classify else None",
    "        if keep is not None and not keep.all():",
    '            X, y = (X.iloc[keep] if hasattr(X, "iloc") else X[keep]), y[keep]',
    '        if type(self.estimator).__module__.startswith("lightgbm"):',
    "            from lightgbm import early_stopping",
    "",
    "            strata = y if classify else None",
    "            X_a, X_b, y_a, y_b = train_test_split(X, y, test_size=0.1, random_state=SEED, stratify=strata)",
    "            probe = clone(self.estimator).set_params(**{size_param: cap, **params}).fit(",
    "                X_a, y_a, eval_set=[(X_b, y_b)], callbacks=[early_stopping(self.patience, verbose=False)])",
    '            losses = list(probe.best_score_.get("valid_0", {}).values())',
    "            return max(1, int(probe.best_iteration_ or cap)), (float(losses[0]) if losses else None)",
    "        # scikit-learn's boosters hold out their own tenth (stratified for classes) and stop once",
    "        # PATIENCE rounds brought no gain on it; the best round is the one before those.",
    "        stopping = {size_param: cap, \"n_iter_no_change\": self.patience, \"validation_fraction\": 0.1, **params}",
    '        if "early_stopping" in self.estimator.get_params():',
    '            stopping["early_stopping"] = True',
    "        probe = clone(self.estimator).set_params(**stopping).fit(X, y)",
    '        fitted = int(getattr(probe, "n_iter_", None) or probe.n_estimators_)',
    '        scores = getattr(probe, "validation_score_", None)   # HistGB: minus its loss on the tenth',
    "        loss = -float(np.max(scores)) if scores is not None and len(scores) else None",
    "        return (cap if fitted >= cap else max(1, fitted - self.patience)), loss",
    "",
    "    def _read_capacity(self, X, y, size_param, cap, classify, rounds, loss, took):",
    '        """Bigger trees while they do better on the held-out tenth and the time holds their',
    '        reading (module comment above): the tree size to refit with ({} for the given one) and',
    '        its rounds."""',
    "        given = self.estimator.get_params()",
    "        name = next((p for p in CAPACITY_PARAMS if type(given.get(p)) is int), None)",
    "        if name is None:",
    "            return {}, rounds",
    "        best, leaves = {}, given[name]",
    "        while leaves * CAPACITY_STEP <= MAX_LEAVES and RESIZE_COST * CAPACITY_COST * took < DEADLINE - time.time():",
    "            trial, started = {name: leaves * CAPACITY_STEP}, time.monotonic()",
    "            trial_rounds, trial_loss = self._stopping_round(X, y, size_param, cap, classify, trial)",
    "            took = time.monotonic() - started",
    "            if trial_loss is None or not trial_loss < loss:",
    "                break",
    "            best, rounds, loss, leaves = trial, trial_rounds, trial_loss, trial[name]",
    "        if best:",
    '            print(f"Trees grown on {len(X)} rows: {name} = {leaves} (given {given[name]}), held-out loss {loss:.6g}")',
    "        return best, rounds",
    "",
    "    def predict(self, X):",
    "        return self.estimator_.predict(X)",
    "",
    "    def predict_proba(self, X):",
    "        return self.estimator_.predict_proba(X)",
    "",
    "",
    "def _worth_reading_again(found, rows):",
    "    _, read_on, took = found",
    "    return rows >= RESIZE_ROWS * read_on and RESIZE_COST * took * rows / read_on < DEADLINE - time.time()",
    "",
    "",
    "def sized(estimator):",
    "    return EarlyStopped(estimator)",
]
_NOT_SIZED = [
    "def sized(estimator):",
    "    return estimator",
]


def score_groups_code(scored: str) -> list[str]:
    """The lines that print the metric on SCORE_GROUPS fixed groups of the scored rows (row ``i``
    in group ``i mod SCORE_GROUPS``: the same rows in every script of a run, whose folds come in
    one seeded order), from which the engine weighs a gain against the validation noise
    (``handlers.script_lines``); ``scored``: the predictions the final score is on."""
    return [
        f"SCORE_GROUPS = {SCORE_GROUPS}",
        "if len(y_score) >= 2 * SCORE_GROUPS:",
        "    group_values = []",
        "    for group in range(SCORE_GROUPS):",
        "        rows = np.arange(group, len(y_score), SCORE_GROUPS)",
        "        try:  # a group with one class has no AUC: nan, left out of the comparison",
        f"            group_values.append(float(score_predictions(y_score[rows], np.asarray({scored})[rows])))",
        "        except ValueError:",
        '            group_values.append(float("nan"))',
        f'    print("{SCORE_GROUPS_LABEL}", " ".join(f"{{value:.10g}}" for value in group_values))',
    ]


def render_train(spec: dict[str, Any], *, mode: str = "solution") -> str:
    """``mode="ablation"`` stops after the validation score and writes nothing."""
    train = spec["train"]
    combine = train.get("combine", "mean")
    lines = [
        f"# builtin-gene: {dumps(train)}",
        f'COMBINE = "{combine}"',
        f'FINAL_FIT = "{train.get("final_fit", "holdout")}"',
        f"BLEND_ROUNDS = {int(train.get('rounds', 25))}",
        f"META_C = {float(train.get('meta_c', 1.0))}",
        "",
        "",
        "def predict_values(model, data):",
        '    """Probabilities over all CLASSES (or plain values), so members can be blended."""',
        '    if TASK_KIND == "classification":',
        "        full = np.zeros((len(data), len(CLASSES)))",
        "        full[:, model.classes_] = model.predict_proba(data)",
        "        return full",
        "    return model.predict(data)",
        "",
        "",
        *_BLEND_CODE[combine],
        "",
        "",
        *(_EARLY_STOP + [f"SEARCH_ROWS = {int(train.get('score_rows') or 0)}  # the search's sample (0: this is the search)"]
          if train.get("early_stop") else _NOT_SIZED),
        "",
        "",
        *members_code(train),
    ]
    if mode == "solution" and train.get("rescore") is False and train.get("final_fit") == "full":
        # A test script whose combination learns nothing from out-of-fold predictions: the run
        # measured its score; it only fits every model on all rows (finalization.test).
        lines += [
            "blender = None",
            'print("Validation score: measured by the run on the search\'s rows, not recomputed here")',
            *full_fit_and_predict(train), *submission_code(),
        ]
        return "\n".join(lines)
    # An ablation study runs the script once per variant and only compares them: three folds
    # keep its cost inside a short Phase 2 (at --time-limit 120 five folds overran it).
    lines += cross_validation_code(train, folds=3 if mode == "ablation" else 5, report_members=mode == "solution")
    lines += [
        "blender = fit_blender(val_preds, y_score) if len(members) > 1 else None",
        *(["if blender is not None:",
           '    print("Blend weights:", {n: round(float(w), 3) for (n, _), w in zip(members, blender)})']
          if combine == "weighted" else []),
        "val_blend = blend(val_preds, blender) if len(members) > 1 else val_preds[0]",
        *(_CROSS_FITTED_BLEND if combine in LEARNED_BLENDS else []),
        "val_score = float(score_predictions(y_score, val_blend))",
    ]
    if mode == "solution":
        calibrated = bool(train.get("calibrate"))
        lines += _CALIBRATION if calibrated else []
        lines.append('print(f"Final Validation Performance: {val_score}")')
        lines += score_groups_code("crossfit" if calibrated else "val_blend")
        lines += full_fit_and_predict(train)
        lines += ["test_blend = calibrate(test_blend, calibration)"] if calibrated else []
        lines += submission_code()
        lines += final_run_estimate_code(train, spec["metric"])
    return "\n".join(lines)
