"""An agent call's deadline through the REAL bundled Claude CLI (REQ-OR-034, issue 27).

The engine gives each call a time limit (from its request's ``deadline_s``). Near it the
PostToolUse hook asks the agent to stop after the tool it just ran; at it whatever is still in
flight is cut. The model is the Messages-API stand-in with a fixed latency, so no verdict
depends on how fast the machine is: the first tool ends after the stand-in's fixed wait, which
is past the point where the hook must stop the agent, and long before the deadline.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from engine.agents.base import AgentContext
from engine.agents.claude.backend import ClaudeBackend
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import DataModality, MetricDirection, PipelineConfig, TaskDescription, TaskType
from tests.claude_cli.conftest import FAKE_KEY, MODEL
from tests.support.messages_api import Exchange, Hang, Reply, ToolCall, Tools

pytestmark = pytest.mark.slow

LATENCY_S = 4.0      # the stand-in's fixed wait before its first answer
LIMIT_S = 90.0       # the call's time limit: far beyond the first tool on any machine
WRAP_UP_S = LIMIT_S - LATENCY_S / 2  # the agent must be asked to stop after its first tool


def _backend(api_url: str, **kwargs: object) -> ClaudeBackend:
    env = {"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": api_url, "PATH": os.environ["PATH"]}
    return ClaudeBackend(PipelineConfig(model=MODEL), env=env, **kwargs)  # type: ignore[arg-type]


def _ctx(tmp_path: Path, time_limit_s: float) -> AgentContext:
    task = TaskDescription(competition_id="iris", task_type=TaskType.classification,
                           data_modality=DataModality.tabular, evaluation_metric="logloss",
                           metric_direction=MetricDirection.minimize, description="Predict the species.")
    work, data = tmp_path / "run" / "agents" / "call", tmp_path / "task"
    work.mkdir(parents=True)
    data.mkdir()
    return AgentContext(run_id="r", run_dir=tmp_path / "run", work_dir=work, task=task, task_dir=data,
                        config=PipelineConfig(), seed=0, time_limit_s=time_limit_s)


def _request() -> AgentCallRequested:
    return AgentCallRequested(effect_id="phase2/path-0/coder", agent_type="coder", prompt="Improve the model.",
                              deadline_s=LIMIT_S)


def test_the_post_tool_use_hook_stops_an_agent_that_never_ends_near_its_deadline(tmp_path, stand_in):
    """REQ-OR-034: an agent that would call tools forever is asked to stop after the first tool
    that ends within the wrap-up margin; it asks the model nothing more and the call ends with
    what it has, marked ``stopped_for_deadline``, well before the deadline."""

    def endless(exchange: Exchange) -> Reply:
        if exchange.turn() == 0:
            time.sleep(LATENCY_S)
        return Tools([ToolCall("Bash", {"command": "echo working", "description": "work"})], text="Still working.")

    api = stand_in(endless)
    backend = _backend(api.url, wrap_up_s=WRAP_UP_S)
    started = time.monotonic()
    result = anyio.run(backend.call, _request(), _ctx(tmp_path, LIMIT_S))
    took = time.monotonic() - started
    assert isinstance(result, AgentCallCompleted), result
    assert result.usage.get("stopped_for_deadline") is True, result.usage
    assert len(api.message_calls()) == 1, [e.turn() for e in api.message_calls()]  # no turn after the stop
    assert took < LIMIT_S, took


def test_a_call_in_flight_is_cut_at_its_deadline_with_a_clear_reason(tmp_path, stand_in):
    """A model that does not answer: the call is cut at its time limit (no grace past it) and
    fails saying so; it does not retry past its deadline."""
    limit = 8.0
    api = stand_in(lambda exchange: Hang(seconds=120))
    backend = _backend(api.url)
    started = time.monotonic()
    result = anyio.run(backend.call, _request().model_copy(update={"deadline_s": limit}), _ctx(tmp_path, limit))
    took = time.monotonic() - started
    assert isinstance(result, AgentCallFailed), result
    assert "reached its deadline (8 s) and was cut" in result.error, result.error
    assert result.attempts == 1
    assert limit <= took < limit + 20, took  # cut at the limit; the CLI's teardown is all that follows
