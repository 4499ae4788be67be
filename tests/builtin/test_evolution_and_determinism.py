"""Evolution roles (draft, merge, mutate, review, profile_evolver), determinism and speed."""

from __future__ import annotations

import pytest

from engine.agents.builtin.catalog import FAMILIES
from engine.agents.builtin.render import new_spec, render_solution
from engine.agents.builtin.spec import LOCI, parse_spec, split_sections
from events.core import AgentCallFailed


def test_draft_avoids_the_history(binary):
    first = binary.ok("draft", task_description="", draft_history=[]).code
    tag = binary.ok("review", code=first, output="").structured["approach_tag"]
    second = binary.ok("draft", task_description="", draft_history=[f"[Step 0] {tag} → metric=0.9"]).code
    fam1 = parse_spec(first)["model"]["members"][0]["family"]
    fam2 = parse_spec(second)["model"]["members"][0]["family"]
    assert fam1 != fam2
    everything = [{"approach_tag": FAMILIES[k].tag} for k in FAMILIES]
    blend = parse_spec(binary.ok("draft", task_description="", draft_history=everything).code)
    assert len(blend["model"]["members"]) == 2


def test_merge_substitutes_planned_genes_and_runs(regression):
    a = regression.ok("init", task_description="", model_name="random forest", example_code="").code
    b = regression.ok("init", task_description="", model_name="ridge regression", example_code="").code
    genes_b = split_sections(b).bodies
    plan = {"MODEL": {"code": genes_b["MODEL"], "source": "node-b"},
            "REGULARIZATION": {"code": "# [SECTION: REGULARIZATION]\n" + genes_b["REGULARIZATION"], "source": "node-b"}}
    child = regression.ok("merge", primary_code=a, gene_plan=plan).code
    bodies = split_sections(child).bodies
    assert bodies["MODEL"] == genes_b["MODEL"] and bodies["DATA"] == split_sections(a).bodies["DATA"]
    assert split_sections(child).valid
    run = regression.run(child)
    assert run.rc == 0, run.stderr
    assert "Member linear" in run.stdout


def test_mutate_changes_only_the_target_section(multiclass):
    parent = multiclass.ok("init", task_description="", model_name="hist gradient boosting", example_code="").code
    before = split_sections(parent).bodies
    for locus in ("DATA", "MODEL", "REGULARIZATION", "LOSS", "TRAINING_TRICKS"):
        child = multiclass.ok("mutate", code=parent, target_locus=locus).code
        after = split_sections(child).bodies
        changed = [name for name in LOCI if after[name] != before[name]]
        assert changed == [locus], (locus, changed)
        assert parse_spec(child) is not None
    multiclass.fails("mutate", code=parent, target_locus="OPTIMIZER")
    multiclass.fails("mutate", code="print(1)", target_locus="MODEL")
    child = multiclass.ok("mutate", code=parent, target_locus="MODEL").code
    run = multiclass.run(child)
    assert run.rc == 0, run.stderr


def test_review_reads_the_harness_output(binary):
    code = binary.ok("init", task_description="", model_name="knn", example_code="").code
    good = binary.ok("review", code=code, output="Member knn: validation roc_auc = 0.91\n"
                                                  "Final Validation Performance: 0.91\n").structured
    assert good == {"approach_tag": good["approach_tag"], "summary": good["summary"], "is_buggy": False}
    assert "kNN" in good["approach_tag"] and "0.91" in good["summary"]
    assert binary.ok("review", code=code, output="Traceback (most recent call last):\nValueError: x").structured["is_buggy"]
    assert binary.ok("review", code=code, output="Final Validation Performance: 1.7").structured["is_buggy"]


def test_profile_evolver_moves_toward_the_elite(binary):
    elite = "draft: prefer svm, knn [builtin-profile: {\"families\": [\"svm\", \"knn\"], \"strength\": 2}]"
    out = binary.ok("profile_evolver", profile="draft: prefer random_forest", stats={"elite_profile": elite}).text
    assert "[builtin-profile:" in out and out.index("svm") < out.index("random_forest")


ROLE_CASES = [
    ("retriever", None, {"task_description": "t", "M": 3}),
    ("planner", None, None),
    ("ens_planner", None, {"solutions": [], "plans": ["a [builtin-ensemble: {\"combine\": \"mean\"}]"], "scores": [1.0]}),
    ("draft", None, {"task_description": "", "draft_history": ["RandomForest"]}),
    ("mutate", None, None),
]


@pytest.mark.parametrize("agent_type,variant,variables", ROLE_CASES)
def test_same_request_same_answer(binary, agent_type, variant, variables):
    code = render_solution(new_spec("classification", "roc_auc", 7, 800, FAMILIES["random_forest"]))
    if variables is None:
        block = code[code.index("# [SECTION: MODEL]"):code.index("# [SECTION: LOSS]")].strip()
        variables = ({"code": code, "target_locus": "MODEL"} if agent_type == "mutate"
                     else {"code_block": block, "plans": ["[builtin-changes: {}]"], "scores": [0.9]})
    first = binary.ask(agent_type, variant, effect_id="x/1", **variables)
    binary.ask("draft", None, effect_id="other", task_description="", draft_history=[])   # unrelated call between
    second = binary.ask(agent_type, variant, effect_id="x/1", **variables)
    fields = ("text", "code", "structured")
    assert [getattr(first, f) for f in fields] == [getattr(second, f) for f in fields]


def test_randomness_comes_from_seed_and_effect_id(binary):
    code = render_solution(new_spec("classification", "roc_auc", 7, 800, FAMILIES["random_forest"]))
    answers = {binary.ask("mutate", effect_id=f"m/{i}", code=code, target_locus="MODEL").code for i in range(8)}
    assert len(answers) > 1


def test_an_unknown_role_fails_and_every_other_role_answers(binary):
    assert isinstance(binary.ask("astrologer"), AgentCallFailed)
    code = binary.ok("init", task_description="", model_name="random forest", example_code="").code
    for agent_type, variant, variables in [
        ("ablation", None, {"solution_script": code, "previous_ablations": []}),
        ("extractor", None, {"solution_script": code, "ablation_summary": "", "previous_code_blocks": []}),
        ("leakage", "detection", {"code": code}),
        ("test", None, {"task description": "", "final solution": code}),
        ("data", None, {"initial solution": code, "task description": ""}),
        ("review", None, {"code": code, "output": "Final Validation Performance: 0.9"}),
    ]:
        binary.ok(agent_type, variant, **variables)
