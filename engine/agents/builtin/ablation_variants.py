"""The ablation's variants: one component of a builtin solution changed, and the moves that
follow from what a variant measured (larger models, weaker regularisation)."""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.catalog import FAMILIES, NATIVE_MISSING_FAMILIES
from engine.agents.builtin.coordinate_search import apply_changes, family_of
from engine.agents.builtin.image_task import image_feature_variant
from engine.agents.builtin.render import DEFAULT_FEATURES
from engine.agents.builtin.render_data import FEATURE_OPTIONS
from engine.agents.builtin.render_model import NATIVE_CATEGORY_FAMILIES
from engine.agents.builtin.spec import clone
from engine.agents.builtin.text_task import TEXT_NGRAMS

COMPONENT_LOCUS = {
    "feature_engineering": "DATA", "scaling": "DATA", "categorical_encoding": "DATA",
    "missing_indicators": "DATA", "model_capacity": "MODEL", "ensemble_members": "MODEL",
    "regularization": "REGULARIZATION", "loss_weighting": "LOSS", "blending": "TRAINING_TRICKS",
    "text_features": "DATA",
}
# Studied only on a solution whose DATA gene reads free text (text_features.py).
TEXT_COMPONENT = "text_features"
_STRONGER = {"C": lambda v: v / 10, "alpha": lambda v: v * 10, "min_samples_leaf": lambda v: int(v) * 4,
             "min_child_samples": lambda v: int(v) * 2, "l2_regularization": lambda v: max(1.0, v * 10),
             "max_depth": lambda v: 6, "subsample": lambda v: 0.6}
# Weaker regularisation, as places along a family's value list: the smallest leaf a split may leave
# and the penalties, the other way from _STRONGER. Its strength suits some tables and not others
# (LightGBM's 40-row leaves on dev tasks, 5-fold: 82.4 RMSE against 63.2 at 10 on
# industry-unemployment, a low-noise panel; 0.520 against 0.548 log loss on seattle-weather), so
# which way to move it is what the ablation measured, not a constant.
_WEAKER = {"min_child_samples": -2, "min_samples_leaf": -2, "alpha": -2, "l2_regularization": -2, "C": 2}
_CAPACITY = ("n_estimators", "max_iter", "n_neighbors", "hidden_layer_sizes")
CAPACITY_STEP = 2      # places along a family's value list: 400 -> 1000 trees for LightGBM


def ablation_variant(spec: dict[str, Any], component: str) -> tuple[str, dict[str, Any]] | None:
    """(description, changed spec) for one component, or None when it does not apply."""
    change = _COMPONENT_CHANGES.get(component)
    return change(spec, clone(spec)) if change is not None else None


# Each component's change: (the spec, a copy of it to change) -> (description, the changed copy),
# or None when it does not apply.
Variant = tuple[str, dict[str, Any]] | None


