"""Prompt templates and registry (REQ-DM-030..035), list formatting (REQ-P2I-010, P2O-002/013),
system prompt (REQ-OR-007), build_request and code extraction (REQ-SF-005)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.core import AgentCallRequested
from events.domain import AgentType, MetricDirection
from handlers.prompts import (
    DEFAULT_REGISTRY,
    PromptRegistry,
    PromptTemplate,
    build_request,
    extract_code_block,
    format_plan_history,
    format_previous_ablations,
    format_previous_code_blocks,
    longest_fenced_block,
    render_system_prompt,
)

# Variables per (agent, variant), exactly as the spec-01 digest table names them.
EXPECTED_VARIABLES = {
    ("retriever", None): ["task_description", "M"],
    ("init", None): ["task_description", "model_name", "example_code"],
    ("merger", None): ["base_code", "reference_code"],
    ("ablation", None): ["solution_script", "previous_ablations"],
    ("summarize", None): ["ablation_code", "raw_result"],
    ("extractor", None): ["solution_script", "ablation_summary", "previous_code_blocks"],
    ("coder", None): ["code_block", "plan"],
    ("planner", None): ["code_block", "plans", "scores"],
    ("ens_planner", None): ["solutions", "plans", "scores"],
    ("ensembler", None): ["solutions", "plan"],
    ("debugger", None): ["code", "bug"],
    ("leakage", "detection"): ["code"],
    ("leakage", "correction"): ["code"],
    ("data", None): ["initial solution", "task description"],
    ("test", None): ["task description", "final solution"],
    ("test", "subsampling_extract"): ["final solution"],
    ("test", "subsampling_remove"): ["code block with subsampling"],
    ("test", "contamination"): ["reference discussion", "final solution"],
}


def sample_values(template: PromptTemplate) -> dict:
    lists = {"previous_ablations": ["s1"], "previous_code_blocks": ["b1"], "plans": ["p"], "scores": [0.5],
             "solutions": ["a = 1", "b = 2"]}
    return {name: lists.get(name, f"<{name}>") for name in template.variables}


def test_req_dm_033_registry_has_14_agent_keys_and_18_templates():
    assert len(DEFAULT_REGISTRY) == 14
    assert set(DEFAULT_REGISTRY) == set(AgentType)
    assert len(DEFAULT_REGISTRY.templates()) == 18


@pytest.mark.parametrize(("key", "variables"), sorted(EXPECTED_VARIABLES.items(), key=str))
def test_req_dm_030_variables_match_the_spec_table(key, variables):
    template = DEFAULT_REGISTRY.get(*key)
    assert template.variables == variables
    assert template.agent_type == AgentType(key[0])


def test_req_dm_033_figures_9_to_22_and_25_to_28_are_covered():
    figures = {int(t.figure_ref.split()[1]) for t in DEFAULT_REGISTRY.templates()}
    assert figures == set(range(9, 23)) | set(range(25, 29))


def test_req_dm_034_035_variants_and_defaults():
    assert DEFAULT_REGISTRY.get(AgentType.leakage).variant == "detection"
    assert DEFAULT_REGISTRY.get("leakage", "correction").figure_ref == "Figure 21"
    assert DEFAULT_REGISTRY.get("test").figure_ref == "Figure 25"
    assert DEFAULT_REGISTRY.get("test", "subsampling_extract").figure_ref == "Figure 26"
    assert DEFAULT_REGISTRY.get("test", "subsampling_remove").figure_ref == "Figure 27"
    assert DEFAULT_REGISTRY.get("test", "contamination_check").figure_ref == "Figure 28"  # alias
    assert sorted(map(str, DEFAULT_REGISTRY.variants("test"))) == sorted(
        ["None", "subsampling_extract", "subsampling_remove", "contamination"])


def test_req_dm_032_unknown_keys_raise_key_error():
    with pytest.raises(KeyError):
        DEFAULT_REGISTRY.get("nonexistent")
    with pytest.raises(KeyError, match="known variants"):
        DEFAULT_REGISTRY.get("coder", "fancy")


def test_req_dm_031_render_substitutes_placeholders():
    t = PromptTemplate(agent_type="retriever", figure_ref="Figure 9",
                       template="List {M} models for {task_description}", variables=["task_description", "M"])
    assert t.render(M=4, task_description="classify images") == "List 4 models for classify images"


def test_req_dm_031_missing_variable_is_a_key_error_naming_it():
    with pytest.raises(KeyError, match="'plan'"):
        DEFAULT_REGISTRY.get("coder").render(code_block="x = 1")
    with pytest.raises(KeyError, match="task description"):
        DEFAULT_REGISTRY.get("data").render(**{"initial solution": "x"})


def test_req_dm_031_literal_braces_are_left_alone():
    rendered = DEFAULT_REGISTRY.get("init").render(task_description="t", model_name="m", example_code="d = {'a': 1}")
    assert "Final Validation Performance: {final_validation_score}" in rendered
    assert "d = {'a': 1}" in rendered
    retriever = DEFAULT_REGISTRY.get("retriever").render(task_description="t", M=3)
    assert '{"model_name": "<name>", "example_code": "<python code>"}' in retriever


def test_req_dm_031_values_are_not_expanded_twice():
    rendered = DEFAULT_REGISTRY.get("coder").render(code_block="print('{plan}')", plan="PLAN")
    assert "print('{plan}')" in rendered and rendered.count("PLAN") == 1


def test_req_dm_031_variables_with_spaces():
    rendered = DEFAULT_REGISTRY.get("test").render(**{"task description": "TASK-X", "final solution": "SOL-Y"})
    assert "TASK-X" in rendered and "SOL-Y" in rendered and "{" + "final solution}" not in rendered


@pytest.mark.parametrize("template", DEFAULT_REGISTRY.templates(), ids=lambda t: f"{t.agent_type.value}-{t.variant}")
def test_every_template_renders_every_declared_placeholder(template):
    rendered = template.render(**sample_values(template))
    for name in template.placeholders:
        assert "{" + name + "}" not in rendered


def test_template_with_undeclared_variable_is_rejected():
    with pytest.raises(ValueError, match="does not occur"):
        PromptTemplate(agent_type="coder", figure_ref="Figure 15", template="{code_block}", variables=["code_block", "plan"])


def test_registry_rejects_duplicates():
    t = DEFAULT_REGISTRY.get("coder")
    with pytest.raises(ValueError, match="duplicate"):
        PromptRegistry([t, t])


def test_prompts_keep_the_spec_invariant_sentences():
    assert "Do not remove subsampling if exists." in DEFAULT_REGISTRY.get("debugger").template
    assert "DO NOT USE TRY AND EXCEPT; just occur error so we can debug it!" in DEFAULT_REGISTRY.get("data").template
    assert "All the provided information is used." in DEFAULT_REGISTRY.get("data").template
    assert "Just modify it with the above code." in DEFAULT_REGISTRY.get("leakage", "correction").template
    assert "./final/submission.csv" in DEFAULT_REGISTRY.get("test").template
    for agent in ("init", "merger", "debugger"):
        assert "Final Validation Performance" in DEFAULT_REGISTRY.get(agent).template


# --- list formatting ---------------------------------------------------------------------


def test_req_p2i_010_plan_history_format():
    text = format_plan_history(["plan A", "plan B"], [0.82, None])
    assert text.startswith("# Improvement plans you have tried\n\n")
    assert "## Plan: plan A\n## Score: 0.82" in text
    assert "## Plan: plan B\n## Score: N/A (evaluation failed)" in text
    assert text.index("plan A") < text.index("plan B")


def test_plan_history_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        format_plan_history(["a"], [])


def test_req_p2o_002_013_empty_sections_are_omitted():
    assert format_previous_ablations([]) == "" and format_previous_code_blocks([]) == ""
    with_history = DEFAULT_REGISTRY.get("ablation").render(solution_script="S", previous_ablations=["first", "second"])
    without = DEFAULT_REGISTRY.get("ablation").render(solution_script="S", previous_ablations=[])
    assert "## Ablation study 1\nfirst" in with_history and "## Ablation study 2\nsecond" in with_history
    assert "earlier ablation" not in without
    extractor = DEFAULT_REGISTRY.get("extractor").render(solution_script="S", ablation_summary="A", previous_code_blocks=[])
    assert "already improved" not in extractor


def test_req_p3_ensemble_planner_first_round_has_no_history():
    first = DEFAULT_REGISTRY.get("ens_planner").render(solutions=["a = 1", "b = 2"], plans=[], scores=[])
    later = DEFAULT_REGISTRY.get("ens_planner").render(solutions=["a = 1", "b = 2"], plans=["avg"], scores=[0.7])
    assert "## Solution 1\n```python\na = 1\n```" in first and "## Solution 2" in first
    assert "## Plan:" not in first and "## Plan: avg\n## Score: 0.7" in later


# --- system prompt and requests -------------------------------------------------------------


def test_req_or_007_system_prompt_has_persona_task_metric_and_gpus(task):
    text = render_system_prompt(task, {"cuda_available": True, "gpu_count": 2, "gpu_names": ["V100", "V100"]})
    assert "Kaggle grandmaster" in text and task.description in text
    assert "accuracy" in text and "maximize" in text and "higher is better" in text
    assert "2 CUDA GPUs" in text and "V100" in text
    minimize = render_system_prompt(task.model_copy(update={"metric_direction": MetricDirection.minimize}), {})
    assert "lower is better" in minimize and "No GPU" in minimize


def test_build_request_renders_and_attaches_schema():
    request = build_request("leakage", {"code": "x = 1"}, effect_id="phase1/leak-0", session_key="phase1")
    assert isinstance(request, AgentCallRequested)
    assert request.agent_type == "leakage" and request.variant == "detection"
    assert request.output_schema["title"] == "LeakageDetectionOutput"
    assert "x = 1" in request.prompt and request.variables == {"code": "x = 1"}
    assert request.session_key == "phase1" and request.system_prompt is None


def test_build_request_free_text_roles_have_no_schema_and_keep_raw_lists():
    request = build_request("planner", {"code_block": "c", "plans": ("p",), "scores": (None,)}, effect_id="e")
    assert request.output_schema is None
    assert request.variables == {"code_block": "c", "plans": ["p"], "scores": [None]}
    assert AgentCallRequested.model_validate(request.payload()) == request  # survives the store
    correction = build_request("leakage", {"code": "c"}, variant="correction", effect_id="e2")
    assert correction.output_schema is None


def test_build_request_missing_variable():
    with pytest.raises(KeyError):
        build_request("merger", {"base_code": "b"}, effect_id="e")


# --- code extraction ---------------------------------------------------------------------------


def test_req_sf_005_extraction_rules():
    assert extract_code_block("```python\nprint('hello')\n```") == "print('hello')"
    assert extract_code_block("```\nbare\n```") == "bare"
    assert extract_code_block("  just text  ") == "just text"
    assert longest_fenced_block("no fence here") is None
    two = "```python\na = 1\n```\ntext\n```python\nlonger = 2\nmore = 3\n```"
    assert extract_code_block(two) == "longer = 2\nmore = 3"


def test_extraction_handles_nested_fences_and_truncation():
    nested = "````markdown\nuse\n```python\nx\n```\n````"
    assert extract_code_block(nested) == "use\n```python\nx\n```"
    assert extract_code_block("```python\nunterminated = 1\n") == "unterminated = 1"


@given(st.text(alphabet=st.characters(blacklist_characters="`~"), min_size=1).filter(lambda s: s.strip()))
def test_extraction_roundtrip_property(body):
    body = body.strip("\n")
    assert extract_code_block(f"intro\n```python\n{body}\n```\noutro") == body
