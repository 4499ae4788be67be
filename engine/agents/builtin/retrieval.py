"""Phase 1 roles: retriever (which models), init (one simple solution per model), merger."""

from __future__ import annotations

import json

from engine.agents.builtin.call import Call, CannotAnswer, Reply, code_reply, require_spec
from engine.agents.builtin.catalog import FAMILIES, estimator_class, example_code, family_for_name, retrieval_order
from engine.agents.builtin.feature_columns import feature_columns
from engine.agents.builtin.image_task import with_images
from engine.agents.builtin.render import new_spec, render_solution
from engine.agents.builtin.render_model import NATIVE_CATEGORY_FAMILIES
from engine.agents.builtin.search_rows import search_rows
from engine.agents.builtin.spec import clone
from engine.agents.builtin.text_task import text_features, with_text

# A booster drafted a second time with the task's category columns as native categories (it splits
# on sets of levels) beside its draft on codes and target means: which of the two does better
# depends on the table and on how many rows it has, so both are drafted and validation decides
# (docs/decisions/0037-native-categories-drafted-beside-codes.md).
NATIVE_CATEGORIES = "with native categories"


def retrieved_families(kind: str, classes: int | None, count: int, categories: bool) -> list[tuple[str, bool]]:
    """The first ``count`` (family, native categories) drafts, best first: the retrieval order,
    and on a task with category columns its first booster's native draft after the booster and
    the linear model paired with it."""
    keys = retrieval_order(kind, classes)
    drafts = [(key, False) for key in keys]
    booster = next((key for key in keys if key in NATIVE_CATEGORY_FAMILIES), None)
    if categories and booster is not None:
        drafts.insert(max(keys.index(booster) + 1, 2), (booster, True))
    return drafts[:count]


def retriever(call: Call) -> Reply:
    """{task_description, M} -> M model families suited to the task kind (and its class count and
    category columns, read off the task's files), best first."""
    try:
        count = max(1, int(call.var("M", default=call.ctx.config.num_retrieved_models)))
    except (TypeError, ValueError):
        count = call.ctx.config.num_retrieved_models
    categories = bool(feature_columns(call.ctx.task_dir, "categorical"))
    drafts = retrieved_families(call.kind, call.classes, count, categories)
    # On free text every model reads the text through TF-IDF and a linear model's stacked predictions.
    on_text = " on TF-IDF text predictions" if text_features(call.ctx.task_dir) else ""
    models = [
        {"model_name": f"{FAMILIES[k].title}{' ' + NATIVE_CATEGORIES if native else ''} "
                       f"({estimator_class(FAMILIES[k], call.kind)}){on_text}",
         "example_code": example_code(FAMILIES[k], call.kind)}
        for k, native in drafts
    ]
    structured = {"models": models}
    return Reply(text=json.dumps(structured, indent=2), structured=structured)


def initial_spec(call: Call, model_name: str) -> dict:
    family = family_for_name(model_name)
    if family is None:
        raise CannotAnswer(
            f"builtin init: no scikit-learn family matches the model {model_name!r}; "
            f"known families: {', '.join(FAMILIES)}")
    spec = new_spec(call.kind, call.metric, call.ctx.seed, search_rows(call.ctx.config), family, call.targets)
    if NATIVE_CATEGORIES in model_name.lower() and family.key in NATIVE_CATEGORY_FAMILIES:
        spec["data"]["prep"]["encode"] = "native"
        spec["title"] = f"{family.title} baseline, categories native"
    return with_text(with_images(spec, call.ctx.task_dir), call.ctx.task_dir)


def init(call: Call) -> Reply:
    """{task_description, model_name, example_code} -> a complete single-model solution."""
    model_name = call.text_var("model_name")
    spec = initial_spec(call, model_name)
    family = FAMILIES[spec["model"]["members"][0]["family"]]
    note = f"A simple {family.title.lower()} solution for {model_name!r}"
    if spec["data"]["prep"]["encode"] == "native":
        note += ", told which columns are categories"
    if family.key == "hist_gradient_boosting" and "hist" not in model_name.lower():
        note += " (LightGBM/XGBoost are not installed here; scikit-learn's histogram GBDT is the same algorithm)"
    return code_reply(render_solution(spec), note + ".")


def _model_signature(spec: dict, member: dict) -> str:
    """What makes a member a model of its own: its family and hyper-parameters, and the
    preprocessing and regularisation it is fitted with (a solution's own or the member's)."""
    reg = spec["reg"].get(member["name"], spec["reg"].get(member["family"]))
    return json.dumps([member["family"], member["params"], member.get("prep") or spec["data"]["prep"], reg],
                      sort_keys=True)


def merge_specs(base: dict, reference: dict) -> dict:
    """Base stays the skeleton; the reference's models join it, each keeping its preprocessing
    and regularisation. A reference model the base already fits the same way is left out; one
    that differs only in how it is prepared or regularised joins (two refinement paths of one
    solution often differ in nothing else, and their blend is the point of Phase 3)."""
    merged = clone(base)
    names = {m["name"] for m in merged["model"]["members"]}
    signatures = {_model_signature(merged, m) for m in merged["model"]["members"]}
    for member in reference["model"]["members"]:
        if _model_signature(reference, member) in signatures:
            continue
        new = clone(member)
        new["prep"] = member.get("prep") or dict(reference["data"]["prep"])
        if new["prep"] == merged["data"]["prep"]:
            new["prep"] = None
        name, i = new["name"], 2
        while name in names:
            name, i = f"{new['name']}_{i}", i + 1
        new["name"] = name
        names.add(name)
        merged["model"]["members"].append(new)
        ref_reg = reference["reg"].get(member["name"], reference["reg"].get(member["family"]))
        if ref_reg is not None:
            # By family when the base has no setting for it, else by the member's own name.
            key = member["family"] if member["family"] not in merged["reg"] else name
            merged["reg"][key] = dict(ref_reg)
    merged["title"] = " + ".join(FAMILIES[m["family"]].title.split(" (")[0] for m in merged["model"]["members"]) + " blend"
    return merged


def merger(call: Call) -> Reply:
    """{base_code, reference_code} -> base plus the reference model, predictions averaged."""
    base = require_spec(call.text_var("base_code"), "merger")
    reference = require_spec(call.text_var("reference_code"), "merger")
    merged = merge_specs(base, reference)
    if len(merged["model"]["members"]) == len(base["model"]["members"]):
        raise CannotAnswer("builtin merger: the reference solution adds no model the base lacks")
    merged["train"]["combine"] = "mean"
    added = [m["name"] for m in merged["model"]["members"][len(base["model"]["members"]):]]
    return code_reply(render_solution(merged),
                      f"Integrated {', '.join(added)} into the base solution; predictions are averaged.")
