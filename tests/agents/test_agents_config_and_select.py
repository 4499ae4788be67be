"""AgentConfig (REQ-DM-036..040, REQ-OR-006/008), backend selection, and the pure helpers of
the claude backend: safety policy (REQ-OR-033), redaction, retry classification, structured output."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from engine.agents.bash_policy import BashPolicy
from engine.agents.claude.hooks import CallHooks
from engine.agents.errors import BackendUnavailable
from engine.agents.retry import classify_error_result, classify_exception
from engine.agents.secrets import REDACTED, Redactor, detect_credentials
from engine.agents.select import make_backend, select_backend
from engine.agents.structured import MalformedOutput, validate_structured
from events.agent_outputs import DataContaminationResult, ExtractorOutput, LeakageDetectionOutput, RetrieverOutput
from events.agents import AgentConfig, agent_config_for, build_default_agent_configs
from events.domain import AgentType, PipelineConfig

CODE = ["Bash", "Edit", "Write", "Read"]
REQ_OR_008 = {
    "retriever": ["WebSearch", "WebFetch"], "init": CODE, "merger": CODE, "ablation": CODE, "summarize": ["Read"],
    "extractor": ["Read"], "planner": ["Read"], "coder": CODE, "ens_planner": ["Read"], "ensembler": CODE,
    "debugger": CODE, "leakage": ["Read"], "data": ["Read"], "test": CODE,
}

# --- AgentConfig ------------------------------------------------------------------------------


def test_req_dm_040_exactly_14_configs_model_inherit():
    configs = build_default_agent_configs()
    assert set(configs) == set(AgentType) and len(configs) == 14
    assert all(c.model is None and c.agent_type == t for t, c in configs.items())


@pytest.mark.parametrize(("agent", "tools"), sorted(REQ_OR_008.items()))
def test_req_or_008_tools_per_agent(agent, tools):
    assert build_default_agent_configs()[AgentType(agent)].tools == tools


def test_req_dm_040_output_schemas():
    configs = build_default_agent_configs()
    schemas = {t.value: c.output_schema for t, c in configs.items() if c.output_schema}
    assert schemas == {"retriever": RetrieverOutput, "extractor": ExtractorOutput, "leakage": LeakageDetectionOutput}
    assert configs[AgentType.data].output_schema is None  # SF-024 wins over OR-006


def test_variant_overrides():
    assert agent_config_for("leakage", "correction").output_schema is None
    assert agent_config_for("leakage", "detection").output_schema is LeakageDetectionOutput
    contamination = agent_config_for("test", "contamination_check")
    assert contamination.output_schema is DataContaminationResult and contamination.tools == ["Read"]
    assert agent_config_for("test").tools == CODE


def test_one_roles_config_is_the_defaults_entry_for_it():
    """agent_config_for builds the one role's default alone (resume asks for one per request)."""
    defaults = build_default_agent_configs()
    for agent_type in AgentType:
        assert agent_config_for(agent_type) == defaults[agent_type]
        assert agent_config_for(agent_type, configs=defaults) is defaults[agent_type]


def test_each_request_gets_its_own_copy_of_a_schema():
    first = agent_config_for("extractor").json_schema()
    assert first == ExtractorOutput.model_json_schema()
    first["properties"].clear()  # a caller changing its copy changes no other
    assert agent_config_for("extractor").json_schema() == ExtractorOutput.model_json_schema()


def test_req_dm_037_to_agent_definition_is_an_sdk_agent_definition():
    from claude_agent_sdk import AgentDefinition

    for config in build_default_agent_configs().values():
        definition = config.to_agent_definition()
        assert set(definition) == {"description", "prompt", "tools", "model"}
        assert AgentDefinition(**definition).prompt  # accepted by the SDK, never empty
    bare = AgentConfig(agent_type="coder", description="codes", max_turns=7).to_agent_definition()
    assert bare["prompt"] == "codes" and bare["maxTurns"] == 7 and bare["tools"] is None


