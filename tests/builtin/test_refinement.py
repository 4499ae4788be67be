"""Phase 2 roles: ablation -> summarize -> extractor -> coder, and the planner's search."""

from __future__ import annotations

import re

from engine.agents.builtin.spec import parse_spec
from events.domain import ExtractorOutput


def _solution(env, model="random forest"):
    return env.ok("init", task_description="", model_name=model, example_code="").code


def test_ablation_summary_extractor_coder_chain(multiclass):
    script = _solution(multiclass)
    abl = multiclass.ok("ablation", solution_script=script, previous_ablations=[]).code
    run = multiclass.run(abl)
    assert run.rc == 0, run.stderr
    rows = re.findall(r"^ABLATION (\S+) \|", run.stdout, re.M)
    assert rows[0] == "baseline" and 3 <= len(rows) <= 4
    assert "Most impactful component" in run.stdout

    summary = multiclass.ok("summarize", ablation_code=abl, raw_result=run.stdout).text
    assert "Most impactful component" in summary and "[component:" in summary

    # A second ablation avoids the components the first one studied.
    abl2 = multiclass.ok("ablation", solution_script=script, previous_ablations=[summary]).code
    studied = set(rows[1:])
    second = set(re.findall(r'results\.append\(\("(\w+)"', abl2)) - {"baseline"}
    assert not (second & studied) or len(second - studied) >= 1

    out = ExtractorOutput.model_validate(multiclass.ok(
        "extractor", solution_script=script, ablation_summary=summary, previous_code_blocks=[]).structured)
    block, plan = out.plans[0].code_block, out.plans[0].plan
    assert block in script
    assert "[builtin-changes:" in plan

    new_block = multiclass.ok("coder", code_block=block, plan=plan).code
    assert new_block != block
    refined = script.replace(block, new_block, 1)
    assert parse_spec(refined) is not None
    run2 = multiclass.run(refined)
    assert run2.rc == 0, run2.stderr and run2.score is not None

    # The next extraction prefers a block that was not improved before.
    again = multiclass.ok("extractor", solution_script=script, ablation_summary=summary,
                          previous_code_blocks=[block]).structured
    assert again["plans"][0]["code_block"] != block
    assert again["plans"][0]["code_block"] in script


def test_planner_is_a_search_over_history(binary):
    script = _solution(binary)
    ext = binary.ok("extractor", solution_script=script, ablation_summary="", previous_code_blocks=[]).structured
    block, plan0 = ext["plans"][0]["code_block"], ext["plans"][0]["plan"]
    p_good = binary.ok("planner", code_block=block, plans=[plan0], scores=[0.95]).text
    p_bad = binary.ok("planner", code_block=block, plans=[plan0], scores=[None]).text
    p_two = binary.ok("planner", code_block=block, plans=[plan0, p_good], scores=[0.95, 0.90]).text
    tags = [re.search(r"\[builtin-changes: (.*)\]", p).group(1) for p in (plan0, p_good, p_bad, p_two)]
    assert len(set(tags)) == 4, tags
    # Every plan is implementable by the coder and yields a different block.
    for plan in (p_good, p_bad, p_two):
        assert binary.ok("coder", code_block=block, plan=plan).code != block


def test_planner_continues_a_direction_that_paid_off(regression):
    script = _solution(regression)
    block = [b for b in [script[script.index("# [SECTION: MODEL]"):script.index("# [SECTION: LOSS]")].strip()]][0]
    plan_up = ("[builtin-changes: {\"random_forest.n_estimators\": 500}]")
    nxt = regression.ok("planner", code_block=block, plans=[plan_up], scores=[0.5]).text
    assert '"random_forest.n_estimators": 800' in nxt


def test_coder_understands_plain_text_and_refuses_nonsense(binary):
    script = _solution(binary)
    block = script[script.index("# [SECTION: REGULARIZATION]"):script.index("# [SECTION: INITIALIZATION]")].strip()
    out = binary.ok("coder", code_block=block, plan="Set min_samples_leaf to 4 to smooth the leaves.").code
    assert "'min_samples_leaf': 4" in out
    binary.fails("coder", code_block=block, plan="Make it better somehow.")
    binary.fails("coder", code_block="x = 1\n", plan="set C to 3")
