"""The MODEL, LOSS, REGULARIZATION genes and the stub loci, assembled from their blocks.

The code is in ``script_blocks/``: ``model.py`` with one ``member.py`` per member,
``loss_classification.py`` or ``loss_regression.py``, and ``regularization.py``.

The genes talk through a small fixed interface so any MODEL can sit next to any LOSS or
REGULARIZATION from another parent: MODEL defines ``make_members()`` and calls
``loss_kwargs(family)``, ``wrap_target(estimator)`` (LOSS) and ``reg_kwargs(name, family)``
(REGULARIZATION) lazily, when TRAINING_TRICKS builds the models.
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.blocks import block, body, definitions, fill, insert, lines
from engine.agents.builtin.catalog import FAMILIES, estimator_class, py_literal
from engine.agents.builtin.spec import dumps, py_repr

STUB_TEXT = "# not applicable"   # under the 20-character stub threshold on purpose
CLASS_WEIGHT_FAMILIES = sorted(k for k, f in FAMILIES.items() if f.class_weight)
# The families told which columns are categories when the DATA gene encodes them "native". Both
# boosters: a run whose Phase 1 picked the histogram booster over LightGBM by a hair could not reach
# native categories (athlete-weight's 201 nationalities and 27 sports: LightGBM's validation RMSE
# 9.46 on codes, 8.70 native; the histogram booster's runs stayed at 9.4 and graded 4-5 % worse).
NATIVE_CATEGORY_FAMILIES = ("lightgbm", "hist_gradient_boosting")
# The boosters, sized by early stopping when the TRAINING_TRICKS gene asks for it (render_train).
SIZED_FAMILIES = ("lightgbm", "hist_gradient_boosting", "gradient_boosting")
# The families whose estimator takes a Poisson loss, and the keyword that asks for it; other
# members of a solution whose LOSS gene says "poisson" keep the squared loss.
POISSON_OBJECTIVE = {"hist_gradient_boosting": {"loss": "poisson"}, "lightgbm": {"objective": "poisson"}}


def _member_code(member: dict[str, Any], kind: str) -> str:
    family = FAMILIES[member["family"]]
    args = [f"{k}={py_literal(k, v)}" for k, v in sorted(member["params"].items())]
    args += [f"{k}={v}" for k, v in family.fixed[kind].items()]
    args += [f'**loss_kwargs("{family.key}")', f'**reg_kwargs("{member["name"]}", "{family.key}")']
    prep = "**PREP" if not member.get("prep") else f"**{py_repr(member['prep'])}"
    if family.key in NATIVE_CATEGORY_FAMILIES:
        args.append(f'**category_kwargs({prep[2:]}, "{family.key}")')
    # sized() (TRAINING_TRICKS) may wrap a booster to pick its number of rounds.
    code = body("member", "sized_member" if family.key in SIZED_FAMILIES else "member")
    return fill(code, NAME=member["name"], FAMILY=family.key, PREP=prep, ESTIMATOR=estimator_class(family, kind),
                ARGS=", ".join(args))


def render_model(spec: dict[str, Any]) -> str:
    members = lines(*(_member_code(member, spec["kind"]) for member in spec["model"]["members"]))
    code = insert(block("model"), members=members)
    if spec.get("targets"):
        code = definitions(code, block("multi_target_model"))
    return lines(f"# builtin-gene: {dumps(spec['model'])}", code)


def render_loss(spec: dict[str, Any]) -> str:
    loss = spec["loss"]
    if spec["kind"] == "classification":
        code = block("loss_classification", CLASS_WEIGHT=repr(loss.get("class_weight")),
                     CLASS_WEIGHT_FAMILIES=repr(CLASS_WEIGHT_FAMILIES))
    else:
        code = block("loss_regression", TARGET_TRANSFORM=repr(loss.get("target_transform", "none")),
                     POISSON_FAMILIES=repr(POISSON_OBJECTIVE))
    return lines(f"# builtin-gene: {dumps(loss)}", code)


def render_reg(spec: dict[str, Any]) -> str:
    reg = spec["reg"]
    return lines(f"# builtin-gene: {dumps(reg)}", block("regularization", REG_CFG=py_repr(reg)))


def render_stub() -> str:
    return STUB_TEXT
