"""One ``openai`` backend call at a time against the Chat Completions stand-in (issue 18):
failure semantics (401, 429, 500, malformed JSON), streaming, tools, JSON-schema and
JSON-in-text output, the budget cap, cancellation. REQ-OR-005/008/028/051/052.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from engine.agents.base import AgentContext
from engine.agents.openai.backend import OpenAIBackend
from engine.tasks import resolve_task
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import ModelPrice, PipelineConfig
from tests.openai_backend.chat_api import Call, Exchange, Fail, Garbage, Hang, Text, Tools
from tests.openai_backend.conftest import FAKE_KEY, MODEL

SCHEMA = {"type": "object", "properties": {"models": {"type": "array", "items": {"type": "object"}}},
          "required": ["models"]}
MODELS = {"models": [{"model_name": "rf", "example_code": "from sklearn.ensemble import RandomForestClassifier"}]}
CODE = "import sklearn\nprint('Final Validation Performance: 0.9')"


async def no_sleep(seconds: float) -> None:
    """The backend's back-off without the wait (it still yields to the event loop)."""
    await anyio.sleep(0)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return resolve_task("iris", tmp_path_factory.mktemp("task"))


def backend(api, *, config: PipelineConfig | None = None, **env: str) -> OpenAIBackend:
    return OpenAIBackend(config or PipelineConfig(), env={"OPENAI_BASE_URL": api.url, "OPENAI_API_KEY": FAKE_KEY,
                                                          "MLE_STAR_MODEL": MODEL, **env},
                         sleep=no_sleep)


def context(task, tmp_path: Path, **kw: Any) -> AgentContext:
    work = tmp_path / "agents" / "call"
    work.mkdir(parents=True)
    (work / "input").symlink_to(Path(task.public_dir).resolve(), target_is_directory=True)
    return AgentContext(run_id="r1", run_dir=tmp_path, work_dir=work, task=task.description,
                        task_dir=Path(task.public_dir), config=PipelineConfig(), seed=0, **kw)


def request(agent_type: str = "init", schema: dict | None = None) -> AgentCallRequested:
    return AgentCallRequested(effect_id="phase1/init-0", agent_type=agent_type, prompt="Write a solution.",
                              output_schema=schema)


def call(b: OpenAIBackend, req: AgentCallRequested, ctx: AgentContext):
    return anyio.run(b.call, req, ctx)


def scripted(*replies):
    """A responder that answers with ``replies`` in order (the last one repeats)."""
    seen: list[Exchange] = []

    def respond(exchange: Exchange):
        seen.append(exchange)
        return replies[min(len(seen), len(replies)) - 1]

    respond.seen = seen  # type: ignore[attr-defined]
    return respond


def test_code_is_extracted_and_the_system_prompt_is_the_shared_one(task, tmp_path, stand_in):
    api = stand_in(scripted(Text(f"Here:\n```python\n{CODE}\n```\n")), expected_key=FAKE_KEY)
    result = call(backend(api), request("summarize"), context(task, tmp_path))
    assert isinstance(result, AgentCallCompleted) and result.code == CODE
    from handlers.prompts.system import render_system_prompt

    sent = api.chat_calls()[0]
    assert sent.messages[0] == {"role": "system", "content": render_system_prompt(task.description, {})}
    assert sent.headers["x-client-request-id"] == "r1:phase1/init-0:1"
    assert result.cost_usd is None and result.usage["cost_source"] == "unknown" and result.usage["input_tokens"] > 0


def test_401_fails_at_once_with_a_clear_message_and_no_key(task, tmp_path, stand_in):
    api = stand_in(scripted(Text("never")), expected_key="sk-the-right-key-123456")
    result = call(backend(api), request(), context(task, tmp_path))
    assert isinstance(result, AgentCallFailed) and result.attempts == 1
    assert "authentication failed" in result.error and "401" in result.error and FAKE_KEY not in result.error


@pytest.mark.parametrize("trouble", [Fail(429, "Rate limit reached"), Fail(500, "boom"), Garbage()],
                         ids=["429", "500", "malformed-json"])
def test_transient_trouble_is_retried_then_answered(task, tmp_path, stand_in, trouble):
    api = stand_in(scripted(trouble, trouble, Text(f"```python\n{CODE}\n```")), expected_key=FAKE_KEY)
    result = call(backend(api), request(), context(task, tmp_path))
    assert isinstance(result, AgentCallCompleted) and result.code == CODE
    assert len(api.chat_calls()) == 3


def test_persistent_malformed_json_gives_up_after_bounded_retries(task, tmp_path, stand_in):
    api = stand_in(scripted(Garbage()), expected_key=FAKE_KEY)
    result = call(backend(api), request(), context(task, tmp_path))
    assert isinstance(result, AgentCallFailed) and result.attempts == 4 and len(api.chat_calls()) == 4
    assert "gave up after 4 attempts" in result.error and "malformed response" in result.error
    assert result.usage["model"] == MODEL  # the tries' usage, added up (nothing was read of the garbage)


