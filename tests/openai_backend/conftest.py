"""Tests of the ``openai`` backend against our Chat Completions stand-in on loopback
(tests/openai_backend/chat_api.py). Nothing here talks to the internet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.openai_backend.chat_api import ChatAPIStandIn, Responder

REPO = Path(__file__).resolve().parents[2]
FAKE_KEY = "sk-proj-standin-" + "s3cr3t" * 6
MODEL = "qwen2.5-coder-standin"
PRICES = '{"' + MODEL + '": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}'


@pytest.fixture
def stand_in() -> Iterator[Any]:
    servers: list[ChatAPIStandIn] = []

    def start(responder: Responder, **kwargs: Any) -> ChatAPIStandIn:
        server = ChatAPIStandIn(responder, **kwargs).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


def engine_env(api_url: str, **extra: str) -> dict[str, str]:
    """What a user of a local server has: an endpoint, a key, a model; no Claude credentials."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "ENGINE_", "OPENAI_", "MLE_STAR_"))}
    env.update(OPENAI_API_KEY=FAKE_KEY, OPENAI_BASE_URL=api_url, MLE_STAR_MODEL=MODEL,
               PYTHONPATH=str(REPO), NO_COLOR="1", **extra)
    return env


def engine(args: list[str], env: dict[str, str], *, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def events(db: Path, run_id: str) -> list[dict[str, Any]]:
    from store.sqlite import SQLiteEventStore

    store = SQLiteEventStore(db, create=False)
    return [{"type": e.type, "scope": e.scope, "seq": e.seq, **json.loads(json.dumps(e.payload))}
            for e in store.read(run_id)]


def summary_of(stdout: str) -> dict[str, Any]:
    return json.loads(stdout[stdout.index("{"):])
