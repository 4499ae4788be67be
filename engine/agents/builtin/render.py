"""Building specs and turning them into whole scripts, single sections or ablation studies."""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.blocks import block, definitions, fill, insert, lines
from engine.agents.builtin.catalog import FAMILIES, Family
from engine.agents.builtin.render_data import render_data, render_preamble
from engine.agents.builtin.render_model import render_loss, render_model, render_reg, render_stub
from engine.agents.builtin.render_train import render_train
from engine.agents.builtin.spec import LOCI, clone, join_sections

# Date-like text columns become calendar numbers, and names nearly all different their first and
# last words, unless the search finds that worse: without them an unseen test date or name is an
# unknown category; on a table without dates or names they add nothing.
DEFAULT_FEATURES = ("dates", "name_words")
_SECTION_RENDERERS = {
    "DATA": render_data,
    "MODEL": render_model,
    "LOSS": render_loss,
    "REGULARIZATION": render_reg,
    "TRAINING_TRICKS": render_train,
}


def member_for(family: Family, kind: str, name: str | None = None) -> dict[str, Any]:
    return {"name": name or family.key, "family": family.key,
            "params": dict(family.model_params[kind]), "prep": None}


def new_spec(kind: str, metric: str, seed: int, subsample: int | None, family: Family,
             targets: tuple[str, ...] = ()) -> dict[str, Any]:
    """A simple single-model solution, with the preprocessing this family likes; ``targets``:
    the task's target columns when it has several (the script then predicts each of them)."""
    loss = {"class_weight": None} if kind == "classification" else {
        # Scale-sensitive learners fit better on a standardised target; trees do not care.
        "target_transform": "standardize" if family.prep.get("scale") != "none" else "none"}
    spec: dict[str, Any] = {"targets": list(targets)} if len(targets) > 1 else {}
    return spec | {
        "kind": kind,
        "metric": metric,
        "seed": int(seed),
        "title": f"{family.title} baseline",
        "data": {"features": list(DEFAULT_FEATURES), "prep": dict(family.prep), "val_size": 0.2,
                 "subsample": subsample, "extra_train": [], "extra_join": []},
        "model": {"members": [member_for(family, kind)]},
        "loss": loss,
        "reg": {family.key: dict(family.reg_params[kind])},
        # The score comes from folds the models did not train on; the submitted models then
        # learn from every training row.
        # Boosted members are sized by early stopping on an inner split (render_train).
        "train": {"combine": "mean", "early_stop": True, "final_fit": "full"},
    }


def render_body(spec: dict[str, Any], locus: str, *, mode: str = "solution") -> str:
    if locus not in _SECTION_RENDERERS:
        return render_stub()
    if locus == "TRAINING_TRICKS":
        return render_train(spec, mode=mode)
    return _SECTION_RENDERERS[locus](spec)


def render_section(spec: dict[str, Any], locus: str) -> str:
    """One section as it appears in the script, marker line included, stripped."""
    return f"# [SECTION: {locus}]\n{render_body(spec, locus)}".strip()


def render_solution(spec: dict[str, Any]) -> str:
    return join_sections(render_preamble(spec), {locus: render_body(spec, locus) for locus in LOCI})


def render_ablation(spec: dict[str, Any], variants: list[tuple[str, str, dict[str, Any]]]) -> str:
    """A script that runs the solution once per variant and prints every variant's score
    (``script_blocks/ablation*.py``); ``variants[0]`` is the unchanged baseline."""
    preamble = render_preamble(spec, suffix="- ablation study (builtin offline agent)")
    functions = [_ablation_variant(i, *variant) for i, variant in enumerate(variants)]
    runs = lines(*(fill(block("ablation_run"), INDEX=str(i), COMPONENT=component, DESCRIPTION=description)
                   for i, (component, description, _) in enumerate(variants)))
    return definitions(preamble, *functions, insert(block("ablation"), runs=runs)) + "\n"


def _ablation_variant(index: int, component: str, description: str, variant: dict[str, Any]) -> str:
    """The solution's own code for one variant (rendered from its spec), wrapped in a function."""
    sections = lines(*(lines(f"# [{locus}]", render_body(variant, locus, mode="ablation")) for locus in LOCI))
    code = fill(block("ablation_variant"), INDEX=str(index), COMPONENT=component, DESCRIPTION=description)
    return insert(code, sections=sections)


def approach_tag(spec: dict[str, Any]) -> str:
    """One line naming the approach, the way the evolution's draft history lists it."""
    members = spec["model"]["members"]
    names = " + ".join(FAMILIES[m["family"]].tag for m in members)
    prep = spec["data"]["prep"]
    parts = [names if len(members) == 1 else f"{names} ({spec['train'].get('combine', 'mean')} blend)",
             f"{prep.get('encode')}/{prep.get('scale')}"]
    if spec["data"].get("features"):
        parts.append("fe:" + ",".join(spec["data"]["features"]))
    if spec["data"].get("text"):
        parts.append("text:{model}/{ngrams}".format(**spec["data"]["text"]))
    return " | ".join(parts)


def with_families(spec: dict[str, Any], families: list[Family]) -> dict[str, Any]:
    """The spec with its models replaced by one member per given family (used by draft)."""
    out = clone(spec)
    kind = spec["kind"]
    out["model"]["members"] = []
    out["reg"] = {}
    for family in families:
        member = member_for(family, kind)
        if family.prep != out["data"]["prep"]:
            member["prep"] = dict(family.prep)
        out["model"]["members"].append(member)
        out["reg"][family.key] = dict(family.reg_params[kind])
    return out