def test_json_schema_response_format_is_used_where_supported(task, tmp_path, stand_in):
    api = stand_in(scripted(Text(json.dumps(MODELS))), expected_key=FAKE_KEY)
    result = call(backend(api), request("retriever", SCHEMA), context(task, tmp_path))
    assert isinstance(result, AgentCallCompleted) and result.structured == MODELS
    assert result.usage["structured_output"] == "json_schema" and result.code is None
    sent = api.chat_calls()[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == SCHEMA


def test_without_schema_support_the_json_in_the_text_is_validated_and_repaired_once(task, tmp_path, stand_in):
    respond = scripted(Text("I would use a random forest."),
                       Text(f"Sure:\n```json\n{json.dumps(MODELS)}\n```"))
    api = stand_in(respond, expected_key=FAKE_KEY, json_schema=False)
    result = call(backend(api), request("retriever", SCHEMA), context(task, tmp_path))
    assert isinstance(result, AgentCallCompleted) and result.structured == MODELS
    assert result.usage["structured_output"] == "json_in_text" and result.usage["structured_repaired"] is True
    assert any("response_format" not in ex.body for ex in api.chat_calls())


def test_structured_output_that_never_validates_fails_as_malformed(task, tmp_path, stand_in):
    api = stand_in(scripted(Text('{"models": "not a list"}')), expected_key=FAKE_KEY)
    result = call(backend(api), request("retriever", SCHEMA), context(task, tmp_path))
    assert isinstance(result, AgentCallFailed) and result.error.startswith("malformed output")


@pytest.mark.parametrize("stream", ["0", "1"])
def test_tool_calls_run_in_the_work_dir_streamed_or_not(task, tmp_path, stand_in, stream):
    respond = scripted(Tools([Call("run_command", {"command": "ls input; echo key=$OPENAI_API_KEY"}),
                              Call("read_file", {"path": "../../../../etc/passwd"})]),
                       Text(f"```python\n{CODE}\n```"))
    api = stand_in(respond, expected_key=FAKE_KEY)
    result = call(backend(api, ENGINE_OPENAI_STREAM=stream), request("init"), context(task, tmp_path))
    assert isinstance(result, AgentCallCompleted) and result.code == CODE, result
    follow_up = api.chat_calls()[1]
    answers = follow_up.tool_results()
    assert "train.csv" in answers[0] and "[exit code 0]" in answers[0]
    assert "key=\n" in answers[0] or answers[0].rstrip().endswith("key=")  # the command sees no API key
    assert answers[1].startswith("refused:")
    assert result.usage["tool_calls"] == ["run_command", "read_file"] and result.usage["num_turns"] == 2
    assert all(ex.stream is (stream == "1") for ex in api.chat_calls())
    assert set(api.chat_calls()[0].tool_names) == {"list_files", "read_file", "run_command"}


def test_an_endpoint_without_tools_gets_none(task, tmp_path, stand_in):
    api = stand_in(scripted(Text(f"```python\n{CODE}\n```")), expected_key=FAKE_KEY, tools=False)
    b = backend(api)
    result = call(b, request("init"), context(task, tmp_path))
    assert isinstance(result, AgentCallCompleted) and result.usage["tools"] == "off"
    assert "tools" in result.usage["endpoint_notes"][0]
    assert "tools" in api.chat_calls()[0].body and "tools" not in api.chat_calls()[-1].body


def test_the_tool_loop_stops_before_passing_the_call_budget(task, tmp_path, stand_in):
    api = stand_in(scripted(Tools([Call("list_files", {"path": "input"})])), expected_key=FAKE_KEY)
    prices = PipelineConfig(model_prices={MODEL: ModelPrice(input_per_mtok=100.0, output_per_mtok=400.0)})
    result = call(backend(api, config=prices), request("init"), context(task, tmp_path, budget_usd=0.2))
    assert isinstance(result, AgentCallFailed) and "budget exhausted" in result.error
    assert 0 < result.cost_usd <= 0.2
    assert 1 < len(api.chat_calls()) < 12
    # A failed call keeps what it used, as a completed one does (AgentCallFailed v4).
    assert result.usage["input_tokens"] > 0 and result.usage["num_turns"] == len(api.chat_calls())


def test_a_cancelled_call_reports_what_it_spent(task, tmp_path, stand_in):
    respond = scripted(Tools([Call("list_files", {"path": "."})]), Hang(20))
    api = stand_in(respond, expected_key=FAKE_KEY)
    abandoned: list[tuple[Any, dict]] = []
    prices = PipelineConfig(model_prices={MODEL: ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0)})
    ctx = context(task, tmp_path, on_abandoned=lambda cost, tokens: abandoned.append((cost, tokens)))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(backend(api, config=prices).call, request("init"), ctx)
            with anyio.fail_after(15):
                while len(api.chat_calls()) < 2:
                    await anyio.sleep(0.05)
            tg.cancel_scope.cancel()

    anyio.run(main)
    assert len(abandoned) == 1
    cost, tokens = abandoned[0]
    # The second request was out when the call was cancelled: its cost is unknown, so the whole
    # call's is (the ledger keeps its cap as spent); the tokens of the finished turn are reported.
    assert cost is None and tokens["input_tokens"] > 0
