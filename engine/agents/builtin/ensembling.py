"""Phase 3 roles: ens_planner (how to combine, guided by scores) and ensembler (one program)."""

from __future__ import annotations

import json
import re
from typing import Any

from engine.agents.builtin.call import Call, CannotAnswer, Reply, as_float, code_reply
from engine.agents.builtin.catalog import FAMILIES, bags_rows, varies_with_seed
from engine.agents.builtin.coordinate_search import ADD_MEMBER, apply_changes, partners
from engine.agents.builtin.plan_texts import COMBINE_DESCRIPTIONS
from engine.agents.builtin.render import render_solution
from engine.agents.builtin.retrieval import merge_specs
from engine.agents.builtin.spec import parse_spec
from events.score import Ties

ENSEMBLE_RE = re.compile(r"\[builtin-ensemble: (\{.*?\})\]")
_LEARNED = ("weighted", "stacking")
_ROBUST = ("median", "rank")
# A method's tunable setting: (its name, the value the method uses when not told, others to try in order)
_VARIANTS: dict[str, tuple[str, float, list[float]]] = {"weighted": ("rounds", 25, [50, 10]),
                                                        "stacking": ("meta_c", 1.0, [0.1, 10.0])}
# Seed bags to try on the best combination, in order: each one costs a fit per seed, so a longer
# Phase 3 (the time mode's, on a long limit) goes on lowering variance where it used to stop
# when the methods ran out.
SEED_BAGS = (3, 5, 8)
# Once every blend of the solutions' models and its refinements were tried, a plan may add one
# model of a family none of them has (``"add": family``), blended by the learned method that
# scored best: a long Phase 3 whose solutions are one converged model (held-out senator-tenure
# at 600 s: two k-NN paths, eight rounds, then no plan with a fifth of the limit left) still has
# a next plan, and a learned blend gives the new model weight only where it helps.


def settings_of(plan: str) -> dict | None:
    """The combine settings a plan asks for: our tag first, else keywords."""
    m = ENSEMBLE_RE.search(plan or "")
    if m:
        try:
            return json.loads(m.group(1))
        except ValueError:
            return None
    low = (plan or "").lower()
    for word, method in (("stack", "stacking"), ("rank", "rank"), ("weight", "weighted"),
                         ("median", "median"), ("averag", "mean"), ("mean", "mean")):
        if word in low:
            return {"combine": method}
    return None


def _methods(call: Call) -> list[str]:
    methods = ["mean", "weighted", "stacking", "rank", "median"]
    if call.kind == "regression" or call.metric == "logloss":
        methods.remove("rank")          # ranks are not values or probabilities
    return methods


def _refinements(best: dict, can_bag: bool) -> list[dict]:
    """What to try on the best combination once every method was: the next bigger seed bag,
    then the method's own setting, then the bigger bags after it."""
    seeds = int(best.get("seeds", 1))
    bags = [{**best, "seeds": n} for n in SEED_BAGS if n > seeds] if can_bag else []
    variants = []
    if best.get("combine") in _VARIANTS:
        key, default, values = _VARIANTS[best["combine"]]
        # The default is written as the method without its setting: the plan it is (tried or not).
        variants = [{k: v for k, v in best.items() if k != key} if value == default else {**best, key: value}
                    for value in [default, *values] if best.get(key, default) != value]
    return bags[:1] + variants + bags[1:]


