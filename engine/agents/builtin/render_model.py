"""Script templates, part 2: the MODEL, LOSS, REGULARIZATION genes and the stub loci.

The genes talk through a small fixed interface so any MODEL can sit next to any LOSS or
REGULARIZATION from another parent: MODEL defines ``make_members()`` and calls
``loss_kwargs(family)``, ``wrap_target(estimator)`` (LOSS) and ``reg_kwargs(name, family)``
(REGULARIZATION) lazily, when TRAINING_TRICKS builds the models.
"""

from __future__ import annotations

from typing import Any

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


def _member_code(member: dict[str, Any], kind: str) -> list[str]:
    family = FAMILIES[member["family"]]
    cls = estimator_class(family, kind)
    args = [f"{k}={py_literal(k, v)}" for k, v in sorted(member["params"].items())]
    args += [f"{k}={v}" for k, v in family.fixed[kind].items()]
    args += [f'**loss_kwargs("{family.key}")', f'**reg_kwargs("{member["name"]}", "{family.key}")']
    prep = "**PREP" if not member.get("prep") else f"**{py_repr(member['prep'])}"
    if family.key in NATIVE_CATEGORY_FAMILIES:
        args.append(f'**category_kwargs({prep[2:]}, "{family.key}")')
    # sized() (TRAINING_TRICKS) may wrap a booster to pick its number of rounds.
    model = f"sized({cls}(" if family.key in SIZED_FAMILIES else f"{cls}("
    close = "))" if family.key in SIZED_FAMILIES else ")"
    return [
        f'    members.append(("{member["name"]}", Pipeline([',
        f"        (\"prep\", make_preprocessor({prep}, family=\"{family.key}\")),",
        f"        (\"model\", wrap_target({model}",
        f"            {', '.join(args)}{close})),",
        "    ])))",
    ]


def render_model(spec: dict[str, Any]) -> str:
    lines = [
        f"# builtin-gene: {dumps(spec['model'])}",
        "def make_members():",
        '    """One (name, unfitted pipeline) per model; TRAINING_TRICKS fits and blends them."""',
        "    members = []",
    ]
    for member in spec["model"]["members"]:
        lines += _member_code(member, spec["kind"])
    lines.append("    return members")
    return "\n".join(lines)


def render_loss(spec: dict[str, Any]) -> str:
    loss = spec["loss"]
    lines = [f"# builtin-gene: {dumps(loss)}"]
    if spec["kind"] == "classification":
        lines += [
            f"CLASS_WEIGHT = {loss.get('class_weight')!r}",
            f"CLASS_WEIGHT_FAMILIES = {CLASS_WEIGHT_FAMILIES!r}",
            "",
            "",
            "def loss_kwargs(family):",
            '    """Re-weight the log-loss per class where the estimator supports it."""',
            "    if CLASS_WEIGHT is not None and family in CLASS_WEIGHT_FAMILIES:",
            '        return {"class_weight": CLASS_WEIGHT}',
            "    return {}",
            "",
            "",
            "def wrap_target(estimator):",
            "    return estimator",
        ]
    else:
        lines += [
            f"TARGET_TRANSFORM = {loss.get('target_transform', 'none')!r}",
            f"POISSON_FAMILIES = {POISSON_OBJECTIVE!r}",
            "",
            "",
            "def loss_kwargs(family):",
            '    """A Poisson objective (log link) where asked for and the target is a non-negative',
            '    amount: the boosters then fit the mean of a count or a skewed amount, not its square."""',
            '    if TARGET_TRANSFORM == "poisson" and family in POISSON_FAMILIES and np.min(y) >= 0 and np.max(y) > 0:',
            "        return dict(POISSON_FAMILIES[family])",
            "    return {}",
            "",
            "",
            "def wrap_target(estimator):",
            '    """Fit the squared loss on a transformed target; predictions are mapped back."""',
            '    if TARGET_TRANSFORM == "standardize":',
            "        return TransformedTargetRegressor(regressor=estimator, transformer=StandardScaler())",
            '    if TARGET_TRANSFORM == "log1p" and np.min(y) > -1:',
            "        return TransformedTargetRegressor(regressor=estimator, func=np.log1p, inverse_func=np.expm1)",
            "    return estimator",
        ]
    return "\n".join(lines)


def render_reg(spec: dict[str, Any]) -> str:
    reg = spec["reg"]
    return "\n".join([
        f"# builtin-gene: {dumps(reg)}",
        f"REG_CFG = {py_repr(reg)}",
        "",
        "",
        "# Below this many columns every boosted tree sees them all: a fraction of two columns is one,",
        "# and trees that each split on a single column cannot learn how the columns interact.",
        "FEW_COLUMNS = 8",
        "",
        "",
        "def reg_kwargs(name, family):",
        '    """Regularisation strength of one model: by member name first, else by family."""',
        "    kwargs = dict(REG_CFG.get(name, REG_CFG.get(family, {})))",
        "    if X_tr.shape[1] < FEW_COLUMNS:",
        '        kwargs.pop("colsample_bytree", None)',
        "    return kwargs",
    ])


def render_stub() -> str:
    return STUB_TEXT
