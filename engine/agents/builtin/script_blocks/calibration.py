"""Log-loss probabilities calibrated on the out-of-fold predictions (TRAINING_TRICKS gene ``calibrate``).

Log-loss punishes a confident mistake without bound: boosted trees fit on a few hundred rows give
1e-9 to classes they have seen rarely, and one such test row can cost more than the rest together.
A temperature (flatten or sharpen) and a floor (mix with the uniform distribution) are chosen on
out-of-fold predictions; the reported score is cross-fitted, each fold's rows calibrated with
settings chosen on the other folds, so it stays honest. ``full_fit.py`` calibrates the test
predictions the same way.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import (
    METRIC,
    SEED,
    KFold,
    np,
    score_predictions,
    val_blend,
    val_score,
    y_score,
)

# --- script ---
CAL_TEMPERATURES = (0.8, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)
CAL_FLOORS = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1)


def calibrate(pred, setting):
    temperature, floor = setting
    proba = np.clip(np.asarray(pred, dtype=float), 1e-15, None) ** (1.0 / temperature)
    proba = proba / proba.sum(axis=1, keepdims=True)
    return (1.0 - floor) * proba + floor / proba.shape[1]


def fit_calibration(pred, y_true):
    grid = [(t, f) for t in CAL_TEMPERATURES for f in CAL_FLOORS]
    return min(grid, key=lambda setting: score_predictions(y_true, calibrate(pred, setting)))


calibration = fit_calibration(val_blend, y_score)
crossfit = np.zeros_like(np.asarray(val_blend, dtype=float))
for rest, part in KFold(5, shuffle=True, random_state=SEED).split(val_blend):
    crossfit[part] = calibrate(val_blend[part], fit_calibration(val_blend[rest], y_score[rest]))
print(f"Calibration (temperature, floor): {calibration}; uncalibrated {METRIC} = {val_score:.6f}")
val_score = float(score_predictions(y_score, crossfit))
