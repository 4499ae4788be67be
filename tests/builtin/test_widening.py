"""Issue 28 (spend the budget): a search whose settings are all known widens to a blend.

A one-model solution has few settings (a k-NN: ten), so a long run's refinement paths used to
re-propose scripts already scored until their steps ran out, and the run ended with a third of
its time unused (held-out senator-tenure at 600 s: 72 % used). Once nothing near the best plan
is left, the planner adds a model of another family to the MODEL block, and the scores decide
whether the blend stays.
"""

from __future__ import annotations

import itertools
import json
import re

from engine.agents.builtin.catalog import FAMILIES
from engine.agents.builtin.coordinate_search import (
    ADD_MEMBER,
    MAX_MEMBERS,
    apply_changes,
    dimensions,
    new_member,
    partners,
)
from engine.agents.builtin.spec import parse_gene_block, parse_spec

TAG = re.compile(r"\[builtin-changes: (\{.*\})\]")


def _knn(env):
    script = env.ok("init", task_description="", model_name="k-nearest neighbours", example_code="").code
    block = script[script.index("# [SECTION: MODEL]"):script.index("# [SECTION: LOSS]")].strip()
    return script, block, parse_gene_block(block)[1]


def _changes(plan: str) -> dict:
    return json.loads(TAG.search(plan).group(1))


def _every_setting(gene: dict) -> list[dict]:
    """Every change-set of the block's own settings, as (knn) plans."""
    dims = dimensions("MODEL", gene, "regression")
    plans = []
    for values in itertools.product(*(d.values for d in dims)):
        changes = {d.key: v for d, v in zip(dims, values) if v != d.current}
        if changes:
            plans.append(changes)
    return plans


def test_a_converged_one_model_block_widens_to_a_blend_that_runs(regression):
    script, block, gene = _knn(regression)
    assert [m["family"] for m in gene["members"]] == ["knn"]
    # Early in a loop the planner moves the block's own settings.
    first = _changes(regression.ok("planner", code_block=block, plans=["[builtin-changes: {}]"],
                                   scores=[40.0]).text)
    assert ADD_MEMBER not in first

    tried = _every_setting(gene)
    scores = [40.0 + i for i in range(len(tried))]       # the first plan scored best (lower RMSE)
    plans = [f"[builtin-changes: {json.dumps(c)}]" for c in tried]
    widened = _changes(regression.ok("planner", code_block=block, plans=plans, scores=scores).text)
    expected = partners(gene, "regression")
    assert widened == {**tried[0], ADD_MEMBER: expected[0]}

    plan = regression.ok("planner", code_block=block, plans=plans, scores=scores).text
    assert f"add a {FAMILIES[expected[0]].title} model to the blend" in plan
    new_block = regression.ok("coder", code_block=block, plan=plan).code
    members = parse_gene_block(new_block)[1]["members"]
    assert [m["family"] for m in members] == ["knn", expected[0]]
    run = regression.run(script.replace(block, new_block, 1))
    assert run.rc == 0 and run.score is not None, run.stderr

    # With that blend scored too, the next family is tried, still from the best plan.
    more = _changes(regression.ok("planner", code_block=block, plans=plans + [plan],
                                  scores=scores + [45.0]).text)
    assert more == {**tried[0], ADD_MEMBER: expected[1]}


def test_widening_stops_at_the_member_cap_and_refuses_unknown_families(regression):
    _, block, gene = _knn(regression)
    full = gene
    while len(full["members"]) < MAX_MEMBERS:
        full = apply_changes("MODEL", full, {ADD_MEMBER: partners(full, "regression")[0]}, "regression")
    assert partners(full, "regression") == []
    names = [m["name"] for m in full["members"]]
    assert len(set(names)) == len(names)
    # A member added under a name the block already uses gets its own.
    assert new_member({"members": [{"name": "linear"}]}, "linear", "regression")["name"] == "linear_2"

    refused = regression.fails("coder", code_block=block, plan='[builtin-changes: {"members.add": "transformer"}]')
    assert "cannot add a member of family 'transformer'" in refused.error
    odd = regression.fails("coder", code_block=block, plan='[builtin-changes: {"members.add": ["svm"]}]')
    assert "cannot add a member of family ['svm']" in odd.error


def test_an_ensemble_plan_naming_no_known_family_adds_nothing(regression):
    script, _, _ = _knn(regression)
    for odd in ('"transformer"', '["svm"]', "3"):
        plan = f'Blend them. [builtin-ensemble: {{"combine": "mean", "add": {odd}}}]'
        ens = regression.ok("ensembler", solutions=[script, script], plan=plan)
        spec = parse_spec(ens.code)
        assert [m["family"] for m in spec["model"]["members"]] == ["knn"]
        assert spec["train"]["combine"] == "mean" and "add" not in spec["train"]


def test_a_blend_the_ablation_scored_better_without_a_member_drops_it_and_runs(regression):
    """The other way: the ablation's "only <first> (other models dropped)" variant scored better,
    so the extractor's plan drops the rest (``DROP_MEMBERS``) and the narrowed script runs
    (football-goals at 600 s: a blend gave its booster weight 0, the ablation found the blend
    better without it, and no plan could say so, so the booster was fitted in every later run)."""
    from engine.agents.builtin.coordinate_search import DROP_MEMBERS

    base = regression.ok("init", task_description="", model_name="random forest", example_code="").code
    other = regression.ok("init", task_description="", model_name="SVM", example_code="").code
    blend = regression.ok("merger", base_code=base, reference_code=other).code
    members = [m["name"] for m in parse_spec(blend)["model"]["members"]]
    assert len(members) == 2
    summary = ("Baseline rmse: 40.000000 (lower is better).\n"
               f"- [component: ensemble_members] only {members[0]} (other models dropped): 38.000000 (-2.000000); "
               "the change helps, so this is worth changing.\n"
               "Most impactful component: ensemble_members (|change| 2.000000); revise the MODEL settings first.")
    (plan,) = regression.ok("extractor", solution_script=blend, ablation_summary=summary,
                            previous_code_blocks=[]).structured["plans"]
    assert plan["code_block"].startswith("# [SECTION: MODEL]")
    assert _changes(plan["plan"]) == {DROP_MEMBERS: members[1:]}
    assert f"drop {json.dumps(members[1:])} from the blend" in plan["plan"]
    narrowed = regression.ok("coder", code_block=plan["code_block"], plan=plan["plan"]).code
    assert [m["name"] for m in parse_gene_block(narrowed)[1]["members"]] == members[:1]
    run = regression.run(blend.replace(plan["code_block"], narrowed, 1))
    assert run.rc == 0 and run.score is not None, run.stderr
    assert f"Member {members[0]}" in run.stdout and f"Member {members[1]}" not in run.stdout


def test_a_drop_keeps_a_member_and_names_only_members(regression):
    gene = {"members": [new_member({"members": []}, "random_forest", "regression")]}
    gene = apply_changes("MODEL", gene, {ADD_MEMBER: "linear"}, "regression")
    names = [m["name"] for m in gene["members"]]
    for bad in ([], names, ["no_such_model"], 3):
        try:
            apply_changes("MODEL", gene, {"members.drop": bad}, "regression")
        except ValueError as exc:
            assert "drop" in str(exc)
        else:
            raise AssertionError(f"dropping {bad!r} was accepted")
    assert [m["name"] for m in apply_changes("MODEL", gene, {"members.drop": names[1:]})["members"]] == names[:1]