def test_req_dm_038_to_output_format():
    configs = build_default_agent_configs()
    assert configs[AgentType.retriever].to_output_format() == {"type": "json_schema",
                                                               "schema": RetrieverOutput.model_json_schema()}
    assert configs[AgentType.coder].to_output_format() is None


def test_req_dm_036_config_serialises_schema_as_json():
    dumped = build_default_agent_configs()[AgentType.extractor].model_dump(mode="json")
    assert dumped["output_schema"]["name"] == "ExtractorOutput"
    assert dumped["output_schema"]["schema"] == ExtractorOutput.model_json_schema()
    json.dumps(dumped)


# --- selection -------------------------------------------------------------------------------------


def test_select_claude_requires_credentials():
    with pytest.raises(BackendUnavailable):
        make_backend("claude", config=PipelineConfig(), env={})
    choice = select_backend("claude", config=PipelineConfig(), env={"ANTHROPIC_API_KEY": "sk-ant-xxxxxxxxxxxx"})
    assert choice.name == "claude" and "ANTHROPIC_API_KEY" in choice.explanation
    assert "sk-ant" not in choice.explanation


@pytest.fixture
def fake_builtin(monkeypatch):
    module = types.ModuleType("engine.agents.builtin")

    class BuiltinBackend:
        name = "builtin"

        def __init__(self, config=None):
            self.config = config

        async def call(self, request, ctx):  # pragma: no cover
            raise NotImplementedError

    module.BuiltinBackend = BuiltinBackend
    monkeypatch.setitem(sys.modules, "engine.agents.builtin", module)
    return BuiltinBackend


def test_select_auto(fake_builtin):
    config = PipelineConfig()
    offline = select_backend("auto", config=config, env={})
    assert offline.name == "builtin" and isinstance(offline.backend, fake_builtin)
    assert offline.backend.config is config and "no Claude credentials" in offline.explanation
    online = select_backend("auto", config=config, env={"CLAUDE_CODE_OAUTH_TOKEN": "oauth-token-123"})
    assert online.name == "claude" and "CLAUDE_CODE_OAUTH_TOKEN" in online.explanation


def test_select_dotted_paths():
    config = PipelineConfig()
    backend = make_backend("tests.agents.agents_test_backends:EchoBackend", config=config)
    assert backend.name == "echo" and backend.config is config
    factory = make_backend("tests.agents.agents_test_backends:make_echo", config=config, replay_source="src")
    assert factory.kwargs == {"config": config, "replay_source": "src"}
    positional = make_backend("tests.agents.agents_test_backends:SourceBackend", config=config, replay_source="run-7")
    assert positional.source == "run-7"
    with pytest.raises(BackendUnavailable, match="async call"):
        make_backend("tests.agents.agents_test_backends:NotABackend", config=config)
    with pytest.raises(BackendUnavailable, match="cannot import"):
        make_backend("no_such_module_xyz:Thing", config=config)
    with pytest.raises(BackendUnavailable, match="unknown backend"):
        make_backend("gpt", config=config)


def test_select_replay(monkeypatch):
    module = types.ModuleType("engine.agents.recorded")

    class ReplayBackend:
        name = "replay"

        def __init__(self, replay_source):
            self.source = replay_source

        async def call(self, request, ctx):  # pragma: no cover
            raise NotImplementedError

    module.ReplayBackend = ReplayBackend
    monkeypatch.setitem(sys.modules, "engine.agents.recorded", module)
    with pytest.raises(BackendUnavailable, match="replay_source"):
        make_backend("replay", config=PipelineConfig())
    assert make_backend("replay", config=PipelineConfig(), replay_source="log.db").source == "log.db"
    assert make_backend("replay:run-42", config=PipelineConfig()).source == "run-42"


# --- safety policy ------------------------------------------------------------------------------

BLOCKED = ["rm -rf /", "rm -rf / --no-preserve-root", "sudo rm -fr /*", "rm -rf ~", "mkfs -t ext4 /dev/sdb",
           "dd if=/dev/urandom of=/dev/sda bs=1M", ":(){ :|:& };:", "echo x > /etc/hosts", "cp model.pkl /home/u/",
           "tee /etc/motd < a", "cd .. && rm -rf other-run", "sed -i s/a/b/ /etc/conf", "echo 1 >> ../../x",
           "echo hi > /tmp/x"]
