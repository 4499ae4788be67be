"""The builtin agent answers the requests the real handlers build (names, variants, schemas)."""

from __future__ import annotations

from engine.agents.builtin.catalog import PREFERENCE
from events.agent_outputs import ExtractorOutput, LeakageDetectionOutput, RetrieverOutput
from events.core import AgentCallCompleted
from handlers.evolution import genes, profiles
from handlers.evolution import prompts as evo
from handlers.prompts import requests


def _answer(env, request) -> AgentCallCompleted:
    result = env.backend.answer(request, env.ctx())
    assert isinstance(result, AgentCallCompleted), getattr(result, "error", result)
    return result


def test_mle_star_requests(binary):
    build = requests.build_request
    models = RetrieverOutput.model_validate(_answer(binary, build(
        "retriever", {"task_description": "t", "M": 2}, effect_id="r")).structured).models
    init = _answer(binary, build("init", {"task_description": "t", "model_name": models[0].model_name,
                                          "example_code": models[0].example_code}, effect_id="i")).code
    other = _answer(binary, build("init", {"task_description": "t", "model_name": models[1].model_name,
                                           "example_code": models[1].example_code}, effect_id="i2")).code
    merged = _answer(binary, build("merger", {"base_code": init, "reference_code": other}, effect_id="m")).code
    ext = ExtractorOutput.model_validate(_answer(binary, build(
        "extractor", {"solution_script": merged, "ablation_summary": "s", "previous_code_blocks": []},
        effect_id="x")).structured)
    assert ext.plans[0].code_block in merged
    _answer(binary, build("ablation", {"solution_script": merged, "previous_ablations": []}, effect_id="a"))
    _answer(binary, build("coder", {"code_block": ext.plans[0].code_block, "plan": ext.plans[0].plan}, effect_id="c"))
    _answer(binary, build("planner", {"code_block": ext.plans[0].code_block, "plans": [ext.plans[0].plan],
                                      "scores": [0.9]}, effect_id="p"))
    plan = _answer(binary, build("ens_planner", {"solutions": [init, other], "plans": [], "scores": []},
                                 effect_id="e")).text
    _answer(binary, build("ensembler", {"solutions": [init, other], "plan": plan}, effect_id="en"))
    LeakageDetectionOutput.model_validate(_answer(binary, build("leakage", {"code": merged}, effect_id="l")).structured)
    _answer(binary, build("data", {"initial solution": merged, "task description": "t"}, effect_id="d"))
    _answer(binary, build("test", {"task description": "t", "final solution": merged}, effect_id="t"))
    _answer(binary, build("test", {"final solution": merged}, effect_id="s1", variant="subsampling_extract"))
    _answer(binary, build("test", {"reference discussion": "r", "final solution": merged}, effect_id="k",
                          variant="contamination"))


def test_evolution_requests(regression):
    history = []
    codes = {}
    for step in range(3):
        request = evo.draft_request(f"d{step}", task_description="t", draft_history=history,
                                    profile=profiles.SEED_PROFILES[step])
        code = _answer(regression, request).code
        assert genes.parse_genes(code).valid
        review = _answer(regression, evo.review_request(f"r{step}", task_description="t", code=code,
                                                        output="Final Validation Performance: 1.0"))
        assert set(review.structured) <= set(evo.REVIEW_SCHEMA["properties"])
        history.append({"step": step, "approach_tag": review.structured["approach_tag"], "metric": 1.0})
        codes[f"n{step}"] = code
    tags = [h["approach_tag"] for h in history]
    assert len(set(tags)) == 3, tags
    a, b = genes.parse_genes(codes["n0"]), genes.parse_genes(codes["n1"])
    plan = {locus: {"code": (b if locus in ("MODEL", "LOSS") else a).bodies[locus],
                    "source": "n1" if locus in ("MODEL", "LOSS") else "n0"} for locus in genes.LOCI}
    child = _answer(regression, evo.merge_request("m", task_description="t", primary_parent="n0",
                                                  primary_code=codes["n0"], gene_plan=plan, profile="")).code
    assert genes.parse_genes(child).valid
    assert genes.parse_genes(child).bodies["MODEL"] == b.bodies["MODEL"]
    mutated = _answer(regression, evo.mutate_request("u", task_description="t", parent="n0", code=codes["n0"],
                                                      target_locus="REGULARIZATION",
                                                      profile=profiles.SEED_PROFILES[3])).code
    assert genes.parse_genes(mutated).valid and mutated != codes["n0"]
    broken = codes["n0"].replace("import numpy as np\n", "")
    fixed = _answer(regression, evo.debug_request("g", task_description="t", code=broken, output="", attempt=1,
                                                  error="Traceback (most recent call last):\n  File \"s.py\", "
                                                        "line 9, in <module>\nNameError: name 'np' is not defined"))
    assert "import numpy as np" in fixed.code
    evolved = _answer(regression, evo.profile_evolver_request("pe", profile=profiles.SEED_PROFILES[2],
                                                              elite_profile=profiles.SEED_PROFILES[0],
                                                              stats={"best": None, "worst": None})).text
    # The evolved profile leads with the agent's first-choice family (LightGBM where installed).
    assert evolved.startswith("draft:") and PREFERENCE["regression"][0] in evolved.split("\n")[0]
