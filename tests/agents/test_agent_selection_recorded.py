"""Which agent runs is never silent (issue 27, REQ-OR-046): ``--agent auto`` and the library's
default choose by the credentials they find, and the choice and why is recorded in the run's
log (``AgentSelected``), shown in ``engine start --json`` (``agent_selection``) and logged by
the library (``agent_selected`` on the ``engine.api`` logger)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from engine.agents.select import select_backend, selection_event
from events.domain import PipelineConfig
from handlers.workflow import Workflow
from tests.core.helpers import TOY_TASK, engine_env, read_log, run_engine

NO_AGENT_STRATEGY = "tests.agents.test_agent_selection_recorded:no_agent_calls"
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK",
               "CLAUDE_CODE_USE_VERTEX", "OPENAI_API_KEY", "OPENAI_BASE_URL")


async def no_agent_calls(wf: Workflow) -> None:
    """A strategy that asks no agent (one timer, due at once): these tests are about the start."""
    await wf.sleep_until(0.0)
    wf.complete(submission_path="", best_score=None, result={})


def test_the_auto_choice_names_the_backend_and_the_credential_it_went_by():
    config = PipelineConfig()
    offline = select_backend("auto", config=config, env={})
    event = selection_event(offline.backend, "auto")
    assert (event.requested, event.chosen) == ("auto", "builtin")
    online = select_backend("auto", config=config, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                                                        "MLE_STAR_MODEL": "m"})
    assert online.name == "openai" and "OPENAI_BASE_URL is set" in online.explanation


@pytest.fixture
def no_credentials(monkeypatch):
    for name in CREDENTIALS:
        monkeypatch.delenv(name, raising=False)


def test_the_library_default_logs_and_records_its_choice(tmp_path: Path, no_credentials):
    from engine.api import run_strategy

    db = tmp_path / "engine.db"
    with capture_logs() as logs:
        result = anyio.run(lambda: run_strategy(NO_AGENT_STRATEGY, TOY_TASK, db=db))  # agent: the default, auto
    said = [entry for entry in logs if entry["event"] == "agent_selected"]
    assert len(said) == 1 and said[0]["requested"] == "auto" and said[0]["chosen"] == "builtin", logs
    assert "no Claude credentials" in said[0]["reason"]
    recorded = [env.payload for env in read_log(db, result["run_id"]) if env.type == "AgentSelected"]
    assert recorded == [{"requested": "auto", "chosen": "builtin", "reason": said[0]["reason"]}]


def test_engine_start_json_shows_the_choice_and_why(tmp_path: Path):
    db = tmp_path / "engine.db"
    env = engine_env(**dict.fromkeys(CREDENTIALS))
    done = run_engine("start", "--task", str(TOY_TASK), "--strategy", NO_AGENT_STRATEGY, "--agent", "auto",
                      "--db", str(db), "--run-id", "chosen", "--json", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout[done.stdout.index("{"):])
    selection = summary["agent_selection"]
    assert selection["requested"] == "auto" and selection["chosen"] == "builtin" == summary["backend"]
    assert "auto: no Claude credentials found" in selection["reason"]
    status = run_engine("status", "chosen", "--db", str(db), "--json", env=env)
    assert json.loads(status.stdout[status.stdout.index("{"):])["agent_selection"] == selection
