"""The claude backend against a protocol-level fake CLI (REQ-OR-005..011, 027, 031..035, 052).

The fake speaks the SDK's real stream-json control protocol and records argv and stdin, so
these tests fail when a flag, the hook registration or the agent registration goes missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.agents.claude.backend import ClaudeBackend
from engine.agents.errors import BackendUnavailable
from events.agent_outputs import ExtractorOutput, RetrieverOutput
from events.agents import build_default_agent_configs
from events.core import AgentCallCompleted, AgentCallFailed
from events.domain import PipelineConfig
from handlers.prompts import build_request
from tests.agents.conftest import SECRET_KEY

pytestmark = pytest.mark.anyio

CODE_REPLY = "Here it is.\n```python\nprint('short')\n```\nand the full script:\n```python\nimport pandas as pd\nprint('Final Validation Performance: 0.9')\n```"


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def make_backend(fake, env: dict[str, str], config: PipelineConfig | None = None) -> tuple[ClaudeBackend, Sleeps]:
    sleeps = Sleeps()
    # The fake CLI is a script of this repository: unsandboxed (the real CLI is tested sandboxed).
    backend = ClaudeBackend(config or PipelineConfig(), env=env, cli_path=fake.cli_path, sleep=sleeps, sandbox="none")
    return backend, sleeps


def coder_request(effect_id: str = "phase2/path-0/t0/k0/coder"):
    return build_request("coder", {"code_block": "x = 1", "plan": "use x = 2"}, effect_id=effect_id)


def ok(result_text: str = CODE_REPLY, **fields: Any) -> dict[str, Any]:
    return {"steps": [{"type": "assistant", "text": result_text}, {"type": "result", "result": result_text, **fields}]}


async def test_req_or_005_options_reach_the_cli_as_flags(fake_claude, ctx, secret_env):
    fake_claude.script(ok())
    backend, _ = make_backend(fake_claude, secret_env, PipelineConfig(max_budget_usd=5.0))
    result = await backend.call(coder_request(), ctx)

    assert isinstance(result, AgentCallCompleted), result
    assert fake_claude.flag("--model") == "sonnet"
    assert fake_claude.flag("--permission-mode") == "dontAsk"  # runs unattended, also as root
    # REQ-OR-008 coder tools, plus the two MCP tools of REQ-OR-010
    assert fake_claude.flag("--allowedTools") == "Bash,Edit,Write,Read,mcp__mle__parse_score,mcp__mle__list_data_files"
    assert fake_claude.flag("--tools") == "Bash,Edit,Write,Read"
    assert fake_claude.flag("--max-budget-usd") == "5.0"  # REQ-OR-028
    assert fake_claude.flag("--setting-sources") == ""  # no user/project settings (their hooks)
    assert fake_claude.flag("--input-format") == "stream-json"
    assert fake_claude.flag("--json-schema") is None  # coder replies in prose + code
    assert fake_claude.flag("--system-prompt") is None  # by file: a task description of any size fits
    system = Path(fake_claude.flag("--system-prompt-file")).read_text()
    assert "Kaggle grandmaster" in system and "penguins" in system and "accuracy" in system  # REQ-OR-007
    assert "No GPU" in system
    assert fake_claude.records()[0]["cwd"] == str(ctx.work_dir)


async def test_req_or_005_prompt_is_sent_as_the_user_message(fake_claude, ctx, secret_env):
    fake_claude.script(ok())
    backend, _ = make_backend(fake_claude, secret_env)
    request = coder_request()
    await backend.call(request, ctx)
    users = [m for m in fake_claude.records()[0]["stdin"] if m.get("type") == "user"]
    assert [u["message"]["content"] for u in users] == [request.prompt]


async def test_req_or_006_033_initialize_registers_agents_and_hooks(fake_claude, ctx, secret_env):
    fake_claude.script(ok())
    backend, _ = make_backend(fake_claude, secret_env)
    await backend.call(coder_request(), ctx)
    init = fake_claude.initialize_request()

    agents = init["agents"]
    assert sorted(agents) == sorted(t.value for t in build_default_agent_configs())
    assert len(agents) == 14
    assert agents["retriever"]["tools"] == ["WebSearch", "WebFetch"]
    assert agents["summarize"]["tools"] == ["Read"]
    assert all(a["prompt"] and a["description"] for a in agents.values())
    hooks = init["hooks"]
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        assert hooks[event] and hooks[event][0]["hookCallbackIds"], f"{event} hook not registered"
        assert hooks[event][0]["matcher"] is None  # every tool, not just Bash


async def test_req_or_005_model_from_env_unless_config_says_otherwise(fake_claude, ctx, secret_env):
    fake_claude.script(ok())
    backend, _ = make_backend(fake_claude, {**secret_env, "MLE_STAR_MODEL": "opus"})
    await backend.call(coder_request(), ctx)
    assert fake_claude.flag("--model", 0) == "opus"
    backend, _ = make_backend(fake_claude, {**secret_env, "MLE_STAR_MODEL": "opus"}, PipelineConfig(model="haiku"))
    await backend.call(coder_request(), ctx)
    assert fake_claude.flag("--model", 1) == "haiku"


async def test_req_sf_005_longest_fenced_block_becomes_code(fake_claude, ctx, secret_env):
    fake_claude.script(ok())
    backend, _ = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert result.code == "import pandas as pd\nprint('Final Validation Performance: 0.9')"
    assert result.text == CODE_REPLY


async def test_req_dm_041_structured_output_with_json_schema(fake_claude, ctx, secret_env):
    models = {"models": [{"model_name": "LightGBM", "example_code": "import lightgbm"}]}
    fake_claude.script(ok("done", structured_output=models))
    backend, _ = make_backend(fake_claude, secret_env)
    request = build_request("retriever", {"task_description": "penguins", "M": 1}, effect_id="phase1/retriever")
    result = await backend.call(request, ctx)

    assert isinstance(result, AgentCallCompleted), result
    assert result.structured == models and result.code is None
    assert json.loads(fake_claude.flag("--json-schema")) == RetrieverOutput.model_json_schema()


async def test_req_dm_041_structured_output_found_in_reply_text(fake_claude, ctx, secret_env):
    reply = '```json\n{"plans": [{"code_block": "x = 1", "plan": "Try two."}]}\n```'
    fake_claude.script(ok(reply))
    backend, _ = make_backend(fake_claude, secret_env)
    request = build_request("extractor", {"solution_script": "x = 1", "ablation_summary": "x matters",
                                          "previous_code_blocks": []}, effect_id="phase2/path-0/t0/extractor")
    result = await backend.call(request, ctx)
    assert isinstance(result, AgentCallCompleted), result
    assert ExtractorOutput.model_validate(result.structured).plans[0].code_block == "x = 1"


async def test_req_fn_029_contamination_variant_uses_its_own_schema(fake_claude, ctx, secret_env):
    fake_claude.script(ok("Novel", structured_output={"verdict": "Novel"}))
    backend, _ = make_backend(fake_claude, secret_env)
    request = build_request("test", {"reference discussion": "post", "final solution": "code"},
                            variant="contamination", effect_id="final/contamination-0")
    result = await backend.call(request, ctx)
    assert result.structured == {"verdict": "Novel"}
    assert json.loads(fake_claude.flag("--json-schema"))["title"] == "DataContaminationResult"
    assert fake_claude.flag("--allowedTools") == "Read"


async def test_malformed_structured_output_fails_without_retry(fake_claude, ctx, secret_env):
    fake_claude.script(ok("I could not decide.", structured_output={"answers": []}))
    backend, sleeps = make_backend(fake_claude, secret_env)
    result = await backend.call(build_request("leakage", {"code": "x = 1"}, effect_id="e/leak"), ctx)
    assert isinstance(result, AgentCallFailed)
    assert "malformed output" in result.error and result.attempts == 1 and sleeps.calls == []
    assert result.cost_usd == pytest.approx(0.01)  # the try still cost money


async def test_malformed_stream_output_fails_cleanly(fake_claude, ctx, secret_env):
    fake_claude.script({"steps": [{"type": "raw", "line": '{"type": "assistant", broken'}], "exit_code": 0})
    backend, sleeps = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert isinstance(result, AgentCallFailed)
    assert "malformed output" in result.error and result.attempts == 1 and sleeps.calls == []


async def test_req_or_027_cost_usage_duration_and_session_from_result(fake_claude, ctx, secret_env):
    fake_claude.script(ok(total_cost_usd=0.0421, num_turns=3, duration_ms=2500,
                          usage={"input_tokens": 1200, "output_tokens": 300}))
    backend, _ = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert result.cost_usd == pytest.approx(0.0421)
    assert result.usage["input_tokens"] == 1200 and result.usage["output_tokens"] == 300
    assert result.usage["num_turns"] == 3
    assert result.duration_s == pytest.approx(2.5)
    assert result.session_id
    assert result.elapsed_s == 0.0  # stamped by the engine, not the backend


@pytest.mark.parametrize("command", ["rm -rf /", "mkfs.ext4 /dev/sda1", "dd if=/dev/zero of=/dev/sda",
                                     ":(){ :|:& };:", "echo pwned > /etc/passwd"])
async def test_req_or_033_dangerous_bash_is_denied_with_a_reason(fake_claude, ctx, secret_env, command):
    fake_claude.script({"steps": [{"type": "tool_use", "tool": "Bash", "input": {"command": command}},
                                  {"type": "assistant", "text": "ok"}, {"type": "result", "result": "ok"}]})
    backend, _ = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)

    assert isinstance(result, AgentCallCompleted)
    answers = fake_claude.records()[0]["hook_responses"]
    assert [a["event"] for a in answers] == ["PreToolUse"]  # denied: the tool never ran
    decision = answers[0]["response"]["response"]["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith("blocked")
    assert result.usage["denied_tool_uses"]


async def test_req_or_033_write_tool_outside_work_dir_is_denied(fake_claude, ctx, secret_env):
    fake_claude.script({"steps": [{"type": "tool_use", "tool": "Write", "input": {"file_path": "/etc/x", "content": ""}},
                                  {"type": "result", "result": "ok"}]})
    backend, _ = make_backend(fake_claude, secret_env)
    await backend.call(coder_request(), ctx)
    decision = fake_claude.records()[0]["hook_responses"][0]["response"]["response"]["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and "/etc/x" in decision["permissionDecisionReason"]


async def test_req_or_031_safe_tool_use_passes_and_is_logged(fake_claude, ctx, secret_env):
    fake_claude.script({"steps": [{"type": "tool_use", "tool": "Bash", "input": {"command": "python train.py > log.txt"}},
                                  {"type": "result", "result": "ok"}]})
    backend, _ = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    answers = fake_claude.records()[0]["hook_responses"]
    assert [a["event"] for a in answers] == ["PreToolUse", "PostToolUse"]
    assert answers[0]["response"]["response"] == {}  # no opinion: permission mode decides
    assert "denied_tool_uses" not in result.usage


async def test_nonzero_cli_exit_is_a_failed_call(fake_claude, ctx, secret_env):
    fake_claude.script({"steps": [{"type": "exit", "code": 3}], "stderr": "fatal: something broke\n"})
    backend, sleeps = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert isinstance(result, AgentCallFailed)
    assert "exit code 3" in result.error and "something broke" in result.error
    assert result.attempts == 1 and sleeps.calls == []


RATE_LIMITED = {"steps": [{"type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
                           "result": "API Error: rate limit exceeded", "total_cost_usd": 0.001}], "exit_code": 1}


async def test_req_or_052_rate_limit_then_success_is_retried(fake_claude, ctx, secret_env):
    fake_claude.script(RATE_LIMITED, ok(total_cost_usd=0.01))
    backend, sleeps = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert isinstance(result, AgentCallCompleted), result
    assert sleeps.calls == [1.0]
    assert len(fake_claude.records()) == 2
    assert result.cost_usd == pytest.approx(0.011)  # the failed try's cost is kept


async def test_req_or_052_persistent_overload_gives_up_after_backoff(fake_claude, ctx, secret_env):
    overloaded = {"steps": [{"type": "result", "is_error": True, "api_error_status": 529,
                             "result": "API Error: Overloaded"}], "exit_code": 1}
    fake_claude.script(overloaded)
    backend, sleeps = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert isinstance(result, AgentCallFailed)
    assert sleeps.calls == [1.0, 2.0, 4.0] and result.attempts == 4
    assert "gave up after 4 attempts" in result.error and "Overloaded" in result.error


async def test_non_retryable_error_result_fails_at_once(fake_claude, ctx, secret_env):
    fake_claude.script({"steps": [{"type": "result", "subtype": "error_max_budget_usd", "is_error": True,
                                   "errors": ["budget exceeded"], "total_cost_usd": 5.0}], "exit_code": 1})
    backend, sleeps = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert isinstance(result, AgentCallFailed) and result.attempts == 1 and sleeps.calls == []
    assert "budget exhausted" in result.error and result.cost_usd == pytest.approx(5.0)


async def test_secrets_never_reach_recorded_results(fake_claude, ctx, secret_env):
    leak = "key=${ENV:ANTHROPIC_API_KEY} Bearer ${ENV:ANTHROPIC_API_KEY}"
    fake_claude.script({"steps": [{"type": "assistant", "text": leak},
                                  {"type": "result", "result": leak + "\n```python\nk='${ENV:ANTHROPIC_API_KEY}'\n```",
                                   "usage": {"input_tokens": 1, "note": leak}}]})
    backend, _ = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert isinstance(result, AgentCallCompleted)
    dumped = json.dumps(result.payload())
    assert SECRET_KEY not in dumped and "[REDACTED]" in result.text and "[REDACTED]" in result.code
    assert "[REDACTED]" in result.usage["note"]


async def test_secrets_never_reach_failure_errors(fake_claude, ctx, secret_env):
    fake_claude.script({"steps": [{"type": "exit", "code": 2}], "stderr": "auth failed for ${ENV:ANTHROPIC_API_KEY}\n"})
    backend, _ = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert isinstance(result, AgentCallFailed)
    assert SECRET_KEY not in json.dumps(result.payload()) and "[REDACTED]" in result.error


def test_missing_credentials_raise_backend_unavailable():
    with pytest.raises(BackendUnavailable, match="ANTHROPIC_API_KEY"):
        ClaudeBackend(PipelineConfig(), env={"PATH": "/usr/bin", "ANTHROPIC_API_KEY": "  "})


@pytest.mark.parametrize("env", [{"CLAUDE_CODE_OAUTH_TOKEN": "tok-123456789"}, {"CLAUDE_CODE_USE_BEDROCK": "1"},
                                 {"CLAUDE_CODE_USE_VERTEX": "true"}, {"ANTHROPIC_AUTH_TOKEN": "tok-abcdefghij"}])
def test_other_sdk_auth_is_accepted(env):
    assert ClaudeBackend(PipelineConfig(), env=env).credential in env


def test_provider_flag_set_to_false_is_not_credentials():
    with pytest.raises(BackendUnavailable):
        ClaudeBackend(PipelineConfig(), env={"CLAUDE_CODE_USE_BEDROCK": "0"})


async def test_answer_is_kept_when_the_cli_fails_after_a_good_result(fake_claude, ctx, secret_env):
    fake_claude.script({**ok(), "exit_code": 1})
    backend, sleeps = make_backend(fake_claude, secret_env)
    result = await backend.call(coder_request(), ctx)
    assert isinstance(result, AgentCallCompleted) and result.code and sleeps.calls == []