def _feature_engineering(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    data = out["data"]
    if data.get("images"):
        return image_feature_variant(out)
    kept = [f for f in data["features"] if f in DEFAULT_FEATURES]
    if len(kept) < len(data["features"]):
        data["features"] = kept
        return "engineered features removed", out
    data["features"] = [f for f in FEATURE_OPTIONS if f in kept or f in ("missing_count", "row_stats")]
    return "row statistics and missing counts added", out


def _scaling(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    prep = out["data"]["prep"]
    prep["scale"] = "standard" if prep["scale"] == "none" else "none"
    return f"numeric scaling {spec['data']['prep']['scale']} -> {prep['scale']}", out


def _categorical_encoding(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    # A booster member can take the categories natively; other models get one-hot columns.
    prep = out["data"]["prep"]
    native = any(m["family"] in NATIVE_CATEGORY_FAMILIES for m in out["model"]["members"])
    prep["encode"] = ("native" if native else "onehot") if prep["encode"] == "ordinal" else "ordinal"
    return f"categorical encoding {spec['data']['prep']['encode']} -> {prep['encode']}", out


def _missing_indicators(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    prep = out["data"]["prep"]
    if prep.get("num_impute") == "native" and any(m["family"] in NATIVE_MISSING_FAMILIES
                                                  for m in out["model"]["members"]):
        # Indicator columns change nothing for a booster that sees the gaps themselves: the
        # study is whether the gaps tell it anything, against medians in their place.
        prep["num_impute"] = "median"
        return "numeric gaps filled with medians instead of reaching the boosters as gaps", out
    prep["indicators"] = not prep.get("indicators")
    return f"missing-value indicator columns {'on' if prep['indicators'] else 'off'}", out


def _model_capacity(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    smaller = capacity_moves(out["model"]["members"], -CAPACITY_STEP)
    out["model"] = apply_changes("MODEL", out["model"], smaller)
    shown = ", ".join(f"{key}={value}" for key, value in smaller.items())
    return (f"smaller models ({shown})", out) if smaller else None


def _regularization(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    changed = []
    for params in out["reg"].values():
        for param, value in params.items():
            if param in _STRONGER and value is not None:
                params[param] = _STRONGER[param](value)
                changed.append(param)
            elif param == "max_depth":
                params[param] = 6
                changed.append(param)
    return (f"stronger regularisation ({', '.join(sorted(set(changed)))})", out) if changed else None


def _loss_weighting(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    if spec["kind"] == "classification":
        out["loss"]["class_weight"] = None if spec["loss"].get("class_weight") else "balanced"
        return f"class_weight {spec['loss'].get('class_weight')} -> {out['loss']['class_weight']}", out
    # Not standardising: rescaling the target changes nothing for trees. A log-link Poisson
    # loss still fits the mean, which a squared-error metric scores; log1p fits the
    # geometric mean, which is what a log-error metric scores.
    shaped = "log1p" if spec["metric"] == "rmsle" else "poisson"
    out["loss"]["target_transform"] = "none" if spec["loss"].get("target_transform") != "none" else shaped
    return f"target transform {spec['loss'].get('target_transform')} -> {out['loss']['target_transform']}", out


def _ensemble_members(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    members = out["model"]["members"]
    if len(members) < 2:
        return None
    out["model"]["members"] = members[:1]
    return f"only {members[0]['name']} (other models dropped)", out


def _text_features(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    # Words alone against words and characters: characters cost most of the extraction's time and
    # help on misspelt or short texts; which the task is, only a score tells.
    text = out["data"].get("text")
    if not text:
        return None
    text["ngrams"] = "word" if text["ngrams"] != "word" else TEXT_NGRAMS[-1]
    return f"text n-grams {spec['data']['text']['ngrams']} -> {text['ngrams']}", out


def _blending(spec: dict[str, Any], out: dict[str, Any]) -> Variant:
    if len(out["model"]["members"]) < 2:
        return None
    out["train"]["combine"] = "weighted" if spec["train"].get("combine") != "weighted" else "mean"
    return f"blend {spec['train'].get('combine')} -> {out['train']['combine']}", out


_COMPONENT_CHANGES = {
    "feature_engineering": _feature_engineering, "scaling": _scaling,
    "categorical_encoding": _categorical_encoding, "missing_indicators": _missing_indicators,
    "model_capacity": _model_capacity, "regularization": _regularization, "loss_weighting": _loss_weighting,
    "ensemble_members": _ensemble_members, "blending": _blending, TEXT_COMPONENT: _text_features,
}


def capacity_moves(members: list[dict[str, Any]], step: int) -> dict[str, Any]:
    """Each member's first capacity setting moved ``step`` places along its family's value list,
    as MODEL-block changes (``{"lightgbm.n_estimators": 1000}``); members already at the end
    of their list in that direction are left out."""
    changes: dict[str, Any] = {}
    for member in members:
        family = FAMILIES[member["family"]]
        for param in _CAPACITY:
            if param in member["params"] and param in family.space:
                values = family.space[param]
                current = member["params"][param]
                moved = _along(values, current if current in values else values[-1], step)
                if moved != current:
                    changes[f"{member['name']}.{param}"] = moved
                break
    return changes


def _along(values: list[Any], value: Any, step: int) -> Any:
    """``value`` moved ``step`` places along a family's ordered ``values``, stopping at either end."""
    return values[min(len(values) - 1, max(0, values.index(value) + step))]


def weaker_regularization(reg: dict[str, Any]) -> dict[str, Any]:
    """Each model's leaf-size and penalty settings (``_WEAKER``) moved along its family's value
    list the weaker way, as REGULARIZATION-block changes (``{"lightgbm.min_child_samples": 10}``);
    settings already at the end of their list are left out."""
    changes: dict[str, Any] = {}
    for name, params in reg.items():
        family = FAMILIES.get(family_of(name) or "")
        for param, value in (params or {}).items():
            if family is None or param not in _WEAKER or param not in family.space or value not in family.space[param]:
                continue
            moved = _along(family.space[param], value, _WEAKER[param])
            if moved != value:
                changes[f"{name}.{param}"] = moved
    return changes