def ens_planner(call: Call) -> Reply:
    """{solutions, plans, scores} -> a combination not tried yet, steered by what scored well."""
    plans = [str(p) for p in call.list_var("plans")]
    scores = [as_float(s) for s in call.list_var("scores")]
    history = [(settings_of(p), scores[i] if i < len(scores) else None) for i, p in enumerate(plans)]
    tried = {json.dumps(s, sort_keys=True) for s, _ in history if s}
    best, best_score = _best_plan(call, history)
    specs = _specs(call)
    if specs and len(_merged(specs)["model"]["members"]) == 1:
        return _plan_for_one_model(call, specs, history, tried)
    order = _methods(call)
    if best is not None:
        # A robust blend won so far -> try the other robust one next; else learned blends.
        family = _ROBUST if best.get("combine") in _ROBUST else _LEARNED
        order.sort(key=lambda m: m not in family)
    tried_methods = {s.get("combine") for s, _ in history if s}
    choice = next(({"combine": method} for method in order if method not in tried_methods), None)
    if choice is None:
        choice = _refined(call, specs, history, tried, order, best)
    if choice is None:
        choice = _with_another_model(call, specs, history, tried)
    if choice is None:
        raise CannotAnswer("builtin ens_planner: every combination method it knows was tried")
    return _plan_reply(choice, best, best_score)


def _best_plan(call: Call, history: list[tuple[dict | None, float | None]]) -> tuple[dict | None, float | None]:
    """The settings of the plan that scored best so far, and its score."""
    best, best_score = None, None
    for settings, score in history:
        if settings and call.score_rule.improves(score, best_score):
            best, best_score = settings, score
    return best, best_score


def _refined(call: Call, specs: list[dict], history: list[tuple[dict | None, float | None]], tried: set[str],
             order: list[str], best: dict | None) -> dict[str, Any] | None:
    """Once every method was tried: the best combination's refinements first, then each other
    method's, the methods that scored better first (a long Phase 3 goes on until every one was
    tried); the first not tried yet."""
    can_bag = any(bagged_members(spec) for spec in specs)
    method_best = {m: call.score_rule.best([s for st, s in history if st and st.get("combine") == m],
                                           lambda s: s, Ties.FIRST_WINS) for m in order}
    ranked = [order[i] for i in call.score_rule.ranked([method_best[m] for m in order])]
    bases = ([best] if best else []) + [{"combine": m} for m in ranked + [m for m in order if m not in ranked]]
    return next((c for base in bases for c in _refinements(base, can_bag)
                 if json.dumps(c, sort_keys=True) not in tried), None)


def _plan_reply(choice: dict[str, Any], best: dict | None, best_score: float | None) -> Reply:
    text = COMBINE_DESCRIPTIONS[str(choice["combine"])]
    if choice.get("add") in FAMILIES:
        text += (f" Add a {FAMILIES[choice['add']].title} model, a family none of the solutions has: a model "
                 "unlike theirs errs differently, and the learned blend weighs it only where it helps.")
    settings = {k: v for k, v in choice.items() if k not in ("combine", "add")}
    if settings:
        text += " Settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()) + "."
    if best is not None:
        text += f" Best so far: {best.get('combine')} with {best_score}."
    return Reply(text=f"{text} [builtin-ensemble: {json.dumps(choice, sort_keys=True)}]")


def _with_another_model(call: Call, specs: list[dict], history: list[tuple[dict | None, float | None]],
                        tried: set[str]) -> dict[str, Any] | None:
    """The learned blend that scored best (the weighted one when neither was tried) of the
    solutions' models and one model of a family none of them has, first such plan not tried."""
    if not specs:
        return None
    learned = [(s, score) for s, score in history if s and s.get("combine") in _LEARNED and "add" not in s]
    best = call.score_rule.best(learned, lambda item: item[1], Ties.FIRST_WINS)
    method = best[0]["combine"] if best is not None else "weighted"
    model = _merged(specs)["model"]
    for family in partners(model, call.kind, call.classes, cap=len(model["members"]) + 1):
        plan = {"combine": method, "add": family}
        if json.dumps(plan, sort_keys=True) not in tried:
            return plan
    return None


