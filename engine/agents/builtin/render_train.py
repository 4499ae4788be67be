"""The TRAINING_TRICKS gene (fit, blend, score, final fit, submission), assembled from its blocks.

Only the blending code of the chosen method is written (``script_blocks/blend_<method>.py``), so
a script reads like something a person wrote for that one method. Weights and meta-models are
learned on the hold-out split (weighted) or on out-of-fold predictions (stacking). The blocks, in
script order: ``training``, the blend, ``early_stop`` or ``not_sized``, ``members`` or
``seed_bag`` (render_bag), ``cv`` (render_cv), ``validation``, ``calibration``, ``score_groups``,
``full_fit``, ``submission``, ``final_run_estimate`` (render_final).
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.blocks import block, definitions, fill, insert, lines, regions
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

COMBINE_METHODS = ("mean", "weighted", "stacking", "rank", "median")   # one script_blocks/blend_<method>.py each


def quoted(text: str) -> str:
    return f'"{text}"'


def score_groups_code(scored: str) -> str:
    """The final validation score as the engine reads it, and the metric on SCORE_GROUPS fixed
    groups of the scored rows (``script_blocks/score_groups.py``); ``scored``: the predictions the
    final score is on."""
    code = block("score_groups", SCORE_GROUPS=str(SCORE_GROUPS))
    return fill(code, SCORED=scored, SCORE_GROUPS_LABEL=SCORE_GROUPS_LABEL)


def sizing_code(train: dict[str, Any]) -> str:
    """``sized()``: boosters sized by early stopping when the gene asks for it, else as given."""
    if not train.get("early_stop"):
        return block("not_sized")
    code = block("early_stop", SEARCH_ROWS=str(int(train.get("score_rows") or 0)))
    return insert(code, deadline=block("deadline"))


def setup_code(train: dict[str, Any], *, multi_target: bool = False) -> str:
    """The gene's settings, the blend, the sizing and the members: what every mode starts with
    (``multi_target``: several targets, whose stacking meta-model is one per target)."""
    combine = train.get("combine", "mean")
    settings = block("training", COMBINE=quoted(combine), FINAL_FIT=quoted(train.get("final_fit", "holdout")),
                     BLEND_ROUNDS=str(int(train.get("rounds", 25))), META_C=str(float(train.get("meta_c", 1.0))))
    blend = block(f"blend_{combine}")
    if combine == "stacking":
        blend = regions(blend, multi_target=multi_target)
    return definitions(settings, blend, sizing_code(train), members_code(train))


def validation_code(train: dict[str, Any]) -> str:
    combine = train.get("combine", "mean")
    return regions(block("validation"), weighted=combine == "weighted", learned=combine in LEARNED_BLENDS)


def render_train(spec: dict[str, Any], *, mode: str = "solution") -> str:
    """``mode="ablation"`` stops after the validation score and writes nothing."""
    train = spec["train"]
    setup = lines(f"# builtin-gene: {dumps(train)}", setup_code(train, multi_target=bool(spec.get("targets"))),
                  block("per_target") if spec.get("targets") else None)
    if mode == "solution" and train.get("rescore") is False and train.get("final_fit") == "full":
        # A test script whose combination learns nothing from out-of-fold predictions: the run
        # measured its score; it only fits every model on all rows (finalization.test).
        return lines(setup, block("measured_score"), full_fit_and_predict(train), submission_code(spec))
    # An ablation study runs the script once per variant and only compares them: three folds
    # keep its cost inside a short Phase 2 (at --time-limit 120 five folds overran it).
    cv = cross_validation_code(train, folds=3 if mode == "ablation" else 5, report_members=mode == "solution",
                               multi_target=bool(spec.get("targets")))
    if mode != "solution":
        return lines(setup, cv, validation_code(train))
    calibrated = bool(train.get("calibrate"))
    return lines(setup, cv, validation_code(train), block("calibration") if calibrated else None,
                 score_groups_code("crossfit" if calibrated else "val_blend"),
                 full_fit_and_predict(train, calibrated=calibrated), submission_code(spec),
                 final_run_estimate_code(train, spec["metric"]))
