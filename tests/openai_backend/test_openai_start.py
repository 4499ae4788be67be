"""``engine start --agent openai`` refuses to start, in seconds and with one clear line, when the
endpoint cannot serve the run (issue 18; REQ-OR-002: exit 2 before the run exists), and ``auto``
picks the backend from the environment."""

from __future__ import annotations

import socket

import pytest

from engine.agents.errors import BackendUnavailable
from engine.agents.select import select_backend
from events.domain import PipelineConfig
from tests.openai_backend.chat_api import Text
from tests.openai_backend.conftest import FAKE_KEY, MODEL, engine, engine_env


def _start(env: dict[str, str], tmp_path) -> tuple[object, None]:
    # The check itself is bounded (30 s, engine/agents/preflight.py); no timing is asserted here.
    done = engine(["start", "--task", "iris", "--agent", "openai", "--preset", "quick", "--db",
                   str(tmp_path / "runs" / "engine.db")], env, timeout=120)
    return done, None


def _refused(done, tmp_path) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and FAKE_KEY not in done.stdout + done.stderr
    assert not (tmp_path / "runs" / "engine.db").exists()  # nothing recorded
    return done.stderr.strip()


def test_a_rejected_key_stops_the_start(tmp_path, stand_in):
    api = stand_in(lambda ex: Text("ready"), expected_key="sk-the-real-key-0123456789")
    done, _ = _start(engine_env(api.url), tmp_path)
    line = _refused(done, tmp_path)
    assert "rejected the key in OPENAI_API_KEY" in line


def test_an_unreachable_endpoint_stops_the_start(tmp_path):
    # A port bound but never listened on refuses every connection, and no other test can take
    # it while this socket holds it (a port merely closed again can be reused by a stand-in that
    # another worker starts meanwhile, which then answers).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{held.getsockname()[1]}/v1"
        done, _ = _start(engine_env(url), tmp_path)
    line = _refused(done, tmp_path)
    assert "cannot connect" in line and "OPENAI_BASE_URL" in line


def test_an_unknown_model_stops_the_start(tmp_path, stand_in):
    api = stand_in(lambda ex: Text("ready"), models=["llama-3.1-8b"])
    done, _ = _start(engine_env(api.url), tmp_path)
    line = _refused(done, tmp_path)
    assert f"model {MODEL!r} is not served" in line and "MLE_STAR_MODEL" in line


def test_no_model_named_stops_the_start(tmp_path, stand_in):
    api = stand_in(lambda ex: Text("ready"))
    env = engine_env(api.url)
    del env["MLE_STAR_MODEL"]
    done, _ = _start(env, tmp_path)
    assert "needs a model name" in _refused(done, tmp_path)
    assert api.chat_calls() == []


def test_a_missing_openai_client_says_which_extra_to_install(tmp_path, stand_in):
    shadow = tmp_path / "shadow" / "openai"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named openai')\n")
    api = stand_in(lambda ex: Text("ready"))
    env = engine_env(api.url)
    env["PYTHONPATH"] = f"{shadow.parent}:{env['PYTHONPATH']}"
    done, _ = _start(env, tmp_path)
    assert "pip install 'mle-engine[openai]'" in _refused(done, tmp_path)


@pytest.mark.parametrize("env, expected", [
    ({"OPENAI_API_KEY": FAKE_KEY, "MLE_STAR_MODEL": MODEL}, "openai"),
    ({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "MLE_STAR_MODEL": MODEL}, "openai"),
    ({"ANTHROPIC_API_KEY": "sk-ant-api03-" + "x" * 20, "OPENAI_API_KEY": FAKE_KEY, "MLE_STAR_MODEL": MODEL}, "claude"),
    ({}, "builtin"),
])
def test_auto_prefers_claude_then_openai_then_builtin_and_says_why(env, expected):
    choice = select_backend("auto", config=PipelineConfig(), env=env)
    assert choice.name == expected and "\n" not in choice.explanation
    assert choice.explanation.startswith(f"backend: {expected}") and "auto" in choice.explanation
    assert FAKE_KEY not in choice.explanation
    if expected == "openai":
        assert MODEL in choice.explanation


def test_openai_needs_an_endpoint_or_a_key():
    with pytest.raises(BackendUnavailable, match="OPENAI_API_KEY"):
        select_backend("openai", config=PipelineConfig(), env={"MLE_STAR_MODEL": MODEL})


def test_config_model_and_price_table():
    config = PipelineConfig(model="llama3.1:8b", model_prices={"llama3.1:8b": {"input_per_mtok": 0.1,
                                                                              "output_per_mtok": 0.2}})
    backend = select_backend("openai", config=config, env={"OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
                                                            "MLE_STAR_MODEL": "other"}).backend
    assert backend.model == "llama3.1:8b" and backend.price.output_per_mtok == 0.2
    with pytest.raises(Exception, match="input_per_mtok"):
        PipelineConfig(model_prices={"m": {"output_per_mtok": 1.0}})
