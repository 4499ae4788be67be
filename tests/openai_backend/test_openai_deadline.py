"""An agent call's deadline on the ``openai`` backend (REQ-OR-034, issue 27): no new turn once
the deadline is near, and a request in flight cut at it.

The stand-in answers with a fixed latency, so no verdict depends on how fast the machine is: the
first turn ends after the stand-in's fixed wait, past the point where no new turn may start and
long before the deadline.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from engine.agents.base import AgentContext
from engine.agents.openai.backend import OpenAIBackend
from engine.tasks import resolve_task
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import PipelineConfig
from tests.openai_backend.chat_api import Call, Exchange, Hang, Reply, Tools
from tests.openai_backend.conftest import FAKE_KEY, MODEL

LATENCY_S = 2.0   # the stand-in's fixed wait before its first answer
LIMIT_S = 90.0    # the call's time limit: far beyond the first turn on any machine


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return resolve_task("iris", tmp_path_factory.mktemp("task"))


def _backend(api: Any, **kwargs: Any) -> OpenAIBackend:
    return OpenAIBackend(PipelineConfig(), env={"OPENAI_BASE_URL": api.url, "OPENAI_API_KEY": FAKE_KEY,
                                                "MLE_STAR_MODEL": MODEL}, **kwargs)


def _ctx(task: Any, tmp_path: Path, time_limit_s: float) -> AgentContext:
    work = tmp_path / "agents" / "call"
    work.mkdir(parents=True)
    (work / "input").symlink_to(Path(task.public_dir).resolve(), target_is_directory=True)
    return AgentContext(run_id="r1", run_dir=tmp_path, work_dir=work, task=task.description,
                        task_dir=Path(task.public_dir), config=PipelineConfig(), seed=0, time_limit_s=time_limit_s)


def _request(deadline_s: float) -> AgentCallRequested:
    return AgentCallRequested(effect_id="phase2/path-0/coder", agent_type="coder", prompt="Improve the model.",
                              deadline_s=deadline_s)


def test_no_new_turn_starts_once_the_deadline_is_near(task, tmp_path, stand_in):
    """A model that would call tools forever: after its first turn (which ends inside the
    wrap-up margin) the backend asks nothing more and the call ends with the text it has."""

    def endless(exchange: Exchange) -> Reply:
        time.sleep(LATENCY_S)
        return Tools([Call("run_command", {"command": "echo working"})], content="Still working.")

    api = stand_in(endless)
    backend = _backend(api, wrap_up_s=LIMIT_S - LATENCY_S / 2)
    started = time.monotonic()
    result = anyio.run(backend.call, _request(LIMIT_S), _ctx(task, tmp_path, LIMIT_S))
    took = time.monotonic() - started
    assert isinstance(result, AgentCallCompleted), result
    assert result.usage.get("stopped_for_deadline") is True and result.usage["num_turns"] == 1, result.usage
    assert result.text == "Still working."
    assert len(api.chat_calls()) == 1
    assert took < LIMIT_S, took


def test_a_request_in_flight_is_cut_at_the_deadline_and_not_retried(task, tmp_path, stand_in):
    limit = 3.0
    api = stand_in(lambda exchange: Hang(seconds=60))
    backend = _backend(api)
    started = time.monotonic()
    result = anyio.run(backend.call, _request(limit), _ctx(task, tmp_path, limit))
    took = time.monotonic() - started
    assert isinstance(result, AgentCallFailed), result
    assert "reached its deadline (3 s) and was cut" in result.error, result.error
    assert result.attempts == 1 and len(api.chat_calls()) == 1
    assert limit <= took < limit + 10, took
