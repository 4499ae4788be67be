"""Blend with weights found by greedy forward selection, with replacement, on the validation predictions."""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import BLEND_ROUNDS, GREATER_IS_BETTER, np, score_predictions


# --- script ---
def fit_blender(val_preds, y_true):
    """Greedy forward selection with replacement on the hold-out split -> blend weights."""
    sign = 1.0 if GREATER_IS_BETTER else -1.0
    stacked = np.asarray(val_preds)
    counts = np.zeros(len(val_preds))
    for _ in range(BLEND_ROUNDS):
        best_j, best_s = 0, None
        for j in range(len(val_preds)):
            trial = counts.copy()
            trial[j] += 1
            s = sign * score_predictions(y_true, np.tensordot(trial / trial.sum(), stacked, axes=1))
            if best_s is None or s > best_s:
                best_j, best_s = j, s
        counts[best_j] += 1
    return counts / counts.sum()


def blend(preds, weights):
    return np.tensordot(weights, np.asarray(preds), axes=1)
