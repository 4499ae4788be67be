"""One rule for what a call's role may do (engine/agents/roles.py), for both strategies' roles,
and the claude backend carrying it to the CLI for the evolution roles (REQ-OR-005/008).

The claude backend once knew only MLE-STAR's fourteen ``AgentType`` roles: every evolution call
failed with "'draft' is not a valid AgentType" before the CLI started, so every step of
``--strategy evolve --agent claude`` became a dead node.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.agents.claude.backend import ClaudeBackend
from engine.agents.roles import EVOLUTION_ROLES, RoleSettings, UnknownRole, role_settings
from events.agent_outputs import LeakageDetectionOutput
from events.agents import CODE_TOOLS, READ_TOOLS, build_default_agent_configs
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import AgentType, PipelineConfig
from handlers.evolution import prompts as evo
from handlers.evolution.genes import LOCI

EVOLUTION_SOURCES = sorted((Path(__file__).resolve().parents[2] / "handlers" / "evolution").glob("*.py"))
SCRIPT = "# [SECTION: DATA]\nimport pandas as pd\nprint('Final Validation Performance: 0.9')\n"
CODE_REPLY = f"Here is the program.\n```python\n{SCRIPT}```\n"
REVIEW = {"approach_tag": "random forest", "summary": "ran cleanly", "is_buggy": False}


def requested_roles() -> set[str]:
    """Every role name the evolution handlers put in a request (the first string after the effect id)."""
    pattern = re.compile(r"_request\(\s*effect_id,\s*\"(\w+)\"")
    return {name for path in EVOLUTION_SOURCES for name in pattern.findall(path.read_text(encoding="utf-8"))}


def evolution_requests() -> dict[str, AgentCallRequested]:
    """One real request per evolution role, built by the handlers' own builders."""
    task = "Classify iris flowers; metric accuracy."
    plan = {locus: {"source": "node-0", "code": f"# {locus.lower()}"} for locus in LOCI}
    return {
        "draft": evo.draft_request("s/draft", task_description=task, draft_history=[], profile="careful"),
        "merge": evo.merge_request("s/merge", task_description=task, primary_parent="node-0", primary_code=SCRIPT,
                                   gene_plan=plan, profile="careful"),
        "mutate": evo.mutate_request("s/mutate", task_description=task, parent="node-0", code=SCRIPT,
                                     target_locus="MODEL", profile="careful"),
        "evo_debug": evo.debug_request("s/debug", task_description=task, code=SCRIPT, error="NameError: x",
                                       output="", attempt=1),
        "review": evo.review_request("s/review", task_description=task, code=SCRIPT, output="0.9"),
        "profile_evolver": evo.profile_evolver_request("s/profile", profile="careful", elite_profile="bold",
                                                       stats={"score": 0.9}),
    }


def test_every_role_the_evolution_handlers_request_has_settings():
    roles = requested_roles()
    assert roles == {"draft", "merge", "mutate", "evo_debug", "review", "profile_evolver"}  # the scan found them
    assert roles == set(EVOLUTION_ROLES)
    assert {r.agent_type for r in evolution_requests().values()} == roles


def test_evolution_roles_get_tools_by_what_they_do():
    for writer in ("draft", "merge", "mutate", "evo_debug"):
        assert role_settings(writer) == RoleSettings(CODE_TOOLS)
    assert role_settings("review").tools == READ_TOOLS
    assert role_settings("profile_evolver").tools == ()


def test_mle_star_roles_keep_their_configured_settings():
    configs = build_default_agent_configs()
    for agent_type, config in configs.items():
        settings = role_settings(agent_type)
        assert settings.tools == tuple(config.tools or ()) and settings.output_model is config.output_schema
    assert role_settings("leakage", "detection").output_model is LeakageDetectionOutput
    assert role_settings("leakage", "correction").output_model is None  # a variant's override still applies
    assert role_settings("test", "contamination").tools == READ_TOOLS
    assert not set(EVOLUTION_ROLES) & set(AgentType._value2member_map_)  # no name means two things


def test_an_unknown_role_is_refused_with_the_known_ones_named():
    with pytest.raises(UnknownRole, match=r"no agent role 'painter' \(known roles: .*draft.*retriever"):
        role_settings("painter")


def _backend(fake, env) -> ClaudeBackend:
    return ClaudeBackend(PipelineConfig(), env=env, cli_path=fake.cli_path, sandbox="none")


@pytest.mark.anyio
async def test_claude_backend_runs_every_evolution_role_with_its_tools(fake_claude, ctx, secret_env):
    requests = evolution_requests()
    order = list(requests)
    fake_claude.script(*[{"steps": [{"type": "assistant", "text": CODE_REPLY},
                                    {"type": "result", "result": CODE_REPLY,
                                     **({"structured_output": REVIEW} if role == "review" else {})}]}
                         for role in order])
    backend = _backend(fake_claude, secret_env)
    results = {role: await backend.call(requests[role], ctx) for role in order}

    assert all(isinstance(r, AgentCallCompleted) for r in results.values()), results
    for i, role in enumerate(order):
        tools = fake_claude.flag("--tools", i)
        if role == "profile_evolver":
            assert tools == "" and fake_claude.flag("--allowedTools", i) is None
        elif role == "review":
            assert tools == "Read" and fake_claude.flag("--allowedTools", i) == "Read"
        else:  # the writers run code: the coding tools and the two MCP tools of REQ-OR-010
            assert tools == "Bash,Edit,Write,Read"
            assert fake_claude.flag("--allowedTools", i) == \
                "Bash,Edit,Write,Read,mcp__mle__parse_score,mcp__mle__list_data_files"
        schema = fake_claude.flag("--json-schema", i)
        assert (json.loads(schema) if schema else None) == (evo.REVIEW_SCHEMA if role == "review" else None)
    assert results["review"].structured == REVIEW and results["review"].code is None
    assert results["draft"].code == SCRIPT.rstrip("\n")


@pytest.mark.anyio
async def test_claude_backend_fails_an_unknown_role_at_once_without_starting_the_cli(fake_claude, ctx, secret_env):
    backend = _backend(fake_claude, secret_env)
    request = AgentCallRequested(effect_id="s/paint", agent_type="painter", prompt="Paint.")
    result = await backend.call(request, ctx)
    assert isinstance(result, AgentCallFailed) and result.attempts == 1
    assert "no agent role 'painter'" in result.error
    assert fake_claude.records() == []