ALLOWED = ["ls -la", "python solution.py > out.log 2>&1", "rm -rf ./cache", "cat /etc/hosts", "mkdir -p final",
           "python train.py | tee log.txt", "cp ./input/train.csv data.csv", "echo hi > /dev/null", "cd sub && rm -rf x"]


@pytest.mark.parametrize("command", BLOCKED)
def test_req_or_033_policy_blocks(command):
    assert BashPolicy(Path("/runs/r1/work")).check_bash(command)


@pytest.mark.parametrize("command", ALLOWED)
def test_req_or_033_policy_allows(command):
    assert BashPolicy(Path("/runs/r1/work")).check_bash(command) is None


def test_req_or_033_blocked_list_is_configurable():
    policy = BashPolicy(Path("/w"), patterns=((r"\bcurl\b", "no network"),))
    assert policy.check_bash("curl http://x") == "blocked dangerous command: no network"
    assert policy.check_bash("mkfs /dev/sda") is None  # the default list was replaced


@pytest.mark.anyio
async def test_req_or_035_failures_are_counted_per_agent_type():
    hooks = CallHooks("coder", "e1", BashPolicy(Path("/w")))
    await hooks.post_tool_use({"tool_name": "Bash", "tool_response": {"exit_code": 1, "stderr": "x"}}, "t1", {})
    await hooks.post_tool_use_failure({"tool_name": "Bash", "error": "boom"}, "t2", {})
    assert hooks.failures["coder"] == 2
    await hooks.post_tool_use({"tool_name": "Bash", "tool_response": {"stdout": "ok"}}, "t3", {})
    assert hooks.failures["coder"] == 0
    denied = await hooks.pre_tool_use({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}, "t4", {})
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"


# --- secrets, retry classification, structured output -------------------------------------------------


def test_redactor_hides_env_secrets_and_key_shapes():
    env = {"ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnop", "MY_SERVICE_TOKEN": "tok_9876543210", "HOME": "/root"}
    r = Redactor.from_env(env)
    text = r.text("a sk-ant-api03-abcdefghijklmnop b tok_9876543210 c sk-ant-other-zzzzzzzzzz /root")
    assert "abcdefghijklmnop" not in text and "9876543210" not in text and "zzzzzzzzzz" not in text
    assert text.count(REDACTED) == 3 and "/root" in text
    assert r.value({"k": ["tok_9876543210"]}) == {"k": [REDACTED]}
    assert detect_credentials(env) == "ANTHROPIC_API_KEY" and detect_credentials({"HOME": "/"}) is None


def test_retry_classification():
    assert classify_error_result({"subtype": "success", "api_error_status": 429, "result": "rate"}).transient
    assert classify_error_result({"subtype": "success", "result": "API Error: Overloaded"}).transient
    assert not classify_error_result({"subtype": "success", "api_error_status": 400, "result": "bad"}).transient
    assert not classify_error_result({"subtype": "error_max_budget_usd"}).transient
    from claude_agent_sdk import CLIConnectionError, CLINotFoundError, ProcessError

    assert classify_exception(CLIConnectionError("dropped")).transient
    assert not classify_exception(CLINotFoundError("none")).transient
    assert not classify_exception(ProcessError("crash", exit_code=3)).transient
    assert classify_exception(ProcessError("x", exit_code=1, stderr="429 Too Many Requests")).transient


def test_structured_output_validation():
    schema = RetrieverOutput.model_json_schema()
    good = {"models": [{"model_name": "m", "example_code": "c"}]}
    assert validate_structured(good, "", schema, RetrieverOutput) == good
    bare_list = '[{"model_name": "m", "example_code": "c"}]'
    assert validate_structured(None, bare_list, schema, RetrieverOutput) == good
    with pytest.raises(MalformedOutput):
        validate_structured({"models": []}, "", schema, RetrieverOutput)  # pydantic: at least one
    with pytest.raises(MalformedOutput):
        validate_structured(None, "no json here", schema, RetrieverOutput)