def _plan_for_one_model(call: Call, specs: list[dict], history: list[tuple[dict | None, float | None]],
                        tried: set[str]) -> Reply:
    """The solutions hold one model between them (paths that changed nothing, or the same model
    prepared the same way): every blend of it is the model itself, so only a seed bag, or a blend
    with a model of another family, can differ."""
    bags = [{"combine": "mean", "seeds": n} for n in SEED_BAGS] if any(bagged_members(s) for s in specs) else []
    choice = next((b for b in bags if json.dumps(b, sort_keys=True) not in tried), None)
    if choice is not None:
        return Reply(text=f"The solutions hold a single model between them: fit it under {choice['seeds']} seeds "
                          f"and average. [builtin-ensemble: {json.dumps(choice, sort_keys=True)}]")
    widened = _with_another_model(call, specs, history, tried)
    if widened is None:
        raise CannotAnswer("builtin ens_planner: the solutions hold a single model between them, so any blend of "
                           "it is the model itself" + ("; every seed bag of it was tried" if bags else
                                                       ", and its fits do not vary with the seed")
                           + ", and every family it could be blended with was tried")
    return _plan_reply(widened, None, None)


def bagged_members(spec: dict[str, Any]) -> list[str]:
    """The members of a solution a seed bag would fit more than once: those whose fits vary with
    the seed, and the boosters it bags on row samples (their regularisation is looked up as the
    script does: by member name, else by family)."""
    reg = spec.get("reg") or {}
    members = [(FAMILIES[m["family"]], {**reg.get(m["name"], reg.get(m["family"], {})), **m["params"]}, m["name"])
               for m in spec["model"]["members"]]
    return [name for family, params, name in members if varies_with_seed(family, params) or bags_rows(family, params)]


def _specs(call: Call) -> list[dict]:
    """The builtin specs of the solutions (those without one are left out)."""
    return [spec for spec in (parse_spec(str(s)) for s in call.list_var("solutions")) if spec is not None]


def _merged(specs: list[dict]) -> dict:
    """One spec fitting every distinct model of the solutions (the first one's skeleton)."""
    merged = specs[0]
    for other in specs[1:]:
        merged = merge_specs(merged, other)
    return merged


def ensembler(call: Call) -> Reply:
    """{solutions, plan} -> ONE program training every model of the solutions and combining them."""
    solutions = [str(s) for s in call.list_var("solutions")]
    usable = _specs(call)
    if not usable:
        raise CannotAnswer("builtin ensembler: none of the solutions carries a builtin spec")
    merged = _merged(usable)
    settings = settings_of(call.text_var("plan")) or {"combine": "mean"}
    if settings.get("combine") not in COMBINE_DESCRIPTIONS:
        settings = {"combine": "mean"}
    seeds = settings.get("seeds")
    if "seeds" in settings and not (isinstance(seeds, int) and 1 <= seeds <= max(SEED_BAGS)):
        settings = {k: v for k, v in settings.items() if k != "seeds"}   # a plan's odd value: one seed
    added = settings.pop("add", None)
    present = {m["family"] for m in merged["model"]["members"]}
    if not isinstance(added, str) or added not in FAMILIES or added in present:
        added = None        # a plan's odd value, or a family the solutions have: nothing to add
    if added is not None:
        merged["model"] = apply_changes("MODEL", merged["model"], {ADD_MEMBER: added}, call.kind)
    # A boosted member keeps being sized by early stopping when a solution it comes from was.
    kept = {k: v for k, v in merged["train"].items() if k == "final_fit"}
    if any(spec["train"].get("early_stop") for spec in usable):
        kept["early_stop"] = True
    # Its members' cross-validation runs again here: on a short window the script scores on the
    # folds it has time for rather than being cut whole (render_cv).
    merged["train"] = {**kept, **settings, "window_folds": True}
    note = f"Ensemble of {len(merged['model']['members'])} models from {len(usable)} solutions ({settings['combine']}"
    note += f", each seed-varying model fit under {settings['seeds']} seeds)." if int(settings.get("seeds", 1)) > 1 else ")."
    if added is not None:
        note += f" A {FAMILIES[added].title} model, which none of the solutions has, was added."
    if len(usable) < len(solutions):
        note += f" {len(solutions) - len(usable)} solution(s) without a builtin spec were left out."
    return code_reply(render_solution(merged), note)
