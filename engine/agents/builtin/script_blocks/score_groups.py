"""The validation score as the engine reads it, and the metric on fixed groups of the scored rows.

Row ``i`` of the scored rows is in group ``i mod SCORE_GROUPS``: the same rows in every script of
a run, whose folds come in one seeded order. From the groups' scores the engine weighs a gain
against the validation noise (``handlers.script_lines``, which also holds the label,
``__SCORE_GROUPS_LABEL__``). ``__SCORED__`` is the predictions the final score is on.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import __SCORED__, np, score_predictions, val_score, y_score

# --- script ---
print(f"Final Validation Performance: {val_score}")
SCORE_GROUPS = 16
if len(y_score) >= 2 * SCORE_GROUPS:
    group_values = []
    for group in range(SCORE_GROUPS):
        rows = np.arange(group, len(y_score), SCORE_GROUPS)
        try:  # a group with one class has no AUC: nan, left out of the comparison
            group_values.append(float(score_predictions(y_score[rows], np.asarray(__SCORED__)[rows])))
        except ValueError:
            group_values.append(float("nan"))
    print("__SCORE_GROUPS_LABEL__", " ".join(f"{value:.10g}" for value in group_values))
