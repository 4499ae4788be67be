"""The OpenAI-compatible backend under the same money rules as the Claude one (issue 26): the
model's tool commands run without network, so nothing they run can reach the model API (the
loopback stand-in, holding the key) or any other host. Only the backend itself, outside the
sandbox, talks to the model, and it meters every turn (``openai/chat.py``)."""

from __future__ import annotations

import shlex
from pathlib import Path

import anyio
import pytest

from engine.agents.base import AgentContext
from engine.agents.openai.backend import OpenAIBackend
from engine.tasks import resolve_task
from events.core import AgentCallCompleted, AgentCallRequested
from events.domain import PipelineConfig
from tests.openai_backend.chat_api import Call, Exchange, Text, Tools
from tests.openai_backend.conftest import FAKE_KEY, MODEL
from tests.support.listener import counting_listener

CODE = "print('Final Validation Performance: 0.9')"


@pytest.fixture
def listener():
    """A TCP port on every address of the host that counts who connects (it must stay at 0)."""
    with counting_listener("0.0.0.0") as port_and_hits:
        yield port_and_hits


def probe(api_url: str, port: int) -> str:
    """A tool command that tries the model API the backend uses, and a port on the host by its
    loopback and by its own name, and prints the network interfaces it has."""
    script = f"""
import json, socket, urllib.request
def attempt(f):
    try:
        return 'reached ' + str(f())
    except Exception as exc:
        return 'failed ' + type(exc).__name__
body = json.dumps({{"model": "{MODEL}", "messages": [{{"role": "user", "content": "spend"}}]}}).encode()
api = urllib.request.Request("{api_url}/v1/chat/completions", data=body, headers={{"content-type": "application/json"}})
print("api", attempt(lambda: urllib.request.urlopen(api, timeout=5).status))
print("loopback", attempt(lambda: socket.create_connection(("127.0.0.1", {port}), 5)))
print("host", attempt(lambda: socket.create_connection((socket.gethostname(), {port}), 5)))
print("interfaces", sorted(name for _, name in socket.if_nameindex()))
"""
    return "python3 -c " + shlex.quote(script)


def test_the_models_tool_commands_have_no_network(tmp_path, stand_in, listener):
    port, hits = listener
    task = resolve_task("iris", tmp_path / "task")
    replies = iter([])

    def respond(exchange: Exchange):
        if exchange.turn() == 0:
            return Tools([Call("run_command", {"command": probe(api.url, port)})])
        return next(replies, Text(f"```python\n{CODE}\n```"))

    api = stand_in(respond, expected_key=FAKE_KEY)
    backend = OpenAIBackend(PipelineConfig(), env={"OPENAI_BASE_URL": api.url, "OPENAI_API_KEY": FAKE_KEY,
                                                    "MLE_STAR_MODEL": MODEL})
    assert backend.sandbox_mode == "bwrap"  # the default wherever bubblewrap works (CI installs it)
    work = tmp_path / "agents" / "call"
    work.mkdir(parents=True)
    (work / "input").symlink_to(Path(task.public_dir).resolve(), target_is_directory=True)
    ctx = AgentContext(run_id="r1", run_dir=tmp_path, work_dir=work, task=task.description,
                       task_dir=Path(task.public_dir), config=PipelineConfig(), seed=0)
    request = AgentCallRequested(effect_id="phase1/init-0", agent_type="init", prompt="Write a solution.")
    result = anyio.run(backend.call, request, ctx)

    assert isinstance(result, AgentCallCompleted), result
    answer = api.chat_calls()[1].tool_results()[0]
    lines = dict(line.split(" ", 1) for line in answer.splitlines() if line.split(" ", 1)[0] in
                 ("api", "loopback", "host", "interfaces"))
    assert lines["api"].startswith("failed") and lines["loopback"].startswith("failed"), answer
    assert lines["host"].startswith("failed"), answer
    assert lines["interfaces"] == "['lo']", answer  # its own empty loopback, nothing else
    assert hits == []  # no port of the host was reached
    assert len(api.chat_calls()) == 2  # the model API saw the backend's two turns, nothing from the tool
